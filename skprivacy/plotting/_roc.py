# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The out-of-fold ROC of one identity pair with its KOV ε operating point."""

import numpy as np
from sklearn.metrics import auc

from skprivacy.auditors import ROCHTAuditor, kov_epsilon, roc_operating_points
from skprivacy.plotting._base import (
    check_fitted,
    drawable_text,
    get_axes,
    set_roc_axes,
)

__all__ = ["PairROCDisplay"]


class PairROCDisplay:
    """ROC of an identity pair and the operating point of its ROC-HT ε.

    The curve of ``ROCHTAuditor`` for one pair (pooled out-of-fold scores,
    positive class = the pair's second identity) with the operating point
    that maximises the Kairouz–Oh–Viswanath bound
    :func:`~skprivacy.auditors.kov_epsilon`. Build it with
    :meth:`from_estimator` (a fitted :class:`~skprivacy.ROCHTAuditor` and its
    data) or :meth:`from_predictions` (labels and scores).

    Parameters
    ----------
    fpr, tpr : ndarray of shape (n_points,)
        Every operating point of the ROC (no point dropped), from ``(0, 0)``
        to ``(1, 1)``.
    epsilon : float
        KOV ε maximised over the operating points (a point estimate; may be
        ``inf``).
    kov_fpr, kov_tpr : float
        The maximising operating point.
    roc_auc : float, default=None
        Area under the curve.
    pair : tuple, default=None
        Identity labels ``(id_a, id_b)`` for the title.
    delta : float, default=0.0
        δ of the (ε, δ) statement.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the ROC.
    figure_ : matplotlib Figure
        Figure containing ``ax_``.
    line_ : matplotlib Line2D
        The ROC curve.
    chance_level_ : matplotlib Line2D
        The diagonal.
    kov_point_ : matplotlib PathCollection
        The KOV operating point.
    region_ : list of matplotlib Line2D
        With ``show_region``: the boundary of the ROC region every
        (ε, δ)-DP test obeys at the attained ε; empty otherwise.

    See Also
    --------
    skprivacy.ROCHTAuditor : The per-pair audit whose curve this is.
    sklearn.metrics.RocCurveDisplay : The general ROC display.

    Notes
    -----
    An (ε, δ)-DP mechanism confines every test to ``TPR <= e^ε FPR + δ`` and
    ``1 - FPR <= e^ε (1 - TPR) + δ``; ``show_region`` draws these two lines
    for the attained ε, which touch the curve at the KOV point.

    Examples
    --------
    >>> from skprivacy.plotting import PairROCDisplay
    >>> display = PairROCDisplay.from_predictions(
    ...     [0, 0, 0, 1, 1, 1], [0.9, 0.2, 0.5, 0.1, 0.6, 0.8])
    >>> round(display.epsilon, 3), round(display.roc_auc, 3)
    (0.693, 0.444)
    """

    def __init__(
        self,
        *,
        fpr,
        tpr,
        epsilon,
        kov_fpr,
        kov_tpr,
        roc_auc=None,
        pair=None,
        delta=0.0,
    ):
        self.fpr = fpr
        self.tpr = tpr
        self.epsilon = epsilon
        self.kov_fpr = kov_fpr
        self.kov_tpr = kov_tpr
        self.roc_auc = roc_auc
        self.pair = pair
        self.delta = delta

    def plot(
        self, ax=None, *, show_region=False, log_scale=False, title=None, **kwargs
    ):
        """Draw the ROC, the chance diagonal and the KOV point.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        show_region : bool, default=False
            Also draw the boundary of the (ε, δ)-DP region at the attained ε
            (see Notes of the class).
        log_scale : bool, default=False
            Logarithmic FPR and TPR axes, from half the smallest non-zero
            FPR: the low false-positive end of the curve, where the KOV point
            of a large ε lies.
        title : str, default=None
            Axes title; None names the pair and the AUC.
        **kwargs : dict
            Passed to ``ax.plot`` for the curve (default label "ROC";
            ``from_estimator`` uses "out-of-fold ROC").

        Returns
        -------
        display : PairROCDisplay
            The display, with its artists.
        """
        self.figure_, self.ax_ = get_axes(ax, figsize=(4.4, 4.2))
        ax = self.ax_
        kwargs.setdefault("drawstyle", "steps-post")
        kwargs.setdefault("label", "ROC")
        (self.line_,) = ax.plot(self.fpr, self.tpr, **kwargs)
        positive = np.asarray(self.fpr)[np.asarray(self.fpr) > 0]
        fpr_min = positive.min() / 2 if log_scale and positive.size else 1e-4
        chance = np.geomspace(fpr_min, 1, 50) if log_scale else [0, 1]
        (self.chance_level_,) = ax.plot(
            chance, chance, ls=":", c="grey", label="chance"
        )
        eps_txt = "inf" if np.isinf(self.epsilon) else f"{self.epsilon:.2f}"
        self.kov_point_ = ax.scatter(
            [self.kov_fpr],
            [self.kov_tpr],
            c="crimson",
            zorder=3,
            label=f"KOV point (epsilon {eps_txt})",
        )
        self.region_ = []
        if show_region and np.isfinite(self.epsilon):
            grid = np.linspace(0.0, 1.0, 201)
            slope = np.exp(self.epsilon)
            name = "(epsilon, delta)" if self.delta else "epsilon"
            upper = np.minimum(slope * grid + self.delta, 1.0)
            lower = np.clip(1.0 - (1.0 - grid - self.delta) / slope, 0.0, 1.0)
            self.region_ = ax.plot(
                grid, upper, c="crimson", lw=0.8, ls="--", label=f"{name}-DP boundary"
            ) + ax.plot(grid, lower, c="crimson", lw=0.8, ls="--")
        set_roc_axes(ax, log_scale=log_scale, fpr_min=fpr_min)
        if title is None:
            pair = self.pair and [drawable_text(label) for label in self.pair]
            head = "ROC" if pair is None else f"{pair[0]} vs {pair[1]}"
            title = head if self.roc_auc is None else f"{head}\nAUC {self.roc_auc:.3f}"
        ax.set_title(title, fontsize=10)
        ax.legend(loc="lower right", fontsize=8)
        return self

    @classmethod
    def from_predictions(
        cls, y_true, y_score, *, delta=0.0, pair=None, ax=None, **kwargs
    ):
        """Draw the ROC and KOV point of binary labels and scores.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Binary labels; truthy = positive (the pair's second identity).
        y_score : array-like of shape (n_samples,)
            Scores, higher = more positive (e.g. out-of-fold probabilities).
        delta : float, default=0.0
            δ of the (ε, δ) statement.
        pair : tuple, default=None
            Identity labels ``(id_a, id_b)`` for the title.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PairROCDisplay
            The plotted display.
        """
        fpr, tpr, _ = roc_operating_points(y_true, y_score)
        epsilon, k = kov_epsilon(fpr, tpr, delta, return_index=True)
        display = cls(
            fpr=fpr,
            tpr=tpr,
            epsilon=epsilon,
            kov_fpr=float(fpr[k]),
            kov_tpr=float(tpr[k]),
            roc_auc=float(auc(fpr, tpr)),
            pair=pair,
            delta=float(delta),
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, pair=None, ax=None, **kwargs):
        """Draw the ROC of one pair of a fitted :class:`~skprivacy.ROCHTAuditor`.

        The out-of-fold scores are recomputed with the auditor's folds and
        classifier seed (:meth:`~skprivacy.ROCHTAuditor.pair_scores`), so the
        curve is the one behind that pair's row of ``results_``.

        Parameters
        ----------
        estimator : ROCHTAuditor
            Fitted on ``(X, y)`` with an integer ``random_state``.
        X : array-like of shape (n_samples, n_features)
            The embeddings it was fitted on.
        y : array-like of shape (n_samples,)
            Their identity labels.
        pair : tuple of two identity labels, default=None
            The pair to draw. None draws the most separable audited pair
            (largest AUC, then largest ε).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PairROCDisplay
            The plotted display.

        Examples
        --------
        >>> from skprivacy.datasets import make_identity_embeddings
        >>> from skprivacy import ROCHTAuditor
        >>> from skprivacy.plotting import PairROCDisplay
        >>> X, ids = make_identity_embeddings(4, 20, 16, noise=2.0, random_state=0)
        >>> audit = ROCHTAuditor(n_pairs=3).fit(X, ids)
        >>> display = PairROCDisplay.from_estimator(audit, X, ids)
        >>> best = audit.results_.sort_values(["auc", "epsilon"]).iloc[-1]
        >>> bool(display.epsilon == best.epsilon), display.pair == (best.id_a, best.id_b)
        (True, True)
        """
        check_fitted(estimator, ROCHTAuditor, "PairROCDisplay.from_estimator")
        results = estimator.results_
        if pair is None:
            row = results.sort_values(
                ["auc", "epsilon"], ascending=False, kind="stable"
            ).iloc[0]
            pair = (row["id_a"], row["id_b"])
        y_true, y_score = estimator.pair_scores(X, y, pair)
        # The audit's orientation: id_a (label 0) is the identity listed first.
        ids = estimator.identities_
        first, second = sorted(pair, key=lambda label: np.flatnonzero(ids == label)[0])
        kwargs.setdefault("label", "out-of-fold ROC")
        return cls.from_predictions(
            y_true,
            y_score,
            delta=estimator.delta,
            pair=(first, second),
            ax=ax,
            **kwargs,
        )
