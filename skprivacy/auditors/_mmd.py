# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MMD-TV: a kernel two-sample ε estimate (and certificate) per identity pair."""

import functools
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import clone

from skprivacy.auditors._base import (
    ELEMENT_RATE,
    FLOP_RATE,
    BasePairAuditor,
    pair_row_index,
)
from skprivacy.auditors._description import describe_mmdtv
from skprivacy.utils import validate_identity_data
from skprivacy.utils._constants import MMD_TV_CEILING  # noqa: F401 (re-exported)
from skprivacy.utils._progress import Progress
from skprivacy.utils._random import seed_from
from skprivacy.utils._sklearn import Interval, StrOptions, validate_params
from skprivacy.utils._threads import limit_blas_threads, map_blas_threads
from skprivacy.utils._validation import _divide_rows

__all__ = ["MMDTVAuditor", "mmd_bandwidth_sweep"]

# Bandwidths a certified audit may use when the bandwidth is data-driven: the
# median heuristic is snapped to this grid and the Bonferroni correction pays
# for every grid value, so the data-dependent choice keeps the guarantee.
# Distances between unit vectors lie in [0, 2]; 2^-7 .. 2^2 covers any useful σ.
CERTIFICATE_BANDWIDTH_GRID = 2.0 ** (np.arange(-28, 9) / 4.0)

# Rows per identity block of the exhaustive engine: a chunk is a pair of
# blocks. 2,048 beat 1,024 by 5-10 % on 1,000 identities x 100 rows (fewer
# chunks, larger products) and tied on 200; 4,096 was slower.
_BLOCK_ROWS = 2048
# Pairs are audited in blocks of rows of about 2**_ROW_BLOCK_SHIFT distances.
_ROW_BLOCK_SHIFT = 19


def _single_blas_thread():
    """Context limiting BLAS to one thread (see skprivacy.utils._threads)."""
    return limit_blas_threads()


def mmd_to_epsilon(mmd, bound="tv", delta=0.0):
    r"""Map MMD values to ε lower bounds ((ε, δ)-DP, kernels with ``0 <= k <= 1``).

    Parameters
    ----------
    mmd : array-like
        MMD values (not squared), ``>= 0``.
    bound : {"tv", "gonzalez"}, default="tv"
        The TV lower bound ``t`` read from the MMD: ``"tv"``: ``t = MMD / 2``
        (MMD <= 2 TV for ``k(x, x) <= 1``); ``"gonzalez"``: ``t = MMD /
        sqrt(2)`` (González et al., ``0 <= k <= 1``).
    delta : float, default=0.0
        The δ of (ε, δ)-DP. ``0`` is pure DP: ``ε = 2 artanh(t)``.

    Returns
    -------
    epsilon : ndarray
        The smallest ε for which an (ε, δ)-DP mechanism can have total
        variation ``t``: ``log((1 + t - 2δ) / (1 - t))``, clipped at 0
        (``inf`` when ``t >= 1``).

    Notes
    -----
    An (ε, δ)-DP pair of distributions has
    :math:`\mathrm{TV} \le (e^\varepsilon - 1 + 2\delta)/(e^\varepsilon + 1)`
    (the two-point extremal mechanism), so a total variation of at least
    :math:`t` forces

    .. math::

        \varepsilon \ge \log\frac{1 + t - 2\delta}{1 - t},

    which is :math:`2\,\mathrm{artanh}(t)` at :math:`\delta = 0` and 0 when
    :math:`t \le \delta`.

    Examples
    --------
    >>> from skprivacy.auditors._mmd import mmd_to_epsilon
    >>> float(mmd_to_epsilon(2 ** 0.5))  # the ceiling of the TV chain
    1.7627...
    >>> float(mmd_to_epsilon(0.8, delta=0.05))  # log(1.3 / 0.6)
    0.7731...
    """
    mmd = np.asarray(mmd, dtype=np.float64)
    denom = 2.0 if bound == "tv" else np.sqrt(2.0)
    t = np.minimum(mmd / denom, 1.0)
    with np.errstate(divide="ignore"):
        if delta == 0:
            return 2.0 * np.arctanh(t)
        eps = np.log((1.0 + t - 2.0 * delta) / (1.0 - t))
    return np.where(t <= delta, 0.0, np.maximum(eps, 0.0))


# exp(-x) rounds to exactly 1.0 in float64 for x below 2^-53.
_KERNEL_ONE = 2.0**-53


def _check_kernel_exponent(exponent, what, where, advice):
    """Refuse an RBF exponent at which the kernel is 0 (underflow) or exactly 1.

    Either way every ε reads 0 ("no leakage") whatever the data.
    """
    # exp(-x) underflows to 0 in float64 for x > ~745.
    if exponent > 700.0:
        problem = "so small that the RBF kernel underflows to 0"
    elif exponent < _KERNEL_ONE:
        problem = "so large that the RBF kernel rounds to 1"
    else:
        return
    raise ValueError(
        f"{what} is {problem} at {where}, so every ε would read 0 whatever the "
        f"data. Use {advice}."
    )


def _median_sq_full(pooled):
    m = pooled.size
    k = m // 2
    if m % 2:
        return float(np.sqrt(np.partition(pooled, k)[k]))
    part = np.partition(pooled, (k - 1, k))
    return float(0.5 * (np.sqrt(part[k - 1]) + np.sqrt(part[k])))


def _mmd2_from_sums(state, a, b, kab, sigma):
    """Unbiased MMD^2 of pairs ``(a[t], b[t])`` from their cross kernel sums.

    Each within-identity distance is stored once; the off-diagonal sums
    count it twice.
    """
    starts = state["starts"]
    na, nb = starts[a + 1] - starts[a], starts[b + 1] - starts[b]
    gamma = 0.5 / (sigma * sigma)
    kaa = 2.0 * _within_kernel_sums(state, a, gamma)
    kbb = 2.0 * _within_kernel_sums(state, b, gamma)
    return kaa / (na * (na - 1)) + kbb / (nb * (nb - 1)) - 2.0 * kab / (na * nb)


def _to_squared_distances(G, sq_a, sq_b):
    """Turn dot products ``G`` into squared distances in place.

    ``max(-2 G + sq_a + sq_b, 0)`` with ``sq_a``, ``sq_b`` the squared norms
    broadcast along ``G``'s axes, always added in that order (so every path
    rounds alike).
    """
    G *= -2.0
    G += sq_a
    G += sq_b
    np.maximum(G, 0.0, out=G)


def _cross_kernel_sums(cross, sigma):
    """``sum(exp(-d^2 / (2 sigma_t^2)))`` over each row ``t`` of ``cross``.

    ``cross`` holds squared distances (``+inf`` padding contributes 0); the
    exponentials are taken in its dtype and summed in float64.
    """
    gamma = (-0.5 / (sigma * sigma)).astype(cross.dtype)
    terms = np.multiply(cross, gamma[:, None])
    return np.exp(terms, out=terms).sum(axis=1, dtype=np.float64)


def _aligned_rows(lo, width, dtype, fill=True):
    """Return an array whose rows take ranks ``lo[t]`` to one common column.

    Returns ``(M, top, offset)``: ``M`` has shape ``(len(lo), offset +
    width)``, its first ``offset`` columns hold ``top - lo[t]`` copies of
    ``-inf`` and ``+inf`` after them, so once the caller writes row ``t``'s
    values (``+inf`` padded) into ``M[t, offset:]``, their ``lo[t]``-th
    smallest is ``M[t]``'s ``top``-th smallest. One batched partition then
    serves rows with different ranks. ``fill=False`` leaves ``M[:, offset:]``
    uninitialised (for callers that write all of it).
    """
    top = int(lo.max())
    shift = top - lo
    offset = int(shift.max())
    M = np.empty((len(lo), offset + width), dtype=dtype)
    M[:, :offset] = np.where(np.arange(offset) < shift[:, None], -np.inf, np.inf)
    if fill:
        M[:, offset:] = np.inf
    return M, top, offset


def _partition_at(M, top, gap):
    """``M[t]``'s ``top``-th and ``(top + gap[t])``-th smallest, per row.

    Partitions ``M`` in place: once at ``top`` over all rows, then the part
    above it at the few distinct ``gap - 1`` (a single-rank partition costs
    much less than numpy's multi-rank one; ``gap == 1`` is just a minimum).
    """
    gap = np.asarray(gap, dtype=np.intp)
    M.partition(top, axis=1)
    low = M[:, top].copy()
    high = low.copy()
    above = M[:, top + 1 :]
    for g in np.unique(gap[gap > 0]):
        rows = np.flatnonzero(gap == g)
        if g == 1:
            high[rows] = above[rows].min(axis=1)
        else:
            part = above[rows]
            part.partition(g - 1, axis=1)
            high[rows] = part[:, g - 1]
    return low, high


def _count_per_row(mask):
    # count_nonzero with an axis falls back to a slow sum; per contiguous row
    # it is a fast popcount.
    return np.fromiter((np.count_nonzero(r) for r in mask), np.intp, len(mask))


def _dense_medians(cross, n_cross, within, tri, a, b, stride=16):
    """Exact median of each pair's pooled distances, for many pairs at once.

    Row ``t`` of ``cross`` holds pair ``t``'s ``n_cross[t]`` cross squared
    distances (``+inf`` padding for unequal identity sizes); its within
    squared distances are
    the sorted ``within[tri[a[t]]:tri[a[t] + 1]]`` and likewise for ``b[t]``.
    A strided subsample of the pooled values brackets the median rank (one
    batched selection); exact counts (one compare pass over ``cross``,
    ``searchsorted`` on the sorted within arrays) verify the bracket, and the
    values inside it are selected exactly (a second batched selection).
    Pairs whose bracket misses fall back to a full selection, so every
    result equals :func:`_median_sq_full` of the pooled values. Selections
    run in the dtype of ``cross``: every pooled value is exact in it.
    """
    P, dtype = len(cross), cross.dtype
    la, lb = tri[a + 1] - tri[a], tri[b + 1] - tri[b]
    m = la + lb + n_cross
    k_hi = m // 2
    k_lo = np.where(m % 2 == 0, k_hi - 1, k_hi)
    # Subsample: every stride-th within value (sorted, hence stratified: rank
    # error below one subsample step) and every stride-th cross value (a
    # systematic sample: its count below any value has standard deviation at
    # most sqrt(n / 4)); the bracket is 3.5 of those wide, plus the within
    # steps, and exact counts check it below.
    cross_sub = cross[:, ::stride]
    n_sub = np.full(P, cross_sub.shape[1])
    if (n_cross < cross.shape[1]).any():
        n_sub -= _count_per_row(cross_sub == np.inf)
    ns = -(-la // stride) + -(-lb // stride) + n_sub
    centre = ns * k_lo // np.maximum(m, 1)
    margin = int(3.5 * np.sqrt(n_sub.max() / 4)) + 4
    lo_r = np.clip(centre - margin, 0, ns - 1)
    hi_r = np.clip(centre + margin, 0, ns - 1)
    width = -(-int(max(la.max(), lb.max())) // stride)
    sub, top, off = _aligned_rows(
        lo_r, 2 * width + cross_sub.shape[1], dtype, fill=False
    )
    step = stride * np.arange(width)
    for ids in (a, b):
        # Each identity's subsample once, then one row gather per pair.
        uniq, inverse = np.unique(ids, return_inverse=True)
        length = (tri[uniq + 1] - tri[uniq])[:, None]
        part = within[np.minimum(tri[uniq][:, None] + step, len(within) - 1)]
        part[step >= length] = np.inf
        sub[:, off : off + width] = part[inverse]
        off += width
    sub[:, off:] = cross_sub
    lo, hi = _partition_at(sub, top, hi_r - lo_r)
    keep = cross >= lo[:, None]
    # Padding (+inf) is never below lo.
    n_below = cross.shape[1] - _count_per_row(keep)
    keep &= cross <= hi[:, None]
    n_in_cross = _count_per_row(keep)
    bounds = np.empty((4, P), dtype=np.intp)
    for side, ids in enumerate((a, b)):
        for u in np.unique(ids):
            rows = np.flatnonzero(ids == u)
            w = within[tri[u] : tri[u + 1]]
            bounds[2 * side, rows] = np.searchsorted(w, lo[rows], "left")
            bounds[2 * side + 1, rows] = np.searchsorted(w, hi[rows], "right")
    ia0, ia1, ib0, ib1 = bounds
    n_below += ia0 + ib0
    n_in = n_in_cross + (ia1 - ia0) + (ib1 - ib0)
    ok = (n_below <= k_lo) & (n_below + n_in > k_hi)
    median = np.empty(P)
    rows = np.flatnonzero(ok)
    if rows.size:
        r_lo = (k_lo - n_below)[rows]
        lengths = np.stack(
            (n_in_cross[rows], (ia1 - ia0)[rows], (ib1 - ib0)[rows]), axis=1
        )
        sel, top, off = _aligned_rows(r_lo, int(lengths.sum(axis=1).max()), dtype)
        # np.compress on flat views is several times faster than 2-D boolean
        # indexing; rows are then filled by slices (cheaper than a scatter).
        if ok.all():
            inside = np.compress(keep.ravel(), cross.ravel())
        else:
            inside = np.compress(keep[rows].ravel(), cross[rows].ravel())
        ends = np.cumsum(lengths, axis=1) + off
        cut = np.cumsum(lengths[:, 0])
        # Python ints: this loop runs once per pair.
        spans = np.column_stack(
            (
                ends,
                cut - lengths[:, 0],
                cut,
                (tri[a] + ia0)[rows],
                (tri[a] + ia1)[rows],
                (tri[b] + ib0)[rows],
                (tri[b] + ib1)[rows],
            )
        ).tolist()
        for i, (e0, e1, e2, c0, c1, a0, a1, b0, b1) in enumerate(spans):
            sel[i, off:e0] = inside[c0:c1]
            sel[i, e0:e1] = within[a0:a1]
            sel[i, e1:e2] = within[b0:b1]
        v_lo, v_hi = _partition_at(sel, top, (k_hi - k_lo)[rows])
        # As _median_sq_full: square roots in float64.
        median[rows] = 0.5 * (
            np.sqrt(v_lo.astype(np.float64)) + np.sqrt(v_hi.astype(np.float64))
        )
    for t in np.flatnonzero(~ok):
        pooled = np.concatenate(
            (
                within[tri[a[t]] : tri[a[t] + 1]],
                within[tri[b[t]] : tri[b[t] + 1]],
                cross[t][cross[t] < np.inf],
            )
        )
        median[t] = _median_sq_full(pooled)
    return median


def _fallback_sigma(wa, wb, cross):
    # Median 0 means most pooled points coincide: use the RMS distance, or 1
    # when every point is the same (then MMD is 0 for every bandwidth).
    ms = np.concatenate((wa, wb, cross)).mean()
    return float(np.sqrt(ms)) if ms > 0 else 1.0


def relabellings(n, n_a, n_permutations, rng):
    """Random label indicators: ``n_permutations`` rows with ``n_a`` ones each.

    Parameters
    ----------
    n : int
        Pooled sample size.
    n_a : int
        Size of the first sample.
    n_permutations : int
        Number of relabellings.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    indicators : ndarray of shape (n_permutations, n)
        Each row is a uniformly random permutation of ``n_a`` ones and
        ``n - n_a`` zeros (float64).
    """
    labels = np.zeros(n)
    labels[:n_a] = 1.0
    return rng.permuted(np.broadcast_to(labels, (n_permutations, n)), axis=1)


def permutation_test(Z, n_a, sigma, n_permutations, rng=None, *, indicators=None):
    """Permutation test of P_A = P_B with the unbiased MMD^2, batched.

    Parameters
    ----------
    Z : ndarray of shape (n_a + n_b, d)
        Pooled sample, the first ``n_a`` rows from A.
    n_a : int
        Size of A.
    sigma : float
        RBF bandwidth (label-invariant, e.g. the pooled median heuristic).
    n_permutations : int
        Number ``m`` of random relabellings.
    rng : numpy.random.Generator, default=None
        Source of the relabellings (when ``indicators`` is None).
    indicators : ndarray of shape (n_permutations, n_a + n_b), default=None
        Pre-drawn relabellings (:func:`relabellings`), e.g. shared by pairs
        of equal sizes.

    Returns
    -------
    p_value : float
        Phipson–Smyth ``(b + 1) / (m + 1)``, ``b`` the number of relabellings
        whose statistic is at least the observed one.
    statistic : float
        The observed unbiased MMD^2.

    Notes
    -----
    With label indicators :math:`a` (batch rows) and the kernel matrix
    :math:`K_0` with zero diagonal, :math:`a^T K_0 a`, :math:`a^T K_0 b` and
    :math:`b^T K_0 b` follow from one product :math:`A K_0` and the row sums
    of :math:`K_0` (``b = 1 - a``), so all relabellings cost one matrix
    product (in batches of about 16 MB).
    """
    n = Z.shape[0]
    n_b = n - n_a
    sq = np.einsum("ij,ij->i", Z, Z)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T)
    np.maximum(D2, 0.0, out=D2)
    K = np.exp(D2 * (-0.5 / (sigma * sigma)))
    np.fill_diagonal(K, 0.0)
    r = K.sum(axis=1)
    tot = r.sum()
    caa, cbb, cab = 1.0 / (n_a * (n_a - 1)), 1.0 / (n_b * (n_b - 1)), 2.0 / (n_a * n_b)

    def stat(ind):
        saa = np.einsum("ij,ij->i", ind @ K, ind)
        ir = ind @ r
        return caa * saa + cbb * (tot - 2.0 * ir + saa) - cab * (ir - saa)

    labels = np.zeros((1, n))
    labels[0, :n_a] = 1.0
    observed = stat(labels)[0]
    # Relabellings reproducing the observed split differ from it only by
    # rounding; the tolerance counts them as ties (conservative).
    threshold = observed - 1e-12 * (1.0 + abs(observed))
    batch = max(1, (1 << 21) // n)
    b = 0
    for start in range(0, n_permutations, batch):
        size = min(batch, n_permutations - start)
        if indicators is not None:
            ind = indicators[start : start + size]
        else:
            ind = relabellings(n, n_a, size, rng)
        b += int(np.count_nonzero(stat(ind) >= threshold))
    return (b + 1.0) / (n_permutations + 1.0), float(observed)


@functools.lru_cache(maxsize=64)
def _triu(n):
    """Strict upper-triangle indices of an ``n x n`` matrix (cached per size)."""
    return np.triu_indices(n, k=1)


def _identity_state(data, pairs):
    """Rows of the pairs' identities grouped, squared norms, within distances.

    Only identities occurring in ``pairs`` are gathered (``slot`` maps codes
    to them), so a short audit of many identities costs nothing for the
    others.
    """
    # float32 input stays float32 (Gram blocks at the float32 rate); kernel
    # sums and moments accumulate in float64.
    slot, rows, starts = pair_row_index(data, pairs)
    if data.norms is None:
        Xs = np.ascontiguousarray(data.X if rows is None else data.X[rows])
    else:
        # Deferred normalisation: each identity's rows are normalised on the
        # threads below, as data.normalized_rows would (bit for bit).
        Xs = np.empty((starts[-1], data.X.shape[1]), dtype=data.X.dtype)
    sq = np.empty(len(Xs), dtype=Xs.dtype)
    counts = np.diff(starts)
    tri_sizes = counts * (counts - 1) // 2
    tri_starts = np.concatenate([[0], np.cumsum(tri_sizes)])
    within = np.empty(int(tri_starts[-1]))
    # The moment series pays off for identities in many pairs (one pass per
    # moment, once, against one exponential pass per pair for direct sums).
    uses = np.bincount(
        slot[np.asarray(pairs, dtype=np.intp)].ravel(), minlength=len(counts)
    )
    series = uses >= _MOMENT_MIN_USES
    moments = (
        np.zeros(len(counts)),
        np.zeros(len(counts)),
        np.zeros((len(counts), _N_MOMENTS + 1)),
    )

    def fill(identities):
        for i in identities:
            s, e = starts[i], starts[i + 1]
            R = Xs[s:e]
            if data.norms is not None:
                src = slice(s, e) if rows is None else rows[s:e]
                out = _divide_rows(data.X[src], data.norms[src], out=R)
                if out is not R:  # the overflow-safe path allocates
                    R[...] = out
            sq[s:e] = np.einsum("ij,ij->i", R, R)
            D2 = sq[s:e, None] + sq[None, s:e] - 2.0 * (R @ R.T)
            iu = _triu(e - s)
            # Sorted: the median selection brackets ranks with searchsorted.
            within[tri_starts[i] : tri_starts[i + 1]] = np.sort(np.maximum(D2[iu], 0.0))
        _within_moments(within, tri_starts, series, identities=identities, out=moments)

    # Disjoint slices of `sq`, `within` and the moments per group of
    # identities: safe on threads.
    map_blas_threads(fill, np.array_split(np.arange(len(counts)), 16))
    centre, half_range, moments = moments
    return {
        "slot": slot,
        "X": Xs,
        "sq": sq,
        "starts": starts,
        "within": within,
        "tri": tri_starts,
        "centre": centre,
        "half_range": half_range,
        "moments": moments,
    }


# Number of centred power moments kept per identity (enough for x <= 3 below).
_N_MOMENTS = 48
# Identities in fewer pairs than this get direct within sums (no moments).
_MOMENT_MIN_USES = 8
# Largest gamma * half_range for which the within sums use the moment series.
_SERIES_MAX_X = 3.0


def _within_moments(within, tri, series=None, *, identities=None, out=None):
    """Centred power moments of each identity's within squared distances.

    For identity ``i`` with sorted values ``w``: ``centre = (w_min + w_max)/2``,
    ``half_range = (w_max - w_min)/2`` and ``moments[i, k] = sum((w - centre)**k)``.
    Identities with ``series[i]`` False get only the count ``moments[i, 0]``
    and ``half_range = inf`` (their kernel sums are direct). Only
    ``identities`` (default: all) are computed, into ``out = (centre,
    half_range, moments)`` when given (zero-initialised).
    """
    k = len(tri) - 1
    if out is None:
        out = (np.zeros(k), np.zeros(k), np.zeros((k, _N_MOMENTS + 1)))
    centre, half_range, moments = out
    for i in range(k) if identities is None else identities:
        w = within[tri[i] : tri[i + 1]]
        if w.size == 0:
            continue
        if series is not None and not series[i]:
            moments[i, 0] = w.size
            half_range[i] = np.inf
            continue
        centre[i] = 0.5 * (w[0] + w[-1])
        half_range[i] = 0.5 * (w[-1] - w[0])
        dev = w - centre[i]
        power = np.ones_like(w)
        for j in range(_N_MOMENTS + 1):
            moments[i, j] = power.sum()
            power *= dev
    return centre, half_range, moments


def _within_kernel_sums(state, ids, gamma):
    """``sum(exp(-gamma[t] * w))`` over identity ``ids[t]``'s within distances.

    The sum is a function of ``gamma`` only through the identity's distances,
    which every pair involving the identity shares, so it is expanded around
    the centre of their range: ``exp(-gamma c) sum_k (-gamma)^k M_k / k!`` with
    the centred moments ``M_k`` (``state["moments"]``). With
    ``x = gamma * half_range <= 3`` the terms after ``k`` are below
    ``N e^x x^(k+1) / (k+1)!``, under ``1e-17`` of the smallest possible sum
    ``N e^-x`` well before ``k = 48``; rounding is at most ``e^(2x)`` times the
    machine precision per term. All terms are evaluated, for every ``t`` at
    once. Larger ``x`` (narrow kernels) and identities without moments use
    the direct sum.
    """
    within, tri = state["within"], state["tri"]
    x = gamma * state["half_range"][ids]
    series = x <= _SERIES_MAX_X
    total = np.empty(len(ids))
    if series.any():
        g = gamma[series]
        # coef[:, k] = (-g)^k / k!
        ratios = -g[:, None] / np.arange(1, _N_MOMENTS + 1)
        coef = np.cumprod(
            np.concatenate((np.ones((g.size, 1)), ratios), axis=1), axis=1
        )
        centre = state["centre"][ids[series]]
        total[series] = np.exp(-g * centre) * np.einsum(
            "ij,ij->i", coef, state["moments"][ids[series]]
        )
    for t in np.flatnonzero(~series):
        w = within[tri[ids[t]] : tri[ids[t] + 1]]
        total[t] = np.exp(-gamma[t] * w).sum()
    return total


def _blocks(counts):
    """Block index of each identity: consecutive identities, ~_BLOCK_ROWS rows."""
    cum = np.cumsum(counts) - counts
    return (cum // _BLOCK_ROWS).astype(np.intp)


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
    random_state : int, RandomState instance or None, default=0
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
    within ``1e-6`` of the float64 path in :math:`\widehat{\mathrm{MMD}}^2_u`
    (measured ~2e-7), hence within ``1e-3`` in MMD and ``2e-3`` in ε where
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
            _check_kernel_exponent(
                exponent,
                f"bandwidth_scale={self.bandwidth_scale:g} (of the median bandwidth)",
                "each pair's median distance",
                f"a bandwidth_scale in [{np.sqrt(1 / 1400):.3g}, "
                f"{np.sqrt(0.5 / _KERNEL_ONE):.3g}]",
            )
            return
        sigma = float(self.bandwidth) * self.bandwidth_scale
        rows = data.normalized_rows(
            np.arange(0, data.X.shape[0], max(1, data.X.shape[0] // 256))
        )
        sq = np.maximum(2.0 - 2.0 * (rows @ rows.T), 0.0)[np.triu_indices(len(rows), 1)]
        sq = sq[sq > 0]
        if not sq.size:
            return
        median_sq = float(np.median(sq))
        # exp(-x) underflows to 0 in float64 for x > ~745.
        with np.errstate(over="ignore"):
            exponent = 0.5 * (np.sqrt(median_sq) / np.float64(sigma)) ** 2
        _check_kernel_exponent(
            exponent,
            f"bandwidth={self.bandwidth!r} (times bandwidth_scale: {sigma:.3g})",
            f"typical rows (median distance {np.sqrt(median_sq):.3g})",
            f"a bandwidth in [{np.sqrt(median_sq / 1400):.3g}, "
            f'{np.sqrt(0.5 * median_sq / _KERNEL_ONE):.3g}], or bandwidth="median"',
        )

    def _prepare_audit(self, data, pairs):
        self._check_fixed_bandwidth(data)
        # Many small per-identity products, spread over threads with one BLAS
        # thread each: fastest, and deterministic (see _audit_pairs).
        return _identity_state(data, pairs)

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
        blk = _blocks(data.counts)
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

    @staticmethod
    def _is_dense(pairs):
        ua, ub = np.unique(pairs[:, 0]), np.unique(pairs[:, 1])
        return len(pairs) > 1 and len(pairs) >= 0.25 * len(ua) * len(ub)

    @staticmethod
    def _dense_cross(state, pairs, step):
        """Yield the cross squared distances of every pair, one row per pair.

        Yields ``(block, rows)`` for blocks of about ``step`` pairs: row ``i``
        of ``block`` holds the squared distances of pair ``pairs[rows[i]]``;
        a block is yielded as soon as it is computed (still in cache) and is
        overwritten by the next one. With equal identity sizes the
        pairs are taken by first identity: one product ``B @ A.T`` of the
        rows of all its partners ``B`` with its own rows ``A`` lands directly
        in those pairs' rows (partners' blocks are consecutive), and the
        distance terms are added while it is in cache. Otherwise one Gram
        product covers the group and rows are padded with ``+inf``.
        """
        Xs, sq, starts = state["X"], state["sq"], state["starts"]
        a, b = pairs[:, 0], pairs[:, 1]
        ua, ub = np.unique(a), np.unique(b)
        ca, cb = starts[ua + 1] - starts[ua], starts[ub + 1] - starts[ub]
        ma, mb = int(ca.max()), int(cb.max())
        if (ca == ma).all() and (cb == mb).all():
            order = np.lexsort((b, a))
            a, b = a[order], b[order]
            first = np.flatnonzero(np.r_[True, a[1:] != a[:-1]])
            last = np.r_[first[1:], len(a)]
            # One buffer reused for every block: it stays in cache.
            buffer = np.empty((step + int((last - first).max()), mb * ma), Xs.dtype)
            filled = 0
            for s, e in zip(first, last):
                rows_a = slice(starts[a[s]], starts[a[s] + 1])
                partners = b[s:e]
                if partners[-1] - partners[0] == e - s - 1:
                    rows_b = slice(starts[partners[0]], starts[partners[-1] + 1])
                else:
                    rows_b = (starts[partners][:, None] + np.arange(mb)).ravel()
                out = buffer[filled : filled + e - s].reshape(-1, ma)
                np.matmul(Xs[rows_b], Xs[rows_a].T, out=out)
                _to_squared_distances(out, sq[rows_a][None, :], sq[rows_b][:, None])
                filled += e - s
                if filled >= step or e == len(a):
                    yield buffer[:filled], order[e - filled : e]
                    filled = 0
            return
        ra = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in ua])
        rb = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in ub])
        G = Xs[ra] @ Xs[rb].T
        _to_squared_distances(G, sq[ra][:, None], sq[rb][None, :])
        pa, pb = np.searchsorted(ua, a), np.searchsorted(ub, b)
        padded = np.full((len(ua) * ma, len(ub) * mb), np.inf, dtype=G.dtype)
        dest_a = np.repeat(np.arange(len(ua)) * ma, ca) + (
            np.arange(len(ra)) - np.repeat(np.cumsum(ca) - ca, ca)
        )
        dest_b = np.repeat(np.arange(len(ub)) * mb, cb) + (
            np.arange(len(rb)) - np.repeat(np.cumsum(cb) - cb, cb)
        )
        padded[np.ix_(dest_a, dest_b)] = G
        cross = padded.reshape(len(ua), ma, len(ub), mb)[pa, :, pb, :]
        cross = cross.reshape(len(pairs), -1)
        for r in range(0, len(pairs), step):
            yield cross[r : r + step], np.arange(r, min(r + step, len(pairs)))

    @staticmethod
    def _sparse_cross(state, a, b, out):
        """Write pair ``(a, b)``'s squared cross distances into ``out``."""
        Xs, sq, starts = state["X"], state["sq"], state["starts"]
        rows_a = slice(starts[a], starts[a + 1])
        rows_b = slice(starts[b], starts[b + 1])
        np.matmul(Xs[rows_a], Xs[rows_b].T, out=out)
        _to_squared_distances(out, sq[rows_a][:, None], sq[rows_b][None, :])

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
                ss = np.random.SeedSequence(context.seed, spawn_key=(*key, 0, 1))
                rng = np.random.Generator(np.random.PCG64(ss))
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
        starts, within, tri = state["starts"], state["within"], state["tri"]
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
            n_grid = 1 if not median_bw else len(CERTIFICATE_BANDWIDTH_GRID)
            log_term = np.log(n_grid * context.n_pairs_total / (1.0 - self.confidence))
            margin = np.sqrt(8.0 * log_term / np.minimum(na // 2, nb // 2))
            kab_cert = np.full(n, np.nan)

        def within_of(i):
            return within[tri[i] : tri[i + 1]]

        def finish_sigma(t, cross_t):
            # A zero median means most pooled points coincide.
            med = median[t]
            base = (
                med
                if med > 0
                else _fallback_sigma(within_of(a[t]), within_of(b[t]), cross_t)
            )
            return base * self.bandwidth_scale

        if certify:
            # The certificate's bandwidths, filled block by block with sigma.
            cert_sigma = np.empty(n)

        def audit_block(block, rows):
            # Medians, bandwidths and cross kernel sums of pairs `rows`, whose
            # squared cross distances are the rows of `block`.
            if median_bw:
                median[rows] = _dense_medians(
                    block, (na * nb)[rows], within, tri, a[rows], b[rows]
                )
                sigma[rows] = median[rows] * self.bandwidth_scale
                for i in np.flatnonzero(~(median[rows] > 0)):
                    real = block[i][block[i] < np.inf]
                    sigma[rows[i]] = finish_sigma(rows[i], real)
            kab[rows] = _cross_kernel_sums(block, sigma[rows])
            if certify:
                cert_sigma[rows] = self._certificate_sigma(sigma[rows])
                redo = np.flatnonzero(cert_sigma[rows] != sigma[rows])
                kab_cert[rows[redo]] = _cross_kernel_sums(
                    block[redo], cert_sigma[rows[redo]]
                )

        # Rows in blocks of ~2 MB: the selections' and exponentials'
        # temporaries stay in cache.
        step = max(1, (1 << _ROW_BLOCK_SHIFT) // int((na * nb).max()))
        # One BLAS thread, always: OpenBLAS's rounding depends on its thread
        # count, so this keeps results bit-identical for every n_jobs and
        # backend (and small products run fastest single-threaded anyway).
        # Parallelism comes from n_jobs and in-process threads.
        with _single_blas_thread():
            if self._is_dense(pairs):
                # One product per first identity for all its pairs.
                for block, rows in self._dense_cross(state, pairs, step):
                    audit_block(block, rows)
            else:
                # Few pairs per identity: one small product per pair, written
                # into a block of rows that is dropped once audited.
                for r in range(0, n, step):
                    rows = np.arange(r, min(r + step, n))
                    width = int((na * nb)[rows].max())
                    block = np.full((len(rows), width), np.inf, dtype=state["X"].dtype)
                    for i, t in enumerate(rows):
                        out = block[i, : na[t] * nb[t]].reshape(na[t], nb[t])
                        self._sparse_cross(state, a[t], b[t], out)
                    audit_block(block, rows)
            mmd2 = _mmd2_from_sums(state, a, b, kab, sigma)
            if certify:
                redo = cert_sigma != sigma
                mmd2_cert = mmd2.copy()
                mmd2_cert[redo] = _mmd2_from_sums(
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
        "random_state": ["random_state"],
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
    random_state : int, RandomState instance or None, default=0
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
