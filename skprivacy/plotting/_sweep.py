# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MMD-TV ε as the RBF bandwidth is scaled around the median heuristic."""

import numpy as np

from skprivacy.auditors import mmd_bandwidth_sweep
from skprivacy.plotting._base import get_axes
from skprivacy.utils._constants import MMD_TV_CEILING

__all__ = ["BandwidthSweepDisplay"]


class BandwidthSweepDisplay:
    """Maximum and median MMD-TV ε over pairs, per bandwidth scale.

    Draws the table of :func:`~skprivacy.auditors.mmd_bandwidth_sweep` with
    the ceiling ``2 artanh(sqrt(2)/2) ≈ 1.763`` that an RBF kernel's MMD-TV ε
    can never exceed under the TV map. Build it with :meth:`from_sweep` (the
    table) or :meth:`from_data` (runs the sweep).

    Parameters
    ----------
    bandwidth_scale : ndarray of shape (n_scales,)
        Multipliers of the median-heuristic bandwidth.
    max_epsilon : ndarray of shape (n_scales,)
        Maximum ε over the audited pairs at each scale (point estimates).
    median_epsilon : ndarray of shape (n_scales,), default=None
        Median ε over the pairs at each scale.
    ceiling : float or None, default=MMD_TV_CEILING
        Horizontal reference line; None draws none (e.g. for
        ``bound="gonzalez"``, which has no finite ceiling).

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the sweep.
    figure_ : matplotlib Figure
        Figure containing ``ax_``.
    lines_ : dict of str to matplotlib Line2D
        ``"max"`` and (when given) ``"median"`` curves.
    ceiling_line_ : matplotlib Line2D or None
        The ceiling.

    See Also
    --------
    skprivacy.auditors.mmd_bandwidth_sweep : Computes the table.

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.plotting import BandwidthSweepDisplay
    >>> sweep = pd.DataFrame({"bandwidth_scale": [0.5, 1.0, 2.0],
    ...                       "max_epsilon": [0.9, 1.1, 0.8],
    ...                       "median_epsilon": [0.3, 0.4, 0.3]})
    >>> display = BandwidthSweepDisplay.from_sweep(sweep)
    >>> sorted(display.lines_)
    ['max', 'median']
    """

    def __init__(
        self,
        *,
        bandwidth_scale,
        max_epsilon,
        median_epsilon=None,
        ceiling=MMD_TV_CEILING,
    ):
        self.bandwidth_scale = bandwidth_scale
        self.max_epsilon = max_epsilon
        self.median_epsilon = median_epsilon
        self.ceiling = ceiling

    def plot(self, ax=None, *, title=None):
        """Draw the sweep.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        title : str, default=None
            Axes title; None uses "MMD bandwidth sweep".

        Returns
        -------
        display : BandwidthSweepDisplay
            The display, with its artists.
        """
        self.figure_, self.ax_ = get_axes(ax, figsize=(4.8, 3.4))
        ax = self.ax_
        self.lines_ = {}
        (self.lines_["max"],) = ax.plot(
            self.bandwidth_scale, self.max_epsilon, "o-", label="max over pairs"
        )
        if self.median_epsilon is not None:
            (self.lines_["median"],) = ax.plot(
                self.bandwidth_scale, self.median_epsilon, "s--", label="median"
            )
        self.ceiling_line_ = None
        if self.ceiling is not None:
            self.ceiling_line_ = ax.axhline(
                self.ceiling, c="grey", ls=":", label="RBF ceiling"
            )
        ax.set_xlabel("bandwidth scale (x median heuristic)")
        ax.set_ylabel("MMD-TV epsilon (point estimate)")
        ax.set_title("MMD bandwidth sweep" if title is None else title)
        ax.legend(fontsize=8)
        return self

    @classmethod
    def from_sweep(cls, sweep, *, ceiling=MMD_TV_CEILING, ax=None, **kwargs):
        """Draw a table returned by :func:`~skprivacy.auditors.mmd_bandwidth_sweep`.

        Parameters
        ----------
        sweep : pandas.DataFrame
            Columns ``bandwidth_scale``, ``max_epsilon`` and optionally
            ``median_epsilon``.
        ceiling : float or None, default=MMD_TV_CEILING
            Horizontal reference line (None: none).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : BandwidthSweepDisplay
            The plotted display.
        """
        missing = {"bandwidth_scale", "max_epsilon"} - set(sweep.columns)
        if missing:
            raise ValueError(
                f"The sweep table lacks column(s) {sorted(missing)}; expected the "
                "output of mmd_bandwidth_sweep."
            )
        median = sweep["median_epsilon"] if "median_epsilon" in sweep else None
        display = cls(
            bandwidth_scale=np.asarray(sweep["bandwidth_scale"], dtype=float),
            max_epsilon=np.asarray(sweep["max_epsilon"], dtype=float),
            median_epsilon=None if median is None else np.asarray(median, float),
            ceiling=ceiling,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_data(
        cls,
        X,
        y,
        *,
        scales=(0.5, 0.75, 1.0, 1.5, 2.0),
        bound="tv",
        n_pairs=500,
        n_jobs=None,
        random_state=0,
        ax=None,
        **kwargs,
    ):
        """Run :func:`~skprivacy.auditors.mmd_bandwidth_sweep` and draw it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings.
        y : array-like of shape (n_samples,)
            Identity labels.
        scales : array-like of float, default=(0.5, 0.75, 1.0, 1.5, 2.0)
            Multipliers of the median-heuristic bandwidth.
        bound : {"tv", "gonzalez"}, default="tv"
            MMD-to-ε map; the ceiling line is drawn for ``"tv"`` only.
        n_pairs : int or None, default=500
            Audited prefix of the pair ordering (None: every pair).
        n_jobs : int, default=None
            Number of joblib jobs for the pair loop.
        random_state : int, RandomState instance, Generator or None, default=0
            Seed of the pair ordering.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : BandwidthSweepDisplay
            The plotted display.

        Examples
        --------
        >>> from skprivacy.datasets import make_identity_embeddings
        >>> from skprivacy.plotting import BandwidthSweepDisplay
        >>> X, ids = make_identity_embeddings(5, 10, 8, random_state=0)
        >>> display = BandwidthSweepDisplay.from_data(X, ids, scales=[0.5, 1, 2])
        >>> bool(display.max_epsilon.max() <= display.ceiling)
        True
        """
        sweep = mmd_bandwidth_sweep(
            X,
            y,
            scales=scales,
            bound=bound,
            n_pairs=n_pairs,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        ceiling = MMD_TV_CEILING if bound == "tv" else None
        return cls.from_sweep(sweep, ceiling=ceiling, ax=ax, **kwargs)
