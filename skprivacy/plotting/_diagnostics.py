# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibration displays: permutation p-values and residual Q-Q plots."""

import numpy as np

from skprivacy.auditors import residual_gaussianity
from skprivacy.plotting._base import get_axes, get_axes_grid
from skprivacy.utils._sklearn import check_is_fitted

__all__ = ["PermutationPValueDisplay", "ResidualQQDisplay"]


class PermutationPValueDisplay:
    """Histograms of permutation p-values, e.g. identity pairs versus controls.

    A valid test gives roughly uniform p-values on same-identity split-half
    controls (about 5% below 0.05); identity pairs that differ pile up at the
    smallest attainable value ``1/(m + 1)``. Build it with
    :meth:`from_estimator` (a fitted auditor with permutation tests and,
    optionally, its :func:`~skprivacy.auditors.split_half_controls`) or
    :meth:`from_pvalues`.

    Parameters
    ----------
    pvalues : dict of str to ndarray
        P-values of each series (NaN is ignored).
    n_permutations : int, default=None
        Number ``m`` of permutations behind the p-values (axis label).
    level : float, default=0.05
        Test level, drawn as a vertical line.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the histograms.
    figure_ : matplotlib Figure
        Figure containing ``ax_``.
    bars_ : dict of str to matplotlib BarContainer
        Histogram of each series.
    level_line_ : matplotlib Line2D
        The level.

    See Also
    --------
    skprivacy.MMDTVAuditor : Permutation tests with ``n_permutations``.
    skprivacy.auditors.split_half_controls : Same-identity controls.
    skprivacy.stats.mmd_test : The test on two samples.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy import MMDTVAuditor
    >>> from skprivacy.auditors import split_half_controls
    >>> from skprivacy.plotting import PermutationPValueDisplay
    >>> X, ids = make_identity_embeddings(6, 12, 8, random_state=0)
    >>> auditor = MMDTVAuditor(n_permutations=99).fit(X, ids)
    >>> controls = split_half_controls(auditor, X, ids)
    >>> display = PermutationPValueDisplay.from_estimator(auditor, controls=controls)
    >>> list(display.bars_)
    ['identity pairs', 'split-half controls (same identity)']
    """

    def __init__(self, *, pvalues, n_permutations=None, level=0.05):
        self.pvalues = pvalues
        self.n_permutations = n_permutations
        self.level = level

    def plot(self, ax=None, *, bins=20, title=None):
        """Draw the histograms.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        bins : int, default=20
            Number of equal bins on [0, 1].
        title : str, default=None
            Axes title; None uses "Permutation tests".

        Returns
        -------
        display : PermutationPValueDisplay
            The display, with its artists.
        """
        self.figure_, self.ax_ = get_axes(ax, figsize=(5.6, 3.4))
        ax = self.ax_
        edges = np.linspace(0.0, 1.0, bins + 1)
        self.bars_ = {}
        for label, p in self.pvalues.items():
            p = np.asarray(p, dtype=float)
            _, _, self.bars_[label] = ax.hist(
                p[~np.isnan(p)], bins=edges, alpha=0.7, label=label
            )
        self.level_line_ = ax.axvline(self.level, c="k", ls=":", lw=1)
        m = "" if self.n_permutations is None else f" (m = {self.n_permutations})"
        ax.set_xlabel(f"permutation p-value{m}")
        ax.set_ylabel("count")
        ax.set_title("Permutation tests" if title is None else title)
        ax.legend(fontsize=8)
        return self

    @classmethod
    def from_pvalues(
        cls, pvalues, *, n_permutations=None, level=0.05, ax=None, **kwargs
    ):
        """Draw p-values given as arrays.

        Parameters
        ----------
        pvalues : dict of str to array-like
            P-values of each series.
        n_permutations : int, default=None
            Number of permutations behind them (axis label).
        level : float, default=0.05
            Test level, drawn as a vertical line.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PermutationPValueDisplay
            The plotted display.

        Examples
        --------
        >>> import numpy as np
        >>> from skprivacy.plotting import PermutationPValueDisplay
        >>> rng = np.random.default_rng(0)
        >>> display = PermutationPValueDisplay.from_pvalues(
        ...     {"null": rng.uniform(size=200)}, n_permutations=999)
        >>> display.ax_.get_xlabel()
        'permutation p-value (m = 999)'
        """
        if not isinstance(pvalues, dict) or not pvalues:
            raise ValueError("pvalues must be a non-empty dict {label: p-values}.")
        series = {
            str(k): np.asarray(v, dtype=float).ravel() for k, v in pvalues.items()
        }
        display = cls(pvalues=series, n_permutations=n_permutations, level=level)
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, *, controls=None, level=0.05, ax=None, **kwargs):
        """Draw the permutation p-values of a fitted pair auditor.

        Parameters
        ----------
        estimator : pair auditor
            Fitted with permutation tests (e.g.
            ``MMDTVAuditor(n_permutations=9999)``): its ``results_`` has a
            ``p_value`` column.
        controls : Bunch or pandas.DataFrame, default=None
            The output of :func:`~skprivacy.auditors.split_half_controls` (or
            its ``results`` table) for the same auditor.
        level : float, default=0.05
            Test level, drawn as a vertical line.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PermutationPValueDisplay
            The plotted display.
        """
        check_is_fitted(estimator)
        results = getattr(estimator, "results_", None)
        if results is None or "p_value" not in results.columns:
            raise TypeError(
                "PermutationPValueDisplay.from_estimator needs a fitted pair auditor "
                f"whose results_ has a p_value column; got {type(estimator).__name__}."
            )
        if results["p_value"].isna().all():
            raise ValueError(
                f"{type(estimator).__name__} ran no permutation test; fit it with "
                "n_permutations > 0."
            )
        series = {"identity pairs": results["p_value"].to_numpy(dtype=float)}
        if controls is not None:
            table = getattr(controls, "results", controls)
            series["split-half controls (same identity)"] = table["p_value"].to_numpy(
                dtype=float
            )
        return cls.from_pvalues(
            series,
            n_permutations=getattr(estimator, "n_permutations", None),
            level=level,
            ax=ax,
            **kwargs,
        )


class ResidualQQDisplay:
    """Normal Q-Q plots of pooled within-identity residuals, one per dimension.

    Draws the Q-Q data of :func:`~skprivacy.auditors.residual_gaussianity`
    (standardised residual quantiles against standard normal quantiles, the
    line ``y = x`` for a Gaussian) with each dimension's Shapiro–Wilk
    p-value. Build it with :meth:`from_diagnostic` or :meth:`from_data`.

    Parameters
    ----------
    theoretical : ndarray of shape (n_quantiles,)
        Standard normal quantiles.
    empirical : dict of int to ndarray of shape (n_quantiles,)
        Empirical quantiles of each drawn dimension.
    p_values : dict of int to float
        Shapiro–Wilk p-value of each drawn dimension.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        One Axes per dimension.
    figure_ : matplotlib Figure
        Figure containing the axes.
    lines_ : dict of int to matplotlib Line2D
        Q-Q points of each dimension.

    See Also
    --------
    skprivacy.auditors.residual_gaussianity : Computes the Q-Q data.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.plotting import ResidualQQDisplay
    >>> X, ids = make_identity_embeddings(10, 20, 8, random_state=0)
    >>> display = ResidualQQDisplay.from_data(X, ids)
    >>> len(display.axes_)
    3
    """

    def __init__(self, *, theoretical, empirical, p_values):
        self.theoretical = theoretical
        self.empirical = empirical
        self.p_values = p_values

    def plot(self, ax=None):
        """Draw one Q-Q panel per dimension.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            None creates a figure (with a title); a sequence gives one Axes
            per dimension; a single Axes is used for one dimension, or split.

        Returns
        -------
        display : ResidualQQDisplay
            The display, with its artists.
        """
        dims = list(self.empirical)
        self.figure_, self.axes_ = get_axes_grid(
            ax, len(dims), figsize=(2.6 * len(dims), 2.8)
        )
        self.lines_ = {}
        for ax_, dim in zip(self.axes_, dims):
            (self.lines_[dim],) = ax_.plot(
                self.theoretical, self.empirical[dim], ".", ms=3
            )
            ax_.plot(self.theoretical, self.theoretical, c="crimson", lw=1)
            ax_.set_title(f"dim {dim}: p={self.p_values[dim]:.1e}", fontsize=9)
            ax_.set_xlabel("normal quantile", fontsize=8)
        self.axes_[0].set_ylabel("standardised residual quantile", fontsize=8)
        if ax is None:
            self.figure_.suptitle(
                "Q-Q of pooled within-identity residuals", fontsize=10
            )
        return self

    @classmethod
    def from_diagnostic(cls, diagnostic, *, dimensions=None, ax=None, **kwargs):
        """Draw the output of :func:`~skprivacy.auditors.residual_gaussianity`.

        Parameters
        ----------
        diagnostic : Bunch
            With ``results`` (``dimension``, ``p_value``) and ``qq``.
        dimensions : list of int, default=None
            Dimensions to draw. None draws the least, a median and the most
            Gaussian dimension (smallest, median and largest p-value).
        ax : matplotlib Axes or array-like of Axes, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ResidualQQDisplay
            The plotted display.
        """
        res = diagnostic.results
        p = res["p_value"].to_numpy()
        all_dims = res["dimension"].astype(int).to_numpy()
        if dimensions is None:
            order = np.argsort(p, kind="stable")
            picks = [order[0], order[len(order) // 2], order[-1]]
            dimensions = list(dict.fromkeys(int(all_dims[i]) for i in picks))
        unknown = [d for d in dimensions if d not in diagnostic.qq.columns]
        if unknown:
            raise ValueError(f"No Q-Q data for dimension(s) {unknown}.")
        p_by_dim = dict(zip(all_dims.tolist(), p.tolist()))
        display = cls(
            theoretical=diagnostic.qq["theoretical"].to_numpy(),
            empirical={d: diagnostic.qq[d].to_numpy() for d in dimensions},
            p_values={d: p_by_dim[d] for d in dimensions},
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_data(cls, X, y, *, dimensions=None, random_state=0, ax=None, **kwargs):
        """Run :func:`~skprivacy.auditors.residual_gaussianity` and draw it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings.
        y : array-like of shape (n_samples,)
            Identity labels.
        dimensions : list of int, default=None
            See :meth:`from_diagnostic`.
        random_state : int, RandomState instance, Generator or None, default=0
            Passed to :func:`~skprivacy.auditors.residual_gaussianity`.
        ax : matplotlib Axes or array-like of Axes, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ResidualQQDisplay
            The plotted display.
        """
        diagnostic = residual_gaussianity(X, y, random_state=random_state)
        return cls.from_diagnostic(diagnostic, dimensions=dimensions, ax=ax, **kwargs)
