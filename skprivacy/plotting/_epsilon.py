# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Distributions of per-pair ε of one or several pair auditors on one axis."""

import numpy as np

from skprivacy.plotting._base import draw_distributions, get_axes
from skprivacy.utils._sklearn import check_is_fitted

__all__ = ["EpsilonDistributionDisplay"]


def _auditor_series(estimator, column, label):
    """``(label, values)`` of one fitted pair auditor."""
    check_is_fitted(estimator)
    results = getattr(estimator, "results_", None)
    if results is None or not hasattr(estimator, "_score_column_name"):
        raise TypeError(
            "EpsilonDistributionDisplay.from_estimator needs fitted pair auditors "
            f"(with results_); got {type(estimator).__name__}."
        )
    column = estimator._score_column_name() if column is None else column
    if column not in results.columns:
        raise ValueError(
            f"{type(estimator).__name__}.results_ has no column {column!r}; "
            f"columns: {list(results.columns)}."
        )
    if label is None:
        label = type(estimator).__name__
        if getattr(estimator, "guarantee_", None) == "certificate":
            label += " (certificate)"
    return label, results[column].to_numpy(dtype=float)


class EpsilonDistributionDisplay:
    """Distributions of per-pair ε across audited identity pairs.

    One horizontal box (or violin) per series, e.g. per auditor, on a shared
    symlog axis; infinite values (ROC-HT's exact separations) cannot be drawn
    and are counted next to their series. Build it with
    :meth:`from_estimator` (fitted pair auditors) or :meth:`from_epsilons`
    (arrays of per-pair ε), then it is plotted; :meth:`plot` redraws it.

    Parameters
    ----------
    epsilons : dict of str to ndarray
        Per-pair ε of each series (may contain ``inf``; NaN is ignored), in
        drawing order (the first series on top).

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the distributions.
    figure_ : matplotlib Figure
        Figure containing ``ax_``.
    distributions_ : dict
        The artists returned by ``boxplot`` or ``violinplot``.
    n_infinite_ : dict of str to int
        Number of infinite values of each series.

    See Also
    --------
    skprivacy.MMDTVAuditor : One of the pair auditors whose ``results_`` it draws.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy import GaussMechAuditor, MMDTVAuditor
    >>> from skprivacy.plotting import EpsilonDistributionDisplay
    >>> X, ids = make_identity_embeddings(6, 10, 8, random_state=0)
    >>> auditors = {"GaussMech": GaussMechAuditor().fit(X, ids),
    ...             "MMD-TV": MMDTVAuditor().fit(X, ids)}
    >>> display = EpsilonDistributionDisplay.from_estimator(auditors)
    >>> [t.get_text() for t in display.ax_.get_yticklabels()]
    ['GaussMech (n=15)', 'MMD-TV (n=15)']
    """

    def __init__(self, *, epsilons):
        self.epsilons = epsilons

    def plot(self, ax=None, *, kind="box", xscale="symlog", title=None, **kwargs):
        """Draw the distributions.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        kind : {"box", "violin"}, default="box"
            Box plots or violins.
        xscale : str, default="symlog"
            Scale of the ε axis (``"symlog"`` is linear below 1, logarithmic
            above, so GaussMech's and KDE-LR's large values and MMD-TV's
            values below 1.763 share one axis).
        title : str, default=None
            Axes title; None uses "Epsilon across audited identity pairs".
        **kwargs : dict
            Passed to matplotlib's ``boxplot`` or ``violinplot``.

        Returns
        -------
        display : EpsilonDistributionDisplay
            The display, with its artists.
        """
        self.figure_, self.ax_ = get_axes(
            ax, figsize=(6.8, 0.6 + 0.75 * len(self.epsilons))
        )
        labels, data, self.n_infinite_ = [], [], {}
        for label, eps in self.epsilons.items():
            eps = np.asarray(eps, dtype=float)
            eps = eps[~np.isnan(eps)]
            self.n_infinite_[label] = int(np.isinf(eps).sum())
            labels.append(f"{label} (n={len(eps)})")
            data.append(eps[np.isfinite(eps)])
        self.distributions_ = draw_distributions(
            self.ax_, data, labels, kind=kind, **kwargs
        )
        n = len(labels)
        for i, k in enumerate(self.n_infinite_.values()):
            if k:
                self.ax_.annotate(
                    f"+{k} infinite",
                    (1.0, n - i),
                    xycoords=("axes fraction", "data"),
                    ha="right",
                    va="bottom",
                    fontsize=8,
                )
        self.ax_.set_xscale(
            xscale, **({"linthresh": 1.0} if xscale == "symlog" else {})
        )
        if xscale != "log":
            self.ax_.set_xlim(left=-0.05)  # epsilon is never negative
        self.ax_.set_xlabel(
            "per-pair epsilon" + (f" ({xscale} scale)" if xscale != "linear" else "")
        )
        self.ax_.set_title(
            "Epsilon across audited identity pairs" if title is None else title
        )
        self.ax_.grid(axis="x", alpha=0.3)
        return self

    @classmethod
    def from_estimator(cls, estimator, *, column=None, ax=None, **kwargs):
        """Draw the per-pair ε of one or several fitted pair auditors.

        Parameters
        ----------
        estimator : pair auditor, list of them, or dict of str to pair auditor
            Fitted :class:`~skprivacy.GaussMechAuditor`,
            :class:`~skprivacy.KDELRAuditor`, :class:`~skprivacy.MMDTVAuditor`,
            :class:`~skprivacy.ROCHTAuditor`,
            :class:`~skprivacy.ROCHTCertifier` (or any
            :class:`~skprivacy.auditors.BasePairAuditor`). A dict names the
            series; otherwise the class name is used, with "(certificate)"
            when the auditor's ``guarantee_`` is a certificate.
        column : str, default=None
            Column of ``results_`` to draw; None uses the column the auditor
            scores (``epsilon``, or ``epsilon_lower`` for a certified
            MMD-TV audit).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : EpsilonDistributionDisplay
            The plotted display.
        """
        if isinstance(estimator, dict):
            items = list(estimator.items())
        elif isinstance(estimator, list | tuple):
            items = [(None, est) for est in estimator]
        else:
            items = [(None, estimator)]
        series = dict(_auditor_series(est, column, label) for label, est in items)
        if len(series) < len(items):
            raise ValueError(
                "Two series have the same label; pass a dict to name them."
            )
        return cls(epsilons=series).plot(ax=ax, **kwargs)

    @classmethod
    def from_epsilons(cls, epsilons, *, ax=None, **kwargs):
        """Draw per-pair ε given as arrays.

        Parameters
        ----------
        epsilons : dict of str to array-like
            Per-pair ε of each series (e.g. ``auditor.results_["epsilon"]``,
            or a column of :func:`~skprivacy.auditors.kde_lr_alpha_sweep`).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : EpsilonDistributionDisplay
            The plotted display.

        Examples
        --------
        >>> import numpy as np
        >>> from skprivacy.plotting import EpsilonDistributionDisplay
        >>> display = EpsilonDistributionDisplay.from_epsilons(
        ...     {"ROC-HT": [0.5, 1.2, np.inf], "MMD-TV": [0.2, 0.3, 0.4]})
        >>> display.n_infinite_
        {'ROC-HT': 1, 'MMD-TV': 0}
        """
        if not isinstance(epsilons, dict) or not epsilons:
            raise ValueError(
                "epsilons must be a non-empty dict {label: per-pair epsilons}."
            )
        series = {
            str(label): np.asarray(eps, dtype=float).ravel()
            for label, eps in epsilons.items()
        }
        return cls(epsilons=series).plot(ax=ax, **kwargs)
