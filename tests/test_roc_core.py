# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The ROC-HT maths and kernels against hand-worked cases, scipy and sklearn."""

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import beta
from sklearn.base import BaseEstimator
from sklearn.metrics import auc, roc_auc_score, roc_curve
from sklearn.model_selection import StratifiedKFold

from skprivacy._kernels.roc import (
    centroid_held_out_scores,
    centroid_held_out_scores_reference,
    centroid_oof_scores,
    centroid_oof_scores_reference,
    ranked_counts,
    ranked_counts_reference,
)
from skprivacy.auditors import (
    certified_epsilon_lb,
    clopper_pearson_bound,
    kov_epsilon,
    roc_operating_points,
)
from skprivacy.auditors._roc_core import (
    auc_from_counts,
    certified_from_counts,
    certified_lookup,
    fold_vectors,
    kov_rows,
    prepare_fold_vectors,
    reserved_test_mask,
    select_threshold,
    select_threshold_rows,
    stratified_folds,
)
from skprivacy.utils import validate_identity_data


def _naive_kov_terms(fpr, tpr, delta=0.0):
    """Every KOV term written out: (value, denominator is zero)."""
    terms = []
    for f, t in zip(fpr, tpr):
        for num, den in ((t - delta, f), (1 - f - delta, 1 - t)):
            if num <= 0:
                continue
            terms.append((math.inf if den == 0 else math.log(num / den), den == 0))
    return terms


# ---------------------------------------------------------------------- KOV
def test_kov_rows_by_hand():
    # Two ROCs, the second padded with an invalid point.
    fpr = np.array([[0.0, 0.0, 0.25, 1.0], [0.0, 0.5, 1.0, 0.3]])
    tpr = np.array([[0.0, 0.5, 1.0, 1.0], [0.0, 0.75, 1.0, 0.9]])
    valid = np.array([[True, True, True, True], [True, True, True, False]])
    eps, idx, interior, inf1, inf2 = kov_rows(fpr, tpr, 0.0, valid)
    # Row 0: (0, 0.5) has FPR = 0 < TPR, (0.25, 1) has TPR = 1 > FPR: infinite.
    # Its finite terms: log(1 / (1 - 0.5)) at (0, 0.5), log(1 / 0.25) at
    # (0.25, 1), 0 at (0, 0) and (1, 1): the largest is log 4.
    assert eps[0] == math.inf and idx[0] == 1
    assert interior[0] == pytest.approx(math.log(4))
    assert inf1[0] and inf2[0]
    # Row 1: log(0.75 / 0.5) and log(0.5 / 0.25); the invalid point is ignored.
    assert eps[1] == pytest.approx(math.log(2)) and idx[1] == 1
    assert interior[1] == eps[1]
    assert not inf1[1] and not inf2[1]


@given(
    st.lists(st.integers(0, 6), min_size=2, max_size=30),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.0, 0.05]),
)
# The rows take numpy's vectorised log, the loop math.log: they agree to a few
# ulps, not always to the last bit (this case differs in it).
@example(levels=[1, 0, 0, 0, 0, 1, 1, 1, 1], seed=5, delta=0.05)
def test_kov_rows_equal_a_naive_loop(levels, seed, delta):
    rng = np.random.default_rng(seed)
    y = np.r_[0, 1, rng.integers(0, 2, len(levels))]
    s = np.r_[levels[:2], levels].astype(float)[: len(y)]
    fpr, tpr, _ = roc_operating_points(y, s)
    eps, _, interior, inf1, inf2 = kov_rows(fpr[None], tpr[None], delta)
    terms = _naive_kov_terms(fpr, tpr, delta)
    assert_allclose(eps[0], max([0.0] + [v for v, _ in terms]), rtol=1e-12)
    assert_allclose(
        interior[0], max([0.0] + [v for v, zero in terms if not zero]), rtol=1e-12
    )
    assert inf1[0] == any((f == 0) and (t - delta > 0) for f, t in zip(fpr, tpr))
    assert inf2[0] == any((t == 1) and (1 - f - delta > 0) for f, t in zip(fpr, tpr))
    assert eps[0] == kov_epsilon(fpr, tpr, delta)
    # The finite companion never exceeds log(max(n_a, n_b)).
    assert interior[0] <= math.log(max(np.sum(y == 0), np.sum(y == 1))) + 1e-12


def test_operating_points_and_auc_from_counts_equal_sklearn():
    rng = np.random.default_rng(0)
    scores, n_real, n_neg = [], [], []
    width = 40
    for _ in range(30):
        n_a, n_b = rng.integers(1, 20, 2)
        s = np.round(rng.normal(size=n_a + n_b), 1)  # ties
        scores.append(np.r_[s, np.full(width - s.size, -np.inf)])
        n_real.append(n_a + n_b)
        n_neg.append(n_a)
    S = np.array(scores)
    n_real, n_neg = np.array(n_real), np.array(n_neg)
    s, tps, fps, end = ranked_counts(S, n_real, n_neg)
    areas = auc_from_counts(S, n_real, n_neg, tps, fps, end)
    for r in range(len(S)):
        y = np.r_[np.zeros(n_neg[r]), np.ones(n_real[r] - n_neg[r])]
        fpr, tpr, thr = roc_curve(y, S[r, : n_real[r]], drop_intermediate=False)
        own = roc_operating_points(y, S[r, : n_real[r]])
        assert_array_equal(own[0], fpr)
        assert_array_equal(own[1], tpr)
        # The ends of the ranked counts are the operating points after (0, 0).
        assert_array_equal(fps[r][end[r]] / n_neg[r], fpr[1:])
        assert_array_equal(tps[r][end[r]] / (n_real[r] - n_neg[r]), tpr[1:])
        assert_allclose(areas[r], roc_auc_score(y, S[r, : n_real[r]]), rtol=1e-12)
        assert areas[r] == auc(fpr, tpr) or abs(areas[r] - auc(fpr, tpr)) < 1e-12


def test_ranked_counts_equal_their_reference():
    rng = np.random.default_rng(1)
    n_real = rng.integers(2, 25, 40)
    n_neg = np.array([rng.integers(1, m) for m in n_real])
    S = np.full((40, 25), -np.inf)
    for r, m in enumerate(n_real):
        S[r, :m] = np.round(rng.normal(size=m), 1)
    for got, ref in zip(
        ranked_counts(S, n_real, n_neg), ranked_counts_reference(S, n_real, n_neg)
    ):
        assert_array_equal(got, ref)


# ------------------------------------------------------------ Clopper–Pearson
def test_clopper_pearson_and_lookup_equal_beta_ppf():
    a = 0.01
    k = np.array([0, 3, 7, 10])
    n = np.array([10, 10, 12, 10])
    lower = [0.0 if ki == 0 else beta.ppf(a, ki, ni - ki + 1) for ki, ni in zip(k, n)]
    upper = [
        1.0 if ki == ni else beta.ppf(1 - a, ki + 1, ni - ki) for ki, ni in zip(k, n)
    ]
    assert_allclose(clopper_pearson_bound(k, n, a), lower, rtol=1e-14)
    assert_allclose(clopper_pearson_bound(k, n, a, side="upper"), upper, rtol=1e-14)
    # The table lookup equals the direct computation exactly, for mixed sizes.
    tp, fp = np.array([[3, 10], [12, 0]]), np.array([[0, 1], [2, 5]])
    n_pos, n_neg = np.array([[10], [12]]), np.array([[8], [9]])
    direct = certified_from_counts(tp, n_pos, fp, n_neg, a)
    for got, ref in zip(certified_lookup(tp, n_pos, fp, n_neg, a), direct):
        assert_array_equal(got, ref)


def test_certified_bound_by_hand():
    # 30/30 accepted, 0/30 false, K = 40: log(a^(1/30) / (1 - a^(1/30))).
    a = 0.05 / 80
    expected = math.log(a ** (1 / 30) / (1 - a ** (1 / 30)))
    assert_allclose(
        certified_epsilon_lb(30, 30, 0, 30, n_comparisons=40), expected, rtol=1e-12
    )


# ----------------------------------------------------------------- thresholds
def test_threshold_rows_equal_the_one_pair_rule():
    rng = np.random.default_rng(2)
    rows, n_real, n_neg = [], [], []
    for _ in range(25):
        n_a, n_b = rng.integers(2, 15, 2)
        s = np.r_[rng.normal(0, 1, n_a), rng.normal(1.5, 1, n_b)]
        s = np.round(s, 1) if rng.random() < 0.5 else s
        rows.append(np.r_[s, np.full(30 - s.size, -np.inf)])
        n_real.append(n_a + n_b)
        n_neg.append(n_a)
    S, n_real, n_neg = np.array(rows), np.array(n_real), np.array(n_neg)
    alpha = 0.0125
    s, tps, fps, end = ranked_counts(S, n_real, n_neg)
    got = select_threshold_rows(s, n_real, n_neg, tps, fps, end, alpha)
    for r in range(len(S)):
        y = np.r_[np.zeros(n_neg[r]), np.ones(n_real[r] - n_neg[r])]
        assert got[r] == select_threshold(y, S[r, : n_real[r]], alpha)[0]


# ---------------------------------------------------------------------- folds
@pytest.mark.parametrize("k, seed", [(2, 0), (5, 0), (5, 123), (3, 2**31)])
def test_fold_vectors_equal_stratified_kfold(k, seed):
    rng = np.random.default_rng(k)
    sizes = [(int(a), int(b)) for a, b in rng.integers(k, 160, (40, 2))]
    sizes += [(k, k), (k, 300), (300, k)]
    prepare_fold_vectors([a for a, _ in sizes], [b for _, b in sizes], k, seed)
    for n_a, n_b in sizes:
        y = np.r_[np.zeros(n_a), np.ones(n_b)]
        folds = np.empty(n_a + n_b, dtype=int)
        splitter = StratifiedKFold(k, shuffle=True, random_state=seed)
        for f, (_, test) in enumerate(splitter.split(np.zeros((n_a + n_b, 1)), y)):
            folds[test] = f
        fa, fb = fold_vectors(n_a, n_b, k, seed)
        assert_array_equal(fa, folds[:n_a])
        assert_array_equal(fb, folds[n_a:])
        expected = list(splitter.split(np.zeros((n_a + n_b, 1)), y))
        for (tr, te), (tr2, te2) in zip(stratified_folds(n_a, n_b, k, seed), expected):
            assert_array_equal(tr, tr2)
            assert_array_equal(te, te2)


# ------------------------------------------------------------- score kernels
def test_centroid_oof_scores_equal_their_reference():
    rng = np.random.default_rng(3)
    d, k, n_a = 6, 3, 7
    XA = rng.normal(size=(3, n_a, d))
    FA = np.sort(fold_vectors(n_a, 9, k, 0)[0])
    sizes = np.array([9, 4, 12])
    FB = np.concatenate([np.sort(fold_vectors(n_a, int(n), k, 0)[1]) for n in sizes])
    starts = np.r_[0, np.cumsum(sizes)]
    XB = rng.normal(size=(starts[-1], d))
    ia = np.array([0, 1, 2, 2, 0])
    jb = np.array([0, 1, 2, 0, 1])
    got = centroid_oof_scores(XA, FA, k, XB, FB, starts, ia, jb)
    ref = centroid_oof_scores_reference(XA, FA, k, XB, FB, starts, ia, jb)
    assert_array_equal(np.isinf(got), np.isinf(ref))
    assert_allclose(
        got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-12, atol=1e-12
    )
    # In-sample (k = 1): the means of every row.
    got1 = centroid_oof_scores(XA, 0 * FA, 1, XB, 0 * FB, starts, ia, jb)
    ref1 = centroid_oof_scores_reference(XA, 0 * FA, 1, XB, 0 * FB, starts, ia, jb)
    assert_allclose(got1[np.isfinite(ref1)], ref1[np.isfinite(ref1)], rtol=1e-12)


def test_centroid_held_out_scores_equal_their_reference():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 5))
    means = rng.normal(size=(4, 5))
    codes = rng.integers(0, 4, 20)
    codes[:4] = np.arange(4)
    rows = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.cumsum(np.bincount(codes, minlength=4))]
    a, b = np.array([0, 1, 0]), np.array([3, 2, 1])
    direction = np.array([1, -1, 1])
    T, sq = X @ means.T, np.einsum("cd,cd->c", means, means)
    got, n_neg, n_real = centroid_held_out_scores(T, sq, rows, starts, a, b, direction)
    ref, n_neg2, n_real2 = centroid_held_out_scores_reference(
        X, means, rows, starts, a, b, direction
    )
    assert_array_equal(n_neg, n_neg2)
    assert_array_equal(n_real, n_real2)
    assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-12)
    assert_array_equal(np.isinf(got), np.isinf(ref))


# -------------------------------------------------------------- reserved test
def _data(X, y):
    return validate_identity_data(BaseEstimator(), X, y)


def test_reserved_test_without_duplicates_takes_ceil_rows():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(60, 4)), np.repeat([0, 1, 2], 20)
    mask, groups = reserved_test_mask(_data(X, y), 0.3, 0)
    assert (groups == -1).all()
    assert [int(mask[y == i].sum()) for i in range(3)] == [6, 6, 6]


def test_reserved_test_keeps_duplicate_groups_on_one_side():
    rng = np.random.default_rng(6)
    base = rng.normal(size=(30, 4))
    # Every row twice (the copy recast and rescaled), and one copy across
    # identities (label noise).
    X = np.vstack([base, 3 * base.astype(np.float32)])
    y = np.r_[np.repeat([0, 1, 2], 10), np.repeat([0, 1, 2], 10)]
    X = np.vstack([X, base[:1] * 2])
    y = np.r_[y, 2]
    for seed in range(5):
        mask, groups = reserved_test_mask(_data(X, y), 0.3, seed)
        for g in np.unique(groups[groups >= 0]):
            assert len(np.unique(mask[groups == g])) == 1
        for i in range(3):
            assert 0 < mask[y == i].sum() < (y == i).sum()
