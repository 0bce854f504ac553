# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shared-product engine of ROC-HT and its certificates.

For :class:`~skprivacy.CentroidClassifier` and
:class:`~skprivacy.PooledLDAClassifier` the score of a row under the
classifier trained on the rows of identities ``a`` and ``b`` is linear in the
two training means (in a space whitened once for the LDA), so every pair's
out-of-fold and held-out scores come from a few matrix products computed for
blocks of pairs (:mod:`skprivacy._kernels.roc`): no per-pair model fit. The
folds, the reserved-test split, the threshold rule and every formula are those
of the per-pair engine (:mod:`skprivacy.auditors._roc_core`); the results
equal the per-pair engine's up to floating-point rounding of the scores.

Pairs are processed in groups that share the size of their first identity
(the folds of an identity in the role of A depend on its size only); the
second identities of a group may have any sizes.
"""

import numpy as np
from sklearn.base import clone

from skprivacy._kernels.roc import (
    centroid_held_out_scores,
    centroid_oof_scores,
    ranked_counts,
)
from skprivacy.auditors._linear import (
    CentroidClassifier,
    PooledLDAClassifier,
    pooled_within_covariance,
    whitening_matrix,
)
from skprivacy.auditors._roc_core import (
    auc_from_counts,
    certified_lookup,
    fold_vectors,
    grid_thresholds,
    kov_rows,
    prepare_fold_vectors,
    select_threshold_rows,
)

__all__ = [
    "PairEstimators",
    "audit_pairs",
    "certify_held_out",
    "certify_pairs",
    "has_shared_path",
    "held_out_products",
    "identity_means",
    "plan_chunks",
    "shared_rows",
    "with_shared_covariance",
]

# Entries of the cross-product blocks (|A| x rows x |B|) of one chunk: bounds
# the memory of a chunk (8 bytes each, a few temporaries of this size).
_BLOCK_ENTRIES = 4_000_000
_MAX_CHUNK_PAIRS = 4096


def has_shared_path(clf):
    """Whether ``clf`` is a classifier of the shared-product engine."""
    return type(clf) in (CentroidClassifier, PooledLDAClassifier)


def with_shared_covariance(clf, X, codes, n_identities):
    """Give a ``PooledLDAClassifier(covariance=None)`` the pooled covariance of X.

    Both engines use the returned classifier, so they whiten identically.
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


def identity_means(Z, order, starts):
    """Mean row of every identity (grouped by ``order``/``starts``)."""
    counts = np.diff(starts)
    sums = np.add.reduceat(Z[order], starts[:-1], axis=0) if len(order) else Z[:0]
    return sums / np.maximum(counts, 1)[:, None]


def _group_keys(counts, pairs, cv):
    """Size of the first identity and folds of each pair: its group."""
    n_a = counts[pairs[:, 0]]
    k = np.minimum(np.minimum(n_a, counts[pairs[:, 1]]), cv)
    return np.stack([n_a, k], axis=1)


def plan_chunks(keys, pairs, rows_per_pair):
    """Chunks of pairs sorted by group key and identity, memory bounded.

    Parameters
    ----------
    keys : ndarray of shape (n_pairs, n_keys)
        Group key of each pair (the engine processes one group at a time).
    pairs : ndarray of shape (n_pairs, 2)
        Identity codes.
    rows_per_pair : ndarray of shape (n_pairs,)
        Rows of the larger identity of the pair (sizes the blocks).

    Returns
    -------
    chunks : list of ndarray
        Index arrays into ``pairs`` partitioning it; depends only on the pairs
        and sizes, never on ``n_jobs``. A chunk holds at most
        ``_MAX_CHUNK_PAIRS`` pairs, and the cross-product block of each of
        its groups (``2 |A| |B| rows``) at most ``_BLOCK_ENTRIES`` entries
        (or a single pair).
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
        if current and key_of[i] != key_of[current[-1]]:
            seen_a, seen_b = set(), set()  # a new group within the chunk
        n_a = len(seen_a) + (a not in seen_a)
        n_b = len(seen_b) + (b not in seen_b)
        entries = 2 * n_a * n_b * rows_of[i]
        if current and (
            (entries > _BLOCK_ENTRIES and (seen_a or seen_b))
            or len(current) >= _MAX_CHUNK_PAIRS
        ):
            chunks.append(np.asarray(current, dtype=np.intp))
            current, seen_a, seen_b = [], set(), set()
        current.append(i)
        seen_a.add(a)
        seen_b.add(b)
    chunks.append(np.asarray(current, dtype=np.intp))
    return chunks


def chunk_plan(counts, pairs, cv):
    """:func:`plan_chunks` of the pairs of an audit (grouped as the engine does)."""
    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    keys = _group_keys(counts, pairs, cv)
    return plan_chunks(keys, pairs, counts[pairs].max(axis=1))


def _groups(keys):
    """Index arrays of the pairs sharing each key (in first-seen order)."""
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]


# ---------------------------------------------------------------- out of fold
def _oof_scores(Zg, starts, counts, pairs, k, fold_seed):
    """Out-of-fold scores of pairs sharing the first size and the folds.

    ``Zg`` holds the rows grouped by identity (identity ``c``: rows
    ``starts[c]:starts[c + 1]``). Returns ``(scores, n_real, n_neg)``:
    padded rows, A's rows first.
    """
    n_a = int(counts[pairs[0, 0]])
    a_ids, ia = np.unique(pairs[:, 0], return_inverse=True)
    b_ids, jb = np.unique(pairs[:, 1], return_inverse=True)
    if k >= 2:
        FA = fold_vectors(n_a, int(counts[b_ids[0]]), k, fold_seed)[0]
    else:  # one row per identity: in-sample scores
        FA = np.zeros(n_a, dtype=np.intp)
    # A's rows sorted by fold (a pair's ROC does not depend on the row order).
    pA = np.argsort(FA, kind="stable")
    XA = Zg[starts[a_ids][:, None] + pA[None, :]]
    sizes_b = counts[b_ids]
    if k >= 2:
        FB = np.concatenate(
            [fold_vectors(n_a, n_b, k, fold_seed)[1] for n_b in sizes_b.tolist()]
        )
    else:
        FB = np.zeros(int(sizes_b.sum()), dtype=np.intp)
    if b_ids[-1] - b_ids[0] + 1 == len(b_ids):  # a range of identities: a view
        XB = Zg[starts[b_ids[0]] : starts[b_ids[-1] + 1]]
    else:
        XB = Zg[np.concatenate([np.arange(starts[b], starts[b + 1]) for b in b_ids])]
    starts_b = np.r_[0, np.cumsum(sizes_b)]
    S = centroid_oof_scores(XA, FA[pA], k, XB, FB, starts_b, ia, jb)
    n_b = sizes_b[jb]
    return S, n_a + n_b, np.full(len(pairs), n_a)


def _grouped(Z, order):
    """Rows of ``Z`` grouped by identity (no copy when already grouped)."""
    if np.array_equal(order, np.arange(len(order))):
        return Z
    return Z[order]


def _roc_columns(S, n_real, n_neg, delta):
    """ROC-HT columns of padded score rows (the per-pair engine's summary)."""
    P = S.shape[0]
    n_pos = n_real - n_neg
    s, tps, fps, end = ranked_counts(S, n_real, n_neg)
    tpr = tps / n_pos[:, None]
    fpr = fps / n_neg[:, None]
    # The ROC's first operating point (0, 0) at threshold +inf, then the ends.
    fpr0 = np.concatenate([np.zeros((P, 1)), fpr], axis=1)
    tpr0 = np.concatenate([np.zeros((P, 1)), tpr], axis=1)
    valid = np.concatenate([np.ones((P, 1), dtype=bool), end], axis=1)
    eps, idx, interior, inf1, inf2 = kov_rows(fpr0, tpr0, delta, valid)
    rows = np.arange(P)
    j = np.maximum(idx - 1, 0)
    at0 = idx == 0
    gap = np.where(end, tpr - fpr, -np.inf)
    return {
        "epsilon": eps,
        "epsilon_interior": interior,
        "infinite_fpr0": inf1,
        "infinite_tpr1": inf2,
        "auc": auc_from_counts(S, n_real, n_neg, tps, fps, end),
        "tv": np.maximum(0.0, gap.max(axis=1)),
        "corner": np.any(end & (fps == 0) & (tps == n_pos[:, None]), axis=1),
        "fpr": np.where(at0, 0.0, fpr[rows, j]),
        "tpr": np.where(at0, 0.0, tpr[rows, j]),
        "threshold": np.where(at0, np.inf, s[rows, j]),
    }


def audit_pairs(Z, order, starts, counts, pairs, cv, fold_seed, delta):
    """ROC-HT columns of ``pairs`` (the per-pair engine's ``_audit_pairs`` dict)."""
    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    P = len(pairs)
    keys = _group_keys(counts, pairs, cv)
    prepare_fold_vectors(keys[:, 0], counts[pairs[:, 1]], keys[:, 1], fold_seed)
    cols = {
        "epsilon": np.empty(P),
        "epsilon_interior": np.empty(P),
        "infinite_fpr0": np.empty(P, dtype=bool),
        "infinite_tpr1": np.empty(P, dtype=bool),
        "auc": np.empty(P),
        "tv": np.empty(P),
        "corner": np.empty(P, dtype=bool),
        "fpr": np.empty(P),
        "tpr": np.empty(P),
        "threshold": np.empty(P),
        "n_a": counts[pairs[:, 0]].astype(np.intp),
        "n_b": counts[pairs[:, 1]].astype(np.intp),
        "n_folds": keys[:, 1].astype(np.intp),
    }
    Zg = _grouped(Z, order)
    for g in _groups(keys):
        k = int(keys[g[0], 1])
        S, n_real, n_neg = _oof_scores(Zg, starts, counts, pairs[g], k, fold_seed)
        for key, value in _roc_columns(S, n_real, n_neg, delta).items():
            cols[key][g] = value
    return cols


# ------------------------------------------------------------ certificates
def held_out_products(Z_test, means):
    """``(T, sq)``: products of held-out rows with the training means, and norms."""
    return Z_test @ means.T, np.einsum("cd,cd->c", means, means)


def certify_held_out(T, sq, test_index, pairs, directions, thresholds, alpha):
    """Certificates of fixed per-pair tests on held-out rows.

    Parameters
    ----------
    T, sq : ndarray
        :func:`held_out_products` of the held-out rows.
    test_index : tuple
        ``(order, starts)`` of the held-out rows grouped by identity.
    pairs : ndarray of shape (n_pairs, 2)
        Identity codes (a: label 0, b: label 1), each with held-out rows.
    directions : ndarray of shape (n_pairs,)
        Score direction of each pair.
    thresholds : ndarray of shape (n_pairs, m)
        Pre-declared thresholds of each pair (on ``direction * score``).
    alpha : float
        Per-bound error level.

    Returns
    -------
    columns : dict of ndarray
        ``epsilon``, ``ceiling``, ``tp``, ``n_pos``, ``fp``, ``n_neg``,
        ``tpr_lower``, ``fpr_upper``, ``threshold`` (the one reported).
    """
    order, starts = test_index
    S, n_neg, n_real = centroid_held_out_scores(
        T, sq, order, starts, pairs[:, 0], pairs[:, 1], directions
    )
    n_pos = n_real - n_neg
    cols = np.arange(S.shape[1])[None, :]
    neg = cols < n_neg[:, None]
    pos = ~neg & (cols < n_real[:, None])
    above = S[:, None, :] > thresholds[:, :, None]
    tp = (above & pos[:, None, :]).sum(axis=2)
    fp = (above & neg[:, None, :]).sum(axis=2)
    eps, lo, hi = certified_lookup(tp, n_pos[:, None], fp, n_neg[:, None], alpha)
    j = np.argmax(eps, axis=1)
    rows = np.arange(len(pairs))
    return {
        "epsilon": eps[rows, j],
        "ceiling": certified_lookup(n_pos, n_pos, 0, n_neg, alpha)[0],
        "tp": tp[rows, j],
        "n_pos": n_pos,
        "fp": fp[rows, j],
        "n_neg": n_neg,
        "tpr_lower": lo[rows, j],
        "fpr_upper": hi[rows, j],
        "threshold": thresholds[rows, j],
    }


def certify_pairs(
    Z_train,
    train_index,
    pairs,
    cv,
    fold_seed,
    thresholds,
    alpha_train,
    held_out=None,
):
    """Train the per-pair tests (and, optionally, certify held-out rows).

    Parameters
    ----------
    Z_train : ndarray of shape (n_train, n_features)
        Training rows in the classifier's space.
    train_index : tuple
        ``(order, starts, counts)`` of the training rows.
    pairs : ndarray of shape (n_pairs, 2)
        Identity codes.
    cv : int
        Folds of the out-of-fold training scores.
    fold_seed : int
        Seed of the folds.
    thresholds : "train" or int
        The certifier's ``thresholds``.
    alpha_train : float
        Per-bound level the threshold rule anticipates.
    held_out : tuple or None, default=None
        ``(T, sq, test_index, alpha)`` to certify held-out rows too (see
        :func:`certify_held_out`).

    Returns
    -------
    columns : dict of ndarray
        ``thresholds`` (n_pairs, m), ``direction``, ``train_auc``,
        ``n_train_a``, ``n_train_b``, and with ``held_out`` the columns of
        :func:`certify_held_out`.
    """
    order_tr, starts_tr, counts_tr = train_index
    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    P = len(pairs)
    keys = _group_keys(counts_tr, pairs, cv)
    prepare_fold_vectors(keys[:, 0], counts_tr[pairs[:, 1]], keys[:, 1], fold_seed)
    m = 1 if thresholds == "train" else int(thresholds)
    out = {
        "thresholds": np.empty((P, m)),
        "direction": np.empty(P, dtype=np.intp),
        "train_auc": np.empty(P),
        "n_train_a": counts_tr[pairs[:, 0]].astype(np.intp),
        "n_train_b": counts_tr[pairs[:, 1]].astype(np.intp),
    }
    Zg = _grouped(Z_train, order_tr)
    for g in _groups(keys):
        k = int(keys[g[0], 1])
        S, n_real, n_neg = _oof_scores(Zg, starts_tr, counts_tr, pairs[g], k, fold_seed)
        s, tps, fps, end = ranked_counts(S, n_real, n_neg)
        train_auc = auc_from_counts(S, n_real, n_neg, tps, fps, end)
        direction = np.where(train_auc >= 0.5, 1, -1)
        real = np.arange(S.shape[1])[None, :] < n_real[:, None]
        oriented = np.where(real, direction[:, None] * S, -np.inf)
        if thresholds == "train":
            ranked = ranked_counts(oriented, n_real, n_neg)
            thr = select_threshold_rows(
                ranked[0], n_real, n_neg, *ranked[1:], alpha_train
            )
            thr = thr[:, None]
        else:
            thr = np.stack(
                [
                    grid_thresholds(row[:n], m)
                    for row, n in zip(oriented, n_real.tolist())
                ]
            )
        out["thresholds"][g] = thr
        out["direction"][g] = direction
        out["train_auc"][g] = train_auc
    if held_out is not None:
        T, sq, test_index, alpha = held_out
        out.update(
            certify_held_out(
                T, sq, test_index, pairs, out["direction"], out["thresholds"], alpha
            )
        )
    return out


class PairEstimators:
    """The fitted per-pair classifiers of a shared-engine certifier, built on access.

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

    def subset(self, index):
        """Return the estimators of the pairs ``index`` (same means, template)."""
        out = PairEstimators.__new__(PairEstimators)
        out.template, out.means = self.template, self.means
        out.pairs = self.pairs[np.asarray(index, dtype=np.intp)]
        out.n_features, out._whitening = self.n_features, self._whitening
        return out
