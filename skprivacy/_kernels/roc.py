# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared-product kernels of ROC-HT: centroid scores of many pairs, ranked counts.

The nearest-centroid score of a row ``x`` under the classifier trained on the
rows of identities ``a`` (label 0) and ``b`` (label 1) is

``(<x, m_b> - |m_b|^2 / 2) - (<x, m_a> - |m_a|^2 / 2)``,

with ``m`` the training means. Out of fold, the means of fold ``f`` leave
that fold's rows out. For a block of pairs these scores are a few matrix
products between the identities' rows and their per-fold means, with no
per-pair model fit. Each kernel below has a plain reference implementation
beside it (a loop over pairs and rows written from the formula), which the
tests compare it with.

Rows of a block of pairs are *padded*: identities of different sizes give
score rows of different lengths, stored left-aligned in one matrix whose
remaining entries are ``-inf``.
"""

import numpy as np

from skprivacy.utils import identity_sums

__all__ = [
    "centroid_held_out_scores",
    "centroid_held_out_scores_reference",
    "centroid_oof_scores",
    "centroid_oof_scores_reference",
    "fold_means",
    "ranked_counts",
    "ranked_counts_reference",
]


# ------------------------------------------------------------------ fold means
def fold_means(X, bounds, k):
    """Per-fold training means of identities of equal size.

    Parameters
    ----------
    X : ndarray of shape (n_identities, n_rows, n_features)
        Each identity's rows, sorted by fold.
    bounds : ndarray of shape (k + 1,)
        Fold ``f`` holds rows ``bounds[f]:bounds[f + 1]``.
    k : int
        Number of folds; with ``k == 1`` the means of all rows (in-sample).

    Returns
    -------
    means : ndarray of shape (n_identities, k, n_features)
        ``means[:, f]``: mean of the rows not in fold ``f``.
    """
    total = X.sum(axis=1)
    n = X.shape[1]
    if k == 1:
        return (total / n)[:, None, :]
    means = np.empty((X.shape[0], k, X.shape[2]))
    for f in range(k):
        held = X[:, bounds[f] : bounds[f + 1], :].sum(axis=1)
        means[:, f, :] = (total - held) / (n - (bounds[f + 1] - bounds[f]))
    return means


def _ragged_fold_means(X, starts, folds, k):
    """:func:`fold_means` of identities of any sizes, rows concatenated.

    Identity ``j`` holds rows ``starts[j]:starts[j + 1]`` of ``X``, in any
    order; ``folds`` gives each row's fold (every fold present when
    ``k > 1``). One sparse product sums the rows of every (identity, fold).
    """
    sizes = np.diff(starts)
    identity = np.repeat(np.arange(len(sizes)), sizes)
    segment = identity * k + folds
    held = identity_sums(X, segment, len(sizes) * k, dtype=np.float64)
    held = held.reshape(len(sizes), k, X.shape[1])
    total = held.sum(axis=1)
    if k == 1:
        return (total / sizes[:, None])[:, None, :]
    n_held = np.bincount(segment, minlength=len(sizes) * k).reshape(len(sizes), k)
    return (total[:, None, :] - held) / (sizes[:, None] - n_held)[:, :, None]


# ------------------------------------------------------------ out-of-fold scores
def centroid_oof_scores(XA, FA, k, XB, FB, starts_b, ia, jb):
    """Out-of-fold centroid scores of pairs ``(A[ia], B[jb])``, rows of A then B.

    Parameters
    ----------
    XA : ndarray of shape (n_a_ids, n_a, n_features)
        Rows of the identities in the role of A (label 0), all of ``n_a``
        rows, each sorted by the common fold vector ``FA``.
    FA : ndarray of shape (n_a,)
        Sorted fold of each row of an A identity.
    k : int
        Folds (``1``: in-sample scores from the means of all rows).
    XB : ndarray of shape (n_b_rows, n_features)
        Rows of the identities in the role of B (label 1), concatenated;
        identity ``j`` holds rows ``starts_b[j]:starts_b[j + 1]`` (in any
        order: a view of grouped rows needs no copy).
    FB : ndarray of shape (n_b_rows,)
        Fold of each row of ``XB`` (a B identity's folds may differ with its
        size).
    starts_b : ndarray of shape (n_b_ids + 1,)
        Offsets of the B identities in ``XB``.
    ia, jb : ndarray of shape (n_pairs,)
        A and B identity of each pair.

    Returns
    -------
    scores : ndarray of shape (n_pairs, n_a + max n_b)
        Row ``p``: the ``n_a`` scores of A's rows (fold order), then the
        ``n_b`` scores of B's rows, then ``-inf`` padding.
    """
    na = XA.shape[1]
    sizes_b = np.diff(starts_b)
    bounds = np.searchsorted(FA, np.arange(k + 1))
    MA = fold_means(XA, bounds, k)
    MB = _ragged_fold_means(XB, starts_b, FB, k)
    sqA = np.einsum("ikd,ikd->ik", MA, MA)
    sqB = np.einsum("jkd,jkd->jk", MB, MB)
    nA, nB = XA.shape[0], len(sizes_b)
    ownA = np.empty(XA.shape[:2])
    CA = np.empty((nA, na, nB))
    for f in range(k):
        rows = slice(bounds[f], bounds[f + 1])
        if bounds[f + 1] > bounds[f]:
            ownA[:, rows] = np.einsum("ixd,id->ix", XA[:, rows, :], MA[:, f, :])
            other = np.ascontiguousarray(MB[:, f, :])
            CA[:, rows, :] = np.matmul(XA[:, rows, :], other.T)
    # B's rows against every fold mean of every A identity (one product, read
    # in place), then each row's own fold; and against its own identity's
    # fold means, one identity at a time (no copy of the rows).
    every = XB @ MA.reshape(nA * k, -1).T
    CB = every.reshape(-1, nA, k)[np.arange(XB.shape[0]), :, FB]
    ownB = np.empty(XB.shape[0])
    for j in range(nB):
        at = slice(starts_b[j], starts_b[j + 1])
        own = XB[at] @ MB[j].T
        ownB[at] = own[np.arange(own.shape[0]), FB[at]]
    # The generic classifier's form: (<x, m_b> - |m_b|^2/2) - (<x, m_a> - |m_a|^2/2).
    sa = (CA[ia, :, jb] - 0.5 * sqB[jb][:, FA]) - (ownA[ia] - 0.5 * sqA[ia][:, FA])
    n_b = sizes_b[jb]
    width = int(n_b.max()) if len(jb) else 0
    t = np.arange(width)[None, :]
    real = t < n_b[:, None]
    R = starts_b[jb][:, None] + np.minimum(t, n_b[:, None] - 1)
    FR = FB[R]
    sb = (ownB[R] - 0.5 * sqB[jb[:, None], FR]) - (
        CB[R, ia[:, None]] - 0.5 * sqA[ia[:, None], FR]
    )
    sb[~real] = -np.inf
    return np.concatenate([sa, sb], axis=1)


def centroid_oof_scores_reference(XA, FA, k, XB, FB, starts_b, ia, jb):
    """Compute :func:`centroid_oof_scores` one pair and one row at a time (reference)."""
    na = XA.shape[1]
    sizes_b = np.diff(starts_b)
    width = int(sizes_b[jb].max()) if len(jb) else 0
    out = np.full((len(ia), na + width), -np.inf)

    def mean_without(rows, folds, f):
        keep = rows if k == 1 else rows[folds != f]
        return keep.sum(axis=0) / keep.shape[0]

    for p, (i, j) in enumerate(zip(ia.tolist(), jb.tolist())):
        A = XA[i]
        B = XB[starts_b[j] : starts_b[j + 1]]
        fb = FB[starts_b[j] : starts_b[j + 1]]
        rows = [(x, f) for x, f in zip(A, FA)] + [(x, f) for x, f in zip(B, fb)]
        for r, (x, f) in enumerate(rows):
            ma, mb = mean_without(A, FA, f), mean_without(B, fb, f)
            out[p, r] = (x @ mb - 0.5 * (mb @ mb)) - (x @ ma - 0.5 * (ma @ ma))
    return out


# ------------------------------------------------------------- held-out scores
def centroid_held_out_scores(T, sq, rows, starts, a, b, directions=None):
    """Scores of held-out rows under the centroid classifiers of pairs ``(a, b)``.

    Parameters
    ----------
    T : ndarray of shape (n_rows, n_identities)
        ``<x, m_c>`` for every held-out row ``x`` and identity mean ``m_c``
        (one product of the rows with the training means).
    sq : ndarray of shape (n_identities,)
        ``|m_c|^2``.
    rows : ndarray of shape (n_rows,)
        Held-out rows grouped by identity: identity ``c`` holds
        ``rows[starts[c]:starts[c + 1]]``.
    starts : ndarray of shape (n_identities + 1,)
        Offsets into ``rows``.
    a, b : ndarray of shape (n_pairs,)
        Identities of each pair (label 0 and label 1).
    directions : ndarray of shape (n_pairs,) or None, default=None
        Multiply each pair's scores by its direction (+1 or -1).

    Returns
    -------
    scores : ndarray of shape (n_pairs, max(n_a + n_b))
        Row ``p``: the scores of ``a``'s held-out rows, then of ``b``'s, then
        ``-inf`` padding.
    n_neg, n_real : ndarray of shape (n_pairs,)
        Rows of ``a``, and of ``a`` and ``b`` together.
    """
    sizes = np.diff(starts)
    n_neg = sizes[a]
    n_real = n_neg + sizes[b]
    width = int(n_real.max()) if len(a) else 0
    t = np.arange(width)[None, :]
    in_a = t < n_neg[:, None]
    real = t < n_real[:, None]
    offset = np.where(
        in_a, starts[a][:, None] + t, starts[b][:, None] + t - n_neg[:, None]
    )
    R = rows[np.where(real, offset, 0)]
    # The classifier's form: (<x, m_b> - |m_b|^2/2) - (<x, m_a> - |m_a|^2/2).
    S = (T[R, b[:, None]] - 0.5 * sq[b][:, None]) - (
        T[R, a[:, None]] - 0.5 * sq[a][:, None]
    )
    if directions is not None:
        S = directions[:, None] * S
    S[~real] = -np.inf
    return S, n_neg, n_real


def centroid_held_out_scores_reference(X, means, rows, starts, a, b, directions=None):
    """Compute :func:`centroid_held_out_scores` from rows and means (reference)."""
    sizes = np.diff(starts)
    n_real = sizes[a] + sizes[b]
    out = np.full((len(a), int(n_real.max()) if len(a) else 0), -np.inf)
    for p, (i, j) in enumerate(zip(np.asarray(a).tolist(), np.asarray(b).tolist())):
        ma, mb = means[i], means[j]
        pair_rows = np.r_[
            rows[starts[i] : starts[i + 1]], rows[starts[j] : starts[j + 1]]
        ]
        for r, row in enumerate(pair_rows.tolist()):
            x = X[row]
            s = (x @ mb - 0.5 * (mb @ mb)) - (x @ ma - 0.5 * (ma @ ma))
            out[p, r] = s if directions is None else directions[p] * s
    return out, sizes[a], n_real


# -------------------------------------------------------------- ranked counts
def ranked_counts(scores, n_real, n_neg):
    """Descending scores with cumulative true/false positives, many rows at once.

    Parameters
    ----------
    scores : ndarray of shape (n_rows, n_columns)
        Each row: ``n_neg`` negative scores, then positives up to ``n_real``,
        then ``-inf`` padding.
    n_real, n_neg : ndarray of shape (n_rows,)
        Real scores and negatives per row.

    Returns
    -------
    s : ndarray of shape (n_rows, n_columns)
        Each row sorted in descending order (ties in reverse input order).
    tps, fps : ndarray of shape (n_rows, n_columns)
        Positives and negatives among the first ``j + 1`` sorted scores.
    end : ndarray of shape (n_rows, n_columns) of bool
        Whether position ``j`` ends a run of equal real scores: the operating
        points of the ROC (padding never ends a run).
    """
    cols = np.arange(scores.shape[1])[None, :]
    neg = cols < n_neg[:, None]
    pos = ~neg & (cols < n_real[:, None])
    order = np.argsort(scores, axis=1, kind="stable")[:, ::-1]
    s = np.take_along_axis(scores, order, axis=1)
    tps = np.cumsum(np.take_along_axis(pos, order, axis=1), axis=1)
    fps = np.cumsum(np.take_along_axis(neg, order, axis=1), axis=1)
    end = np.ones(s.shape, dtype=bool)
    end[:, :-1] = s[:, :-1] != s[:, 1:]
    end &= cols < n_real[:, None]
    return s, tps, fps, end


def ranked_counts_reference(scores, n_real, n_neg):
    """Compute :func:`ranked_counts` one row at a time by plain loops (reference)."""
    P, L = scores.shape
    s = np.full((P, L), -np.inf)
    tps = np.zeros((P, L), dtype=np.intp)
    fps = np.zeros((P, L), dtype=np.intp)
    end = np.zeros((P, L), dtype=bool)
    for p in range(P):
        m, k = int(n_real[p]), int(n_neg[p])
        # Descending; among equal scores the later column first.
        order = sorted(range(m), key=lambda c: (-scores[p, c], -c))
        tp = fp = 0
        for j, c in enumerate(order):
            tp += c >= k
            fp += c < k
            s[p, j], tps[p, j], fps[p, j] = scores[p, c], tp, fp
        for j in range(m):
            end[p, j] = j == m - 1 or s[p, j] != s[p, j + 1]
        tps[p, m:], fps[p, m:] = tp, fp
    return s, tps, fps, end
