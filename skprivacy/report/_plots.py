# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Report figures: the registry's plots drawn by skprivacy.plotting's displays.

Each figure is a bare matplotlib ``Figure`` (no pyplot, no GUI backend, no
global figure registry) rendered by the Agg canvas into base64 PNG.
"""

import base64
import io

from skprivacy.report._methods import METHODS

__all__ = ["figures"]


def _new(figsize):
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _epsilons(pairs, selected):
    """Per-pair ε series of the methods that ran, labelled by the registry."""
    series = {}
    for name in selected:
        for column, label in METHODS[name].epsilon_columns.items():
            if column in pairs.columns and pairs[column].notna().any():
                series[label] = pairs[column].dropna().to_numpy(dtype=float)
    return series


def figures(ctx, selected, pairs):
    """Return ``{name: (caption, base64 PNG)}`` for every plot the results allow."""
    from skprivacy.plotting import EpsilonDistributionDisplay

    out = {}
    series = _epsilons(pairs, selected)
    if series:
        fig = _new((6.8, 0.9 + 0.6 * len(series)))
        ax = fig.subplots()
        EpsilonDistributionDisplay.from_epsilons(series, ax=ax)
        ax.set_xlim(left=-0.05)  # epsilon is never negative
        out["epsilon"] = (
            "Per-method epsilon distributions across the audited pairs "
            "(certificates are lower bounds, the others point estimates).",
            _png(fig),
        )
    for name in selected:
        fitted = ctx.fitted.get(name)
        if fitted is None:
            continue
        for plot in METHODS[name].plots:
            fig = _new(plot.figsize)
            plot.draw(fitted, ctx, fig)
            out[plot.name] = (plot.caption, _png(fig))
    return out
