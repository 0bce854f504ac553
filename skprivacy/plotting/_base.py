# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the Display objects (axes creation, grouped distributions).

Also bare figures for files: :func:`new_figure` (no pyplot, no GUI backend,
no global figure registry) rendered by :func:`png` into base64 PNG.
"""

import base64
import functools
import io

import numpy as np

from skprivacy.utils._sklearn import check_is_fitted

__all__ = [
    "check_fitted",
    "draw_distributions",
    "drawable_text",
    "get_axes",
    "get_axes_grid",
    "new_figure",
    "png",
    "set_roc_axes",
]


def check_fitted(estimator, cls, caller):
    """Raise unless ``estimator`` is a fitted instance of ``cls``."""
    if not isinstance(estimator, cls):
        raise TypeError(
            f"{caller} needs a fitted {cls.__name__}; got {type(estimator).__name__}."
        )
    check_is_fitted(estimator)


@functools.lru_cache(maxsize=8)
def _codepoints(font_path):
    # matplotlib is imported on the first figure only (an optional view).
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(font_path).get_charmap())


def drawable_text(text):
    r"""Return ``text`` as matplotlib's default font can draw it, literally.

    Labels come from the data (identity labels, condition and file names): a
    character the font lacks (CJK, emoji) is written as its escape
    (``\u674e``) instead of an empty box and a warning, and ``$`` is drawn
    as itself, not read as the start of mathematical text.

    Parameters
    ----------
    text : object
        The label (converted with ``str``).

    Returns
    -------
    text : str

    Examples
    --------
    >>> from skprivacy.plotting._base import drawable_text
    >>> print(drawable_text("p01 \u674e $5"))
    p01 \u674e \$5
    """
    # matplotlib is imported on the first figure only (an optional view).
    from matplotlib.font_manager import FontProperties, findfont

    covered = _codepoints(findfont(FontProperties()))
    chars = [
        c
        if ord(c) in covered or not c.isprintable()
        else c.encode("unicode_escape").decode("ascii")
        for c in str(text)
    ]
    return "".join(chars).replace("$", r"\$")


def get_axes(ax, figsize=None):
    """Return ``(figure, ax)``, creating a pyplot figure when ``ax`` is None."""
    if ax is None:
        # matplotlib is imported on the first figure only (an optional view).
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax


def set_roc_axes(ax, *, log_scale=False, fpr_min=1e-4):
    """Label ROC axes; linear from 0 to 1, or logarithmic from ``fpr_min`` to 1.

    Log axes show the low false-positive rates that membership and
    verification audits read (FPR 1e-3 and below); FPR = 0 has no place on
    them.
    """
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    if log_scale:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(fpr_min, 1.05)
        ax.set_ylim(fpr_min, 1.05)
    else:
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_aspect("equal")


def get_axes_grid(ax, n_panels, figsize=None, n_cols=None):
    """``(figure, axes)`` with one Axes per panel, ``n_cols`` a row (None: one row).

    ``ax`` may be None (a new figure), a sequence of ``n_panels`` Axes, or one
    Axes: used as is for one panel, otherwise its grid cell is split.
    """
    n_cols = n_panels if n_cols is None else max(1, min(n_cols, n_panels))
    n_rows = -(-n_panels // n_cols)
    if ax is None:
        # matplotlib is imported on the first figure only (an optional view).
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(
            n_rows, n_cols, figsize=figsize, layout="constrained", squeeze=False
        )
        for extra in axes.ravel()[n_panels:]:
            extra.remove()
        return fig, axes.ravel()[:n_panels]
    if isinstance(ax, list | tuple | np.ndarray):
        axes = np.asarray(ax, dtype=object).ravel()
        if axes.size != n_panels:
            raise ValueError(
                f"Expected {n_panels} Axes (one per panel); got {axes.size}."
            )
        return axes[0].figure, axes
    if n_panels == 1:
        return ax.figure, np.array([ax], dtype=object)
    spec = ax.get_subplotspec()
    if spec is None:
        raise ValueError(
            f"{n_panels} panels need a list of {n_panels} Axes, or an Axes placed "
            "on a grid (e.g. from plt.subplots) whose cell can be split."
        )
    fig = ax.figure
    ax.remove()
    grid = spec.subgridspec(n_rows, n_cols)
    return fig, np.array(
        [fig.add_subplot(grid[i // n_cols, i % n_cols]) for i in range(n_panels)]
    )


def draw_distributions(ax, data, labels, *, kind="box", colors=None, **kwargs):
    """Horizontal box or violin plots, the first group on top.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    data : list of ndarray
        One 1-D array per group (finite values; an empty group is drawn as
        an empty row).
    labels : list of str
        Tick label of each group.
    kind : {"box", "violin"}, default="box"
        Box plots (quartiles, 1.5 IQR whiskers, outliers) or violins.
    colors : list of color or None, default=None
        Face colour of each group.
    **kwargs : dict
        Passed to :meth:`~matplotlib.axes.Axes.boxplot` or
        :meth:`~matplotlib.axes.Axes.violinplot`.

    Returns
    -------
    artists : dict
        What matplotlib returned.
    """
    n = len(data)
    positions = np.arange(n, 0, -1)
    if kind == "box":
        kwargs.setdefault("showfliers", True)
        kwargs.setdefault("patch_artist", colors is not None)
        values = [d if len(d) else np.array([np.nan]) for d in data]
        artists = ax.boxplot(
            values, positions=positions, orientation="horizontal", **kwargs
        )
        if colors is not None:
            for box, color in zip(artists["boxes"], colors):
                box.set_facecolor(color)
                box.set_alpha(0.6)
    elif kind == "violin":
        keep = [i for i, d in enumerate(data) if len(d)]
        kwargs.setdefault("showmedians", True)
        artists = ax.violinplot(
            [data[i] for i in keep],
            positions=positions[keep],
            orientation="horizontal",
            **kwargs,
        )
        if colors is not None:
            for body, i in zip(artists["bodies"], keep):
                body.set_facecolor(colors[i])
    else:
        raise ValueError(f"kind must be 'box' or 'violin'; got {kind!r}.")
    ax.set_yticks(positions, labels)
    ax.set_ylim(0.4, n + 0.6)
    return artists


def new_figure(figsize):
    """Return a bare matplotlib Figure (constrained layout)."""
    # matplotlib is imported on the first figure only: reports loaded from
    # disk and the command line's start-up do not need it.
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def png(fig):
    """Return the figure as base64 PNG text."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure_png(draw, figsize):
    """Draw on a bare matplotlib Figure and return it as base64 PNG text.

    No pyplot, no GUI backend and no global figure registry are involved:
    the Figure is rendered by the Agg canvas, so this is safe in servers and
    threads (the report's figures are drawn this way).

    Parameters
    ----------
    draw : callable
        ``draw(figure)`` fills the Figure (e.g. ``figure.subplots()`` and a
        display's ``ax=``).
    figsize : tuple of (float, float)
        Width and height in inches.

    Returns
    -------
    png : str
        The PNG image (96 dpi), base64-encoded ASCII.

    Examples
    --------
    >>> import base64
    >>> from skprivacy.plotting import figure_png
    >>> text = figure_png(lambda fig: fig.subplots().plot([0, 1]), (2, 1))
    >>> base64.b64decode(text)[1:4]
    b'PNG'
    """
    if not callable(draw):
        raise TypeError(f"draw must be a callable draw(figure); got {draw!r}.")
    if (
        not isinstance(figsize, tuple | list)
        or len(figsize) != 2
        or not all(isinstance(v, int | float) and 0 < v < 1000 for v in figsize)
    ):
        raise ValueError(
            f"figsize must be (width, height) in inches, each in (0, 1000); got {figsize!r}."
        )
    fig = new_figure(tuple(figsize))
    draw(fig)
    return png(fig)
