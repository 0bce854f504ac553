# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-pair ε of several audit conditions side by side: one panel per method."""

import numpy as np

from skprivacy.plotting._base import draw_distributions, drawable_text, get_axes_grid

__all__ = ["ConditionsEpsilonDisplay"]


class ConditionsEpsilonDisplay:
    """Per-pair ε distributions of several conditions, one panel per method.

    The figure behind Table I of a multi-condition audit: in each method's
    panel, one horizontal box per condition of the per-pair ε on the pairs the
    table summarises (the box's line is the table's median, its right end
    beyond the whiskers reaches the table's maximum). Methods get their own
    ε axis because their scales differ by orders of magnitude (GaussMech and
    KDE-LR in the hundreds or thousands, MMD-TV below 1.763). Infinite values
    (ROC-HT's exact separations) are drawn as a marker in a slot right of the
    finite ones (past a dotted line), with their count.
    Build it with :meth:`from_report` (a
    :class:`~skprivacy.report.ConditionsReport`) or :meth:`from_epsilons`.

    Parameters
    ----------
    epsilons : dict of str to dict of str to ndarray
        ``{method: {condition: per-pair ε}}`` (may contain ``inf``; NaN is
        ignored), in drawing order (panels left to right, conditions top to
        bottom).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        One Axes per method.
    figure_ : matplotlib Figure
        Figure containing ``axes_``.
    distributions_ : dict of str to dict
        The artists ``boxplot`` or ``violinplot`` returned, per method.
    n_infinite_ : dict of str to dict of str to int
        Number of infinite values per method and condition.
    infinite_markers_ : dict of str to matplotlib PathCollection or None
        Per method, the markers of the conditions with infinite values (one
        per such condition), or None.

    See Also
    --------
    skprivacy.audit_conditions : The multi-condition audit whose Table I it draws.
    EpsilonDistributionDisplay : Several methods on one condition.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.plotting import ConditionsEpsilonDisplay
    >>> eps = {"GaussMech": {"a": np.array([100.0, 120.0]), "b": np.array([40.0])},
    ...        "MMD-TV": {"a": np.array([0.9, 1.1]), "b": np.array([0.4, 0.5])}}
    >>> display = ConditionsEpsilonDisplay.from_epsilons(eps)
    >>> [ax.get_title() for ax in display.axes_]
    ['GaussMech', 'MMD-TV']
    """

    def __init__(self, *, epsilons):
        self.epsilons = epsilons

    def plot(self, ax=None, *, kind="box", xscale="auto", n_cols=None, **kwargs):
        """Draw the distributions.

        Parameters
        ----------
        ax : matplotlib Axes, list of Axes or None, default=None
            One Axes per method, or one Axes on a grid whose cell is split
            into one panel per method; None creates a figure.
        kind : {"box", "violin"}, default="box"
            Box plots or violins.
        xscale : str, default="auto"
            Scale of each ε axis: ``"auto"`` is ``"log"`` for a method whose
            finite values are positive and span more than a factor of 10,
            ``"symlog"`` (linear below 1, logarithmic above) when they span
            more than 10 from 0, otherwise ``"linear"``; any matplotlib scale
            name applies to every panel.
        n_cols : int or None, default=None
            Panels per row (None: every panel in one row); condition names
            label the first panel of each row.
        **kwargs : dict
            Passed to matplotlib's ``boxplot`` or ``violinplot``.

        Returns
        -------
        display : ConditionsEpsilonDisplay
            The display, with its artists.
        """
        if not self.epsilons:
            raise ValueError("epsilons is empty: no method to draw.")
        methods = list(self.epsilons)
        conditions = list(
            dict.fromkeys(c for per in self.epsilons.values() for c in per)
        )
        n_cols = len(methods) if n_cols is None else max(1, min(n_cols, len(methods)))
        n_rows = -(-len(methods) // n_cols)
        self.figure_, self.axes_ = get_axes_grid(
            ax,
            len(methods),
            figsize=(2.9 * n_cols + 1.2, n_rows * (0.9 + 0.45 * len(conditions))),
            n_cols=n_cols,
        )
        # matplotlib is imported on the first figure only (an optional view).
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        self.distributions_, self.n_infinite_, self.infinite_markers_ = {}, {}, {}
        labels = [drawable_text(c) for c in conditions]
        for i, (method, axis) in enumerate(zip(methods, self.axes_)):
            data, infinite = [], {}
            for condition in conditions:
                eps = np.asarray(
                    self.epsilons[method].get(condition, []), dtype=float
                ).ravel()
                eps = eps[~np.isnan(eps)]
                infinite[condition] = int(np.isinf(eps).sum())
                data.append(eps[np.isfinite(eps)])
            self.n_infinite_[method] = infinite
            self.distributions_[method] = draw_distributions(
                axis, data, labels, kind=kind, **kwargs
            )
            finite = np.concatenate([d for d in data if len(d)] or [np.zeros(0)])
            scale = _scale(xscale, finite)
            axis.set_xscale(scale, **({"linthresh": 1.0} if scale == "symlog" else {}))
            if scale == "log":
                # Ticks at 1, 2, 5 x 10^k labelled as plain numbers, the
                # minor ticks unlabelled: no labels run into each other.
                axis.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.xaxis.set_major_formatter(FuncFormatter(_plain))
                axis.xaxis.set_minor_formatter(NullFormatter())
            elif finite.size:
                axis.set_xlim(left=-0.05 * max(1.0, float(finite.max())))
            else:
                axis.set_xlim(-0.05, 1.0)  # epsilon is never negative
            self.infinite_markers_[method] = _draw_infinite(
                axis, list(infinite.values()), scale
            )
            axis.set_title(drawable_text(method), fontsize=9)
            axis.set_xlabel("per-pair epsilon", fontsize=8)
            axis.tick_params(labelsize=7)
            axis.grid(axis="x", alpha=0.3)
            if i % n_cols:
                axis.tick_params(labelleft=False)
        return self

    @classmethod
    def from_report(cls, report, *, ax=None, **kwargs):
        """Draw the Table I prefix of a multi-condition audit.

        Parameters
        ----------
        report : ConditionsReport
            Returned by :func:`~skprivacy.audit_conditions` (or loaded): any
            object whose ``prefix_epsilons()`` gives ``{method: {condition:
            per-pair ε}}``.
        ax : matplotlib Axes, list of Axes or None, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ConditionsEpsilonDisplay
            The plotted display.
        """
        if not callable(getattr(report, "prefix_epsilons", None)):
            raise TypeError(
                "ConditionsEpsilonDisplay.from_report needs a ConditionsReport "
                f"(from skprivacy.audit_conditions); got {type(report).__name__}."
            )
        return cls(epsilons=report.prefix_epsilons()).plot(ax=ax, **kwargs)

    @classmethod
    def from_epsilons(cls, epsilons, *, ax=None, **kwargs):
        """Draw per-pair ε given as arrays.

        Parameters
        ----------
        epsilons : dict of str to dict of str to array-like
            ``{method: {condition: per-pair ε}}``.
        ax : matplotlib Axes, list of Axes or None, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ConditionsEpsilonDisplay
            The plotted display.
        """
        if not isinstance(epsilons, dict) or not all(
            isinstance(v, dict) for v in epsilons.values()
        ):
            raise TypeError(
                "epsilons must be a dict {method: {condition: per-pair epsilon}}."
            )
        return cls(epsilons=epsilons).plot(ax=ax, **kwargs)


def _scale(xscale, finite):
    """Return the ε axis scale: log only where the values span more than a decade."""
    if xscale != "auto":
        return xscale
    if not finite.size or finite.max() <= 10:
        return "linear"
    if finite.min() > 0:
        return "log" if finite.max() > 10 * finite.min() else "linear"
    return "symlog"


def _plain(value, _):
    return f"{value:g}"


def _draw_infinite(axis, counts, scale):
    """Draw one marker per row with infinite values in a slot right of the data."""
    rows = [len(counts) - i for i, k in enumerate(counts) if k]
    if not rows:
        return None
    left, right = axis.get_xlim()
    if scale == "log":
        edge, slot = right, right * (right / left) ** 0.12
        far = slot * (right / left) ** 0.08
    else:
        width = right - left
        edge, slot, far = right, right + 0.12 * width, right + 0.2 * width
    axis.axvline(edge, color="0.5", lw=0.6, ls=":")
    markers = axis.scatter(
        [slot] * len(rows), rows, marker=">", s=24, color="crimson", zorder=3
    )
    for row, k in zip(rows, [k for k in counts if k]):
        axis.annotate(
            f"{k} inf",
            (slot, row),
            xytext=(0, 5),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=6,
        )
    # The slot gets the tick "inf"; no finite tick is drawn past the line.
    ticks = [t for t in axis.get_xticks() if left <= t <= edge]
    labels = [_plain(t, None) for t in ticks]
    axis.set_xticks([*ticks, slot], [*labels, "inf"])
    axis.set_xlim(left, far)
    return markers
