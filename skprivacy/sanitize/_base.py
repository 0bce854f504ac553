# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared machinery of the identity erasers (ISP, LEACE, INLP).

All three are linear (or affine) maps fitted from identity labels. They share
how the labels arrive (``y`` when fitted alone, ``ids`` when routed as metadata
in a pipeline whose ``y`` is a downstream target), input validation, and a
blocked, multi-threaded low-rank ``transform``.
"""

import threading
import warnings

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from skprivacy.exceptions import FewDimensionsLeftWarning
from skprivacy.utils import (
    blas_threads,
    identity_sums,
    limit_blas_threads,
    map_blas_threads,
    validate_identity_data,
)
from skprivacy.utils._sklearn import check_is_fitted, validate_data

__all__ = []

_FLOAT_DTYPES = (np.float64, np.float32)

# Rows per block of the low-rank update, rounded down to a multiple of the
# sub-block below. Measured at d = 512, r = 32 (float32, 2 threads, medians
# of 11 interleaved quiet runs): 768, 1,024, 1,280 and 1,536 rows gave 1.56,
# 1.56, 1.56 and 1.52 M rows/s; in an earlier, busier run 384 and 512 rows
# gave 1.13 and 1.26 against 1.38 for 1,024 (the per-block Python calls).
_BLOCK_ROWS = 1024
# The two skinny products of a block run as a stack of sub-block products of
# at most this many rows, each small enough (m * n * k <= _SMALL_GEMM_SIZE) for
# OpenBLAS's unpacked small-matrix kernels. Packing the (rows x d) operand is
# a third of a flat product's time; stacked 32-row products measured 100-106
# GFLOP/s against 76-85 for one flat product of the block (float32, one core,
# in cache), 44-56 against 37-39 in float64. 32 rows ran 2-3% faster than 48
# in the whole transform (same runs as above); fewer than 16 rows per
# sub-block is not worth the per-product calls.
_SUB_ROWS = 32
_SMALL_GEMM_SIZE = 1_000_000

# Row squared norms: numpy >= 2.0's vecdot is twice as fast as einsum here.
_vecdot = getattr(np, "vecdot", None)


def _row_sq(a):
    """Squared L2 norm of each row of a 2-D array (in its dtype)."""
    if _vecdot is not None:
        return _vecdot(a, a)
    return np.einsum("ij,ij->i", a, a)  # pragma: no cover - numpy < 2.0


def _sub_rows(d, r):
    """Rows per stacked sub-block product, or 0 for one flat product."""
    if r == 0 or d == 0:
        return 0
    sub = min(_SUB_ROWS, _SMALL_GEMM_SIZE // (d * r)) // 16 * 16
    return sub if sub >= 16 else 0


def _skinny_matmul(a, b, out, sub):
    """``out[:] = a @ b`` as a stack of ``sub``-row products (see ``_SUB_ROWS``).

    ``a`` and ``out`` are C-contiguous, so the reshapes are views: ``out`` is
    written in place.
    """
    m = a.shape[0]
    k = m - m % sub if sub else 0
    if k:
        np.matmul(
            a[:k].reshape(-1, sub, a.shape[1]),
            b,
            out=out[:k].reshape(-1, sub, out.shape[1]),
        )
    if k < m:
        np.matmul(a[k:], b, out=out[k:])
    return out


def _run_blocks(kernel, n_blocks):
    """Call ``kernel(i)`` for every block index, over the BLAS threads.

    The threads come from :func:`~skprivacy.utils.map_blas_threads` (one
    single-threaded BLAS each, sequential where the BLAS is already limited).
    Each thread starts on its own contiguous run of blocks and, once done,
    takes blocks from the end of the longest run left. Contiguous runs keep
    the threads from faulting in the same fresh (2 MB huge) output page at
    once: interleaved blocks (one ``pool.map`` item per block) measured ~10%
    slower for the float32 transform on 2 cores. The first exception raised
    stops the other threads and is re-raised.
    """
    n_runs = max(1, min(_blas_threads(), n_blocks))
    bounds = [n_blocks * w // n_runs for w in range(n_runs + 1)]
    lo, hi = bounds[:-1], bounds[1:]
    lock = threading.Lock()
    failed = threading.Event()

    def claim(w):
        with lock:
            if failed.is_set():
                return None
            if lo[w] < hi[w]:
                lo[w] += 1
                return lo[w] - 1
            j = max(range(n_runs), key=lambda k: hi[k] - lo[k])
            if lo[j] < hi[j]:
                hi[j] -= 1
                return hi[j]
            return None

    def worker(w):
        i = claim(w)
        while i is not None:
            try:
                kernel(i)
            except BaseException:
                failed.set()
                raise
            i = claim(w)

    map_blas_threads(worker, range(n_runs))


def _blas_threads():
    return blas_threads()


def _single_threaded_blas():
    """Limit BLAS/LAPACK to one thread (small decompositions lose to contention)."""
    return limit_blas_threads(1, user_api=None)


def low_rank_update(
    X,
    left,
    right,
    *,
    shift=None,
    scale_rows=False,
    renormalize,
    orthogonal=False,
    out=None,
):
    """Return ``X - ((X - shift) @ right.T) @ left``, optionally row-normalised.

    Computed blockwise into one preallocated output: per block of rows, one
    ``(b, d) @ (d, r)`` and one ``(b, r) @ (r, d)`` product (each a stack of
    small sub-block products), never a ``d x d`` product per row. Blocks are
    spread over as many threads as the BLAS would use, each thread on its own
    contiguous run of rows with a single-threaded BLAS (many small in-cache
    products beat one threaded out-of-cache product by a wide margin for
    skinny ``r``).

    For an orthogonal projector the re-normalisation costs no extra pass over
    the output: ``||P x||^2 = ||x||^2 - ||U x||^2`` gives each row's scale
    before the output exists, so each in-cache block is written as ``t U``,
    turned into ``x - t U`` by one subtract and scaled once. Rows where that
    difference cancels badly (``||P x||^2 < ||x||^2 / 16``, rare) are
    recomputed directly.

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
        Input rows (float32 or float64; the output has the same dtype).
        Infinite entries raise ``ValueError``; NaN rows come out NaN.
    left : ndarray of shape (r, d)
        Rows spanning the removed directions (``U`` for an orthogonal projector).
    right : ndarray of shape (r, d)
        Rows reading the coordinates to remove (``U`` for an orthogonal projector).
    shift : ndarray of shape (d,) or None
        Subtracted from the rows before reading coordinates (affine erasers).
    scale_rows : bool
        If True, rows are first scaled to unit L2 norm (zero rows stay zero).
    renormalize : bool
        If True, output rows are scaled to unit L2 norm. Rows whose output norm
        is at rounding level (``<= 100 eps ||x||``) are set to zero rather than
        blown up to a spurious unit vector; NaN rows stay NaN.
    orthogonal : bool, default=False
        Whether ``left == right`` has orthonormal rows (an orthogonal
        projector), which gives the output row norms for free.
    out : ndarray of shape (n_samples, d) or None, default=None
        C-contiguous array of ``X``'s dtype to write into (e.g. a buffer reused
        across chunks of a stream); allocated if None. May not overlap ``X``.

    Returns
    -------
    out : ndarray of shape (n_samples, d)
        The updated rows.
    """
    X = np.ascontiguousarray(X)
    dtype = X.dtype
    # The exact (recompute) path reads the directions at full precision: a
    # float32 copy of U is only orthonormal to ~eps32, and for a row almost
    # inside the removed subspace (||P x|| = q ||x||) that error is amplified
    # by 1 / q after re-normalisation (measured 6e-4 off orthogonal for q ~ 1e-4).
    left64 = np.asarray(left, dtype=np.float64)
    right64_t = np.asarray(right, dtype=np.float64).T
    left = np.ascontiguousarray(left, dtype=dtype)
    right_t = np.ascontiguousarray(np.asarray(right, dtype=dtype).T)
    shift_proj = None
    if shift is not None:
        # (x - s) R^T = x R^T - s R^T: fold the shift into one r-vector.
        shift_proj = (np.asarray(shift, dtype=dtype) @ right_t).astype(dtype)
    n = X.shape[0]
    if out is None:
        out = np.empty_like(X)
    elif out.shape != X.shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(
            f"out must be a C-contiguous {dtype} array of shape {X.shape}; got "
            f"{out.dtype} {out.shape}."
        )
    if n == 0:
        return out
    rank, d = left.shape
    sub = _sub_rows(d, rank)
    block = max(_BLOCK_ROWS // sub * sub, sub) if sub else _BLOCK_ROWS
    zero_tol = 100 * np.finfo(dtype).eps
    fast = renormalize and orthogonal and not scale_rows and shift is None

    def exact_rows(xb, ob, rows):
        # Direct computation for rows where the norm identity cancels, or
        # whose squared norm overflows: scale by the largest entry first.
        x = xb[rows].astype(np.float64)
        big = np.abs(x).max(axis=1, keepdims=True)
        big[~(big > 0)] = 1.0
        x /= big
        y = x - (x @ right64_t) @ left64
        norms = np.sqrt(np.einsum("ij,ij->i", y, y))
        sq_in = np.einsum("ij,ij->i", x, x)
        tiny = norms <= zero_tol * np.sqrt(sq_in)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / norms
        inv[tiny] = 0
        ob[rows] = y * inv[:, None]

    def work_fast(i):
        # One errstate for the block: entering it costs microseconds, and
        # every over/invalid/divide case below is handled explicitly.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            _fast_block(i)

    def _fast_block(i):
        start = i * block
        stop = min(start + block, n)
        xb, ob = X[start:stop], out[start:stop]
        # Squared norms first: they reveal infinite entries (checked here, in
        # cache, instead of in a separate pass over X) before the product, where
        # inf * 0 would raise numpy's "invalid value encountered in matmul".
        sq_in = _row_sq(xb)
        finite = np.isfinite(sq_in).all()
        if not finite:
            bad = np.flatnonzero(~np.isfinite(sq_in))
            inf_rows = bad[np.isinf(xb[bad]).any(axis=1)]
            if inf_rows.size:
                raise ValueError(
                    f"Input X contains infinity (row {start + inf_rows[0]}); "
                    "replace or drop non-finite rows first (NaN rows are "
                    "passed through as NaN)."
                )
        t = _skinny_matmul(xb, right_t, np.empty((stop - start, rank), dtype), sub)
        sq_out = sq_in - _row_sq(t)
        scale = np.sqrt(sq_out)
        np.divide(1.0, scale, out=scale)
        # Cancellation in ||x||^2 - ||Ux||^2 (or overflow of ||x||^2): those
        # rows are recomputed directly below; NaN rows compare False and stay
        # NaN through the scale.
        redo = sq_out <= sq_in * (1.0 / 16)
        if not finite:
            redo |= np.isinf(sq_in)
        any_redo = redo.any()
        if any_redo:
            scale[redo] = 0
        # (x - t U) s: the product written straight into the output block, then
        # one subtract and one scale, all on the in-cache block.
        if rank:
            _skinny_matmul(t, left, ob, sub)
            np.subtract(xb, ob, out=ob)
        else:
            np.copyto(ob, xb)
        ob *= scale[:, None]
        if any_redo:
            exact_rows(xb, ob, np.flatnonzero(redo))

    def work(i):
        start = i * block
        stop = min(start + block, n)
        xb, ob = X[start:stop], out[start:stop]
        if scale_rows:
            norms = np.sqrt(np.einsum("ij,ij->i", xb, xb))
            xb = xb / np.where(norms > 0, norms, 1)[:, None]
        t = _skinny_matmul(xb, right_t, np.empty((stop - start, rank), dtype), sub)
        if shift_proj is not None:
            t -= shift_proj
        if rank:
            _skinny_matmul(t, left, ob, sub)
            np.subtract(xb, ob, out=ob)
        else:
            np.copyto(ob, xb)
        if renormalize:
            norms = np.sqrt(np.einsum("ij,ij->i", ob, ob))
            # A row (almost) inside the removed subspace leaves only rounding
            # error; scaling that to unit norm would invent a direction, so
            # such rows become exactly zero.
            if scale_rows:
                sq_in = 1.0
            elif orthogonal:
                sq_in = norms**2 + np.einsum("ij,ij->i", t, t)
            else:
                sq_in = np.einsum("ij,ij->i", xb, xb)
            tiny = norms <= zero_tol * np.sqrt(sq_in)
            # Multiplying by reciprocals is cheaper than a masked division;
            # NaN rows stay NaN (NaN reciprocal), tiny rows become 0.
            with np.errstate(divide="ignore", invalid="ignore"):
                inv = 1.0 / norms
            inv[tiny] = 0
            ob *= inv[:, None]

    # A threaded BLAS on these small blocks spends its time synchronising
    # threads (15x slower measured): every product runs single-threaded, and
    # the blocks themselves are spread over the threads.
    _run_blocks(work_fast if fast else work, -(-n // block))
    return out


def _identity_labels(estimator, y, ids):
    """Pick the identity labels: ``ids`` when given (metadata routing), else ``y``."""
    labels = ids if ids is not None else y
    if labels is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y "
            "is None: pass the identity labels as y (fitted alone) or as ids=... "
            "(routed as metadata in a pipeline whose y is a downstream target)."
        )
    return labels


def _identity_means(X, codes, counts):
    """Per-identity mean rows, computed with one sparse product (float64).

    ``counts[i]`` is the number of rows with code ``i`` (``IdentityData.counts``).
    """
    return _identity_sums(X, codes, len(counts)) / counts[:, None]


def _identity_sums(X, codes, n_identities):
    """Per-identity row sums, accumulated in float64."""
    return identity_sums(X, codes, n_identities, dtype=np.float64)


#: Default rank rule (``n_components="auto"``), see :func:`_auto_subspace`.
#: At least this share of the embedding dimensions always survives.
AUTO_KEEP_SHARE = 0.5
#: A direction counts as identity signal when its between-identity variance
#: exceeds this many times the largest ratio chance alone would produce.
AUTO_MARGIN = 2.0
#: With one row per identity (no within-identity spread to compare with), the
#: rule falls back to the fewest directions holding this share of the energy.
AUTO_ENERGY = 0.9


def _max_auto_rank(n_features):
    """Largest rank the default rule removes: ceil(d / 2) dimensions survive."""
    return n_features - int(np.ceil(n_features * AUTO_KEEP_SHARE))


def _auto_subspace(means, counts, within):
    """Directions removed by the default rank rule, as orthonormal rows.

    ``B = M_c^T M_c / m`` is the scatter of the centred identity means. Under
    no identity signal its expectation is ``c W`` with ``W`` the pooled
    within-identity covariance and ``c = mean_i(1 / n_i) (1 - 1 / m)``: the
    spread of means that averaging ``n_i`` noisy rows produces by chance (an
    attribute independent of identity, such as pose or lighting, lands
    there). The candidate directions are the eigenvectors of the de-biased
    scatter ``B - c W`` with a positive eigenvalue; one is kept when its
    variance ratio ``v^T B v / (c v^T W v)`` exceeds ``AUTO_MARGIN`` times
    ``(1 + sqrt(d / (m - 1)))^2``, the largest ratio pure chance reaches
    (Marchenko-Pastur edge). At most :func:`_max_auto_rank` directions are
    kept. Without within-identity spread (one row per identity) the fewest
    leading directions of ``M_c`` holding ``AUTO_ENERGY`` of its energy are
    taken instead, under the same cap.

    Returns
    -------
    directions : ndarray of shape (r, d)
    """
    m, d = means.shape
    cap = _max_auto_rank(d)
    centred = means - means.mean(axis=0)
    if m < 2:
        return np.zeros((0, d))
    if within is None:
        with _single_threaded_blas():
            _, s, vt = linalg.svd(centred, full_matrices=False, check_finite=False)
        energy = s**2
        total = energy.sum()
        if total <= 0:
            return np.zeros((0, d))
        r = int(np.searchsorted(np.cumsum(energy) / total, AUTO_ENERGY)) + 1
        tol = s[0] * max(m, d) * np.finfo(float).eps
        r = min(r, cap, int(np.sum(s > tol)))
        return vt[:r]
    scatter = centred.T @ centred / m
    c = float(np.mean(1.0 / counts)) * (1.0 - 1.0 / m)
    with _single_threaded_blas():
        evals, vecs = linalg.eigh(scatter - c * within, check_finite=False)
    evals, vecs = evals[::-1], vecs[:, ::-1]
    between = np.einsum("dk,dk->k", vecs, scatter @ vecs)
    chance = c * np.einsum("dk,dk->k", vecs, within @ vecs)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(chance > 0, between / chance, np.inf)
    edge = (1.0 + np.sqrt(d / (m - 1))) ** 2
    scale = evals[0] if evals.size else 0.0
    keep = np.flatnonzero(
        (ratio > AUTO_MARGIN * edge) & (evals > 1e-12 * max(scale, 0.0))
    )[:cap]
    return vecs[:, keep].T


def _warn_few_dimensions(estimator, rank, n_features, stacklevel=5):
    """Warn (FewDimensionsLeftWarning) when fewer than half of the dimensions survive."""
    if rank > _max_auto_rank(n_features):
        warnings.warn(
            f"{type(estimator).__name__} removed {rank} of {n_features} directions: "
            f"only {n_features - rank} dimension(s) survive, fewer than half. The "
            "output may be useless for anything but erasure; the default "
            "n_components='auto' keeps at least half.",
            FewDimensionsLeftWarning,
            # 5: the caller of fit, through sklearn's _fit_context wrapper.
            stacklevel=stacklevel,
        )


#: Elements per float64 sub-block of :func:`_block_stats` (16 MB).
_STATS_BLOCK_ELEMENTS = 1 << 21


def _block_stats(X, codes, identities, scatter):
    """Sufficient statistics of one block of cleaned rows (float64).

    Accumulated over sub-blocks of rows, so the float64 copy of float32 input
    never exceeds ~16 MB (a whole-chunk copy was 2 x 100 MB per 100,000 x 128
    chunk of ``skprivacy sanitize``, twice that at d = 512).
    """
    X = np.asarray(X)
    codes = np.asarray(codes)
    n, d = X.shape
    m = len(identities)
    counts = np.bincount(codes, minlength=m)
    sums = np.zeros((m, d))
    outer = np.zeros((d, d)) if scatter else None
    step = max(1, _STATS_BLOCK_ELEMENTS // max(d, 1))
    for start in range(0, n, step):
        xb = X[start : start + step].astype(np.float64, copy=False)
        sums += _identity_sums(xb, codes[start : start + step], m)
        if scatter:
            outer += xb.T @ xb
    return identities, sums, counts, outer


class _IdentityStats:
    """Per-identity sums and counts, and the total scatter, over many chunks.

    Everything ISP and LEACE need is a sum over rows, so fitting on chunks
    (``partial_fit``) or on the blocks of a dask array gives the statistics of
    the concatenation, up to the order of floating-point additions.
    """

    def __init__(self, n_features, scatter):
        self.labels = None
        self.sums = np.zeros((0, n_features))
        self.counts = np.zeros(0, dtype=np.int64)
        self.scatter = np.zeros((n_features, n_features)) if scatter else None
        self.drop_report = {}

    def add(self, identities, sums, counts, outer, drops):
        identities = np.asarray(identities)
        if self.labels is None or self.labels.size == 0:
            self.labels = identities[:0]
        try:
            labels = np.union1d(self.labels, identities)
        except TypeError as exc:
            raise ValueError(
                "identity labels of this chunk cannot be compared with those seen "
                f"before ({self.labels.dtype} vs {identities.dtype}); use one label "
                "type for every chunk."
            ) from exc
        if labels.size != self.labels.size:
            where = np.searchsorted(labels, self.labels)
            grown = np.zeros((labels.size, self.sums.shape[1]))
            grown[where] = self.sums
            grown_counts = np.zeros(labels.size, dtype=np.int64)
            grown_counts[where] = self.counts
            self.sums, self.counts = grown, grown_counts
        self.labels = labels
        where = np.searchsorted(labels, identities)
        np.add.at(self.sums, where, sums)
        np.add.at(self.counts, where, counts)
        if self.scatter is not None:
            self.scatter += outer
        for key, value in drops.items():
            if isinstance(value, list):
                self.drop_report.setdefault(key, []).extend(value)
            elif isinstance(value, (int, np.integer)):
                self.drop_report[key] = self.drop_report.get(key, 0) + int(value)

    def add_data(self, data):
        """Add the rows of an :class:`~skprivacy.utils.IdentityData`."""
        ids, sums, counts, outer = _block_stats(
            data.X, data.codes, data.identities, self.scatter is not None
        )
        self.add(ids, sums, counts, outer, data.drop_report)

    @property
    def n_rows(self):
        return int(self.counts.sum())

    @property
    def n_identities(self):
        return int(self.labels.size) if self.labels is not None else 0

    def means(self):
        return self.sums / self.counts[:, None]

    def within_covariance(self):
        """Pooled within-identity covariance, or None without repeated identities."""
        n, m = self.n_rows, self.n_identities
        if self.scatter is None or n <= m:
            return None
        within = self.scatter - self.sums.T @ self.means()
        return (within + within.T) / (2 * (n - m))


def _is_dask_array(X):
    """Whether ``X`` is a dask array (checked without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "map_blocks")


def _known_chunks(X):
    """``X`` with its chunk sizes computed if any is unknown (NaN).

    A dask array filtered by a boolean mask (``X[X[:, 0] > 0]``) does not know
    its chunk sizes, which rechunking and aligning the labels need; computing
    them costs one pass over the blocks.
    """
    if any(np.isnan(size) for sizes in X.chunks for size in sizes):
        X = X.compute_chunk_sizes()
    return X


def _clean_block_stats(X, labels, scatter):
    """Clean one block and return its sufficient statistics and drop counts.

    Non-finite and near-zero rows are dropped, the rest L2-normalised. Used on the blocks of a dask array, possibly on a remote worker.
    """
    from skprivacy.utils import check_embeddings, encode_identities

    X = np.asarray(X)
    if X.dtype not in _FLOAT_DTYPES:
        X = X.astype(np.float64)
    labels = np.asarray(labels)
    try:
        Z, kept, drops = check_embeddings(X, warn=False)
    except ValueError:  # every row of this block unusable: counted, not fatal
        finite = np.isfinite(X).all(axis=1)
        Z, kept = X[:0], np.zeros(X.shape[0], dtype=bool)
        drops = {
            "non_finite": int((~finite).sum()),
            "low_norm": int(finite.sum()),
        }
    identities, codes = encode_identities(labels[kept])
    drops = {"n_input_rows": int(X.shape[0]), "n_kept_rows": int(kept.sum()), **drops}
    return (*_block_stats(Z, codes, identities, scatter), drops)


class _BaseIdentityEraser(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class: label handling, validation, chunked statistics and tags.

    Subclasses whose fit needs only row sums (ISP, LEACE) build an
    :class:`_IdentityStats` (from a numpy array, the blocks of a dask array, or
    successive ``partial_fit`` chunks) and turn it into their fitted state in
    ``_fit_from_stats``.
    """

    def _validate_fit_data(self, X, y, ids, *, reset=True, min_identities=2):
        labels = _identity_labels(self, y, ids)
        data = validate_identity_data(
            self,
            X,
            labels,
            reset=reset,
            min_samples_per_identity=1,
            min_identities=min_identities,
            dtype=_FLOAT_DTYPES,
        )
        self.drop_report_ = data.drop_report
        self.identities_ = data.identities
        return data

    def _needs_scatter(self):
        return True

    def _collect_stats(self, X, y, ids):
        """Statistics of a full fit: numpy in memory, dask block by block."""
        if _is_dask_array(X):
            stats = self._dask_stats(X, _identity_labels(self, y, ids))
        else:
            data = self._validate_fit_data(X, y, ids)
            stats = _IdentityStats(data.X.shape[1], self._needs_scatter())
            stats.add_data(data)
        if stats.n_identities < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 identities with a usable "
                f"row; got {stats.n_identities}."
            )
        self._stats = stats
        return stats

    def _partial_stats(self, X, y, ids):
        """Add one chunk to the running statistics (``partial_fit``)."""
        first = not hasattr(self, "_stats")
        data = self._validate_fit_data(X, y, ids, reset=first, min_identities=1)
        if first:
            self._stats = _IdentityStats(data.X.shape[1], self._needs_scatter())
        self._stats.add_data(data)
        self.drop_report_ = dict(self._stats.drop_report)
        self.identities_ = self._stats.labels
        return self._stats

    def _dask_stats(self, X, labels):
        import dask
        import dask.array as da

        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array; got {X.ndim} dimension(s).")
        X = _known_chunks(X).rechunk({1: -1})
        if _is_dask_array(labels):
            labels = _known_chunks(labels).rechunk((X.chunks[0],))
        else:
            labels = np.asarray(labels)
            if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
                raise ValueError(
                    f"identity labels have shape {labels.shape}; expected "
                    f"({X.shape[0]},), one label per row of X."
                )
            labels = da.from_array(labels, chunks=(X.chunks[0],))
        if labels.shape[0] != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} rows but {labels.shape[0]} identity labels."
            )
        scatter = self._needs_scatter()
        parts = [
            dask.delayed(_clean_block_stats)(xb, yb, scatter)
            for xb, yb in zip(X.to_delayed().ravel(), labels.to_delayed().ravel())
        ]
        stats = _IdentityStats(X.shape[1], scatter)
        for result in dask.compute(*parts):
            stats.add(*result)
        stats.drop_report.setdefault("excluded_identities", [])
        self.n_features_in_ = int(X.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.drop_report_ = dict(stats.drop_report)
        self.identities_ = stats.labels
        return stats

    def _transform(self, X, apply, *, check_finite=True):
        """Validate ``X`` and apply ``apply``; a dask array gives a lazy dask array."""
        if _is_dask_array(X):
            check_is_fitted(self)
            X = _known_chunks(X)
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has shape {X.shape}; {type(self).__name__} expects "
                    f"(n_samples, {self.n_features_in_})."
                )
            X = X.rechunk({1: -1})
            dtype = X.dtype if X.dtype in _FLOAT_DTYPES else np.dtype(np.float64)
            # Row blocks are independent: each is transformed by the numpy
            # path, on whichever worker holds it.
            return X.map_blocks(self._transform_block, dtype=dtype)
        return apply(self._validate_transform_data(X, check_finite=check_finite))

    def _transform_block(self, X):
        # A block emptied by a mask (X[X[:, 0] > 0]) has no row to transform.
        if X.shape[0] == 0:
            dtype = X.dtype if X.dtype in _FLOAT_DTYPES else np.float64
            return np.empty((0, X.shape[1]), dtype=dtype)
        return self.transform(X)

    def _validate_transform_data(self, X, *, check_finite=True):
        check_is_fitted(self)
        return validate_data(
            self,
            X,
            reset=False,
            dtype=_FLOAT_DTYPES,
            # The fast orthogonal kernel checks for infinity inside its
            # in-cache blocks, saving a full pass over X.
            ensure_all_finite="allow-nan" if check_finite else False,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
