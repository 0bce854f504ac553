# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The multi-condition figure: every panel shows every condition, readably."""

import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from skprivacy.plotting import ConditionsEpsilonDisplay  # noqa: E402
from skprivacy.plotting._base import drawable_text  # noqa: E402

EPSILONS = {
    # ROC-HT on well separated identities: almost every pair is exact (inf).
    "ROC-HT": {
        "clean": np.full(66, np.inf),
        "noisy": np.r_[np.full(61, np.inf), np.linspace(0.7, 1.1, 5)],
    },
    "GaussMech": {"clean": np.linspace(20, 100, 66), "noisy": np.linspace(7, 15, 66)},
    # KDE-LR: within one decade (45..95), where log ticks ran into each other.
    "KDE-LR": {"clean": np.linspace(70, 95, 66), "noisy": np.linspace(45, 65, 66)},
}


def _drawn_rows(axis):
    """Rows (y positions) where the panel draws data: box lines or markers."""
    rows = set()
    for line in axis.lines:
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        if len(y) and np.isfinite(x).any() and np.ptp(y) < 1:  # not a vertical rule
            rows.add(round(float(np.nanmean(y))))
    for collection in axis.collections:
        rows.update(round(float(y)) for _, y in collection.get_offsets())
    return rows


def _overlap(labels):
    boxes = sorted((b.x0, b.x1) for b in labels)
    return any(a[1] > b[0] for a, b in zip(boxes, boxes[1:]))


def test_every_panel_shows_every_condition_and_labels_do_not_overlap():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 2.5), layout="constrained")
    axes = fig.subplots(1, 3)
    display = ConditionsEpsilonDisplay.from_epsilons(EPSILONS, ax=list(axes))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for method, axis in zip(EPSILONS, display.axes_):
        # Two conditions: rows 2 (clean, on top) and 1 (noisy).
        assert _drawn_rows(axis) >= {1, 2}, method
        labels = [t for t in axis.get_xticklabels() if t.get_text()]
        assert len(labels) >= 2, method
        visible = [t.get_window_extent(renderer) for t in labels]
        assert not _overlap(visible), (method, [t.get_text() for t in labels])
    markers = display.infinite_markers_["ROC-HT"]
    assert markers.get_offsets().shape == (2, 2)  # both conditions have inf
    assert display.infinite_markers_["GaussMech"] is None
    roc = display.axes_[0]
    assert [t.get_text() for t in roc.get_xticklabels()][-1] == "inf"
    texts = sorted(t.get_text() for t in roc.texts)
    assert texts == ["61 inf", "66 inf"]
    assert display.axes_[2].get_xscale() == "linear"  # one decade: linear


def test_labels_from_the_data_draw_without_a_warning():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = {"\u674e\u56db \U0001f642": np.array([1.0, 2.0]), "a $x$": np.array([3.0])}
    fig = Figure()
    display = ConditionsEpsilonDisplay.from_epsilons({"m": names}, ax=fig.subplots())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FigureCanvasAgg(fig).draw()
    shown = [t.get_text() for t in display.axes_[0].get_yticklabels()]
    assert shown == [drawable_text(n) for n in names]
    assert shown == ["\\u674e\\u56db \\U0001f642", "a \\$x\\$"]
