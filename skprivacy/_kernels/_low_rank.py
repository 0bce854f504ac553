# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Blocked low-rank updates ``X - ((X - shift) R^T) L`` over threads.

:func:`low_rank_update` (blocks of rows spread over the BLAS threads, each
block's two skinny products as stacks of small in-cache products, the
re-normalisation of an orthogonal projector folded into the block) beside
:func:`low_rank_update_reference` (the two products on the whole array, then
the row norms).
"""

import threading

import numpy as np

from skprivacy.utils import blas_threads, map_blas_threads

__all__ = ["low_rank_update", "low_rank_update_reference"]

# Rows per block of the low-rank update, rounded down to a multiple of the
# sub-block below: enough rows that the dozen numpy calls per block cost
# little, few enough that the block's temporaries stay in cache (block sizes
# compared in benchmarks/README.md, "Kernel constants").
_BLOCK_ROWS = 1024
# The two skinny products of a block run as a stack of sub-block products of
# at most this many rows, each small enough (m * n * k <= _SMALL_GEMM_SIZE) for
# OpenBLAS's unpacked small-matrix kernels, which skip packing the (rows x d)
# operand; fewer than 16 rows per sub-block is not worth the per-product calls
# (stacked and flat products compared in benchmarks/README.md).
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
    once (as interleaved blocks, one ``pool.map`` item per block, would). The
    first exception raised stops the other threads and is re-raised.
    """
    n_runs = max(1, min(blas_threads(), n_blocks))
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
    # by 1 / q after re-normalisation.
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
    # threads (benchmarks/README.md): every product runs single-threaded, and
    # the blocks themselves are spread over the threads.
    _run_blocks(work_fast if fast else work, -(-n // block))
    return out


def low_rank_update_reference(
    X, left, right, *, shift=None, scale_rows=False, renormalize, orthogonal=False
):
    """``X - ((X - shift) @ right.T) @ left`` on the whole array (plain).

    The reference of :func:`low_rank_update` (same parameters), in float64:
    rows scaled first if ``scale_rows``, output rows scaled to unit norm if
    ``renormalize`` (rows of norm ``<= 100 eps ||x||`` set to zero).
    ``orthogonal`` changes nothing here (it only lets the fast path read the
    output norms off the input norms).
    """
    X = np.asarray(X, dtype=np.float64)
    if scale_rows:
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        X = X / np.where(norms > 0, norms, 1.0)
    shifted = X if shift is None else X - np.asarray(shift, dtype=np.float64)
    Y = X - (shifted @ np.asarray(right, dtype=np.float64).T) @ np.asarray(
        left, dtype=np.float64
    )
    if renormalize:
        norms = np.linalg.norm(Y, axis=1, keepdims=True)
        tiny = norms <= 100 * np.finfo(np.float64).eps * np.linalg.norm(
            X, axis=1, keepdims=True
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            Y = np.where(tiny, 0.0, Y / norms)
    return Y
