# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""ROCHTAuditor: KOV over out-of-fold ROCs, against independent computations."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skprivacy import ROCHTAuditor
from skprivacy.auditors import (
    classifier_sensitivity,
    compare_roc_audits,
    estimate_seconds,
    kov_epsilon,
    roc_operating_points,
    split_half_controls,
)
from skprivacy.datasets import load_yale_faces, make_identity_embeddings
from skprivacy.utils import validate_identity_data


# ------------------------------------------------------------- naive reference
def naive_kov(fpr, tpr, delta=0.0):
    """The KOV bound written out point by point (paper 000, Eq. 15)."""
    best = 0.0
    for f, t in zip(fpr, tpr):
        for num, den in ((t - delta, f), (1 - f - delta, 1 - t)):
            if num <= 0:
                continue  # no evidence (includes 0/0)
            value = math.inf if den == 0 else math.log(num / den)
            best = max(best, value)
    return best


def naive_pair(X, ids, id_a, id_b, classifier, cv=5, seed=0, method="predict_proba"):
    """cross_val_predict + roc_curve + KOV, one pair at a time."""
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    Xp = np.vstack([Z[ids == id_a], Z[ids == id_b]])
    yp = np.r_[np.zeros((ids == id_a).sum()), np.ones((ids == id_b).sum())]
    folds = StratifiedKFold(cv, shuffle=True, random_state=seed)
    scores = cross_val_predict(classifier, Xp, yp, cv=folds, method=method)
    if scores.ndim == 2:
        scores = scores[:, 1]
    fpr, tpr, _ = roc_curve(yp, scores)
    return {
        "epsilon": naive_kov(fpr, tpr),
        "auc": roc_auc_score(yp, scores),
        "tv": np.max(tpr - fpr),
        "corner": bool(np.any((fpr == 0) & (tpr == 1))),
    }


def assert_epsilon_equal(a, b):
    # inf must match exactly; finite values up to the last bits of log().
    assert np.isinf(a) == np.isinf(b)
    assert_allclose(a, b, rtol=1e-13)


def assert_matches_naive(auditor, X, ids, classifier, method="predict_proba"):
    for row in auditor.results_.itertuples():
        ref = naive_pair(X, ids, row.id_a, row.id_b, classifier, method=method)
        assert_epsilon_equal(row.epsilon, ref["epsilon"])
        assert_allclose(row.auc, ref["auc"], rtol=1e-12)
        assert_allclose(row.tv, ref["tv"], rtol=1e-12)
        assert row.corner == ref["corner"]


# ------------------------------------------------------------------ KOV by hand
def test_kov_endpoints_are_infinite_exactly_as_the_paper_states():
    # FPR = 0 with TPR > 0.
    assert kov_epsilon([0, 0, 1], [0, 0.1, 1]) == math.inf
    # TPR = 1 with FPR < 1.
    assert kov_epsilon([0, 0.9, 1], [0, 1, 1]) == math.inf
    # Exact corner.
    assert kov_epsilon([0, 0, 1], [0, 1, 1]) == math.inf
    # The trivial endpoints (0, 0) and (1, 1) alone are not evidence.
    assert kov_epsilon([0, 1], [0, 1]) == 0.0


def test_kov_interior_points_by_hand():
    # (0.1, 0.5): log(0.5/0.1) = log 5 vs log(0.9/0.5).
    assert_allclose(kov_epsilon([0, 0.1, 1], [0, 0.5, 1]), math.log(5))
    # (0.3, 0.9): log 3 vs log(0.7/0.1) = log 7.
    eps, idx = kov_epsilon([0, 0.3, 1], [0, 0.9, 1], return_index=True)
    assert_allclose(eps, math.log(7))
    assert idx == 1
    # A worse-than-chance ROC still yields 0 (from the (1, 1) endpoint).
    assert kov_epsilon([0, 0.6, 1], [0, 0.2, 1]) == 0.0


def test_kov_with_delta_by_hand():
    delta = 0.1
    # (0.1, 0.5): log((0.5-0.1)/0.1) = log 4 beats log((1-0.1-0.1)/0.5).
    assert_allclose(kov_epsilon([0, 0.1, 1], [0, 0.5, 1], delta), math.log(4))
    # FPR = 0 with TPR <= delta is no longer an endpoint divergence ...
    assert kov_epsilon([0, 0, 1], [0, 0.05, 1], delta) == 0.0
    # ... but TPR > delta still is.
    assert kov_epsilon([0, 0, 1], [0, 0.2, 1], delta) == math.inf
    # TPR = 1 with 1 - FPR <= delta: no divergence, and ε clipped at 0.
    assert kov_epsilon([0, 0.95, 1], [0, 1, 1], delta) == 0.0
    # δ can only lower the bound.
    assert kov_epsilon([0, 0.2, 1], [0, 0.7, 1], 0.05) < kov_epsilon(
        [0, 0.2, 1], [0, 0.7, 1]
    )


def test_all_ties_classifier_gives_zero():
    y = np.r_[np.zeros(10), np.ones(10)]
    fpr, tpr, _ = roc_operating_points(y, np.full(20, 0.5))
    assert kov_epsilon(fpr, tpr) == 0.0
    assert kov_epsilon(fpr, tpr, 0.2) == 0.0


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=4, max_size=40),
    st.randoms(use_true_random=False),
)
def test_operating_points_equal_roc_curve(levels, rnd):
    y = np.array([rnd.random() < 0.5 for _ in levels])
    y[0], y[1] = True, False
    s = np.asarray(levels) / 6.0
    fpr, tpr, thr = roc_operating_points(y, s)
    f2, t2, th2 = roc_curve(y, s, drop_intermediate=False)
    assert_allclose(fpr, f2)
    assert_allclose(tpr, t2)
    assert_allclose(thr[1:], th2[1:])
    assert_epsilon_equal(kov_epsilon(fpr, tpr), naive_kov(f2, t2))


def test_roc_operating_points_needs_both_classes():
    with pytest.raises(ValueError, match="both classes"):
        roc_operating_points([1, 1], [0.2, 0.3])


# ------------------------------------------------- auditor vs naive computation
def test_matches_naive_on_real_yale_faces():
    bunch = load_yale_faces()
    X, ids = bunch.data, np.asarray(bunch.identity)
    audit = ROCHTAuditor(n_pairs=8).fit(X, ids)
    assert len(audit.results_) == 8
    default = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)
    assert_matches_naive(audit, X, ids, default)


@pytest.mark.slow
def test_matches_naive_on_synthetic_data_with_finite_values():
    X, ids = make_identity_embeddings(6, 20, 16, noise=30.0, random_state=1)
    audit = ROCHTAuditor(n_pairs=8).fit(X, ids)
    # Near chance, some ROCs avoid both endpoint divergences: finite values.
    assert 0 < np.isfinite(audit.results_["epsilon"]).sum() < 8
    default = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)
    assert_matches_naive(audit, X, ids, default)
    assert audit.score() == np.median(audit.results_["epsilon"])
    assert audit.epsilon_max_ == audit.results_["epsilon"].max()
    assert_allclose(audit.auc_mean_, audit.results_["auc"].mean())
    assert audit.guarantee_ == "point estimate"


def test_infinite_endpoints_and_finite_companion_by_naive_loop():
    # Pure noise: every identity from one distribution, the case where most
    # pairs get an infinite epsilon without any exact corner.
    rng = np.random.default_rng(0)
    X, ids = rng.normal(size=(8 * 25, 8)), np.repeat(np.arange(8), 25)
    audit = ROCHTAuditor(n_pairs=12).fit(X, ids)
    r = audit.results_
    assert list(r.columns[-3:]) == [
        "epsilon_interior",
        "infinite_fpr0",
        "infinite_tpr1",
    ]
    for row in r.itertuples():
        y, s = audit.pair_scores(X, ids, (row.id_a, row.id_b))
        fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
        finite, fpr0, tpr1 = 0.0, False, False
        for f, t in zip(fpr, tpr):
            if t > 0 and f == 0:
                fpr0 = True
            elif t > 0:
                finite = max(finite, math.log(t / f))
            if 1 - f > 0 and t == 1:
                tpr1 = True
            elif 1 - f > 0:
                finite = max(finite, math.log((1 - f) / (1 - t)))
        assert (row.infinite_fpr0, row.infinite_tpr1) == (fpr0, tpr1)
        assert_allclose(row.epsilon_interior, finite, rtol=1e-13)
        assert np.isinf(row.epsilon) == (fpr0 or tpr1)
        assert row.epsilon_interior <= math.log(25) + 1e-12
    eps = r["epsilon"].to_numpy()
    assert audit.n_infinite_ == int(np.isinf(eps).sum()) > 0
    assert audit.n_infinite_fpr0_ == int(r["infinite_fpr0"].sum())
    assert audit.n_infinite_tpr1_ == int(r["infinite_tpr1"].sum())
    assert audit.n_corners_ == 0  # no zero-error separation on noise
    assert audit.epsilon_interior_median_ == np.median(r["epsilon_interior"])
    assert np.isfinite(audit.epsilon_interior_median_)


def test_solver_parameter():
    from skprivacy import CentroidClassifier

    X, ids = make_identity_embeddings(4, 12, 8, noise=2.0, random_state=0)
    assert ROCHTAuditor(n_pairs=2).fit(X, ids).solver_ == "per_pair"
    shared = ROCHTAuditor(CentroidClassifier(), n_pairs=2).fit(X, ids)
    assert shared.solver_ == "shared"
    per_pair = ROCHTAuditor(CentroidClassifier(), n_pairs=2, solver="per_pair")
    assert per_pair.fit(X, ids).solver_ == "per_pair"
    with pytest.raises(ValueError, match="solver='shared'.*LogisticRegression"):
        ROCHTAuditor(n_pairs=2, solver="shared").fit(X, ids)
    with pytest.raises(ValueError, match="solver"):
        ROCHTAuditor(n_pairs=2, solver="fast").fit(X, ids)


def test_decision_function_classifier_matches_naive():
    X, ids = make_identity_embeddings(5, 20, 16, noise=3.0, random_state=2)
    audit = ROCHTAuditor(RidgeClassifier(), n_pairs=4).fit(X, ids)
    assert_matches_naive(audit, X, ids, RidgeClassifier(), method="decision_function")


def test_maximising_operating_point_reproduces_epsilon():
    X, ids = make_identity_embeddings(6, 30, 16, noise=4.0, random_state=3)
    r = ROCHTAuditor(n_pairs=6).fit(X, ids).results_
    for row in r.itertuples():
        assert kov_epsilon([0, row.fpr, 1], [0, row.tpr, 1]) == row.epsilon


def test_delta_lowers_epsilon():
    X, ids = make_identity_embeddings(5, 30, 16, noise=4.0, random_state=4)
    e0 = ROCHTAuditor(n_pairs=5).fit(X, ids).results_["epsilon"]
    e1 = ROCHTAuditor(n_pairs=5, delta=0.05).fit(X, ids).results_["epsilon"]
    assert np.all(e1 <= e0)


def test_classifier_without_scores_is_rejected():
    from sklearn.base import BaseEstimator, ClassifierMixin

    class NoScores(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            return self

    X, ids = make_identity_embeddings(3, 10, 8, random_state=0)
    with pytest.raises(ValueError, match="predict_proba or decision_function"):
        ROCHTAuditor(NoScores()).fit(X, ids)


def test_small_identities_use_fewer_folds():
    X, ids = make_identity_embeddings(3, 3, 8, noise=2.0, random_state=0)
    r = ROCHTAuditor().fit(X, ids).results_
    assert (r["n_folds"] == 3).all()


# ------------------------------------------------------------- composition
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_n_jobs_two_identical_to_one():
    X, ids = make_identity_embeddings(8, 12, 16, noise=3.0, random_state=5)
    r1 = ROCHTAuditor(n_pairs=20, n_jobs=1).fit(X, ids).results_
    r2 = ROCHTAuditor(n_pairs=20, n_jobs=2).fit(X, ids).results_
    assert r1.equals(r2)


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_random_forest_is_reproducible_across_n_jobs():
    X, ids = make_identity_embeddings(4, 15, 8, noise=3.0, random_state=6)
    rf = RandomForestClassifier(n_estimators=10)
    r1 = ROCHTAuditor(rf, n_pairs=3, n_jobs=1).fit(X, ids).results_
    r2 = ROCHTAuditor(rf, n_pairs=3, n_jobs=2).fit(X, ids).results_
    assert r1.equals(r2)


def test_pipeline_after_scaler_equals_audit_of_scaled_data():
    X, ids = make_identity_embeddings(5, 20, 16, noise=3.0, random_state=7)
    pipe = make_pipeline(StandardScaler(), ROCHTAuditor(n_pairs=5)).fit(X, ids)
    direct = ROCHTAuditor(n_pairs=5).fit(StandardScaler().fit_transform(X), ids)
    assert pipe.score(X, ids) == direct.score(StandardScaler().fit_transform(X), ids)
    assert pipe[-1].results_.equals(direct.results_)


def test_pipeline_after_isp():
    isp_mod = pytest.importorskip("skprivacy.sanitize")
    X, ids = make_identity_embeddings(6, 20, 32, noise=1.0, random_state=8)
    pipe = make_pipeline(isp_mod.ISP(n_components=3), ROCHTAuditor(n_pairs=6))
    pipe.fit(X, ids)
    Z = isp_mod.ISP(n_components=3).fit(X, ids).transform(X)
    direct = ROCHTAuditor(n_pairs=6).fit(Z, ids)
    assert_allclose(pipe[-1].results_["auc"], direct.results_["auc"])
    # Removing the identity subspace lowers separability.
    raw = ROCHTAuditor(n_pairs=6).fit(X, ids)
    assert pipe[-1].auc_mean_ < raw.auc_mean_


# ------------------------------------------------- classifier sensitivity helper
@pytest.mark.slow
def test_compare_roc_audits_against_naive_difference():
    X, ids = make_identity_embeddings(5, 20, 16, noise=3.0, random_state=9)
    lr = ROCHTAuditor(n_pairs=4).fit(X, ids)
    knn = ROCHTAuditor(KNeighborsClassifier(), n_pairs=4).fit(X, ids)
    cmp = compare_roc_audits(lr, knn)
    default = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)
    diffs = []
    for row in cmp.results.itertuples():
        a = naive_pair(X, ids, row.id_a, row.id_b, default)["auc"]
        b = naive_pair(X, ids, row.id_a, row.id_b, KNeighborsClassifier())["auc"]
        diffs.append(a - b)
    assert_allclose(cmp.results["auc_difference"], diffs, rtol=1e-12)
    assert_allclose(cmp.mean_auc_difference, np.mean(diffs))


def test_compare_roc_audits_refuses_different_folds():
    X, ids = make_identity_embeddings(5, 20, 16, random_state=9)
    a = ROCHTAuditor(n_pairs=4).fit(X, ids)
    b = ROCHTAuditor(n_pairs=4, cv=3).fit(X, ids)
    with pytest.raises(ValueError, match="different cv"):
        compare_roc_audits(a, b)
    c = ROCHTAuditor(n_pairs=4, random_state=1).fit(X, ids)
    with pytest.raises(ValueError, match="not comparable"):
        compare_roc_audits(a, c)


class _Sink:
    """A progress sink of the four-method protocol that records its calls."""

    def __init__(self):
        self.calls = []

    def plan(self, total):
        self.calls.append(("plan", total))

    def start(self, stage, weight=1.0):
        self.calls.append(("start", stage, weight))

    def finish(self):
        self.calls.append(("finish",))

    def message(self, text):
        self.calls.append(("message", text))


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_classifier_sensitivity_equals_two_audits_and_reports_blocks():
    X, ids = make_identity_embeddings(8, 6, 8, noise=3.0, random_state=2)
    forest = RandomForestClassifier(n_estimators=5, random_state=0)
    sink = _Sink()
    cmp = classifier_sensitivity(
        X, ids, forest, n_pairs=23, random_state=4, progress=sink
    )
    # The comparison of the two audits fitted separately, to the bit.
    lr = ROCHTAuditor(n_pairs=23, random_state=4).fit(X, ids)
    rf = ROCHTAuditor(forest, n_pairs=23, random_state=4).fit(X, ids)
    direct = compare_roc_audits(lr, rf)
    pd.testing.assert_frame_equal(
        cmp.results.reset_index(drop=True), direct.results.reset_index(drop=True)
    )
    assert cmp.mean_auc_b == direct.mean_auc_b
    assert cmp.classifier is forest
    # Logistic regression, then the forest in blocks of 10 pairs, each a stage
    # started and finished, weighted by the audits' own cost models.
    starts = [c for c in sink.calls if c[0] == "start"]
    assert [c[1] for c in starts] == [
        "logistic regression",
        "RandomForestClassifier 1-10/23 pairs",
        "RandomForestClassifier 11-20/23 pairs",
        "RandomForestClassifier 21-23/23 pairs",
    ]
    assert [c[0] for c in sink.calls] == ["start", "finish"] * 4
    data = validate_identity_data(rf, X, ids)
    assert sum(c[2] for c in starts) == pytest.approx(
        estimate_seconds(lr, data) + estimate_seconds(rf, data), rel=1e-12
    )
    assert starts[1][2] == pytest.approx(starts[2][2]) and starts[3][2] < starts[1][2]


def test_classifier_sensitivity_refuses_bad_arguments():
    X, ids = make_identity_embeddings(4, 6, 8, noise=3.0, random_state=2)
    forest = RandomForestClassifier(n_estimators=2)
    with pytest.raises(ValueError, match="n_pairs"):
        classifier_sensitivity(X, ids, forest, n_pairs=0)
    with pytest.raises(ValueError, match="classifier"):
        classifier_sensitivity(X, ids, "forest")


# ------------------------------------------------------------ split-half controls
def test_split_half_controls_are_at_chance_without_corners():
    X, ids = make_identity_embeddings(20, 40, 32, noise=0.5, random_state=10)
    ctl = split_half_controls(ROCHTAuditor(), X, ids)
    assert ctl.n_controls == 20
    assert abs(ctl.results["auc"].mean() - 0.5) < 0.1
    assert not ctl.results["corner"].any()
    # Between-identity pairs of the same data are separable.
    assert ROCHTAuditor(n_pairs=10).fit(X, ids).auc_mean_ > 0.95
