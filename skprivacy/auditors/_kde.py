# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""KDE-LR: per-dimension kernel-density log-ratio ε diagnostic per identity pair."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import clone

from skprivacy.auditors._base import (
    ELEMENT_RATE,
    STREAM_RATE,
    BasePairAuditor,
    pair_identity_rows,
)
from skprivacy.auditors._description import describe_kdelr
from skprivacy.stats import kde_lr_per_dimension, silverman_bandwidth
from skprivacy.utils._random import seed_from
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, validate_params

__all__ = ["KDELRAuditor", "kde_lr_alpha_sweep"]


def _identity_bandwidths(data, pairs):
    # Only the identities occurring in the pairs (slot maps codes to rows).
    slot, Xs, starts = pair_identity_rows(data, pairs)
    h = np.array(
        [silverman_bandwidth(Xs[s:e]) for s, e in zip(starts[:-1], starts[1:])]
    ).reshape(len(starts) - 1, Xs.shape[1])
    return {"slot": slot, "X": Xs, "starts": starts, "h": h}


class KDELRAuditor(BasePairAuditor):
    r"""Per-dimension kernel-density log-ratio ε diagnostic per pair (paper 000).

    For each audited pair (A, B) and each embedding dimension, Gaussian KDEs
    of A's and B's marginals (separate Silverman bandwidths) are evaluated on
    a common grid, optionally mixed with a uniform density, floored, and the
    largest absolute log-ratio over the grid is taken; the per-dimension
    values are summed (basic composition over dimensions).

    **This is a point estimate and a diagnostic, not a certificate**: the
    KDE is a plug-in estimate, its tails are governed by the floor and the
    smoothing weight, and summing marginal values ignores dependence between
    dimensions. ``score()`` returns the per-pair median.

    Parameters
    ----------
    alpha : float, default=0.0
        Weight of the uniform mixture, in [0, 1] (paper: 0 and 1e-2).
    grid_size : int, default=201
        Grid points per dimension.
    margin : float, default=3.0
        The grid spans both samples' range extended by ``margin`` times the
        larger bandwidth on each side.
    floor : float, default=1e-12
        Densities are floored at this value before taking logs.
    n_pairs : int or None, default=100
        Number of pairs audited: a prefix of the seeded pair ordering
        (:func:`~skprivacy.utils.identity_pairs`). ``None`` audits every pair.
    n_jobs : int, default=None
        Number of jobs for the pair loop, run through joblib in chunks of
        pairs (so ``joblib.parallel_config(backend="dask")`` works).
        ``None`` means 1 unless in a :obj:`joblib.parallel_config` context.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering.

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per audited pair: ``id_a``, ``id_b``, ``epsilon`` (sum over
        dimensions), ``max_dimension_epsilon`` and ``argmax_dimension``.
    epsilon_per_dimension_ : ndarray of shape (n_pairs_audited, n_features)
        Per-dimension maxima :math:`\varepsilon_{d'}`, rows aligned with
        ``results_`` (also ``pair_details_["epsilon_per_dimension"]``).
    pairs_ : ndarray of shape (n_pairs_audited, 2)
        Identity codes of the audited pairs (indices into ``identities_``).
    identities_ : ndarray of shape (n_identities,)
        Audited identity labels.
    drop_report_ : dict
        Rows dropped by the input layer, by reason.
    summary_ : float
        Per-pair median of ``epsilon`` (the value of ``score()``).
    summary_kind_ : str
        ``"median"``.
    guarantee_ : str
        ``"point estimate"``.
    pair_details_ : dict
        ``{"epsilon_per_dimension": ndarray}``.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

    See Also
    --------
    kde_lr_alpha_sweep : ε for several smoothing weights on the same pairs.
    GaussMechAuditor : Parametric (Gaussian) counterpart.
    skprivacy.stats.kde_lr_per_dimension : The per-pair computation.

    Notes
    -----
    Per dimension :math:`d'`: :math:`\hat p_A, \hat p_B` are Gaussian KDEs
    with Silverman bandwidths :math:`h = 0.9 \min(\hat\sigma,
    \mathrm{IQR}/1.349) n^{-1/5}` (:func:`~skprivacy.stats.silverman_bandwidth`), evaluated on
    ``grid_size`` points spanning :math:`[\min, \max]` of both samples
    :math:`\pm` ``margin`` :math:`\cdot \max(h_A, h_B)`;
    :math:`\bar p = (1-\alpha)\hat p + \alpha u` with :math:`u` uniform on the
    grid interval, :math:`\tilde p = \max(\bar p, \tau)` and

    .. math::

        \varepsilon_{d'} = \max_{g} |\log \tilde p_A(g) - \log \tilde p_B(g)|,
        \qquad \varepsilon_{KDE} = \sum_{d'} \varepsilon_{d'}.

    Each pair is computed by :func:`~skprivacy.stats.kde_lr_per_dimension`
    (the bandwidths of every identity once): all dimensions at once, with an
    exact multiplicative recurrence along the grid, so the cost is a few
    exponentials per sample and dimension rather than one per grid point.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import KDELRAuditor
    >>> X, ids = make_identity_embeddings(5, 20, 16, random_state=0)
    >>> auditor = KDELRAuditor(alpha=0.01).fit(X, ids)
    >>> auditor.results_.shape, auditor.epsilon_per_dimension_.shape
    ((10, 5), (10, 16))
    """

    _summary = "median"
    _guarantee = "point estimate"
    # Rows are read through pair_identity_rows only.
    _defer_normalization = True

    _parameter_constraints: dict = {
        **BasePairAuditor._parameter_constraints,
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "grid_size": [Interval(Integral, 2, None, closed="left")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "floor": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        alpha=0.0,
        grid_size=201,
        margin=3.0,
        floor=1e-12,
        n_pairs=100,
        n_jobs=None,
        random_state=0,
    ):
        self.alpha = alpha
        self.grid_size = grid_size
        self.margin = margin
        self.floor = floor
        self.n_pairs = n_pairs
        self.n_jobs = n_jobs
        self.random_state = random_state

    @property
    def epsilon_per_dimension_(self):
        """Per-dimension maxima, shape (n_pairs_audited, n_features)."""
        return self.pair_details_["epsilon_per_dimension"]

    def _estimate_seconds(self, data, pairs):
        # Per pair: a few exponentials per sample and dimension, and two
        # multiplications per sample, dimension and grid point.
        n, d = data.X.shape
        rows = 2.0 * n / max(data.n_identities, 1)
        per_pair = rows * d * (3.0 / ELEMENT_RATE + 3.0 * self.grid_size / STREAM_RATE)
        return per_pair * len(pairs)

    def _prepare_audit(self, data, pairs):
        return _identity_bandwidths(data, pairs)

    def _audit_pairs(self, data, pairs, context):
        st = context.state
        Xs, starts, h = st["X"], st["starts"], st["h"]
        n, d = len(pairs), Xs.shape[1]
        per_dim = np.empty((n, d))
        for t, (a, b) in enumerate(st["slot"][pairs].tolist()):
            per_dim[t] = kde_lr_per_dimension(
                Xs[starts[a] : starts[a + 1]],
                Xs[starts[b] : starts[b + 1]],
                bandwidth_x=h[a],
                bandwidth_y=h[b],
                alpha=self.alpha,
                grid_size=self.grid_size,
                margin=self.margin,
                floor=self.floor,
            )
        return {
            "epsilon": per_dim.sum(axis=1),
            "max_dimension_epsilon": per_dim.max(axis=1),
            "argmax_dimension": per_dim.argmax(axis=1),
            "epsilon_per_dimension": per_dim,
        }

    @property
    def description_(self):
        """What the fitted audit reports (:class:`~skprivacy.auditors.AuditDescription`)."""
        return describe_kdelr(self)


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "alphas": ["array-like"],
        "n_pairs": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def kde_lr_alpha_sweep(
    X, y, *, alphas=(0.0, 1e-2), n_pairs=100, n_jobs=None, random_state=0, **params
):
    """KDE-LR ε per pair for several smoothing weights.

    One :class:`KDELRAuditor` fit per ``alpha`` (``clone`` + ``set_params``),
    all with one integer seed, so every ``alpha`` audits the same pairs
    (paper 000 reports α = 0 and 1e-2).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity labels.
    alphas : array-like of float, default=(0.0, 0.01)
        Smoothing weights in [0, 1].
    n_pairs : int or None, default=100
        Audited prefix of the pair ordering.
    n_jobs : int, default=None
        Number of joblib jobs for the pair loop.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering.
    **params : dict
        Other :class:`KDELRAuditor` parameters (``grid_size``, ``margin``,
        ``floor``).

    Returns
    -------
    results : pandas.DataFrame
        ``id_a``, ``id_b`` and one column ``epsilon_alpha=<alpha>`` per
        smoothing weight (point estimates). Per-pair medians follow with
        ``.median(numeric_only=True)``.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import kde_lr_alpha_sweep
    >>> X, ids = make_identity_embeddings(5, 20, 16, random_state=0)
    >>> list(kde_lr_alpha_sweep(X, ids).columns)
    ['id_a', 'id_b', 'epsilon_alpha=0', 'epsilon_alpha=0.01']
    """
    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    if alphas.size == 0 or np.any((alphas < 0) | (alphas > 1)):
        raise ValueError(f"alphas must lie in [0, 1]; got {alphas.tolist()}.")
    # One fit per alpha through public parameters only (clone + set_params), with
    # one integer seed so that every alpha audits the same pairs.
    base = KDELRAuditor(
        alpha=float(alphas[0]),
        n_pairs=n_pairs,
        n_jobs=n_jobs,
        random_state=seed_from(random_state),
        **params,
    )
    table = None
    for alpha in alphas:
        results = clone(base).set_params(alpha=float(alpha)).fit(X, y).results_
        if table is None:
            table = results[["id_a", "id_b"]].copy()
        table[f"epsilon_alpha={alpha:g}"] = results["epsilon"].to_numpy()
    return table
