# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared machinery of the identity erasers (ISP, LEACE, INLP).

All three are linear (or affine) maps fitted from identity labels. They share
how the labels arrive (``y`` when fitted alone, ``ids`` when routed as metadata
in a pipeline whose ``y`` is a downstream target), input validation, and a
blocked, multi-threaded low-rank ``transform``.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.linalg import get_blas_funcs
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from skprivacy.utils import validate_identity_data
from skprivacy.utils._identity import identity_sums
from skprivacy.utils._sklearn import check_is_fitted, validate_data
from skprivacy.utils._threads import blas_threads, limit_blas_threads

__all__ = []

_FLOAT_DTYPES = (np.float64, np.float32)

# Rows per block of the low-rank update: two blocks of this size stay in a
# core's L2/L3 cache for d = 512, which makes the two skinny matrix products
# several times faster than one pass over the full matrix.
_BLOCK_ROWS = {np.dtype(np.float64): 256, np.dtype(np.float32): 512}


_blas_threads = blas_threads


def _single_threaded_blas():
    """Context manager limiting BLAS/LAPACK to one thread.

    The decompositions here are small (at most ``d x d`` or ``m x d``): a threaded
    LAPACK gains little on them and, on a shared or oversubscribed machine,
    loses an order of magnitude to thread contention (a 400 x 512 SVD took
    0.9 s with two contended threads and 0.12 s with one).
    """
    return limit_blas_threads(1, user_api=None)


def low_rank_update(
    X, left, right, *, shift=None, scale_rows=False, renormalize, orthogonal=False
):
    """Return ``X - ((X - shift) @ right.T) @ left``, optionally row-normalised.

    Computed blockwise: per block of rows, one ``(b, d) @ (d, r)`` and one
    ``(b, r) @ (r, d)`` product, never a ``d x d`` product per row. Blocks are
    spread over as many threads as the BLAS would use, each with a
    single-threaded BLAS (many small in-cache products beat one threaded
    out-of-cache product by a wide margin for skinny ``r``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
        Input rows (float32 or float64; the output has the same dtype).
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
        projector), which gives the input row norms for free.

    Returns
    -------
    out : ndarray of shape (n_samples, d)
        The updated rows.
    """
    X = np.ascontiguousarray(X)
    dtype = X.dtype
    left = np.ascontiguousarray(left, dtype=dtype)
    right_t = np.ascontiguousarray(np.asarray(right, dtype=dtype).T)
    shift_proj = None
    if shift is not None:
        # (x - s) R^T = x R^T - s R^T: fold the shift into one r-vector.
        shift_proj = (np.asarray(shift, dtype=dtype) @ right_t).astype(dtype)
    n = X.shape[0]
    out = np.empty_like(X)
    if n == 0:
        return out
    block = _BLOCK_ROWS.get(dtype, 256)
    rank = left.shape[0]
    gemm = get_blas_funcs("gemm", dtype=dtype)
    zero_tol = 100 * np.finfo(dtype).eps

    def work(start):
        stop = min(start + block, n)
        xb, ob = X[start:stop], out[start:stop]
        if scale_rows:
            norms = np.sqrt(np.einsum("ij,ij->i", xb, xb))
            xb = xb / np.where(norms > 0, norms, 1)[:, None]
        t = xb @ right_t
        if shift_proj is not None:
            t -= shift_proj
        np.copyto(ob, xb)
        if rank:
            # ob = xb - t @ left as one BLAS call with beta = 1, in place. The
            # C-ordered blocks are F-ordered transposes: ob^T -= left^T t^T.
            gemm(-1.0, left.T, t.T, 1.0, ob.T, overwrite_c=True)
        if renormalize:
            norms = np.sqrt(np.einsum("ij,ij->i", ob, ob))
            # A row (almost) inside the removed subspace leaves only rounding
            # error; scaling that to unit norm would invent a direction, so
            # such rows become exactly zero.
            if scale_rows:
                sq_in = 1.0
            elif orthogonal:
                # ||x||^2 = ||P x||^2 + ||U^T x||^2 for an orthogonal projector:
                # the input norm for free from the (b, r) coordinates.
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

    starts = range(0, n, block)
    n_threads = _blas_threads()
    if n_threads == 1 or n <= 4 * block:
        for s in starts:
            work(s)
        return out
    with limit_blas_threads():
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            # list() re-raises any exception from a worker.
            list(pool.map(work, starts))
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
    return identity_sums(X, codes, len(counts), dtype=np.float64) / counts[:, None]


class _BaseIdentityEraser(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class: label handling, validation and tags of the identity erasers."""

    def _validate_fit_data(self, X, y, ids):
        labels = _identity_labels(self, y, ids)
        data = validate_identity_data(
            self,
            X,
            labels,
            reset=True,
            min_samples_per_identity=1,
            min_identities=2,
            dtype=_FLOAT_DTYPES,
        )
        self.drop_report_ = data.drop_report
        self.identities_ = data.identities
        return data

    def _validate_transform_data(self, X):
        check_is_fitted(self)
        return validate_data(
            self,
            X,
            reset=False,
            dtype=_FLOAT_DTYPES,
            ensure_all_finite="allow-nan",
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
