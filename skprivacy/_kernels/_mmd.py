# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MMD kernels: within-identity distances, cross blocks, exact medians, kernel sums.

The maths of the unbiased MMD and its ε lives in :mod:`skprivacy.stats`; this
module computes the quantities it needs for many identity pairs at once:

* :func:`identity_state`: per identity, the squared norms, the sorted
  within-identity squared distances and their centred power moments;
* :func:`cross_blocks`: the cross squared distances of every pair, block by
  block (one Gram product per first identity when the pairs are dense);
* :func:`pair_bandwidths`: the exact median heuristic of each pair's pooled
  distances (:func:`dense_medians`; reference :func:`median_sq_reference`);
* :func:`cross_kernel_sums` and :func:`within_kernel_sums` (a moment series;
  reference :func:`within_kernel_sums_reference`);
* :func:`permutation_test`: all relabellings in batched products (reference
  :func:`permutation_test_reference`).
"""

import functools

import numpy as np

from skprivacy.utils import map_blas_threads

__all__ = [
    "BLOCK_ROWS",
    "KERNEL_ONE",
    "check_kernel_exponent",
    "cross_blocks",
    "cross_kernel_sums",
    "dense_medians",
    "identity_blocks",
    "identity_state",
    "median_sq_reference",
    "pair_bandwidths",
    "permutation_test",
    "permutation_test_reference",
    "relabellings",
    "to_squared_distances",
    "within_kernel_sums",
    "within_kernel_sums_reference",
    "within_subsample",
]

# Rows per identity block of the exhaustive engine: a chunk of an audit is a
# pair of blocks (see benchmarks/README.md for the block-size measurements).
BLOCK_ROWS = 2048
# Pairs are audited in blocks of rows of about 2**ROW_BLOCK_SHIFT distances,
# so the selections' and exponentials' temporaries stay in cache.
ROW_BLOCK_SHIFT = 19
# Subsample stride of the median selection: every 16th pooled value brackets
# the median rank (a wider stride makes a smaller first selection and a wider
# bracket for the second; see benchmarks/README.md).
MEDIAN_STRIDE = 16
# Number of centred power moments kept per identity (enough for x <= 3 below).
_N_MOMENTS = 48
# Identities in fewer pairs than this get direct within sums (no moments).
MOMENT_MIN_USES = 8
# Largest gamma * half_range for which the within sums use the moment series.
_SERIES_MAX_X = 3.0


# exp(-x) rounds to exactly 1.0 in float64 for x below 2^-53.
KERNEL_ONE = 2.0**-53


def check_kernel_exponent(exponent, what, where, advice):
    """Refuse an RBF exponent at which the kernel is 0 (underflow) or exactly 1.

    ``exponent`` is ``d^2 / (2 sigma^2)`` at a typical distance ``d``. Either
    way every ε reads 0 ("no leakage") whatever the data; the ``ValueError``
    names ``what`` (the setting), ``where`` (the distance) and ``advice``.
    """
    # exp(-x) underflows to 0 in float64 for x > ~745.
    if exponent > 700.0:
        problem = "so small that the RBF kernel underflows to 0"
    elif exponent < KERNEL_ONE:
        problem = "so large that the RBF kernel rounds to 1"
    else:
        return
    raise ValueError(
        f"{what} is {problem} at {where}, so every ε would read 0 whatever the "
        f"data. Use {advice}."
    )


def check_bandwidth_at_median(sq, sigma, what, alternative):
    """Refuse a bandwidth ``sigma`` at which the kernel is 0 or 1 for typical rows.

    ``sq`` holds squared distances between sample rows; the typical distance
    is the median of the positive ones (no check when there is none). The
    ``ValueError`` of :func:`check_kernel_exponent` names ``what`` (the
    setting) and advises the bandwidth range that works, or ``alternative``.
    """
    sq = sq[sq > 0]
    if not sq.size:
        return
    median_sq = float(np.median(sq))
    # exp(-x) underflows to 0 in float64 for x > ~745.
    with np.errstate(over="ignore"):
        exponent = 0.5 * (np.sqrt(median_sq) / np.float64(sigma)) ** 2
    check_kernel_exponent(
        exponent,
        what,
        f"typical rows (median distance {np.sqrt(median_sq):.3g})",
        f"a bandwidth in [{np.sqrt(median_sq / 1400):.3g}, "
        f"{np.sqrt(0.5 * median_sq / KERNEL_ONE):.3g}], or {alternative}",
    )


def median_sq_reference(pooled):
    """Median of the square roots of ``pooled`` squared distances (plain).

    The reference of :func:`dense_medians`: one full selection over the
    values (``np.partition``), the mean of the two middle square roots for an
    even count.
    """
    m = pooled.size
    k = m // 2
    if m % 2:
        return float(np.sqrt(np.partition(pooled, k)[k]))
    part = np.partition(pooled, (k - 1, k))
    return float(0.5 * (np.sqrt(part[k - 1]) + np.sqrt(part[k])))


def to_squared_distances(G, sq_a, sq_b, *, scaled=False):
    """Turn dot products ``G`` into squared distances in place.

    ``max(-2 G + sq_a + sq_b, 0)`` with ``sq_a``, ``sq_b`` the squared norms
    broadcast along ``G``'s axes, always added in that order (so every path
    rounds alike). With ``scaled=True``, ``G`` already holds ``-2`` times the
    products: the product of one operand scaled by ``-2``, which is exactly
    ``-2`` times the product (scaling by a power of two commutes with every
    rounding of the product), one pass over ``G`` fewer.
    """
    if not scaled:
        G *= -2.0
    G += sq_a
    G += sq_b
    np.maximum(G, 0.0, out=G)


def cross_kernel_sums(cross, sigma):
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
        # Every row at the same gap (equal identity sizes): no gathered copy.
        part = above if len(rows) == len(M) else above[rows]
        if g == 1:
            high[rows] = part.min(axis=1)
        else:
            part.partition(g - 1, axis=1)
            high[rows] = part[:, g - 1]
    return low, high


def _count_per_row(mask):
    # count_nonzero with an axis falls back to a slow sum; per contiguous row
    # it is a fast popcount.
    return np.fromiter((np.count_nonzero(r) for r in mask), np.intp, len(mask))


def _segment_searchsorted(values, begin, end, x):
    """``np.searchsorted(values[begin[t]:end[t]], x[t])`` for every ``t`` at once.

    A branch-free binary search over the sorted segments: ``log2`` of the
    longest segment steps, each a few operations on all entries.
    """
    pos = begin.copy()
    longest = int((end - begin).max()) if len(begin) else 0
    step = 1 << (longest.bit_length() - 1) if longest else 0
    while step:
        cand = pos + step
        up = cand <= end
        up &= values.take(cand - 1, mode="clip") < x
        np.copyto(pos, cand, where=up)
        step >>= 1
    return pos - begin


def within_subsample(within, tri, stride=MEDIAN_STRIDE):
    """Every ``stride``-th sorted within distance of each identity, ``+inf`` padded.

    Returns an array of shape ``(n_identities, ceil(longest / stride))``
    (float64): row ``i`` holds ``within[tri[i]:tri[i + 1]:stride]``.
    """
    lengths = np.diff(tri)
    width = -(-int(lengths.max()) // stride) if len(lengths) else 0
    step = stride * np.arange(width)
    out = within[np.minimum(tri[:-1, None] + step, max(len(within) - 1, 0))]
    out[step >= lengths[:, None]] = np.inf
    return out


def dense_medians(
    cross, n_cross, within, tri, a, b, stride=MEDIAN_STRIDE, within_sub=None
):
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
    result equals :func:`median_sq_reference` of the pooled values. Selections
    run in the dtype of ``cross``: every pooled value is exact in it.
    ``within_sub`` is :func:`within_subsample` of ``within`` (computed here
    when None).
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
    if within_sub is None:
        within_sub = within_subsample(within, tri, stride)
    for ids in (a, b):
        # One row gather per pair from each identity's subsample.
        sub[:, off : off + width] = within_sub[ids, :width]
        off += width
    sub[:, off:] = cross_sub
    lo, hi = _partition_at(sub, top, hi_r - lo_r)
    keep = cross >= lo[:, None]
    # Padding (+inf) is never below lo.
    n_below = cross.shape[1] - _count_per_row(keep)
    keep &= cross <= hi[:, None]
    n_in_cross = _count_per_row(keep)
    # Within values below lo and up to hi: four searchsorted per pair, all
    # in one vectorised binary search (w <= h is w < nextafter(h, inf)).
    lo64, hi64 = lo.astype(np.float64), np.nextafter(hi.astype(np.float64), np.inf)
    ids = np.concatenate((a, a, b, b))
    bounds = _segment_searchsorted(
        within, tri[ids], tri[ids + 1], np.concatenate((lo64, hi64, lo64, hi64))
    )
    ia0, ia1, ib0, ib1 = bounds.reshape(4, P)
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
        # As median_sq_reference: square roots in float64.
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
        median[t] = median_sq_reference(pooled)
    return median


def fallback_sigma(wa, wb, cross):
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


def permutation_test_reference(Z, n_a, sigma, indicators):
    """Permutation test of :func:`permutation_test`, one relabelling at a time (plain).

    Each relabelling's unbiased MMD^2 is summed directly from the kernel
    matrix; ties with the observed statistic count (relative tolerance 1e-12).

    Returns
    -------
    p_value : float
    statistic : float
    """
    Z = np.asarray(Z, dtype=np.float64)
    diff = Z[:, None, :] - Z[None, :, :]
    K = np.exp(-np.einsum("ijk,ijk->ij", diff, diff) / (2.0 * sigma * sigma))
    np.fill_diagonal(K, 0.0)

    def mmd2(mask):
        A, B = np.flatnonzero(mask), np.flatnonzero(~mask)
        na, nb = len(A), len(B)
        return (
            K[np.ix_(A, A)].sum() / (na * (na - 1))
            + K[np.ix_(B, B)].sum() / (nb * (nb - 1))
            - 2.0 * K[np.ix_(A, B)].sum() / (na * nb)
        )

    observed = mmd2(np.arange(len(Z)) < n_a)
    threshold = observed - 1e-12 * (1.0 + abs(observed))
    b = sum(mmd2(np.asarray(row) == 1) >= threshold for row in indicators)
    return (b + 1.0) / (len(indicators) + 1.0), float(observed)


@functools.lru_cache(maxsize=64)
def _triu(n):
    """Strict upper-triangle indices of an ``n x n`` matrix (cached per size)."""
    return np.triu_indices(n, k=1)


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


def within_kernel_sums(state, ids, gamma):
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


def within_kernel_sums_reference(state, ids, gamma):
    """``sum(exp(-gamma[t] * w))`` over identity ``ids[t]``'s within distances (plain).

    The reference of :func:`within_kernel_sums`: one direct sum per entry.
    """
    within, tri = state["within"], state["tri"]
    return np.array(
        [
            np.exp(-g * within[tri[i] : tri[i + 1]]).sum()
            for i, g in zip(np.asarray(ids).tolist(), np.asarray(gamma).tolist())
        ]
    )


def identity_state(X, starts, uses):
    """Per-identity quantities every pair of the identity shares.

    Parameters
    ----------
    X : ndarray of shape (n_rows, d), float32 or float64
        Rows grouped by identity: identity ``i`` is ``X[starts[i]:starts[i + 1]]``
        (C-contiguous; float32 stays float32, so the Gram blocks run at the
        float32 rate, while kernel sums and moments accumulate in float64).
    starts : ndarray of shape (n_identities + 1,)
        Group offsets.
    uses : ndarray of shape (n_identities,)
        Number of audited pairs each identity occurs in: identities in at
        least ``MOMENT_MIN_USES`` pairs get the moment series of
        :func:`within_kernel_sums` (one pass per moment, once, against one
        exponential pass per pair for direct sums).

    Returns
    -------
    state : dict
        ``X``, ``starts``, ``sq`` (squared row norms, in ``X``'s dtype),
        ``within`` (each identity's strict upper-triangle squared distances,
        sorted, float64; identity ``i`` at ``within[tri[i]:tri[i + 1]]``),
        ``tri``, ``within_sub`` (:func:`within_subsample`, for the median
        selection) and the moment series ``centre``, ``half_range``,
        ``moments``.
    """
    X = np.ascontiguousarray(X)
    sq = np.empty(len(X), dtype=X.dtype)
    counts = np.diff(starts)
    tri_sizes = counts * (counts - 1) // 2
    tri_starts = np.concatenate([[0], np.cumsum(tri_sizes)])
    within = np.empty(int(tri_starts[-1]))
    series = np.asarray(uses) >= MOMENT_MIN_USES
    moments = (
        np.zeros(len(counts)),
        np.zeros(len(counts)),
        np.zeros((len(counts), _N_MOMENTS + 1)),
    )

    def fill(identities):
        for i in identities:
            s, e = starts[i], starts[i + 1]
            R = X[s:e]
            sq[s:e] = np.einsum("ij,ij->i", R, R)
            D2 = sq[s:e, None] + sq[None, s:e] - 2.0 * (R @ R.T)
            iu = _triu(e - s)
            # Sorted: the median selection brackets ranks with searchsorted.
            within[tri_starts[i] : tri_starts[i + 1]] = np.sort(np.maximum(D2[iu], 0.0))
        _within_moments(within, tri_starts, series, identities=identities, out=moments)

    # Disjoint slices of `sq`, `within` and the moments per group of
    # identities: safe on threads, each with a single-threaded BLAS.
    map_blas_threads(fill, np.array_split(np.arange(len(counts)), 16))
    centre, half_range, moments = moments
    return {
        "X": X,
        "sq": sq,
        "starts": starts,
        "within": within,
        "within_sub": within_subsample(within, tri_starts),
        "tri": tri_starts,
        "centre": centre,
        "half_range": half_range,
        "moments": moments,
    }


def identity_blocks(counts):
    """Block index of each identity: consecutive identities, ~BLOCK_ROWS rows."""
    cum = np.cumsum(counts) - counts
    return (cum // BLOCK_ROWS).astype(np.intp)


def is_dense(pairs):
    """Whether ``pairs`` cover at least a quarter of their identities' grid."""
    ua, ub = np.unique(pairs[:, 0]), np.unique(pairs[:, 1])
    return len(pairs) > 1 and len(pairs) >= 0.25 * len(ua) * len(ub)


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
            np.matmul(Xs[rows_b], -2.0 * Xs[rows_a].T, out=out)
            to_squared_distances(
                out, sq[rows_a][None, :], sq[rows_b][:, None], scaled=True
            )
            filled += e - s
            if filled >= step or e == len(a):
                yield buffer[:filled], order[e - filled : e]
                filled = 0
        return
    ra = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in ua])
    rb = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in ub])
    Ra = Xs[ra]
    Ra *= -2.0
    G = Ra @ Xs[rb].T
    to_squared_distances(G, sq[ra][:, None], sq[rb][None, :], scaled=True)
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


def _sparse_cross(state, a, b, out):
    """Write pair ``(a, b)``'s squared cross distances into ``out``."""
    Xs, sq, starts = state["X"], state["sq"], state["starts"]
    rows_a = slice(starts[a], starts[a + 1])
    rows_b = slice(starts[b], starts[b + 1])
    np.matmul(-2.0 * Xs[rows_a], Xs[rows_b].T, out=out)
    to_squared_distances(out, sq[rows_a][:, None], sq[rows_b][None, :], scaled=True)


def cross_blocks(state, pairs):
    """Yield the squared cross distances of ``pairs``, a block of pairs at a time.

    Parameters
    ----------
    state : dict
        From :func:`identity_state`.
    pairs : ndarray of shape (n_pairs, 2)
        Identity indices into ``state``.

    Yields
    ------
    block : ndarray of shape (n_block, width)
        Row ``i`` holds the squared distances between the rows of the two
        identities of pair ``pairs[rows[i]]``, in any order, and ``+inf``
        padding where identity sizes differ. A block may be overwritten once
        the next one is requested.
    rows : ndarray of shape (n_block,)
        Indices into ``pairs``.

    Notes
    -----
    Blocks hold about ``2**ROW_BLOCK_SHIFT`` distances. Dense pairs (at least
    a quarter of the grid of their identities) share one Gram product per
    first identity (:func:`is_dense`); sparse pairs get one small product
    each. Run it with one BLAS thread for results independent of the thread
    count.
    """
    starts = state["starts"]
    a, b = pairs[:, 0], pairs[:, 1]
    na, nb = starts[a + 1] - starts[a], starts[b + 1] - starts[b]
    n = len(pairs)
    step = max(1, (1 << ROW_BLOCK_SHIFT) // int((na * nb).max()))
    if is_dense(pairs):
        # One product per first identity for all its pairs.
        yield from _dense_cross(state, pairs, step)
        return
    # Few pairs per identity: one small product per pair, written into a
    # block of rows that is dropped once audited.
    for r in range(0, n, step):
        rows = np.arange(r, min(r + step, n))
        width = int((na * nb)[rows].max())
        block = np.full((len(rows), width), np.inf, dtype=state["X"].dtype)
        for i, t in enumerate(rows):
            out = block[i, : na[t] * nb[t]].reshape(na[t], nb[t])
            _sparse_cross(state, a[t], b[t], out)
        yield block, rows


def pair_bandwidths(state, block, a, b):
    """Exact median heuristic of each pair of a block, with its fallback.

    Parameters
    ----------
    state : dict
        From :func:`identity_state`.
    block : ndarray of shape (n_block, width)
        Squared cross distances of pairs ``(a[i], b[i])`` (from
        :func:`cross_blocks`).
    a, b : ndarray of shape (n_block,)
        Identity indices of the pairs.

    Returns
    -------
    median : ndarray of shape (n_block,)
        Median of each pair's pooled off-diagonal Euclidean distances.
    sigma : ndarray of shape (n_block,)
        ``median`` where it is positive; otherwise the RMS pooled distance, or
        1 when every pooled distance is 0.
    """
    starts, within, tri = state["starts"], state["within"], state["tri"]
    n_cross = (starts[a + 1] - starts[a]) * (starts[b + 1] - starts[b])
    median = dense_medians(
        block, n_cross, within, tri, a, b, within_sub=state["within_sub"]
    )
    sigma = median.copy()
    for i in np.flatnonzero(~(median > 0)):
        # A zero median means most pooled points coincide.
        sigma[i] = fallback_sigma(
            within[tri[a[i]] : tri[a[i] + 1]],
            within[tri[b[i]] : tri[b[i] + 1]],
            block[i][block[i] < np.inf],
        )
    return median, sigma
