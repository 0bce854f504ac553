# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MMD-TV: a kernel two-sample ε estimate (and certificate) per identity pair."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import clone

from skprivacy._kernels._mmd import (
    KERNEL_ONE,
    check_bandwidth_at_median,
    check_kernel_exponent,
    cross_blocks,
    cross_kernel_sums,
    identity_blocks,
    identity_state,
    pair_bandwidths,
    permutation_test,
    relabellings,
    within_kernel_sums,
)
from skprivacy.auditors._base import (
    ELEMENT_RATE,
    FLOP_RATE,
    BasePairAuditor,
    pair_identity_rows,
)
from skprivacy.auditors._ceilings import mmd_certificate_margin
from skprivacy.auditors._description import describe_mmdtv
from skprivacy.stats import mmd2_unbiased, mmd_to_epsilon
from skprivacy.utils import limit_blas_threads, spawn_generator, validate_identity_data
from skprivacy.utils._constants import MMD_TV_CEILING  # noqa: F401 (re-exported)
from skprivacy.utils._progress import Progress
from skprivacy.utils._random import seed_from
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, StrOptions, validate_params

__all__ = ["MMDTVAuditor", "mmd_bandwidth_sweep"]

# Bandwidths a certified audit may use when the bandwidth is data-driven: the
# median heuristic is snapped to this grid and the Bonferroni correction pays
# for every grid value, so the data-dependent choice keeps the guarantee.
# Distances between unit vectors lie in [0, 2]; 2^-7 .. 2^2 covers any useful σ.
CERTIFICATE_BANDWIDTH_GRID = 2.0 ** (np.arange(-28, 9) / 4.0)


def _pair_mmd2(state, a, b, kab, sigma):
    """Unbiased MMD^2 of pairs ``(a[t], b[t])`` from their cross kernel sums.

    Each within-identity distance is stored once; the off-diagonal sums
    count it twice.
    """
    starts = state["starts"]
    na, nb = starts[a + 1] - starts[a], starts[b + 1] - starts[b]
    gamma = 0.5 / (sigma * sigma)
    kaa = 2.0 * within_kernel_sums(state, a, gamma)
    kbb = 2.0 * within_kernel_sums(state, b, gamma)
    return mmd2_unbiased(kaa, kbb, kab, na, nb)


class MMDTVAuditor(BasePairAuditor):
    r"""Kernel two-sample (MMD) ε estimate per identity pair, or its certificate.

    For each audited pair of identities (A, B) the unbiased squared maximum
    mean discrepancy with an RBF kernel is computed, clipped at 0, and mapped
    to ε through the total-variation chain of paper 000:
    ``ε = 2 artanh(MMD / 2)`` (or González et al.'s tighter
    ``2 artanh(MMD / sqrt(2))`` with ``bound="gonzalez"``).

    **Point estimate, not a certificate (default).** ``epsilon`` evaluates the
    population bound at the sample MMD, which can overshoot; ``score()``
    returns its maximum over the audited pairs. **Certificate** with
    ``confidence`` set: ``epsilon_lower`` maps a one-sided lower confidence
    bound on the population MMD, simultaneous over all audited pairs; then
    ``score()`` returns its maximum and ``guarantee_ == "certificate"``: if the
    mechanism is ε-DP for every pair, ``P(score() > ε) <= 1 - confidence``.
    With ``delta > 0`` both read ε of (ε, δ)-DP (see :func:`mmd_to_epsilon`).

    For an RBF kernel ``MMD <= sqrt(2)``, so with ``bound="tv"`` the value can
    never exceed ``2 artanh(sqrt(2)/2) ≈ 1.763``, however separable two
    identities are; large ε come from :class:`ROCHTAuditor`-style tests.

    Parameters
    ----------
    bandwidth : "median" or float, default="median"
        RBF bandwidth σ: ``"median"`` is the median of the pair's pooled
        off-diagonal Euclidean distances (exact, per pair); a float is used
        for every pair.
    bandwidth_scale : float, default=1.0
        Multiplies σ (the paper's sweep uses 0.5, 0.75, 1, 1.5, 2; see
        :func:`mmd_bandwidth_sweep`).
    bound : {"tv", "gonzalez"}, default="tv"
        MMD-to-ε map: ``"tv"`` is ``2 artanh(MMD/2)`` (needs only
        ``k(x, x) <= 1``); ``"gonzalez"`` is ``2 artanh(MMD/sqrt(2))``
        (tighter, needs ``0 <= k <= 1``, true for the RBF kernel).
    n_permutations : int, default=0
        Permutations of the pooled labels for the test of ``P_A = P_B``
        (paper: 10^4). 0 skips the test (``p_value`` is NaN).
    confidence : float or None, default=None
        If set (e.g. 0.95), also compute the certified ``epsilon_lower``
        (simultaneous over audited pairs) and score it.
    delta : float, default=0.0
        The δ of (ε, δ)-DP, in [0, 1): ``epsilon`` and ``epsilon_lower`` are
        lower bounds on the ε of an (ε, δ)-DP mechanism,
        ``log((1 + t - 2δ)/(1 - t))`` with ``t`` the TV lower bound
        (``MMD/2`` for ``bound="tv"``). ``0`` is pure DP,
        ``2 artanh(t)``, unchanged results.
    n_pairs : int or None, default=500
        Number of pairs audited: a prefix of the seeded pair ordering
        (:func:`~skprivacy.utils.identity_pairs`). ``None`` audits all pairs
        with the exhaustive block engine.
    n_jobs : int, default=None
        Number of jobs for the pair loop, run through joblib in chunks of
        pairs (so ``joblib.parallel_config(backend="dask")`` works).
        ``None`` means 1 unless in a :obj:`joblib.parallel_config` context.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering and of the permutations (per pair, so the
        results do not depend on ``n_jobs``).

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per audited pair: ``id_a``, ``id_b``, ``epsilon`` (point
        estimate), ``mmd``, ``mmd2_unbiased``, ``bandwidth`` (σ used),
        ``median_distance`` (NaN for a fixed bandwidth), ``p_value``; with
        ``confidence`` also ``certified_bandwidth``, ``mmd2_margin`` (the
        deviation ``t`` subtracted from MMD²), ``mmd_lower`` and
        ``epsilon_lower``.
    pairs_ : ndarray of shape (n_pairs_audited, 2)
        Identity codes of the audited pairs (indices into ``identities_``).
    identities_ : ndarray of shape (n_identities,)
        Audited identity labels.
    drop_report_ : dict
        Rows dropped by the input layer, by reason.
    summary_ : float
        Maximum over pairs of ``epsilon`` (or ``epsilon_lower`` with
        ``confidence``): the value of ``score()``.
    summary_kind_ : str
        ``"max"``.
    guarantee_ : str
        ``"point estimate"``, or ``"certificate"`` with ``confidence``.
    pair_details_ : dict
        Empty for this auditor.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

    See Also
    --------
    GaussMechAuditor : Gaussian-mechanism diagnostic.
    mmd_bandwidth_sweep : Maximum estimate per bandwidth scale.
    split_half_controls : Same-identity calibration controls.

    Notes
    -----
    Kernel :math:`k(x, y) = \exp(-\lVert x - y \rVert^2 / (2\sigma^2))`,
    unbiased estimate (diagonals excluded)

    .. math::

        \widehat{\mathrm{MMD}}^2_u = \frac{\sum_{i \ne j} k(a_i, a_j)}{n_A(n_A-1)}
        + \frac{\sum_{i \ne j} k(b_i, b_j)}{n_B(n_B-1)}
        - \frac{2 \sum_{i,j} k(a_i, b_j)}{n_A n_B},

    :math:`\widehat{\mathrm{MMD}} = \sqrt{\max(\widehat{\mathrm{MMD}}^2_u, 0)}`.

    *Certificate.* :math:`\widehat{\mathrm{MMD}}^2_u` is a two-sample
    U-statistic whose kernel lies in :math:`[-2, 2]`, so by Hoeffding's
    inequality (Gretton et al., JMLR 2012, Theorem 10)
    :math:`P(\mathrm{MMD}^2 < \widehat{\mathrm{MMD}}^2_u - t) \le
    \exp(-k t^2 / 8)` with :math:`k = \min(\lfloor n_A/2 \rfloor, \lfloor
    n_B/2 \rfloor)`. With :math:`t = \sqrt{8 \ln(G K / \alpha) / k}`,
    :math:`\alpha = 1 -` ``confidence``, :math:`K` audited pairs and
    :math:`G` candidate bandwidths, the bounds hold simultaneously with
    probability :math:`\ge 1 - \alpha`. The bound needs a bandwidth fixed
    before seeing the data; a data-driven (median) bandwidth is snapped to
    the geometric grid ``CERTIFICATE_BANDWIDTH_GRID`` (:math:`G = 37`) and
    all grid values are paid for, a fixed ``bandwidth`` has :math:`G = 1`.
    Every RBF kernel satisfies the TV chain, so the lower bound on MMD maps to
    a lower bound on ε. The bound is conservative: with ~100 samples per
    identity, :math:`t` is close to 1.4 and nothing short of near-total
    separation is certified.

    *Engine.* Within-identity distances are computed once per identity;
    cross distances come from one Gram product per pair of identity blocks
    (exhaustive audits) or per pair (sparse prefixes), with memory bounded
    by the block size. Float32 input keeps float32 rows and Gram blocks
    (kernel sums, moments and the statistic accumulate in float64; the
    permutation test runs in float64): on the same rows the float32 path is
    within ``1e-6`` of the float64 path in :math:`\widehat{\mathrm{MMD}}^2_u`,
    hence within ``1e-3`` in MMD and ``2e-3`` in ε where
    MMD is near 0 (square root) and ~1e-6 relative elsewhere (tested). The
    median heuristic is exact (a
    selection over the pair's pooled distances). Permutations are batched
    into matrix products (see :func:`permutation_test`).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import MMDTVAuditor
    >>> X, ids = make_identity_embeddings(6, 20, 32, random_state=0)
    >>> auditor = MMDTVAuditor(n_pairs=None, n_permutations=99).fit(X, ids)
    >>> auditor.results_.shape
    (15, 8)
    >>> 0 < auditor.score() <= 1.763
    True
    """

    _summary = "max"
    _guarantee = "point estimate"
    _defer_normalization = True
    _threaded_chunks = True

    _parameter_constraints: dict = {
        **BasePairAuditor._parameter_constraints,
        "bandwidth": [
            StrOptions({"median"}),
            Interval(Real, 0, None, closed="neither"),
        ],
        "bandwidth_scale": [Interval(Real, 0, None, closed="neither")],
        "bound": [StrOptions({"tv", "gonzalez"})],
        "n_permutations": [Interval(Integral, 0, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither"), None],
        "delta": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(
        self,
        *,
        bandwidth="median",
        bandwidth_scale=1.0,
        bound="tv",
        n_permutations=0,
        confidence=None,
        delta=0.0,
        n_pairs=500,
        n_jobs=None,
        random_state=0,
    ):
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.bound = bound
        self.n_permutations = n_permutations
        self.confidence = confidence
        self.delta = delta
        self.n_pairs = n_pairs
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _guarantee_kind(self):
        return "point estimate" if self.confidence is None else "certificate"

    def _validate(self, X, y, reset):
        # float32 embeddings keep float32 Gram blocks (see Notes, "Engine").
        return validate_identity_data(
            self,
            X,
            y,
            reset=reset,
            min_samples_per_identity=self._min_samples_per_identity,
            dtype=[np.float64, np.float32],
            normalize="defer",
        )

    def _score_column_name(self):
        return "epsilon" if self.confidence is None else "epsilon_lower"

    def _check_fixed_bandwidth(self, data):
        """Refuse a fixed bandwidth under which the kernel is 0 for typical rows.

        With exp(-d^2 / (2 sigma^2)) underflowing for the median distance d of
        the data, every off-diagonal kernel value is 0 and every ε reads 0
        ("no leakage") whatever the data.
        """
        if isinstance(self.bandwidth, str):
            # sigma = bandwidth_scale x each pair's median distance d: the
            # kernel at d is exp(-1 / (2 scale^2)), whatever the data.
            with np.errstate(over="ignore"):
                exponent = 0.5 / np.float64(self.bandwidth_scale) ** 2
            check_kernel_exponent(
                exponent,
                f"bandwidth_scale={self.bandwidth_scale:g} (of the median bandwidth)",
                "each pair's median distance",
                f"a bandwidth_scale in [{np.sqrt(1 / 1400):.3g}, "
                f"{np.sqrt(0.5 / KERNEL_ONE):.3g}]",
            )
            return
        sigma = float(self.bandwidth) * self.bandwidth_scale
        rows = data.normalized_rows(
            np.arange(0, data.X.shape[0], max(1, data.X.shape[0] // 256))
        )
        sq = np.maximum(2.0 - 2.0 * (rows @ rows.T), 0.0)[np.triu_indices(len(rows), 1)]
        check_bandwidth_at_median(
            sq,
            sigma,
            f"bandwidth={self.bandwidth!r} (times bandwidth_scale: {sigma:.3g})",
            'bandwidth="median"',
        )

    def _prepare_audit(self, data, pairs):
        self._check_fixed_bandwidth(data)
        # Only the identities occurring in the pairs are gathered (slot maps
        # codes to them); float32 rows stay float32 (see Notes, "Engine").
        slot, Xs, starts = pair_identity_rows(data, pairs, dtype=None)
        uses = np.bincount(
            slot[np.asarray(pairs, dtype=np.intp)].ravel(), minlength=len(starts) - 1
        )
        return {"slot": slot, **identity_state(Xs, starts, uses)}

    def _estimate_seconds(self, data, pairs):
        # Per pair: the cross Gram block, then a few elementwise passes
        # (distances, exponentials per bandwidth, the median selection) over
        # the pair's pooled distances; permutations are one product each.
        n, d = data.X.shape
        m = n / max(data.n_identities, 1)
        per_pair = 2.0 * m * m * d / FLOP_RATE + 5 * 2 * m * m / ELEMENT_RATE
        per_pair += self.n_permutations * 2.0 * (2 * m) ** 2 / FLOP_RATE
        within = m * m * d / FLOP_RATE + m * m / ELEMENT_RATE
        return per_pair * len(pairs) + within * min(2 * len(pairs), data.n_identities)

    def _make_chunks(self, data, pairs):
        blk = identity_blocks(data.counts)
        ba, bb = blk[pairs[:, 0]], blk[pairs[:, 1]]
        key = ba * (int(blk.max()) + 1) + bb
        uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        if len(pairs) < 64 or cnt.mean() < 8:
            chunks = super()._make_chunks(data, pairs)
            # At least 8 chunks (a count fixed by the pairs alone, so results
            # stay independent of n_jobs) for in-process threads to share.
            if len(chunks) < 8 and len(pairs) >= 64:
                chunks = np.array_split(np.arange(len(pairs)), 8)
            return chunks
        # Exhaustive-style audits: one chunk per pair of identity blocks, so a
        # chunk needs one Gram product.
        order = np.argsort(inv, kind="stable")
        bounds = np.cumsum(cnt)[:-1]
        return np.split(order, bounds)

    def _permutation_p_values(self, state, jobs, sigma, context, p_value):
        # Pairs with the same sample sizes share one set of relabellings, drawn
        # from (seed, sizes) only, so results do not depend on chunking. Each
        # pair's p-value is an exact permutation p-value; p-values of different
        # pairs are dependent through the shared draws (as for any fixed set).
        Xs, starts = state["X"], state["starts"]
        m = self.n_permutations
        cache = {}
        for t, a, b, na, code_a, code_b in jobs:
            n = int(starts[b + 1] - starts[b] + na)
            key = (int(na), n - int(na))
            shared = m * n <= (1 << 22)
            if shared and key not in cache:
                rng = spawn_generator(context.seed, *key, 0, 1)
                cache[key] = relabellings(n, int(na), m, rng)
            Z = np.concatenate(
                (Xs[starts[a] : starts[a + 1]], Xs[starts[b] : starts[b + 1]])
            ).astype(np.float64, copy=False)
            p_value[t], _ = permutation_test(
                Z,
                int(na),
                sigma[t],
                m,
                context.pair_rng(code_a, code_b),
                indicators=cache.get(key) if shared else None,
            )

    def _certificate_sigma(self, sigma):
        """Bandwidths the certificate uses: fixed, or snapped to the grid."""
        if self.bandwidth != "median":
            return sigma
        grid = CERTIFICATE_BANDWIDTH_GRID
        nearest = np.abs(np.log(grid)[None, :] - np.log(sigma)[:, None]).argmin(axis=1)
        return grid[nearest]

    def _audit_pairs(self, data, pairs, context):
        state = context.state
        codes = pairs
        # Rows and per-identity state are indexed by slot; seeds use the codes.
        pairs = state["slot"][codes]
        starts = state["starts"]
        a, b = pairs[:, 0], pairs[:, 1]
        na, nb = starts[a + 1] - starts[a], starts[b + 1] - starts[b]
        n = len(pairs)
        median = np.full(n, np.nan)
        kab = np.empty(n)
        p_value = np.full(n, np.nan)
        certify = self.confidence is not None
        median_bw = self.bandwidth == "median"
        if median_bw:
            sigma = np.empty(n)
        else:
            sigma = np.full(n, float(self.bandwidth) * self.bandwidth_scale)
        if certify:
            # The certificate's bandwidths, filled block by block with sigma.
            cert_sigma = np.empty(n)
            kab_cert = np.full(n, np.nan)
        # One BLAS thread, always: OpenBLAS's rounding depends on its thread
        # count, so this keeps results bit-identical for every n_jobs and
        # backend (and small products run fastest single-threaded anyway).
        # Parallelism comes from n_jobs and in-process threads.
        with limit_blas_threads():
            for block, rows in cross_blocks(state, pairs):
                # Medians, bandwidths and cross kernel sums of pairs `rows`,
                # whose squared cross distances are the rows of `block`.
                if median_bw:
                    median[rows], base = pair_bandwidths(state, block, a[rows], b[rows])
                    sigma[rows] = base * self.bandwidth_scale
                kab[rows] = cross_kernel_sums(block, sigma[rows])
                if certify:
                    cert_sigma[rows] = self._certificate_sigma(sigma[rows])
                    redo = np.flatnonzero(cert_sigma[rows] != sigma[rows])
                    kab_cert[rows[redo]] = cross_kernel_sums(
                        block[redo], cert_sigma[rows[redo]]
                    )
            mmd2 = _pair_mmd2(state, a, b, kab, sigma)
            if certify:
                redo = cert_sigma != sigma
                mmd2_cert = mmd2.copy()
                mmd2_cert[redo] = _pair_mmd2(
                    state, a[redo], b[redo], kab_cert[redo], cert_sigma[redo]
                )
            if self.n_permutations:
                jobs = [(t, a[t], b[t], na[t], *codes[t]) for t in range(n)]
                self._permutation_p_values(state, jobs, sigma, context, p_value)
        mmd = np.sqrt(np.maximum(mmd2, 0.0))
        eps = mmd_to_epsilon(mmd, self.bound, self.delta)
        out = {
            "epsilon": eps,
            "mmd": mmd,
            "mmd2_unbiased": mmd2,
            "bandwidth": sigma,
            "median_distance": median,
            "p_value": p_value,
        }
        if certify:
            n_grid = 1 if not median_bw else len(CERTIFICATE_BANDWIDTH_GRID)
            margin = mmd_certificate_margin(
                na,
                nb,
                confidence=self.confidence,
                n_comparisons=context.n_pairs_total,
                n_bandwidths=n_grid,
            )
            mmd_lower = np.sqrt(np.maximum(mmd2_cert - margin, 0.0))
            out.update(
                certified_bandwidth=cert_sigma,
                mmd2_margin=margin,
                mmd_lower=mmd_lower,
                epsilon_lower=mmd_to_epsilon(mmd_lower, self.bound, self.delta),
            )
        return out

    @property
    def description_(self):
        """What the fitted audit reports (:class:`~skprivacy.auditors.AuditDescription`)."""
        return describe_mmdtv(self)


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "scales": ["array-like"],
        "bandwidth": [
            StrOptions({"median"}),
            Interval(Real, 0, None, closed="neither"),
        ],
        "bound": [StrOptions({"tv", "gonzalez"})],
        "n_pairs": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE,
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=True,
)
def mmd_bandwidth_sweep(
    X,
    y,
    *,
    scales=(0.5, 0.75, 1.0, 1.5, 2.0),
    bandwidth="median",
    bound="tv",
    n_pairs=500,
    n_jobs=None,
    random_state=0,
    verbose=0,
):
    """MMD-TV point estimates over a sweep of bandwidth scales (paper 000).

    One :class:`MMDTVAuditor` fit per scale (``clone`` + ``set_params``), all
    with one integer seed, so every scale audits the same pairs.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity labels.
    scales : array-like of float, default=(0.5, 0.75, 1.0, 1.5, 2.0)
        Multipliers of the bandwidth (σ/σ*).
    bandwidth : "median" or float, default="median"
        Base bandwidth σ*, as in :class:`MMDTVAuditor`.
    bound : {"tv", "gonzalez"}, default="tv"
        MMD-to-ε map.
    n_pairs : int or None, default=500
        Audited prefix of the pair ordering (``None``: every pair).
    n_jobs : int, default=None
        Number of joblib jobs for the pair loop.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering.
    verbose : int, default=0
        Print a line per scale (its maximum ε and the elapsed time) when
        positive.

    Returns
    -------
    sweep : pandas.DataFrame
        One row per scale: ``bandwidth_scale``, ``max_mmd``, ``median_mmd``,
        ``max_epsilon`` (the paper's per-scale maximum estimate; a point
        estimate) and ``median_epsilon``.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import mmd_bandwidth_sweep
    >>> X, ids = make_identity_embeddings(6, 20, 32, random_state=0)
    >>> mmd_bandwidth_sweep(X, ids).shape
    (5, 5)
    """
    try:
        scales = np.asarray(scales, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"scales must be positive numbers; got {scales!r}.") from None
    if scales.size == 0 or not np.all((scales > 0) & np.isfinite(scales)):
        raise ValueError(
            f"scales must be positive finite numbers; got {scales.tolist()}."
        )
    # One fit per scale through public parameters only (clone + set_params), with
    # one integer seed so that every scale audits the same pairs.
    base = MMDTVAuditor(
        bandwidth=bandwidth,
        bound=bound,
        n_pairs=n_pairs,
        n_permutations=0,
        n_jobs=n_jobs,
        random_state=seed_from(random_state),
    )
    say = Progress("mmd_bandwidth_sweep", verbose)
    fits = []
    for i, s in enumerate(scales):
        fits.append(clone(base).set_params(bandwidth_scale=float(s)).fit(X, y).results_)
        say(
            f"scale {i + 1}/{scales.size} ({s:g}): max epsilon "
            f"{fits[-1]['epsilon'].max():.3f}"
        )
    mmd = np.column_stack([r["mmd"].to_numpy() for r in fits])
    eps = np.column_stack([r["epsilon"].to_numpy() for r in fits])
    return pd.DataFrame(
        {
            "bandwidth_scale": scales,
            "max_mmd": mmd.max(axis=0),
            "median_mmd": np.median(mmd, axis=0),
            "max_epsilon": eps.max(axis=0),
            "median_epsilon": np.median(eps, axis=0),
        }
    )
