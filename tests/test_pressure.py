# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Attackers and the RenyiPressure auditor."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skprivacy.exceptions import ExcludedIdentitiesWarning
from skprivacy.pressure import (
    ArtifactRelease,
    GraphAttacker,
    MLPAttacker,
    PrototypeAttacker,
    RenyiPressure,
    RetrievalAttacker,
    attacker_ladder,
    pressure_ladder,
    vrpi,
)


def two_releases(
    n_identities=10, n_rows=40, d=8, s1=0.5, s2=0.5, duplicate=False, seed=0
):
    """Two Gaussian releases, conditionally independent given the identity.

    Release t has identity means of RMS norm ``s_t * sqrt(d)`` and unit
    isotropic noise, so a larger ``s_t`` carries strictly more identity
    information. ``duplicate=True`` makes release 2 an exact copy of release 1.
    """
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(n_identities), n_rows)
    m1 = rng.standard_normal((n_identities, d)) * s1
    m2 = rng.standard_normal((n_identities, d)) * s2
    z1 = m1[ids] + rng.standard_normal((ids.size, d))
    z2 = z1.copy() if duplicate else m2[ids] + rng.standard_normal((ids.size, d))
    return np.hstack([z1, z2]), ids


RELEASES = [slice(0, 8), slice(8, 16)]


# ---------------------------------------------------------------------------
# Attackers
# ---------------------------------------------------------------------------
def _naive_retrieval(G, g_ids, Q, classes, T, aggregation):
    G = G / np.linalg.norm(G, axis=1, keepdims=True)
    Q = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    P = np.zeros((len(Q), len(classes)))
    for i, q in enumerate(Q):
        logits = []
        for u in classes:
            s = np.array([float(q @ g) for g in G[g_ids == u]])
            if aggregation == "max":
                logits.append(s.max() / T)
            elif aggregation == "mean":
                logits.append(s.mean() / T)
            else:
                m = s.max() / T
                logits.append(m + math.log(np.mean(np.exp(s / T - m))))
        logits = np.array(logits)
        e = np.exp(logits - logits.max())
        P[i] = e / e.sum()
    return P


@pytest.mark.parametrize("unequal", [False, True])
@pytest.mark.parametrize("aggregation", ["logsumexp", "max", "mean"])
@pytest.mark.parametrize("T", [0.5, 0.01, 1e-4])
def test_retrieval_posterior_matches_loop(aggregation, T, unequal):
    # T = 1e-4 makes the log-sum-exp underflow for far identities in the fast
    # path, which must fall back to the exact per-identity shift. ``unequal``
    # gives identities different gallery sizes and shuffles the gallery rows.
    X, ids = two_releases(n_identities=5, n_rows=8, s1=1.0)
    labels = np.array(["a", "b", "c", "d", "e"])[ids]
    G, gy, Q = X[::2], labels[::2], X[1::2]
    if unequal:
        keep = np.ones(len(G), dtype=bool)
        keep[[0, 1, 5, 9]] = False  # a: 2 rows, b: 3, c: 3, d: 4, e: 4
        order = np.random.default_rng(0).permutation(keep.sum())
        G, gy = G[keep][order], gy[keep][order]
    clf = RetrievalAttacker(temperature=T, aggregation=aggregation).fit(G, gy)
    expected = _naive_retrieval(G, gy, Q, clf.classes_, T, aggregation)
    # float32 similarities: ~1e-7 relative error in s, amplified by 1/T
    assert_allclose(clf.predict_proba(Q), expected, atol=2e-6 / min(T, 1) * 1e-2 + 1e-6)
    assert_array_equal(clf.predict(Q), clf.classes_[expected.argmax(axis=1)])


def test_prototype_posterior_matches_loop():
    X, ids = two_releases(n_identities=6, n_rows=10, s1=1.0)
    G, gy, Q = X[::2], ids[::2], X[1::2]
    clf = PrototypeAttacker(temperature=0.2, n_neighbors=3, graph_weight=1.5).fit(G, gy)
    Gn = G / np.linalg.norm(G, axis=1, keepdims=True)
    for q, p in zip(Q, clf.predict_proba(Q)):
        q = q / np.linalg.norm(q)
        logits = []
        sims = Gn @ q
        nearest = np.argsort(-sims)[:3]
        for u in range(6):
            proto = Gn[gy == u].mean(axis=0)
            proto /= np.linalg.norm(proto)
            vote = np.sum(gy[nearest] == u) / 3
            logits.append(q @ proto / 0.2 + 1.5 * vote)
        e = np.exp(np.array(logits) - max(logits))
        assert_allclose(p, e / e.sum(), atol=1e-5)


@pytest.mark.parametrize(
    "attacker",
    [
        RetrievalAttacker(random_state=0),
        PrototypeAttacker(random_state=0),
        PrototypeAttacker(n_neighbors=5, random_state=0),
    ],
    ids=["A0", "A2", "A2-graph"],
)
def test_calibrated_temperature_reduces_query_nll(attacker):
    X, ids = two_releases(n_identities=12, n_rows=30, s1=0.6)
    train = np.arange(ids.size) % 3 != 0
    fitted = attacker.fit(X[train], ids[train])
    uncalibrated = attacker.__class__(**{**attacker.get_params(), "temperature": 1.0})
    if "graph_weight" in attacker.get_params() and attacker.n_neighbors:
        uncalibrated.set_params(graph_weight=fitted.graph_weight_)
    uncalibrated.fit(X[train], ids[train])
    q = ~train
    nll_cal = log_loss(ids[q], fitted.predict_proba(X[q]), labels=fitted.classes_)
    nll_t1 = log_loss(ids[q], uncalibrated.predict_proba(X[q]), labels=fitted.classes_)
    assert fitted.temperature_ != 1.0
    assert nll_cal < nll_t1 - 0.1, (nll_cal, nll_t1)


def test_attacker_calibration_ignores_query_rows():
    # fit never sees the query rows: the fitted state is a function of the
    # training rows only (the calibration split is carved out of them).
    X, ids = two_releases(n_identities=6, n_rows=12, s1=0.8)
    a = RetrievalAttacker(random_state=3).fit(X[:48], ids[:48])
    b = RetrievalAttacker(random_state=3).fit(X[:48], ids[:48])
    assert a.temperature_ == b.temperature_
    assert a.calibration_nll_ is not None


def test_attacker_errors_and_reports():
    X, ids = two_releases(n_identities=3, n_rows=4)
    with pytest.raises(ValueError, match="at least 2 classes"):
        RetrievalAttacker().fit(X, np.zeros(len(X)))
    X_bad = X.copy()
    X_bad[0] = np.nan
    with pytest.warns(UserWarning, match="Dropped 1"):
        clf = PrototypeAttacker().fit(X_bad, ids)
    assert clf.drop_report_["non_finite"] == 1
    with pytest.warns(UserWarning, match="cannot be calibrated"):
        RetrievalAttacker().fit(X[:3], [0, 1, 2])


def test_unusable_queries_get_uniform_posterior():
    X, ids = two_releases(n_identities=4, n_rows=6, s1=1.0)
    clf = RetrievalAttacker(random_state=0).fit(X, ids)
    Q = X[:3].copy()
    Q[1] = np.nan
    Q[2] = 0.0
    with pytest.warns(UserWarning, match="2 of 3 query row"):
        P = clf.predict_proba(Q)
    assert_allclose(P[1:], 0.25)
    assert_allclose(P[0], clf.predict_proba(X[:1])[0])


def test_attackers_in_grid_search():
    X, ids = two_releases(n_identities=5, n_rows=12, s1=1.0)
    search = GridSearchCV(
        RetrievalAttacker(random_state=0),
        {"aggregation": ["logsumexp", "max"]},
        cv=3,
        scoring="neg_log_loss",
    ).fit(X, ids)
    assert search.best_params_["aggregation"] in {"logsumexp", "max"}


def _naive_graph_posterior(G, g_ids, Q, classes, k, T, similarity):
    """The graph-only posterior by a loop over queries and identities."""
    G = G / np.linalg.norm(G, axis=1, keepdims=True)
    P = np.zeros((len(Q), len(classes)))
    for i, q in enumerate(Q):
        q = q / np.linalg.norm(q)
        sims = [float(q @ g) for g in G]
        edges = sorted(range(len(G)), key=lambda j: -sims[j])[: min(k, len(G))]
        logits = []
        for u in classes:
            vote = sum(sims[j] if similarity else 1.0 for j in edges if g_ids[j] == u)
            logits.append(vote / k / T)
        e = np.exp(np.array(logits) - max(logits))
        P[i] = e / e.sum()
    return P


@pytest.mark.parametrize("weights", ["uniform", "similarity"])
@pytest.mark.parametrize("k", [1, 4, 100])
def test_graph_posterior_matches_loop(weights, k):
    X, ids = two_releases(n_identities=5, n_rows=8, s1=0.7)
    G, gy, Q = X[::2], ids[::2], X[1::2]
    clf = GraphAttacker(k, weights=weights, temperature=0.05, batch_size=7).fit(G, gy)
    # k = 100 > 20 gallery rows: every node is an edge (k capped at 20).
    expected = _naive_graph_posterior(
        G, gy, Q, range(5), min(k, 20), 0.05, weights == "similarity"
    )
    assert_allclose(clf.predict_proba(Q), expected, atol=1e-10)
    assert clf.n_gallery_ == 20


def test_graph_attacker_calibrates_and_sees_only_edges():
    X, ids = two_releases(n_identities=12, n_rows=30, s1=0.6)
    train = np.arange(ids.size) % 3 != 0
    clf = GraphAttacker(5, random_state=0).fit(X[train], ids[train])
    fixed = GraphAttacker(5, temperature=1.0).fit(X[train], ids[train])
    q = ~train
    nll = log_loss(ids[q], clf.predict_proba(X[q]), labels=clf.classes_)
    nll_t1 = log_loss(ids[q], fixed.predict_proba(X[q]), labels=clf.classes_)
    assert clf.calibration_nll_ is not None
    assert nll < nll_t1 - 0.1
    # Only the edges matter: moving a query without changing its 5 nearest
    # gallery rows leaves the uniform-weight posterior unchanged.
    G = X[train] / np.linalg.norm(X[train], axis=1, keepdims=True)
    Q = X[q][:1] / np.linalg.norm(X[q][:1])
    nearest = np.argsort(-(G @ Q[0]))[:5]
    moved = Q + 1e-3 * G[nearest].mean(axis=0)
    assert_array_equal(np.argsort(-(G @ moved[0]))[:5], nearest)
    assert_allclose(clf.predict_proba(moved), clf.predict_proba(Q), atol=1e-12)
    # A query with no edge to an identity: equal mass on all such identities.
    P = clf.predict_proba(Q)[0]
    missing = np.setdiff1d(np.arange(12), ids[train][nearest])
    assert_allclose(P[missing], P[missing][0])


# ---------------------------------------------------------------------------
# MLP rung (A3)
# ---------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("n_identities", [2, 6])
def test_mlp_posterior_matches_network_output(n_identities):
    # Independent computation: scikit-learn's own forward pass on the rows
    # the attacker feeds it (unit norm, scaled by sqrt(d)).
    X, ids = two_releases(n_identities=n_identities, n_rows=12, s1=1.0)
    clf = MLPAttacker(hidden_layer_sizes=(16,), random_state=0).fit(X, ids)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True) * np.sqrt(X.shape[1])
    assert_allclose(clf.predict_proba(X), clf.mlp_.predict_proba(Z), atol=1e-10)
    assert_array_equal(clf.classes_, np.arange(n_identities))


@pytest.mark.slow
def test_mlp_early_stopping_keeps_best_validation_epoch():
    X, ids = two_releases(n_identities=8, n_rows=10, s1=0.8)
    clf = MLPAttacker(
        hidden_layer_sizes=(32,),
        n_iter_no_change=5,
        max_iter=500,
        refit=False,
        random_state=1,
    ).fit(X, ids)
    curve = np.asarray(clf.validation_nll_)
    assert curve.size == clf.n_iter_ < 500
    assert clf.best_iteration_ == clf.n_iter_ - 5
    assert curve[clf.best_iteration_ - 1] == pytest.approx(curve.min())
    # The kept weights are those of the best epoch: recompute its NLL on the
    # same identity-stratified validation rows (one or two per identity).
    from skprivacy.pressure._calibration import calibration_mask

    rng = np.random.RandomState(1)
    mask = calibration_mask(ids, 0.2, rng)
    assert np.bincount(ids[mask]).min() >= 1
    nll = log_loss(ids[mask], clf.predict_proba(X[mask]), labels=clf.classes_)
    assert nll == pytest.approx(curve.min(), rel=1e-9)
    # refit: the same stopping epoch, then that many epochs on every row,
    # which is what a plain MLPClassifier given the same seed does.
    refit = clf.set_params(refit=True).fit(X, ids)
    assert refit.best_iteration_ == clf.best_iteration_
    Z = X / np.linalg.norm(X, axis=1, keepdims=True) * np.sqrt(X.shape[1])
    mlp = MLPClassifier(**refit.mlp_.get_params())
    for _ in range(refit.best_iteration_):
        mlp.partial_fit(Z, ids, classes=np.arange(8))
    assert_allclose(refit.predict_proba(X), mlp.predict_proba(Z), atol=1e-10)


def test_mlp_trains_with_few_rows_per_identity():
    # Two rows for most identities, one for some: every identity with two
    # rows gives exactly one validation row and keeps one training row, and
    # single-row identities always train.
    X, ids = two_releases(n_identities=10, n_rows=2, s1=1.5)
    X, ids = np.vstack([X, X[:3] + 0.1]), np.r_[ids, 10, 11, 12]
    clf = MLPAttacker(random_state=0).fit(X, ids)
    assert clf.predict_proba(X).shape == (X.shape[0], 13)
    assert len(clf.validation_nll_) == clf.n_iter_
    # No identity with two rows: no validation, fixed number of epochs.
    clf = MLPAttacker(max_iter=7, random_state=0).fit(X[:3], [0, 1, 2])
    assert clf.n_iter_ == clf.best_iteration_ == 7
    assert clf.validation_nll_ == []


def test_mlp_parameter_errors():
    X, ids = two_releases(n_identities=3, n_rows=4)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        MLPAttacker(hidden_layer_sizes=(4, 0)).fit(X, ids)
    with pytest.raises(ValueError, match="validation_size"):
        MLPAttacker(validation_size=1.5).fit(X, ids)


@pytest.mark.slow
def test_ladder_mlp_rung_is_early_stopped_and_verbose(capsys):
    X, ids = two_releases(n_identities=6, n_rows=12, s1=0.8)
    ladder = attacker_ladder(random_state=0)
    assert isinstance(ladder["A3 MLP probe"], MLPAttacker)
    table = pressure_ladder(
        X,
        ids,
        {"A3": ladder["A3 MLP probe"]},
        releases=RELEASES,
        weight_grid=(1,),
        alphas=[2],
        random_state=0,
        verbose=1,
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[pressure_ladder] rung 1/1 'A3'"
    assert out[1].startswith("[RenyiPressure] repeat 1/1: stage 1/2 (Z1) done")
    assert out[2].startswith("[RenyiPressure] repeat 1/1: stage 2/2 (+Z2")
    vrpi_2 = table.query("kind == 'cumulative' and t == 2")["vrpi"].iloc[0]
    assert out[2].endswith(" s)") and "state Z1 + Z2) done (" in out[2]
    assert out[3].startswith("[pressure_ladder] rung 1/1 'A3' done in ")
    assert f", vRPI_2 {vrpi_2:.3f} (" in out[3]
    pressure_ladder(X, ids, {"A3": ladder["A3 MLP probe"]}, random_state=0)
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------------------
# RenyiPressure
# ---------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_stage_table_shows_more_informative_release_for_every_attacker():
    X, ids = two_releases(n_identities=8, n_rows=30, s1=0.25, s2=0.6)
    ladder = {
        "A0": RetrievalAttacker(),
        "A1": LogisticRegression(C=10.0, max_iter=500),
        "A2": PrototypeAttacker(n_neighbors=5),
        "A3": MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-3, max_iter=400),
    }
    table = pressure_ladder(
        X, ids, ladder, releases=RELEASES, weight_grid=(0, 1), random_state=0
    )
    for name in ladder:
        t = table[table["attacker"] == name]
        single = t[t["kind"] == "single"].set_index(["t", "alpha"])
        for alpha in (1.5, 2.0, 5.0, 10.0, math.inf):
            assert single.loc[(2, alpha), "vrpi"] > single.loc[(1, alpha), "vrpi"], (
                name,
                alpha,
            )
        assert (
            single.loc[(2, 2.0), "top1_accuracy"]
            > single.loc[(1, 2.0), "top1_accuracy"]
        )
        cumulative = t[t["kind"] == "cumulative"].set_index(["t", "alpha"])
        assert cumulative.loc[(2, 2.0), "vrpi"] > cumulative.loc[(1, 2.0), "vrpi"]


@pytest.mark.slow
def test_overlap_near_zero_for_independent_and_positive_for_duplicated():
    kw = {"releases": RELEASES, "n_repeats": 3, "test_size": 0.4, "random_state": 0}
    X, ids = two_releases(n_identities=10, n_rows=60, s1=0.2, s2=0.2)
    indep = RenyiPressure(PrototypeAttacker(), **kw).fit(X, ids).overlap_
    X, ids = two_releases(n_identities=10, n_rows=60, s1=0.2, duplicate=True)
    dup = RenyiPressure(PrototypeAttacker(), **kw).fit(X, ids).overlap_
    for alpha in (1.5, 2.0):
        assert abs(indep.loc[alpha, "overlap"]) < 0.15 * indep.loc[alpha, "sum_single"]
        # A duplicate adds nothing: the joint equals one release, so the
        # overlap is about half of the summed single-release pressures.
        assert dup.loc[alpha, "overlap"] > 0.4 * dup.loc[alpha, "sum_single"]
        assert dup.loc[alpha, "overlap"] > 3 * abs(indep.loc[alpha, "overlap"])


def test_weighting_with_one_calibration_row_per_identity_never_below_a_single():
    # The failing case of issue 16: with one calibration row per identity
    # the calibration NLL is noisy, and it chose Z1 + 0.25*Z2 (Z2 is pure
    # noise) although that state scores below Z1 alone on the query rows.
    X, ids = two_releases(n_identities=30, n_rows=8, s1=0.5, s2=0.0, seed=1)
    kw = {
        "releases": RELEASES,
        "alphas": [2],
        "calibration_size": 0.1,
        "random_state": 1,
    }
    old = RenyiPressure(RetrievalAttacker(), monotone=False, **kw).fit(X, ids)
    split = old.splits_[0]
    assert_array_equal(np.bincount(ids[split["calibration"]]), np.ones(30))
    rep = old.repeat_results_.set_index(["kind", "t"])
    assert rep.loc[("cumulative", 2), "state"] == "Z1 + 0.25*Z2"
    assert rep.loc[("cumulative", 2), "selected_by"] == "calibration"
    below = rep.loc[("single", 1), "vrpi"] - rep.loc[("cumulative", 2), "vrpi"]
    assert below > 1e-3
    new = RenyiPressure(RetrievalAttacker(), **kw).fit(X, ids)
    rep = new.repeat_results_.set_index(["kind", "t"])
    assert rep.loc[("cumulative", 2), "vrpi"] == rep.loc[("single", 1), "vrpi"]
    assert rep.loc[("cumulative", 2), "state"] == "Z1"
    assert rep.loc[("cumulative", 2), "selected_by"] == "held-out guard"
    assert new.release_weights_.iloc[0].tolist() == [1.0, 0.0]
    # The same splits and fitted states: only the stage choice differs.
    assert_array_equal(new.splits_[0]["query"], split["query"])
    assert new.score() == pytest.approx(old.repeat_results_["vrpi"].iloc[2])
    # score(X, y) uses the state the stage reports (Z1 alone): recompute.
    F = X / np.linalg.norm(X[:, :8], axis=1, keepdims=True)
    att = new.attacker_
    q = split["query"]
    logp = att.predict_log_proba(F[q, :8]) / new.temperature_
    P = np.exp(logp - logp.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    assert vrpi(P, 2) == pytest.approx(new.score(), rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_monotone_stages_dominate_singles_and_earlier_stages(seed):
    X, ids = two_releases(n_identities=12, n_rows=6, s1=0.4, s2=0.1, seed=seed)
    X = np.hstack([X, X[:, :8] + np.random.default_rng(seed).normal(size=(72, 8))])
    est = RenyiPressure(
        PrototypeAttacker(),
        releases=[slice(0, 8), slice(8, 16), slice(16, 24)],
        alphas=[2],
        random_state=seed,
    ).fit(X, ids)
    rep = est.repeat_results_
    cum = rep[rep.kind == "cumulative"].set_index("t")["vrpi"]
    single = rep[rep.kind == "single"].set_index("t")["vrpi"]
    for t in (1, 2, 3):
        assert cum[t] >= single[:t].max()
        if t > 1:
            assert cum[t] >= cum[t - 1]
    # Every candidate state is named; the first stage is release 1.
    assert rep[rep.kind == "cumulative"]["state"].iloc[0] == "Z1"
    assert set(rep["selected_by"]) <= {
        "first release",
        "calibration",
        "held-out guard",
        "single release",
    }


_SPY_LOG = {}


class _SpyAttacker(ClassifierMixin, BaseEstimator):
    """Records every matrix it is fitted on, in a module-level log."""

    def __init__(self, key="default"):
        self.key = key

    def fit(self, X, y):
        _SPY_LOG.setdefault(self.key, []).append(np.asarray(X).copy())
        self.inner_ = PrototypeAttacker(random_state=0).fit(X, y)
        self.classes_ = self.inner_.classes_
        return self

    def predict_proba(self, X):
        return self.inner_.predict_proba(X)


def test_query_rows_never_used_for_fitting():
    X, ids = two_releases(n_identities=6, n_rows=20, s1=0.5, s2=0.5)
    # monotone=False: the held-out guard is the one step that looks at the
    # query rows (to choose among already-fitted states; tested below).
    kw = {"releases": RELEASES, "random_state": 1, "monotone": False}
    audit = RenyiPressure(_SpyAttacker("a"), **kw).fit(X, ids)
    log = _SPY_LOG["a"]
    split = audit.splits_[0]
    assert set(split["query"]).isdisjoint(split["train"])
    assert set(split["query"]).isdisjoint(split["calibration"])
    assert len(split["query"]) + len(split["train"]) + len(split["calibration"]) == len(
        X
    )
    # Every fitted matrix has exactly the train rows' count.
    assert log and all(len(F) == len(split["train"]) for F in log)
    # By construction: replace the query rows by noise. Everything fitted
    # (release weights, temperatures, calibration NLL) is unchanged.
    X2 = X.copy()
    X2[split["query"]] = np.random.default_rng(9).standard_normal(
        (len(split["query"]), X.shape[1])
    )
    audit2 = RenyiPressure(_SpyAttacker("b"), **kw).fit(X2, ids)
    cols = ["kind", "t", "alpha", "weight", "temperature", "calibration_nll"]
    pd.testing.assert_frame_equal(
        audit.repeat_results_[cols], audit2.repeat_results_[cols]
    )
    assert not np.allclose(audit.results_["vrpi"], audit2.results_["vrpi"])


# ---------------------------------------------------------------------------
# Artifact releases (kNN graph, prototype bank) as cascade stages
# ---------------------------------------------------------------------------
def _softmax(logits):
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_graph_release_stage_is_product_of_posteriors():
    # Independent recomputation: fit each attacker by hand on the audit's
    # train rows, add the log-posteriors with the chosen weight, and score
    # the query rows.
    X, ids = two_releases(n_identities=8, n_rows=20, s1=0.6, s2=0.6)
    graph = ArtifactRelease(
        [8, 9, 10, 11, 12, 13, 14, 15], GraphAttacker(5, temperature=0.2)
    )
    audit = RenyiPressure(
        RetrievalAttacker(temperature=0.1),
        releases={"emb": RELEASES[0], "graph": graph},
        alphas=[2],
        weight_grid=(2,),
        monotone=False,
        random_state=0,
    ).fit(X, ids)
    rep = audit.repeat_results_.set_index(["kind", "t"])
    assert rep.loc[("cumulative", 2), "state"] == "emb + 2*graph"
    split = audit.splits_[0]
    tr, q = split["train"], split["query"]
    A = RetrievalAttacker(temperature=0.1).fit(X[tr, :8], ids[tr])
    G = GraphAttacker(5, temperature=0.2).fit(X[tr, 8:], ids[tr])
    la = np.log(A.predict_proba(X[q, :8]))
    lg = np.log(G.predict_proba(X[q, 8:]))
    both = la + 2 * lg
    both -= np.log(np.exp(both).sum(axis=1, keepdims=True))
    # The post-hoc temperatures are those fitted on the calibration rows.
    t_both = rep.loc[("cumulative", 2), "temperature"]
    t_graph = rep.loc[("single", 2), "temperature"]
    assert vrpi(_softmax(both / t_both), 2) == pytest.approx(
        rep.loc[("cumulative", 2), "vrpi"], rel=1e-9
    )
    assert vrpi(_softmax(lg / t_graph), 2) == pytest.approx(
        rep.loc[("single", 2), "vrpi"], rel=1e-9
    )
    assert list(audit.artifact_attackers_) == ["graph"]
    assert audit.release_weights_.iloc[0].tolist() == [1.0, 2.0]
    # score(X, y) on the query rows re-applies the same state.
    assert audit.score(X[q], ids[q]) == pytest.approx(audit.score(), rel=1e-9)


def test_prototype_bank_stage_raises_pressure_and_fits_once():
    X, ids = two_releases(n_identities=10, n_rows=15, s1=0.25, s2=0.8)
    bank = ArtifactRelease(RELEASES[1], PrototypeAttacker(n_neighbors=5))
    _SPY_LOG.pop("bank", None)
    audit = RenyiPressure(
        _SpyAttacker("bank"),
        releases={"R1": RELEASES[0], "R4 bank+graph": bank},
        alphas=[2],
        random_state=0,
    ).fit(X, ids)
    res = audit.results_.set_index(["kind", "t"])
    assert res.loc[("cumulative", 2), "vrpi"] > res.loc[("cumulative", 1), "vrpi"] + 0.1
    assert res.loc[("cumulative", 2), "releases"] == "R1+R4 bank+graph"
    # The embedding state R1 is fitted once; the artifact's own attacker
    # once (not the spy); candidates differing only in the artifact's
    # weight reuse both.
    assert len(_SPY_LOG["bank"]) == 1
    assert isinstance(audit.artifact_attackers_.get("R4 bank+graph"), PrototypeAttacker)


def test_artifact_only_state_and_errors():
    X, ids = two_releases(n_identities=6, n_rows=12, s1=0.8)
    audit = RenyiPressure(
        releases=[ArtifactRelease(slice(0, 16), GraphAttacker(3))], random_state=0
    ).fit(X, ids)
    assert audit.attacker_ is None
    assert 0 < audit.score() <= np.log(6)
    q = audit.splits_[0]["query"]
    assert audit.score(X[q], ids[q]) == pytest.approx(audit.score(), rel=1e-9)
    with pytest.raises(TypeError, match="artifact release 'Z1'"):
        RenyiPressure(releases=[ArtifactRelease(slice(0, 4), object())]).fit(X, ids)
    with pytest.raises(ValueError, match="out of range"):
        RenyiPressure(releases=[ArtifactRelease([99], GraphAttacker())]).fit(X, ids)
    assert "GraphAttacker" in repr(ArtifactRelease([1], GraphAttacker()))


def test_results_layout_repeats_and_score():
    X, ids = two_releases(n_identities=6, n_rows=15, s1=0.6, s2=0.6)
    audit = RenyiPressure(
        PrototypeAttacker(),
        alphas=(2, 5),
        releases={"R1": RELEASES[0], "R2": RELEASES[1]},
        n_repeats=3,
        random_state=0,
    ).fit(X, ids)
    res = audit.results_
    assert list(
        res[["kind", "t", "releases"]].drop_duplicates().itertuples(index=False)
    ) == [
        ("cumulative", 1, "R1"),
        ("cumulative", 2, "R1+R2"),
        ("single", 1, "R1"),
        ("single", 2, "R2"),
    ]
    rep = audit.repeat_results_
    mean = rep.groupby(["kind", "t", "alpha"])["vrpi"].mean()
    std = rep.groupby(["kind", "t", "alpha"])["vrpi"].std(ddof=1)
    got = res.set_index(["kind", "t", "alpha"])
    assert_allclose(got["vrpi"].loc[mean.index], mean)
    assert_allclose(got["vrpi_std"].loc[std.index], std)
    assert (res["n_repeats"] == 3).all()
    final = rep[(rep.kind == "cumulative") & (rep.t == 2) & (rep.alpha == 2)]
    assert audit.score() == pytest.approx(final["vrpi"].mean())
    # vRPI from the table obeys its definition log N - H
    assert_allclose(res["vrpi"], np.log(6) - res["arimoto_entropy"], atol=1e-12)
    assert (res["p_guess"] <= res["guessing_bound"] + 1e-12).all()
    assert list(audit.release_weights_.columns) == ["R1", "R2"]
    # score on held-out data of the same identities
    Xn, idsn = two_releases(n_identities=6, n_rows=15, s1=0.6, s2=0.6, seed=0)
    assert 0 <= audit.score(Xn, idsn) <= np.log(6)


def test_score_is_vrpi_of_independent_recomputation():
    X, ids = two_releases(n_identities=5, n_rows=12, s1=0.8)
    audit = RenyiPressure(PrototypeAttacker(), random_state=0).fit(X, ids)
    q = audit.splits_[0]["query"]
    F = X / np.linalg.norm(X, axis=1, keepdims=True)
    logp = audit.attacker_.predict_log_proba(F[q]) / audit.temperature_
    P = np.exp(logp - logp.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    assert audit.score() == pytest.approx(vrpi(P, 2), abs=1e-10)


def test_releases_by_name_index_and_errors():
    X, ids = two_releases(n_identities=5, n_rows=9)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(16)])
    by_name = RenyiPressure(
        PrototypeAttacker(),
        releases=[[f"f{i}" for i in range(8)], [f"f{i}" for i in range(8, 16)]],
        random_state=0,
    ).fit(df, ids)
    by_index = RenyiPressure(
        PrototypeAttacker(), releases=[list(range(8)), np.arange(8, 16)], random_state=0
    ).fit(X, ids)
    pd.testing.assert_frame_equal(by_name.results_, by_index.results_)
    with pytest.raises(ValueError, match="out of range"):
        RenyiPressure(releases=[[0, 99]]).fit(X, ids)
    with pytest.raises(ValueError, match="no column names"):
        RenyiPressure(releases=[["f0"]]).fit(X, ids)
    with pytest.raises(ValueError, match="not in X"):
        RenyiPressure(releases=[["nope"]]).fit(df, ids)
    with pytest.raises(ValueError, match="selects no columns"):
        RenyiPressure(releases=[slice(3, 3)]).fit(X, ids)
    with pytest.raises(ValueError, match="alpha must be > 1"):
        RenyiPressure(alphas=(1.0, 2)).fit(X, ids)
    with pytest.raises(ValueError, match="calibration_size \\+ test_size"):
        RenyiPressure(calibration_size=0.5, test_size=0.5).fit(X, ids)


def test_small_identities_are_excluded_and_reported():
    X, ids = two_releases(n_identities=5, n_rows=6)
    keep = ~((ids == 4) & (np.arange(ids.size) % 6 >= 2))  # identity 4: 2 rows
    with pytest.warns(ExcludedIdentitiesWarning, match="fewer than 3"):
        audit = RenyiPressure(PrototypeAttacker(), random_state=0).fit(
            X[keep], ids[keep]
        )
    assert audit.drop_report_["excluded_identities"] == [4]
    assert audit.drop_report_["small_identity"] == 2
    assert audit.results_["n_outcomes"].iloc[0] == 4


def test_open_world_has_unknown_outcome():
    X, ids = two_releases(n_identities=12, n_rows=20, s1=1.0, s2=1.0)
    audit = RenyiPressure(
        PrototypeAttacker(), open_world=0.25, random_state=0, alphas=(2, np.inf)
    ).fit(X, ids)
    split = audit.splits_[0]
    unknown_ids = set(ids[split["query_unknown"]])
    assert len(unknown_ids) == 3
    assert unknown_ids.isdisjoint(ids[split["train"]])
    assert (audit.results_["n_outcomes"] == 10).all()  # 9 enrolled + unknown
    assert 0 < audit.rejection_threshold_ < 1
    res = audit.results_.set_index("alpha")
    assert 0 < res.loc[2.0, "vrpi"] <= np.log(10)
    assert res.loc[np.inf, "vrpi"] == pytest.approx(
        np.log(10) + np.log(res.loc[np.inf, "p_guess"]), abs=1e-12
    )


@pytest.mark.slow
def test_reproducible_parallel_and_ladder_shares_splits():
    X, ids = two_releases(n_identities=6, n_rows=12)
    kw = {
        "releases": RELEASES,
        "n_repeats": 2,
        "weight_grid": (0, 1),
        "random_state": 4,
    }
    a = RenyiPressure(PrototypeAttacker(), **kw).fit(X, ids)
    with parallel_config(backend="threading"):
        b = RenyiPressure(PrototypeAttacker(), n_jobs=2, **kw).fit(X, ids)
    pd.testing.assert_frame_equal(a.results_, b.results_)
    # An artifact release travels to worker processes too (loky).
    kw["releases"] = {
        "a": RELEASES[0],
        "g": ArtifactRelease(RELEASES[1], GraphAttacker(3)),
    }
    a = RenyiPressure(PrototypeAttacker(), **kw).fit(X, ids)
    b = RenyiPressure(PrototypeAttacker(), n_jobs=2, **kw).fit(X, ids)
    pd.testing.assert_frame_equal(a.results_, b.results_)
    table, fitted = pressure_ladder(
        X,
        ids,
        {"A0": RetrievalAttacker(), "A2": PrototypeAttacker()},
        return_estimators=True,
        releases=RELEASES,
        weight_grid=(1,),
    )
    s0, s2 = fitted["A0"].splits_, fitted["A2"].splits_
    for r0, r2 in zip(s0, s2):
        for key in r0:
            assert_array_equal(r0[key], r2[key])
    assert set(table["attacker"]) == {"A0", "A2"}
    assert set(attacker_ladder()) == {
        "A0 retrieval",
        "A1 linear probe",
        "A2 prototype",
        "A3 MLP probe",
    }


def test_pipeline_round_trip():
    X, ids = two_releases(n_identities=5, n_rows=12, s1=0.8)
    pipe = make_pipeline(
        FunctionTransformer(lambda Z: Z * 2.0),
        RenyiPressure(PrototypeAttacker(), random_state=0),
    ).fit(X, ids)
    assert pipe[-1].score() == pytest.approx(
        RenyiPressure(PrototypeAttacker(), random_state=0).fit(X, ids).score()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert 0 <= pipe.score(X, ids) <= np.log(5)
