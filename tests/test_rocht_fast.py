# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shared-product engine of ROC-HT and its certificates against the per-pair one."""

import joblib
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit
from sklearn.base import clone

from skprivacy import (
    CentroidClassifier,
    PooledLDAClassifier,
    ROCHTAuditor,
    ROCHTCertifier,
)
from skprivacy.auditors import certified_epsilon_lb
from skprivacy.auditors._certify_sim import run_soundness
from skprivacy.auditors._roc_fast import plan_chunks
from skprivacy.datasets import make_identity_embeddings

FAST = [CentroidClassifier(), PooledLDAClassifier()]
IDS = ["centroid", "pooled_lda"]


def _uneven_data(n_identities=40, n_samples=14, n_features=12, seed=0):
    # Unequal identity sizes: pairs fall into several fold groups.
    X, ids = make_identity_embeddings(
        n_identities, n_samples, n_features, noise=2.5, random_state=seed
    )
    rng = np.random.default_rng(seed)
    keep = rng.random(len(ids)) > 0.15
    return X[keep], ids[keep]


# ---------------------------------------------------------------- classifiers
def test_centroid_classifier_closed_form():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = np.repeat(["a", "b"], 15)
    clf = CentroidClassifier().fit(X, y)
    m0, m1 = X[:15].mean(0), X[15:].mean(0)
    expected = X @ (m1 - m0) - (m1 @ m1 - m0 @ m0) / 2
    assert_allclose(clf.decision_function(X), expected, rtol=1e-12, atol=1e-12)
    assert_allclose(clf.predict_proba(X)[:, 1], expit(expected), rtol=1e-12)
    d0 = ((X - m0) ** 2).sum(1)
    d1 = ((X - m1) ** 2).sum(1)
    assert_array_equal(clf.predict(X), np.where(d1 < d0, "b", "a"))


def test_centroid_classifier_multiclass_is_nearest_centroid():
    X, y = make_identity_embeddings(4, 10, 6, random_state=1)
    clf = CentroidClassifier().fit(X, y)
    means = np.stack([X[y == c].mean(0) for c in clf.classes_])
    dist = ((X[:, None, :] - means[None]) ** 2).sum(-1)
    assert_array_equal(clf.predict(X), clf.classes_[dist.argmin(1)])
    assert clf.decision_function(X).shape == (len(X), 4)


def test_pooled_lda_is_fisher_discriminant_by_hand():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4)) * [1.0, 3.0, 0.5, 2.0]
    y = np.repeat([0, 1], 30)
    X[y == 1] += 0.7
    lam = 0.2
    clf = PooledLDAClassifier(shrinkage=lam).fit(X, y)
    m0, m1 = X[y == 0].mean(0), X[y == 1].mean(0)
    R = np.r_[X[y == 0] - m0, X[y == 1] - m1]
    C = R.T @ R / (60 - 2)
    Cs = (1 - lam) * C + lam * np.trace(C) / 4 * np.eye(4)
    w = np.linalg.solve(Cs, m1 - m0)
    expected = (X - (m0 + m1) / 2) @ w
    assert_allclose(clf.decision_function(X), expected, rtol=1e-10, atol=1e-10)
    assert_allclose(clf.covariance_, C, rtol=1e-12)
    # A given covariance replaces the estimate.
    fixed = PooledLDAClassifier(shrinkage=0.0, covariance=np.eye(4)).fit(X, y)
    plain = CentroidClassifier().fit(X, y)
    assert_allclose(fixed.decision_function(X), plain.decision_function(X))


def test_pooled_lda_rejects_a_bad_covariance():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(ValueError, match="covariance"):
        PooledLDAClassifier(covariance=np.eye(2)).fit(X, [0] * 5 + [1] * 5)


def test_one_class_is_refused():
    with pytest.raises(ValueError, match="two classes"):
        CentroidClassifier().fit(np.eye(3), [1, 1, 1])


# ------------------------------------------------ fast path == generic path
def _assert_same_audit(fast, slow):
    rf, rs = fast.results_, slow.results_
    assert list(rf.columns) == list(rs.columns)
    for col in rf.columns:
        if col == "auc":
            assert_allclose(rf[col], rs[col], rtol=0, atol=1e-9)
        elif col == "threshold":  # a score value: equal up to rounding
            assert_allclose(rf[col], rs[col], rtol=1e-9, atol=1e-12)
        else:
            assert_array_equal(rf[col].to_numpy(), rs[col].to_numpy(), err_msg=col)


N_PAIRS = [60, pytest.param(500, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n_pairs", N_PAIRS)
@pytest.mark.parametrize("clf", FAST, ids=IDS)
def test_auditor_shared_engine_equals_per_pair(clf, n_pairs):
    X, ids = _uneven_data()
    fast = ROCHTAuditor(clf, n_pairs=n_pairs).fit(X, ids)
    slow = ROCHTAuditor(clf, n_pairs=n_pairs, solver="per_pair").fit(X, ids)
    assert (fast.solver_, slow.solver_) == ("shared", "per_pair")
    assert len(fast.results_) == n_pairs
    assert fast.results_["n_a"].nunique() > 1  # several fold groups
    _assert_same_audit(fast, slow)
    assert fast.score() == slow.score()
    # pair_scores (generic, per pair) reproduces a fast-path row.
    row = fast.results_.iloc[7]
    y_true, y_score = fast.pair_scores(X, ids, (row.id_a, row.id_b))
    from skprivacy.auditors import kov_epsilon, roc_operating_points

    fpr, tpr, _ = roc_operating_points(y_true, y_score)
    assert kov_epsilon(fpr, tpr) == row.epsilon


def _assert_same_certificates(fast, slow):
    rf, rs = fast.results_, slow.results_
    assert list(rf.columns) == list(rs.columns)
    for col in rf.columns:
        if col in ("threshold", "train_auc"):
            assert_allclose(rf[col], rs[col], rtol=1e-9, atol=1e-9)
        else:
            assert_array_equal(rf[col].to_numpy(), rs[col].to_numpy(), err_msg=col)
    assert_array_equal(fast.directions_, slow.directions_)
    assert_allclose(fast.thresholds_, slow.thresholds_, rtol=1e-9, atol=1e-12)
    assert_array_equal(fast.train_counts_, slow.train_counts_)


@pytest.mark.parametrize("n_pairs", N_PAIRS)
@pytest.mark.parametrize("thresholds", ["train", 3])
@pytest.mark.parametrize("clf", FAST, ids=IDS)
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_certifier_shared_engine_equals_per_pair(clf, thresholds, n_pairs):
    X, ids = _uneven_data(seed=1)
    params = {"n_pairs": n_pairs, "thresholds": thresholds}
    fast = ROCHTCertifier(clf, **params).fit(X, ids)
    slow = ROCHTCertifier(clf, solver="per_pair", **params).fit(X, ids)
    assert fast.n_certified_ == n_pairs
    _assert_same_certificates(fast, slow)
    assert fast.score() == slow.score()
    r = fast.results_
    assert_allclose(
        r["epsilon"],
        certified_epsilon_lb(
            r["tp"].to_numpy(),
            r["n_pos"].to_numpy(),
            r["fp"].to_numpy(),
            r["n_neg"].to_numpy(),
            n_comparisons=n_pairs * (1 if thresholds == "train" else 3),
        ),
        rtol=0,
        atol=0,
    )


@pytest.mark.slow
@pytest.mark.parametrize("clf", FAST, ids=IDS)
def test_certifier_shared_engine_held_out(clf):
    X, ids = _uneven_data(n_identities=12, n_samples=30, seed=2)
    train = np.arange(len(ids)) % 3 != 0
    params = {"n_pairs": None, "test_size": None}
    fast = ROCHTCertifier(clf, **params).fit(X[train], ids[train])
    slow = ROCHTCertifier(clf, solver="per_pair", **params).fit(X[train], ids[train])
    _assert_same_certificates(fast, slow)
    # The lazily built per-pair estimators certify like the generic ones.
    assert len(fast.estimators_) == len(slow.estimators_) == 66
    tf = fast.certify(X[~train], ids[~train])
    ts = slow.certify(X[~train], ids[~train])
    for col in ("epsilon", "tp", "fp", "n_pos", "n_neg"):
        assert_array_equal(tf[col].to_numpy(), ts[col].to_numpy())
    est = fast.estimators_[3]
    assert_allclose(
        est.decision_function(X[~train]),
        slow.estimators_[3].decision_function(X[~train]),
        rtol=1e-9,
        atol=1e-12,
    )
    with pytest.raises(ValueError, match="copy a row used to train"):
        fast.score(X[train], ids[train])


def test_one_training_row_per_identity_uses_in_sample_scores():
    X, ids = make_identity_embeddings(5, 3, 6, noise=1.0, random_state=3)
    clf = CentroidClassifier()
    fast = ROCHTCertifier(clf, n_pairs=None, test_size=0.5).fit(X, ids)
    slow = ROCHTCertifier(clf, n_pairs=None, test_size=0.5, solver="per_pair").fit(
        X, ids
    )
    assert (fast.train_counts_ == 1).all()
    _assert_same_certificates(fast, slow)


# ------------------------------------------------------------ parallel work
@pytest.fixture
def dispatch_everything(monkeypatch):
    # Small audits run in process; force the joblib dispatch being tested.
    monkeypatch.setattr("skprivacy.auditors._base._IN_PROCESS_SECONDS", 0.0)
    monkeypatch.setattr("skprivacy.auditors._certify._IN_PROCESS_SECONDS", 0.0)
    monkeypatch.setattr("skprivacy.auditors._roc_fast._MAX_CHUNK_PAIRS", 50)


@pytest.mark.slow
@pytest.mark.parametrize("clf", FAST, ids=IDS)
def test_n_jobs_two_equals_one(clf, dispatch_everything):
    X, ids = _uneven_data(n_identities=25, seed=4)
    for est in (ROCHTAuditor(clf, n_pairs=None), ROCHTCertifier(clf, n_pairs=None)):
        one = clone(est).set_params(n_jobs=1).fit(X, ids).results_
        two = clone(est).set_params(n_jobs=2).fit(X, ids).results_
        pd.testing.assert_frame_equal(one, two, check_exact=True)


@pytest.mark.slow
def test_dask_backend_identical(dispatch_everything):
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    X, ids = _uneven_data(n_identities=20, seed=5)
    auditor = ROCHTAuditor(CentroidClassifier(), n_pairs=None)
    certifier = ROCHTCertifier(PooledLDAClassifier(), n_pairs=None)
    local = [clone(e).fit(X, ids).results_ for e in (auditor, certifier)]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        with joblib.parallel_config(backend="dask"):
            remote = [
                clone(e).set_params(n_jobs=2).fit(X, ids).results_
                for e in (auditor, certifier)
            ]
    for a, b in zip(local, remote):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_chunks_partition_and_bound_memory(monkeypatch):
    monkeypatch.setattr("skprivacy.auditors._roc_fast._BLOCK_ENTRIES", 20_000)
    rng = np.random.default_rng(0)
    n_ids = 60
    a, b = np.triu_indices(n_ids, 1)
    pairs = np.stack([a, b], 1)[rng.permutation(len(a))]
    sizes = rng.integers(8, 12, n_ids)
    keys = np.stack([sizes[pairs[:, 0]], sizes[pairs[:, 1]]], 1)
    chunks = plan_chunks(keys, pairs, keys.max(1))
    assert_array_equal(np.sort(np.concatenate(chunks)), np.arange(len(pairs)))
    for c in chunks:
        # Each group of a chunk (one key) has a bounded cross-product block.
        for key in np.unique(keys[c], axis=0):
            g = c[(keys[c] == key).all(axis=1)]
            n_a, n_b = len(np.unique(pairs[g, 0])), len(np.unique(pairs[g, 1]))
            assert len(g) == 1 or 2 * n_a * n_b * keys[g].max() <= 20_000


# --------------------------------------------------------------- soundness
@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism, epsilon, n_identities, thresholds",
    [
        ("laplace", 2.0, 2, "train"),
        ("randomized_response", 1.0, 2, "train"),
        ("identical", 0.0, 2, "train"),
        ("randomized_response", 2.0, 3, "train"),
        ("laplace", 2.0, 2, 4),
    ],
)
@pytest.mark.slow
@pytest.mark.parametrize("clf", FAST, ids=IDS)
def test_soundness_with_fast_classifiers(
    clf, mechanism, epsilon, n_identities, thresholds
):
    certifier = ROCHTCertifier(clf, test_size=0.5, thresholds=thresholds)
    report = run_soundness(
        mechanism,
        epsilon,
        500,
        certifier=certifier,
        n_identities=n_identities,
        n_samples=80,
    )
    assert report.n_certifications == 500
    assert report.violation_rate <= report.allowed_rate_99
    if mechanism == "identical":
        assert report.certified_fraction <= report.allowed_rate_99
    else:  # the certificate is not vacuous on these mechanisms
        assert report.certified_fraction > 0.2


# ------------------------------------------------- the exhaustive protocol
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_exhaustive_protocol_runs_every_pair_with_the_fast_classifier():
    from skprivacy import audit
    from skprivacy.report import PROTOCOLS

    assert PROTOCOLS["exhaustive"]["rocht_pairs"] is None
    assert PROTOCOLS["exhaustive"]["rocht_classifier"] == "centroid"
    assert PROTOCOLS["paper"]["rocht_classifier"] == "logistic_regression"
    X, ids = make_identity_embeddings(12, 50, 8, noise=2.0, random_state=6)
    report = audit(
        X,
        ids,
        protocol="exhaustive",
        methods=["rocht", "rocht_certificate"],
        suggest_rank=False,
    )
    roc = report.results["rocht"]
    cert = report.results["rocht_certificate"]
    assert roc["n_pairs"] == cert["n_pairs"] == 66
    assert roc["classifier"].startswith("CentroidClassifier")
    assert "CentroidClassifier" in roc["statistic"]
    assert cert["classifier"].startswith("CentroidClassifier")
    direct = ROCHTAuditor(CentroidClassifier(), n_pairs=None).fit(X, ids)
    got = roc["value"]
    assert (got is None and direct.score() == np.inf) or got == direct.score()
    direct_cert = ROCHTCertifier(CentroidClassifier(), n_pairs=None).fit(X, ids)
    assert cert["value"] == pytest.approx(direct_cert.score())
    # The estimators' own default stays the paper's logistic regression.
    assert ROCHTAuditor().classifier is None and ROCHTCertifier().classifier is None
