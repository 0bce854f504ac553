# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a certificate can show at a given sample size, before any data is seen.

A certificate is a lower confidence bound, so even a perfectly separated pair
of identities certifies only as much as its sample sizes allow: its *ceiling*.
These pure functions compute the ceilings of the two certificates (the
reserved-test ROC-HT certificate of :class:`ROCHTCertifier` and the certified
MMD-TV bound of :class:`MMDTVAuditor` with ``confidence``), their inverses
(rows per identity needed to certify more than a target ε) and the smallest
p-value a permutation test can reach. The audit report and the planner use
these functions, so a ceiling quoted before data collection is the one the
audit reports afterwards.
"""

import math
from numbers import Integral, Real

import numpy as np

from skprivacy.auditors._roc_core import certifiable_epsilon_ceiling
from skprivacy.stats import mmd_to_epsilon
from skprivacy.utils._sklearn import Interval, StrOptions, validate_params

__all__ = [
    "mmd_certificate_ceiling",
    "mmd_certificate_margin",
    "mmd_margin_ceiling",
    "mmd_rows_needed",
    "permutation_p_value_floor",
    "reserved_test_rows",
    "rocht_certificate_ceiling",
    "rocht_rows_needed",
]

# A search bound: no audit has a billion rows per identity.
_MAX_ROWS = 2**30

_COMMON = {
    "confidence": [Interval(Real, 0, 1, closed="neither")],
    "n_comparisons": [Interval(Integral, 1, None, closed="left")],
}
_MMD = {
    **_COMMON,
    "n_bandwidths": [Interval(Integral, 1, None, closed="left")],
    "bound": [StrOptions({"tv", "gonzalez"})],
    "delta": [Interval(Real, 0, 1, closed="left")],
}


def _scalar_or_array(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def _counts(value, name, minimum):
    """Whole row counts >= minimum as an int64 array (named in the error)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or not np.all(
        np.isfinite(arr) & (arr == np.round(arr)) & (arr >= minimum)
    ):
        raise ValueError(
            f"{name} must hold whole row counts >= {minimum}; got "
            f"{np.ravel(arr)[:3].tolist()}."
        )
    return arr.astype(np.int64)


def _smallest(predicate, lo):
    """Smallest integer ``n >= lo`` with ``predicate(n)``, for a monotone predicate.

    Doubling then bisection, so the answer is exactly consistent with the
    forward function the predicate evaluates (no closed form rounded
    differently). ``None`` when no ``n <= _MAX_ROWS`` qualifies.
    """
    if predicate(lo):
        return lo
    hi = max(2 * lo, 2)
    while not predicate(hi):
        if hi >= _MAX_ROWS:
            return None
        lo, hi = hi, min(2 * hi, _MAX_ROWS)
    while hi - lo > 1:  # predicate(lo) is False, predicate(hi) is True
        mid = (lo + hi) // 2
        if predicate(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- ROC-HT
@validate_params(
    {
        "n_rows": ["array-like", Integral],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def reserved_test_rows(n_rows, test_size):
    """Reserved-test rows per identity under :class:`ROCHTCertifier`'s split rule.

    Parameters
    ----------
    n_rows : int or array-like of int
        Rows of each identity (``>= 1``; an identity of one row gets 0).
    test_size : float in (0, 1)
        Share of each identity's rows reserved for the test.

    Returns
    -------
    n_test : int or ndarray of int
        ``min(max(ceil(test_size * n_rows), 1), n_rows - 1)``: every identity
        keeps at least one training row and one test row.

    Examples
    --------
    >>> from skprivacy.auditors import reserved_test_rows
    >>> reserved_test_rows([10, 64, 2], 0.3).tolist()
    [3, 20, 1]
    """
    counts = _counts(n_rows, "n_rows", 1)
    n_test = np.minimum(np.maximum(np.ceil(test_size * counts), 1), counts - 1)
    return _scalar_or_array(n_test.astype(int))


@validate_params(
    {"n_test_a": ["array-like", Integral], "n_test_b": ["array-like", Integral]}
    | _COMMON,
    prefer_skip_nested_validation=True,
)
def rocht_certificate_ceiling(n_test_a, n_test_b, *, confidence=0.95, n_comparisons=1):
    r"""Largest ROC-HT ε lower bound reserved tests of these sizes can certify.

    The value a perfect test (every reserved row of ``B`` accepted, none of
    ``A``) certifies; no classifier can certify more on these sizes. Report
    it beside certified values: a certificate at its ceiling means "as
    separable as this test size can show", not "ε equals this".

    Parameters
    ----------
    n_test_a, n_test_b : int or array-like of int
        Reserved-test rows of the two identities of each pair (``>= 1``).
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence level of the family.
    n_comparisons : int, default=1
        Tests certified together (pairs × pre-declared thresholds).

    Returns
    -------
    ceiling : float or ndarray
        The certifiable ceiling of each pair (0 when nothing can be
        certified).

    See Also
    --------
    rocht_rows_needed : The inverse: rows needed to exceed a target ε.
    certified_epsilon_lb : The certificate these sizes bound.

    Notes
    -----
    With :math:`a = (1 - c) / (2K)` per one-sided bound (:math:`c` the
    confidence, :math:`K` the comparisons), the exact Clopper–Pearson bounds
    of a perfect test are :math:`\mathrm{TPR}_{lo} = a^{1/n_B}` (``tp =
    n_B``) and :math:`\mathrm{FPR}_{hi} = 1 - a^{1/n_A}` (``fp = 0``), so the
    ceiling is

    .. math::

        \max\Bigl(0,\ \log\frac{a^{1/n_B}}{1 - a^{1/n_A}},\
        \log\frac{a^{1/n_A}}{1 - a^{1/n_B}}\Bigr),

    symmetric in the two identities. With :math:`n_A = n_B = n` it is
    :math:`\max(0, \mathrm{logit}(a^{1/n}))`.

    Examples
    --------
    >>> from skprivacy.auditors import rocht_certificate_ceiling
    >>> round(rocht_certificate_ceiling(100, 100), 2)
    3.28
    >>> rocht_certificate_ceiling(6, 6, n_comparisons=40)  # too few test rows
    0.0
    """
    n_a = _counts(n_test_a, "n_test_a", 1)
    n_b = _counts(n_test_b, "n_test_b", 1)
    return certifiable_epsilon_ceiling(
        n_b, n_a, confidence=confidence, n_comparisons=n_comparisons
    )


@validate_params(
    {
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "test_size": [Interval(Real, 0, 1, closed="neither"), None],
    }
    | _COMMON,
    prefer_skip_nested_validation=True,
)
def rocht_rows_needed(epsilon=0.0, *, test_size=None, confidence=0.95, n_comparisons=1):
    r"""Rows per identity at which a perfect ROC-HT test certifies more than ``epsilon``.

    The inverse of :func:`rocht_certificate_ceiling` for identities of equal
    size: the smallest count whose ceiling exceeds ``epsilon`` (with
    ``epsilon=0``: the fewest rows that can certify anything at all).

    Parameters
    ----------
    epsilon : float >= 0, default=0.0
        The ε the certificate must exceed.
    test_size : float in (0, 1) or None, default=None
        ``None``: the count is of reserved-test rows (held-out rows passed
        to :meth:`ROCHTCertifier.score`). A float: the count is of rows per
        identity before the split, reserved by :func:`reserved_test_rows`.
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence level of the family.
    n_comparisons : int, default=1
        Tests certified together (pairs × pre-declared thresholds).

    Returns
    -------
    n_rows : int
        The smallest row count per identity.

    Notes
    -----
    With :math:`n` test rows per identity the ceiling is
    :math:`\max(0, \mathrm{logit}(a^{1/n}))`, :math:`a = (1 - c)/(2K)`, so
    it exceeds :math:`\varepsilon` once
    :math:`n > \ln a / \ln \sigma(\varepsilon)`, with :math:`\sigma`
    the logistic function. The count is found by bisection on
    :func:`rocht_certificate_ceiling` itself, so the two functions agree
    exactly. The ceiling grows only logarithmically in :math:`n`: each
    further unit of ε multiplies the rows needed by about :math:`e`.

    Examples
    --------
    >>> from skprivacy.auditors import rocht_rows_needed, rocht_certificate_ceiling
    >>> n = rocht_rows_needed(0.0, n_comparisons=40)
    >>> n
    11
    >>> float(rocht_certificate_ceiling(n - 1, n - 1, n_comparisons=40))
    0.0
    >>> rocht_rows_needed(2.0, test_size=0.3, n_comparisons=40)
    194
    """

    def ceiling(n_test):
        return rocht_certificate_ceiling(
            n_test, n_test, confidence=confidence, n_comparisons=n_comparisons
        )

    n_test = _smallest(lambda n: ceiling(n) > epsilon, 1)
    if n_test is None:
        raise ValueError(
            f"epsilon={epsilon:g} needs more than {_MAX_ROWS} reserved-test rows "
            "per identity to be certified."
        )
    if test_size is None:
        return n_test
    return _smallest(lambda n: reserved_test_rows(n, test_size) >= n_test, 2)


# ---------------------------------------------------------------- MMD-TV
@validate_params(
    {"n_rows_a": ["array-like", Integral], "n_rows_b": ["array-like", Integral]}
    | _COMMON
    | {"n_bandwidths": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def mmd_certificate_margin(
    n_rows_a, n_rows_b, *, confidence=0.95, n_comparisons=1, n_bandwidths=1
):
    r"""Hoeffding margin of the certified MMD-TV bound, on the MMD² scale.

    :class:`MMDTVAuditor` with ``confidence`` certifies
    :math:`\mathrm{MMD}^2 \ge \widehat{\mathrm{MMD}}^2_u - t` for every
    audited pair simultaneously; this returns :math:`t` (the
    ``mmd2_margin`` column of its ``results_``).

    Parameters
    ----------
    n_rows_a, n_rows_b : int or array-like of int
        Rows of the two identities of each pair (``>= 2``).
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence level.
    n_comparisons : int, default=1
        Pairs certified together.
    n_bandwidths : int, default=1
        Candidate bandwidths paid for: 1 for a fixed ``bandwidth``, the 37
        values of the certificate's grid for the median heuristic.

    Returns
    -------
    margin : float or ndarray
        :math:`t`, the MMD² margin.

    Notes
    -----
    :math:`\widehat{\mathrm{MMD}}^2_u` is a two-sample U-statistic with a
    kernel in :math:`[-2, 2]`; Hoeffding's inequality for U-statistics
    (Gretton et al., JMLR 2012, Theorem 10) gives
    :math:`P(\mathrm{MMD}^2 < \widehat{\mathrm{MMD}}^2_u - t) \le
    \exp(-k t^2 / 8)` with :math:`k = \min(\lfloor n_A/2 \rfloor, \lfloor
    n_B/2 \rfloor)`. A union bound over :math:`K` pairs and :math:`G`
    bandwidths at total error :math:`\alpha = 1 - c` gives

    .. math::

        t = \sqrt{8 \ln(G K / \alpha) / k}.

    Examples
    --------
    >>> from skprivacy.auditors import mmd_certificate_margin
    >>> round(mmd_certificate_margin(100, 100), 4)  # sqrt(8 ln 20 / 50)
    0.6923
    """
    n_a = _counts(n_rows_a, "n_rows_a", 2)
    n_b = _counts(n_rows_b, "n_rows_b", 2)
    log_term = np.log(n_bandwidths * n_comparisons / (1.0 - confidence))
    return _scalar_or_array(np.sqrt(8.0 * log_term / np.minimum(n_a // 2, n_b // 2)))


@validate_params(
    {
        "margin": ["array-like", Real],
        "bound": [StrOptions({"tv", "gonzalez"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def mmd_margin_ceiling(margin, *, bound="tv", delta=0.0):
    r"""Largest certified MMD-TV ε a pair with this MMD² margin can reach.

    Parameters
    ----------
    margin : float or array-like
        Hoeffding margins :math:`t \ge 0` on the MMD² scale (see
        :func:`mmd_certificate_margin`).
    bound : {"tv", "gonzalez"}, default="tv"
        The TV map of :class:`MMDTVAuditor` (same meaning as its ``bound``).
    delta : float, default=0.0
        The δ of (ε, δ)-DP (same meaning as :class:`MMDTVAuditor`'s).

    Returns
    -------
    ceiling : float or ndarray
        The ε a pair at the largest possible MMD² certifies (0 when the
        margin is 2 or more).

    Notes
    -----
    An RBF kernel has :math:`0 \le k \le 1`, so :math:`\mathrm{MMD}^2 \le 2`
    and the certified lower bound :math:`\widehat{\mathrm{MMD}}^2_u - t`
    is at most :math:`2 - t`. The ceiling is the TV map applied to
    :math:`\sqrt{\max(2 - t, 0)}`; with ``bound="tv"`` and ``delta=0`` it is
    :math:`2\,\mathrm{artanh}(\sqrt{\max(2 - t, 0)}/2)`, never above
    :math:`2\,\mathrm{artanh}(\sqrt 2 / 2) \approx 1.763`.

    Examples
    --------
    >>> from skprivacy.auditors import mmd_margin_ceiling
    >>> round(float(mmd_margin_ceiling(0.0)), 4)  # no margin: the TV chain's cap
    1.7627
    >>> float(mmd_margin_ceiling(2.5))
    0.0
    """
    margin = np.asarray(margin, dtype=np.float64)
    if np.isnan(margin).any() or (margin < 0).any():
        raise ValueError(
            f"margin must hold margins >= 0 (Hoeffding margins on the MMD² scale); "
            f"got {margin[np.isnan(margin) | (margin < 0)][:5].tolist()}."
        )
    ceiling = mmd_to_epsilon(np.sqrt(np.maximum(2.0 - margin, 0.0)), bound, delta)
    return _scalar_or_array(ceiling)


@validate_params(
    {"n_rows_a": ["array-like", Integral], "n_rows_b": ["array-like", Integral]} | _MMD,
    prefer_skip_nested_validation=True,
)
def mmd_certificate_ceiling(
    n_rows_a,
    n_rows_b,
    *,
    confidence=0.95,
    n_comparisons=1,
    n_bandwidths=1,
    bound="tv",
    delta=0.0,
):
    r"""Largest certified MMD-TV ε lower bound identities of these sizes allow.

    :func:`mmd_margin_ceiling` of :func:`mmd_certificate_margin`: what a pair
    at the largest possible MMD² (disjoint supports, an infinitely narrow
    kernel) would certify.

    Parameters
    ----------
    n_rows_a, n_rows_b : int or array-like of int
        Rows of the two identities of each pair (``>= 2``).
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence level.
    n_comparisons : int, default=1
        Pairs certified together.
    n_bandwidths : int, default=1
        Candidate bandwidths paid for (37 for the median heuristic's grid).
    bound : {"tv", "gonzalez"}, default="tv"
        The TV map of :class:`MMDTVAuditor`.
    delta : float, default=0.0
        The δ of (ε, δ)-DP.

    Returns
    -------
    ceiling : float or ndarray
        The certifiable ceiling of each pair.

    See Also
    --------
    mmd_rows_needed : The inverse: rows needed to exceed a target ε.

    Notes
    -----
    See :func:`mmd_certificate_margin` for the margin and
    :func:`mmd_margin_ceiling` for the map. The ceiling is positive only
    once :math:`t < 2`, i.e. :math:`k > 2 \ln(G K / \alpha)`, and the
    certified value of a real pair is far below it unless the identities
    are nearly disjoint at the kernel's scale.

    Examples
    --------
    >>> from skprivacy.auditors import mmd_certificate_ceiling
    >>> round(float(mmd_certificate_ceiling(100, 100)), 3)
    1.3
    >>> c = mmd_certificate_ceiling(100, 100, n_comparisons=400, n_bandwidths=37)
    >>> round(float(c), 3)
    0.802
    """
    margin = mmd_certificate_margin(
        n_rows_a,
        n_rows_b,
        confidence=confidence,
        n_comparisons=n_comparisons,
        n_bandwidths=n_bandwidths,
    )
    return mmd_margin_ceiling(margin, bound=bound, delta=delta)


@validate_params(
    {"epsilon": [Interval(Real, 0, None, closed="left")]} | _MMD,
    prefer_skip_nested_validation=True,
)
def mmd_rows_needed(
    epsilon=0.0,
    *,
    confidence=0.95,
    n_comparisons=1,
    n_bandwidths=1,
    bound="tv",
    delta=0.0,
):
    r"""Rows per identity at which the certified MMD-TV ceiling exceeds ``epsilon``.

    The inverse of :func:`mmd_certificate_ceiling` for identities of equal
    size.

    Parameters
    ----------
    epsilon : float >= 0, default=0.0
        The ε the ceiling must exceed (0: the fewest rows that can certify
        anything).
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence level.
    n_comparisons : int, default=1
        Pairs certified together.
    n_bandwidths : int, default=1
        Candidate bandwidths paid for (37 for the median heuristic's grid).
    bound : {"tv", "gonzalez"}, default="tv"
        The TV map of :class:`MMDTVAuditor`.
    delta : float, default=0.0
        The δ of (ε, δ)-DP.

    Returns
    -------
    n_rows : int
        The smallest (even) row count per identity.

    Raises
    ------
    ValueError
        When no sample size reaches ``epsilon``: with ``bound="tv"`` the
        certified ε never exceeds ``2 artanh(sqrt(2) / 2) ≈ 1.763``.

    Notes
    -----
    The margin depends on the rows only through :math:`k = \lfloor n/2
    \rfloor`, so the answer is even. Found by bisection on
    :func:`mmd_certificate_ceiling` itself, so the two functions agree
    exactly.

    Examples
    --------
    >>> from skprivacy.auditors import mmd_rows_needed
    >>> mmd_rows_needed(0.0, n_comparisons=45, n_bandwidths=37)
    42
    >>> mmd_rows_needed(1.0, n_comparisons=45, n_bandwidths=37)
    128
    """
    kwargs = {
        "confidence": confidence,
        "n_comparisons": n_comparisons,
        "n_bandwidths": n_bandwidths,
        "bound": bound,
        "delta": delta,
    }
    cap = float(mmd_margin_ceiling(0.0, bound=bound, delta=delta))
    if not epsilon < cap:
        raise ValueError(
            f"epsilon={epsilon:g} cannot be certified by the MMD-TV bound at any "
            f"sample size: its ceiling never reaches {cap:.4g}."
        )
    k = _smallest(
        lambda k: mmd_certificate_ceiling(2 * k, 2 * k, **kwargs) > epsilon, 1
    )
    if k is None:  # pragma: no cover - needs ~1e9 rows per identity
        raise ValueError(f"epsilon={epsilon:g} needs more than {_MAX_ROWS} rows.")
    return 2 * k


# ---------------------------------------------------------------- permutation
@validate_params(
    {"n_a": ["array-like", Integral], "n_b": ["array-like", Integral]},
    prefer_skip_nested_validation=True,
)
def permutation_p_value_floor(n_a, n_b):
    r"""Smallest p-value a permutation test of ``n_a`` against ``n_b`` rows reaches.

    However many relabellings are drawn and however separated the samples,
    the Monte Carlo p-value :math:`(b + 1)/(m + 1)` settles near this floor.

    Parameters
    ----------
    n_a, n_b : int or array-like of int
        Rows of the two samples (``>= 1``).

    Returns
    -------
    floor : float or ndarray
        :math:`s / \binom{n_A + n_B}{n_A}` with :math:`s = 2` when
        :math:`n_A = n_B` and :math:`s = 1` otherwise.

    Notes
    -----
    The pooled rows split into the two sample sizes in only
    :math:`\binom{n_A + n_B}{n_A}` ways; the observed split is one of them
    and, for a statistic symmetric in the two samples (the unbiased MMD²)
    with :math:`n_A = n_B`, so is its mirror image, which attains the same
    value. The exact permutation p-value is therefore at least this share.
    Computed with exact integer arithmetic (correctly rounded; 0.0 when it
    underflows).

    Examples
    --------
    >>> from skprivacy.auditors import permutation_p_value_floor
    >>> permutation_p_value_floor(3, 3)  # 2 / C(6, 3)
    0.1
    >>> permutation_p_value_floor([4, 5], [4, 3]).round(4).tolist()  # 2/70, 1/56
    [0.0286, 0.0179]
    """
    a = _counts(n_a, "n_a", 1)
    b = _counts(n_b, "n_b", 1)
    a, b = np.broadcast_arrays(a, b)
    floor = np.array(
        [_share_of_splits(int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())],
        dtype=np.float64,
    ).reshape(a.shape)
    return _scalar_or_array(floor)


def _share_of_splits(x, y):
    """``s / comb(x + y, x)``, exact, or 0.0 when it underflows a float."""
    # log comb from lgamma is accurate to far better than the margin: beyond
    # e^-760 the share is below the smallest subnormal (about e^-744), and the
    # exact integer (hundreds of thousands of digits for a million rows) is
    # never built.
    log_comb = math.lgamma(x + y + 1) - math.lgamma(x + 1) - math.lgamma(y + 1)
    if log_comb > 760.0:
        return 0.0
    return (2 if x == y else 1) / math.comb(x + y, x)
