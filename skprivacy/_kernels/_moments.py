# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Means and RMS residual scales of groups of rows, in one blocked pass.

:func:`grouped_moments` (segment sums as sparse products over blocks of whole
groups, optionally folding deferred row norms into the sums) beside
:func:`grouped_moments_reference` (one group at a time, straight from the
formula).
"""

import numpy as np

from skprivacy.utils import identity_sums

__all__ = ["grouped_moments", "grouped_moments_reference"]

# Rows per block of the vectorised moment pass (bounds the residual temporary).
BLOCK_ROWS = 8192


def grouped_moments(X, starts, norms=None):
    """Mean and RMS residual scale of each group of consecutive rows.

    Parameters
    ----------
    X : ndarray of shape (n_rows, d)
        Rows grouped: group ``i`` is ``X[starts[i]:starts[i + 1]]``.
    starts : ndarray of shape (n_groups + 1,)
        Group offsets; every group has at least one row.
    norms : ndarray of shape (n_rows,) or None, default=None
        If given, the rows are taken as ``X / norms[:, None]`` without
        forming that array: the means are sums weighted by ``1 / norm`` and
        ``sum_j ||z_j||^2`` is the row count (unit rows).

    Returns
    -------
    means : ndarray of shape (n_groups, d)
        Group means (float64).
    sigmas : ndarray of shape (n_groups,)
        ``sqrt(sum_j ||z_j - mean||^2 / (n d))``; exactly 0 for a group of
        identical rows.

    Notes
    -----
    ``sum ||z - mean||^2 = sum ||z||^2 - n ||mean||^2`` costs no pass over
    the residuals; its rounding error is ~1e-16 ``sum ||z||^2``, so groups
    where that is not 1e-10 of the result (nearly constant groups) are summed
    directly.
    """
    k, d = len(starts) - 1, X.shape[1]
    counts = np.diff(starts)
    means = np.empty((k, d))
    ss = np.empty(k)
    i = 0
    while i < k:
        j = int(np.searchsorted(starts, starts[i] + BLOCK_ROWS, side="right")) - 1
        j = min(max(j, i + 1), k)
        R = X[starts[i] : starts[j]]
        nr = None if norms is None else norms[starts[i] : starts[j]]
        owner = np.repeat(np.arange(j - i), counts[i:j])
        # Segment sums as a sparse indicator product (one pass, vectorised
        # over columns; reduceat along rows is several times slower).
        means[i:j] = (
            identity_sums(
                R,
                owner,
                j - i,
                dtype=np.float64,
                weights=None if nr is None else 1.0 / nr,
            )
            / counts[i:j, None]
        )
        if nr is None:
            total = np.bincount(owner, np.einsum("ij,ij->i", R, R), minlength=j - i)
        else:
            total = counts[i:j].astype(np.float64)
        fast = total - counts[i:j] * np.einsum("ij,ij->i", means[i:j], means[i:j])
        ss[i:j] = fast
        for t in np.flatnonzero(fast <= 1e-6 * total):
            lo, hi = starts[i + t], starts[i + t + 1]
            r = np.asarray(X[lo:hi], dtype=np.float64)
            if norms is not None:
                r = np.divide(r, norms[lo:hi, None])
            if not (r != r[0]).any():
                # Identical rows: the residual scale is exactly 0 (the computed
                # mean can differ from the rows by rounding, which would give
                # sigma ~ 1e-17 and a finite ε ~ 1e17 instead of inf).
                means[i + t], ss[i + t] = r[0], 0.0
                continue
            r = r - means[i + t]
            ss[i + t] = np.einsum("ij,ij->", r, r)
        i = j
    sigmas = np.sqrt(ss / (counts * d))
    return means, sigmas


def grouped_moments_reference(X, starts, norms=None):
    """Means and RMS residual scales of :func:`grouped_moments`, group by group (plain)."""
    X = np.asarray(X, dtype=np.float64)
    if norms is not None:
        X = X / np.asarray(norms, dtype=np.float64)[:, None]
    means, sigmas = [], []
    for lo, hi in zip(starts[:-1], starts[1:]):
        R = X[lo:hi]
        mean = R.mean(axis=0)
        means.append(mean)
        sigmas.append(np.sqrt(((R - mean) ** 2).sum() / R.size))
    return np.array(means).reshape(len(starts) - 1, X.shape[1]), np.array(sigmas)
