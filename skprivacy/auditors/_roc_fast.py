# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared-product fast path of ROC-HT and its certificates.

For :class:`~skprivacy.CentroidClassifier` and
:class:`~skprivacy.PooledLDAClassifier` the score of a row ``x`` under the
classifier trained on a fold's training rows of identities ``a`` and ``b`` is
``(<x, m_b> - |m_b|^2/2) - (<x, m_a> - |m_a|^2/2)``, with ``m`` the fold's
training means (in a space whitened once for the LDA). A block of pairs is then
a handful of matrix products between the rows of the identities involved and
their per-fold means, followed by sorting short score vectors: no per-pair
model fitting. The folds are the generic path's (``StratifiedKFold`` with the
same seed on the same label vector, so identities of equal sizes share them),
and so are the reserved-test split, the threshold rule and every formula; the
results equal the generic path's up to floating-point rounding of the scores
(tested: identical ε and certificate counts, AUC within 1e-9).
"""

from contextlib import contextmanager
from functools import lru_cache

import numpy as np
from sklearn.base import clone
from sklearn.metrics import auc

from skprivacy.auditors._linear import (
    CentroidClassifier,
    PooledLDAClassifier,
    pooled_within_covariance,
    whitening_matrix,
)
from skprivacy.auditors._roc import (
    _log_ratio,
    _stratified_folds,
    roc_operating_points,
)

__all__ = [
    "fast_kind",
    "generic_path",
    "plan_chunks",
    "shared_rows",
    "with_shared_covariance",
]

_STATE = {"enabled": True}

# Entries of the cross-product blocks (|A| x rows x |B|) of one chunk: bounds
# the memory of a chunk (8 bytes each, a few temporaries of this size).
_BLOCK_ENTRIES = 4_000_000
_MAX_CHUNK_PAIRS = 4096


@contextmanager
def generic_path():
    """Run ROC-HT through the generic per-pair path (to compare the two).

    Examples
    --------
    >>> from skprivacy import CentroidClassifier, ROCHTAuditor
    >>> from skprivacy.auditors._roc_fast import generic_path
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(4, 20, 8, random_state=0)
    >>> fast = ROCHTAuditor(CentroidClassifier(), n_pairs=3).fit(X, ids)
    >>> with generic_path():
    ...     slow = ROCHTAuditor(CentroidClassifier(), n_pairs=3).fit(X, ids)
    >>> bool((fast.results_["epsilon"] == slow.results_["epsilon"]).all())
    True
    """
    previous = _STATE["enabled"]
    _STATE["enabled"] = False
    try:
        yield
    finally:
        _STATE["enabled"] = previous


def fast_kind(clf):
    """``"centroid"``, ``"lda"`` or None (not a shared-product classifier)."""
    if not _STATE["enabled"]:
        return None
    if type(clf) is CentroidClassifier:
        return "centroid"
    if type(clf) is PooledLDAClassifier:
        return "lda"
    return None


def with_shared_covariance(clf, X, codes, n_identities):
    """Give a ``PooledLDAClassifier(covariance=None)`` the pooled covariance of X.

    Both paths use the returned classifier, so they whiten identically.
    """
    if type(clf) is PooledLDAClassifier and clf.covariance is None:
        cov = pooled_within_covariance(X, codes, n_identities)
        return clone(clf).set_params(covariance=cov)
    return clf


def shared_rows(clf, X):
    """Rows in the classifier's space: ``X`` itself, or whitened once (LDA)."""
    if type(clf) is PooledLDAClassifier:
        P = whitening_matrix(clf.covariance, clf.shrinkage)
        return np.ascontiguousarray(X @ P.T)
    return X


@lru_cache(maxsize=256)
def fold_vectors(n_a, n_b, n_folds, fold_seed):
    """Fold index of each row of A and of B (the generic path's folds)."""
    f = np.empty(n_a + n_b, dtype=np.intp)
    for i, (_, test) in enumerate(_stratified_folds(n_a, n_b, n_folds, fold_seed)):
        f[test] = i
    return f[:n_a], f[n_a:]


def plan_chunks(keys, pairs, rows_per_pair):
    """Chunks of pairs with equal size keys, sorted by identity, memory bounded.

    Parameters
    ----------
    keys : ndarray of shape (n_pairs, n_keys)
        Size key of each pair; a chunk never mixes keys.
    pairs : ndarray of shape (n_pairs, 2)
        Identity codes.
    rows_per_pair : ndarray of shape (n_pairs,)
        Rows of the larger identity of the pair (sizes the blocks).

    Returns
    -------
    chunks : list of ndarray
        Index arrays into ``pairs`` partitioning it; depends only on the pairs
        and sizes, never on ``n_jobs``.
    """
    n = len(pairs)
    if n == 0:
        return []
    order = np.lexsort((pairs[:, 1], pairs[:, 0]) + tuple(keys.T[::-1]))
    chunks, current = [], []
    seen_a, seen_b = set(), set()
    key_of = [tuple(k) for k in keys.tolist()]
    rows_of = rows_per_pair.tolist()
    pair_list = pairs.tolist()
    for i in order.tolist():
        a, b = pair_list[i]
        if current:
            same = key_of[i] == key_of[current[0]]
            n_a = len(seen_a) + (a not in seen_a)
            n_b = len(seen_b) + (b not in seen_b)
            entries = 2 * n_a * n_b * rows_of[i]
            if not same or entries > _BLOCK_ENTRIES or len(current) >= _MAX_CHUNK_PAIRS:
                chunks.append(np.asarray(current, dtype=np.intp))
                current, seen_a, seen_b = [], set(), set()
        current.append(i)
        seen_a.add(a)
        seen_b.add(b)
    chunks.append(np.asarray(current, dtype=np.intp))
    return chunks


# ----------------------------------------------------------------- products
def gather_rows(X, order, starts, ids, perm):
    """Rows of identities ``ids`` as (len(ids), len(perm), d).

    Row ``perm[r]`` of each identity in
    :func:`~skprivacy.auditors._roc.pair_rows` order (input order); the
    callers sort each identity's rows by fold, so that a fold is a slice.
    """
    idx = starts[ids][:, None] + np.asarray(perm)[None, :]
    return X[order[idx]]


def _fold_bounds(F, k):
    return np.searchsorted(F, np.arange(k + 1))


def _fold_means(X, F, k):
    """Per-fold training means: rows not in fold f (all rows when k == 1).

    ``F`` is sorted, so fold f's rows are a slice.
    """
    total = X.sum(axis=1)
    n = X.shape[1]
    if k == 1:
        return (total / n)[:, None, :]
    b = _fold_bounds(F, k)
    means = np.empty((X.shape[0], k, X.shape[2]))
    for f in range(k):
        held = X[:, b[f] : b[f + 1], :].sum(axis=1)
        means[:, f, :] = (total - held) / (n - (b[f + 1] - b[f]))
    return means


def pair_score_block(XA_fit, FA_fit, XB_fit, FB_fit, k, XA, FA, XB, FB, ia, jb):
    """Scores of the pairs ``(A[ia], B[jb])``: rows of A then rows of B.

    ``XA_fit`` (|A|, n_fa, d) are the rows the means are computed from, with
    sorted fold vector ``FA_fit`` (fold ``f``'s means use the rows not in fold
    ``f``; ``k == 1``: all rows); ``XA`` (|A|, n_a, d) the rows scored and
    ``FA`` (sorted) the fold whose means score each of them. Likewise for B.

    Returns
    -------
    scores : ndarray of shape (len(ia), n_a + n_b)
    """
    MA = _fold_means(XA_fit, FA_fit, k)
    MB = _fold_means(XB_fit, FB_fit, k)
    sqA = np.einsum("ikd,ikd->ik", MA, MA)
    sqB = np.einsum("jkd,jkd->jk", MB, MB)
    nA, nB = XA.shape[0], XB.shape[0]
    ownA = np.empty(XA.shape[:2])
    ownB = np.empty(XB.shape[:2])
    CA = np.empty((nA, XA.shape[1], nB))
    CB = np.empty((nB, XB.shape[1], nA))
    # Per fold: the rows it scores against their own identity's fold means
    # and against every identity of the other role (one batched product).
    for X_, F_, M_own, M_other, own, C_ in (
        (XA, FA, MA, MB, ownA, CA),
        (XB, FB, MB, MA, ownB, CB),
    ):
        b = _fold_bounds(F_, k)
        for f in range(k):
            rows = slice(b[f], b[f + 1])
            if b[f + 1] == b[f]:
                continue
            own[:, rows] = np.einsum("ixd,id->ix", X_[:, rows, :], M_own[:, f, :])
            other = np.ascontiguousarray(M_other[:, f, :])
            C_[:, rows, :] = np.matmul(X_[:, rows, :], other.T)
    # The generic classifier's form: (<x, m_b> - |m_b|^2/2) - (<x, m_a> - |m_a|^2/2).
    sa = (CA[ia, :, jb] - 0.5 * sqB[jb][:, FA]) - (ownA[ia] - 0.5 * sqA[ia][:, FA])
    sb = (ownB[jb] - 0.5 * sqB[jb][:, FB]) - (CB[jb, :, ia] - 0.5 * sqA[ia][:, FB])
    return np.concatenate([sa, sb], axis=1)


# ---------------------------------------------------------------- ROC rows
def _sorted_counts(scores, n_neg):
    """Descending scores, cumulative TP/FP and run ends (one row per pair)."""
    n = scores.shape[1]
    y = np.r_[np.zeros(n_neg, dtype=np.intp), np.ones(n - n_neg, dtype=np.intp)]
    order = np.argsort(scores, axis=1, kind="stable")[:, ::-1]
    s = np.take_along_axis(scores, order, axis=1)
    tps = np.cumsum(y[order], axis=1)
    fps = np.arange(1, n + 1)[None, :] - tps
    end = np.ones(s.shape, dtype=bool)
    end[:, :-1] = s[:, :-1] != s[:, 1:]
    return s, tps, fps, end


def _auc_rows(scores, n_neg, s, tps, fps, end):
    """AUC per row: the trapezoid over operating points, exact integer sums."""
    n_pos = scores.shape[1] - n_neg
    tp_end = np.where(end, tps, 0)
    fp_end = np.where(end, fps, 0)
    prev_tp = np.zeros_like(tps)
    prev_fp = np.zeros_like(fps)
    prev_tp[:, 1:] = np.maximum.accumulate(tp_end, axis=1)[:, :-1]
    prev_fp[:, 1:] = np.maximum.accumulate(fp_end, axis=1)[:, :-1]
    twice = np.where(end, (fps - prev_fp) * (tps + prev_tp), 0).sum(axis=1)
    area = twice / (2.0 * n_pos * n_neg)
    # Exactly one half: the generic path's floating-point trapezoid decides
    # which side of 0.5 it lands on (the certifier's direction), so take it.
    half = np.flatnonzero(twice == n_pos * n_neg)
    y = np.r_[np.zeros(n_neg), np.ones(n_pos)]
    for r in half.tolist():
        fpr, tpr, _ = roc_operating_points(y, scores[r])
        area[r] = float(auc(fpr, tpr))
    return area


def roc_rows(scores, n_neg, delta):
    """:func:`~skprivacy.auditors._roc.roc_summary` of every row of ``scores``.

    Columns ``0..n_neg-1`` are negatives (identity A), the rest positives.
    """
    P, n = scores.shape
    n_pos = n - n_neg
    s, tps, fps, end = _sorted_counts(scores, n_neg)
    tpr = tps / n_pos
    fpr = fps / n_neg
    per = np.maximum(
        _log_ratio(tpr - delta, fpr), _log_ratio(1.0 - fpr - delta, 1.0 - tpr)
    )
    per = np.where(end, per, -np.inf)
    p0 = max(float(_log_ratio(0.0 - delta, 0.0)), float(_log_ratio(1.0 - delta, 1.0)))
    full = np.concatenate([np.full((P, 1), p0), per], axis=1)
    idx = np.argmax(full, axis=1)
    rows = np.arange(P)
    eps = np.maximum(0.0, full[rows, idx])
    j = np.maximum(idx - 1, 0)
    at0 = idx == 0
    gap = np.where(end, tpr - fpr, -np.inf)
    return {
        "epsilon": eps,
        "auc": _auc_rows(scores, n_neg, s, tps, fps, end),
        "tv": np.maximum(0.0, gap.max(axis=1)),
        "corner": np.any(end & (fps == 0) & (tps == n_pos), axis=1),
        "fpr": np.where(at0, 0.0, fpr[rows, j]),
        "tpr": np.where(at0, 0.0, tpr[rows, j]),
        "threshold": np.where(at0, np.inf, s[rows, j]),
    }


# ------------------------------------------------------------ certificates
@lru_cache(maxsize=1024)
def _cp_table(n, alpha, side):
    from skprivacy.auditors._certify import clopper_pearson_bound

    return np.atleast_1d(clopper_pearson_bound(np.arange(n + 1), n, alpha, side=side))


def certified_lookup(tp, n_pos, fp, n_neg, alpha):
    """``_certified`` with the Clopper–Pearson bounds from per-size tables."""
    lo = _cp_table(int(n_pos), float(alpha), "lower")[tp]
    hi = _cp_table(int(n_neg), float(alpha), "upper")[fp]
    with np.errstate(divide="ignore"):
        e1 = np.log(lo) - np.log(hi)
        e2 = np.log1p(-hi) - np.log1p(-lo)
    return np.maximum(0.0, np.maximum(e1, e2)), lo, hi


def select_thresholds(scores, n_neg, alpha):
    """:func:`~skprivacy.auditors._certify.select_threshold` of every row."""
    P, n = scores.shape
    n_pos = n - n_neg
    s, tps, fps, end = _sorted_counts(scores, n_neg)
    cut = end.copy()
    cut[:, -1] = False
    eps = certified_lookup(tps, n_pos, fps, n_neg, alpha)[0]
    eps = np.where(cut, eps, -np.inf)
    best = cut & (eps == eps.max(axis=1, keepdims=True))
    youden = tps / n_pos - fps / n_neg
    ymax = np.where(best, youden, -np.inf).max(axis=1, keepdims=True)
    best &= youden == ymax
    count = best.sum(axis=1)
    rank = np.cumsum(best, axis=1)
    pick = best & (rank == ((count - 1) // 2 + 1)[:, None])
    j = np.argmax(pick, axis=1)
    rows = np.arange(P)
    t = (s[rows, j] + s[rows, np.minimum(j + 1, n - 1)]) / 2.0
    single = end.sum(axis=1) <= 1
    return np.where(single, s[:, -1], t)


# ------------------------------------------------------------- entry points
def _groups(keys):
    """Index arrays of the pairs sharing each size key (in first-seen order)."""
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]


def audit_pairs(Z, order, starts, counts, pairs, cv, fold_seed, delta):
    """ROC-HT columns of ``pairs`` (the generic ``_audit_pairs``' dict)."""
    from skprivacy.auditors._roc import n_folds_for

    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    P = len(pairs)
    keys = np.stack([counts[pairs[:, 0]], counts[pairs[:, 1]]], axis=1)
    cols = {
        "epsilon": np.empty(P),
        "auc": np.empty(P),
        "tv": np.empty(P),
        "corner": np.empty(P, dtype=bool),
        "fpr": np.empty(P),
        "tpr": np.empty(P),
        "threshold": np.empty(P),
        "n_a": keys[:, 0].astype(np.intp),
        "n_b": keys[:, 1].astype(np.intp),
        "n_folds": np.empty(P, dtype=np.intp),
    }
    for g in _groups(keys):
        n_a, n_b = int(keys[g[0], 0]), int(keys[g[0], 1])
        k = n_folds_for(cv, n_a, n_b)
        FA, FB = fold_vectors(n_a, n_b, k, fold_seed)
        # Rows sorted by fold (a pair's ROC does not depend on row order).
        pA, pB = np.argsort(FA, kind="stable"), np.argsort(FB, kind="stable")
        FA, FB = FA[pA], FB[pB]
        a_ids, ia = np.unique(pairs[g, 0], return_inverse=True)
        b_ids, jb = np.unique(pairs[g, 1], return_inverse=True)
        XA = gather_rows(Z, order, starts, a_ids, pA)
        XB = gather_rows(Z, order, starts, b_ids, pB)
        S = pair_score_block(XA, FA, XB, FB, k, XA, FA, XB, FB, ia, jb)
        for key, value in roc_rows(S, n_a, delta).items():
            cols[key][g] = value
        cols["n_folds"][g] = k
    return cols


def certify_pairs(
    Z_train,
    train_index,
    Z_test,
    test_index,
    pairs,
    cv,
    fold_seed,
    thresholds,
    alpha_train,
    alpha_test,
):
    """Train the per-pair tests and (optionally) count the reserved test.

    ``train_index`` / ``test_index`` are ``(order, starts, counts)`` of the
    training / reserved-test rows (``Z_test`` None: no reserved test).
    Returns the columns of :class:`~skprivacy.ROCHTCertifier`'s ``results_``
    and its fitted per-pair arrays (``thresholds``: shape (n, m)).
    """
    from skprivacy.auditors._roc import n_folds_for

    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    P = len(pairs)
    order_tr, starts_tr, counts_tr = train_index
    if Z_test is not None:
        order_te, starts_te, counts_te = test_index
        test_keys = [counts_te[pairs[:, 0]], counts_te[pairs[:, 1]]]
    else:
        test_keys = [np.zeros(P, np.intp), np.zeros(P, np.intp)]
    keys = np.stack([counts_tr[pairs[:, 0]], counts_tr[pairs[:, 1]], *test_keys], 1)
    m = 1 if thresholds == "train" else int(thresholds)
    out = {
        "thresholds": np.empty((P, m)),
        "direction": np.empty(P, dtype=np.intp),
        "train_auc": np.empty(P),
        "n_train_a": keys[:, 0].astype(np.intp),
        "n_train_b": keys[:, 1].astype(np.intp),
    }
    if Z_test is not None:
        for name in ("epsilon", "ceiling", "tpr_lower", "fpr_upper", "threshold"):
            out[name] = np.empty(P)
        for name in ("tp", "n_pos", "fp", "n_neg"):
            out[name] = np.empty(P, dtype=np.intp)
    for g in _groups(keys):
        n_ta, n_tb, n_ea, n_eb = (int(v) for v in keys[g[0]])
        a_ids, ia = np.unique(pairs[g, 0], return_inverse=True)
        b_ids, jb = np.unique(pairs[g, 1], return_inverse=True)
        k = n_folds_for(cv, n_ta, n_tb)
        if k >= 2:
            FA, FB = fold_vectors(n_ta, n_tb, k, fold_seed)
        else:  # one training row per identity: in-sample scores
            FA, FB = np.zeros(n_ta, np.intp), np.zeros(n_tb, np.intp)
        # Rows sorted by fold: scores, ROC and quantiles ignore row order.
        pA, pB = np.argsort(FA, kind="stable"), np.argsort(FB, kind="stable")
        FA, FB = FA[pA], FB[pB]
        XA = gather_rows(Z_train, order_tr, starts_tr, a_ids, pA)
        XB = gather_rows(Z_train, order_tr, starts_tr, b_ids, pB)
        oof = pair_score_block(XA, FA, XB, FB, k, XA, FA, XB, FB, ia, jb)
        train_auc = _auc_rows(oof, n_ta, *_sorted_counts(oof, n_ta))
        direction = np.where(train_auc >= 0.5, 1, -1)
        s = direction[:, None] * oof
        if thresholds == "train":
            thr = select_thresholds(s, n_ta, alpha_train)[:, None]
        else:
            levels = np.arange(1, m + 1) / (m + 1)
            thr = np.stack([np.quantile(row, levels) for row in s])
        out["thresholds"][g] = thr
        out["direction"][g] = direction
        out["train_auc"][g] = train_auc
        if Z_test is None:
            continue
        TA = gather_rows(Z_test, order_te, starts_te, a_ids, np.arange(n_ea))
        TB = gather_rows(Z_test, order_te, starts_te, b_ids, np.arange(n_eb))
        zA, zB = np.zeros(n_ta, np.intp), np.zeros(n_tb, np.intp)
        eA, eB = np.zeros(n_ea, np.intp), np.zeros(n_eb, np.intp)
        st = direction[:, None] * pair_score_block(
            XA, zA, XB, zB, 1, TA, eA, TB, eB, ia, jb
        )
        above = st[:, None, :] > thr[:, :, None]
        tp = above[:, :, n_ea:].sum(axis=2)
        fp = above[:, :, :n_ea].sum(axis=2)
        eps, lo, hi = certified_lookup(tp, n_eb, fp, n_ea, alpha_test)
        j = np.argmax(eps, axis=1)
        rows = np.arange(len(g))
        out["epsilon"][g] = eps[rows, j]
        out["ceiling"][g] = certified_lookup(n_eb, n_eb, 0, n_ea, alpha_test)[0]
        out["tp"][g] = tp[rows, j]
        out["n_pos"][g] = n_eb
        out["fp"][g] = fp[rows, j]
        out["n_neg"][g] = n_ea
        out["tpr_lower"][g] = lo[rows, j]
        out["fpr_upper"][g] = hi[rows, j]
        out["threshold"][g] = thr[rows, j]
    return out


class PairEstimators:
    """The fitted per-pair classifiers of a fast-path certifier, built on access.

    Holding one fitted classifier per pair for every pair of a large audit
    would cost memory quadratic in the identities; each is instead assembled
    from the per-identity training means when indexed.
    """

    def __init__(self, template, means, pairs, n_features):
        self.template = template
        self.means = means
        self.pairs = np.asarray(pairs, dtype=np.intp)
        self.n_features = int(n_features)
        self._whitening = None
        if type(template) is PooledLDAClassifier:
            self._whitening = whitening_matrix(template.covariance, template.shrinkage)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        a, b = self.pairs[i]
        est = clone(self.template)
        est.classes_ = np.array([0, 1])
        est.n_features_in_ = self.n_features
        est.centroids_ = self.means[[a, b]].copy()
        if self._whitening is not None:
            est.covariance_ = np.asarray(self.template.covariance, dtype=np.float64)
            est.whitening_ = self._whitening
        return est

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def identity_means(Z, order, starts):
    """Mean row of every identity (grouped by ``order``/``starts``)."""
    counts = np.diff(starts)
    sums = np.add.reduceat(Z[order], starts[:-1], axis=0) if len(order) else Z[:0]
    return sums / np.maximum(counts, 1)[:, None]
