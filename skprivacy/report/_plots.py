# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Report figures: the registry's plots drawn by skprivacy.plotting's displays.

Each figure is a bare matplotlib ``Figure`` (no pyplot, no GUI backend, no
global figure registry) rendered by the Agg canvas into base64 PNG.
"""

from functools import partial

from skprivacy.plotting import EpsilonDistributionDisplay, figure_png
from skprivacy.report._registry import METHODS

__all__ = ["epsilon_columns", "figures"]


def epsilon_columns(results, pairs):
    """Return ``[(pairs column, label, ceiling column or None)]`` of per-pair ε.

    In the results' (the registry's) order: point estimates, most trusted
    first, then certificates; only columns present in ``pairs`` with a value.
    """
    return [
        (e["epsilon_column"], e["epsilon_label"], e.get("ceiling_column"))
        for e in results.values()
        if e.get("epsilon_column") in pairs.columns
        and pairs[e["epsilon_column"]].notna().any()
    ]


def figures(ctx, selected, pairs, results):
    """Return ``{name: (caption, base64 PNG)}`` for every plot the results allow."""
    out = {}
    series = {
        label: pairs[column].dropna().to_numpy(dtype=float)
        for column, label, _ in epsilon_columns(results, pairs)
    }
    if series:
        out["epsilon"] = (
            "Per-method epsilon distributions across the audited pairs "
            "(certificates are lower bounds, the others point estimates).",
            figure_png(
                lambda fig: EpsilonDistributionDisplay.from_epsilons(
                    series, ax=fig.subplots()
                ),
                (6.8, 0.9 + 0.6 * len(series)),
            ),
        )
    for name in selected:
        fitted = ctx.fitted.get(name)
        if fitted is None:
            continue
        for plot in METHODS[name].figures:
            draw = partial(plot.draw, fitted, ctx)
            out[plot.name] = (plot.caption, figure_png(draw, plot.figsize))
    return out
