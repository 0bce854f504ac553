# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Leave-one-out re-identification: checked against scikit-learn and scipy."""

import itertools
import math

import joblib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skprivacy import ReidentificationAuditor
from skprivacy.auditors import _reid
from skprivacy.datasets import make_identity_embeddings


def _unequal(seed=0, n_ids=9, d=6, spread=0.6):
    """Identities of 2 to 9 rows with a weak identity signal (many misses)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 10, size=n_ids)
    ids = np.repeat(np.arange(n_ids), sizes)
    means = rng.standard_normal((n_ids, d)) * spread
    X = means[ids] + rng.standard_normal((ids.size, d))
    perm = rng.permutation(ids.size)  # rows not grouped by identity
    return X[perm], ids[perm]


def _knn_loo(X, ids, k):
    """Leave-one-out with KNeighborsClassifier fitted on all rows but one.

    A query counts when the probability of its own identity is strictly the
    largest (the auditor's documented rule for tied votes).
    """
    hits = 0
    for i in range(X.shape[0]):
        rest = np.arange(X.shape[0]) != i
        knn = KNeighborsClassifier(n_neighbors=k, metric="cosine", algorithm="brute")
        knn.fit(X[rest], ids[rest])
        proba = knn.predict_proba(X[i : i + 1])[0]
        own = np.flatnonzero(knn.classes_ == ids[i])
        if own.size and proba[own[0]] > np.delete(proba, own[0]).max():
            hits += 1
    return hits / X.shape[0]


def _brute_ranks(X, ids):
    """Rank of the own identity by best row (self excluded), by a plain loop."""
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Z @ Z.T
    ranks = []
    for q in range(Z.shape[0]):
        best = {}
        for j in range(Z.shape[0]):
            if j != q:
                best[ids[j]] = max(best.get(ids[j], -np.inf), S[q, j])
        own = best[ids[q]]
        ranks.append(1 + sum(v >= own for c, v in best.items() if c != ids[q]))
    return np.array(ranks)


@pytest.mark.parametrize("seed", [0, 1])
def test_rate_equals_kneighbors_leave_one_out(seed):
    X, ids = _unequal(seed)
    auditor = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    expected = _knn_loo(X, ids, 1)
    assert 0.05 < expected < 0.95  # a real mix of hits and misses
    assert auditor.rate_ == expected
    assert auditor.score() == expected
    assert auditor.n_queries_ == X.shape[0]


@pytest.mark.parametrize("k", [3, 4])
def test_vote_equals_kneighbors_leave_one_out(k):
    X, ids = _unequal(2)
    auditor = ReidentificationAuditor(n_neighbors=k, n_bootstrap=0).fit(X, ids)
    assert auditor.rate_ == _knn_loo(X, ids, k)


def test_euclidean_gives_the_cosine_results():
    X, ids = _unequal(3)
    cos = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    euc = ReidentificationAuditor(metric="euclidean", n_bootstrap=0).fit(X, ids)
    assert cos.rate_ == euc.rate_
    pd.testing.assert_frame_equal(cos.results_, euc.results_)


def test_top_k_rate_equals_brute_force_ranks():
    X, ids = _unequal(4)
    ranks = _brute_ranks(X, ids)
    for k in (1, 2, 5):
        auditor = ReidentificationAuditor(top_k=k, n_bootstrap=0).fit(X, ids)
        assert auditor.top_k_rate_ == np.mean(ranks <= k)
        assert auditor.n_top_k_ == np.sum(ranks <= k)


def test_interval_and_test_equal_scipy():
    X, ids = _unequal(5)
    for confidence in (0.9, 0.95, 0.99):
        a = ReidentificationAuditor(confidence=confidence, n_bootstrap=0).fit(X, ids)
        ci = binomtest(a.n_reidentified_, a.n_queries_).proportion_ci(
            confidence_level=confidence, method="exact"
        )
        # scipy finds the bounds by root finding (tolerance ~1e-13); the
        # auditor uses the closed-form beta quantiles.
        np.testing.assert_allclose(a.ci_, (ci.low, ci.high), rtol=0, atol=1e-12)
        top = binomtest(a.n_top_k_, a.n_queries_).proportion_ci(
            confidence_level=confidence, method="exact"
        )
        np.testing.assert_allclose(a.top_k_ci_, (top.low, top.high), atol=1e-12)
        test = binomtest(
            a.n_reidentified_, a.n_queries_, a.chance_, alternative="greater"
        )
        assert a.p_value_ == test.pvalue


def test_chance_with_unequal_identity_sizes():
    X, ids = _unequal(6)
    a = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    sizes = np.bincount(ids)
    n = ids.size
    assert a.chance_ == pytest.approx(
        np.sum(sizes * (sizes - 1)) / (n * (n - 1)), rel=1e-12
    )
    # Larger than the 1 / n_identities of a uniform guess when sizes differ.
    assert a.chance_ > 1 / sizes.size - 1 / (n - 1)
    per = a.results_.set_index("identity")["chance"]
    np.testing.assert_allclose(per.to_numpy(), (sizes - 1) / (n - 1))


def _enumerated_chances(a, other_sizes, k_vote, k_rank):
    """Chances by enumerating every ordering of a small gallery."""
    labels = [0] * a + [
        j + 1 for j, size in enumerate(other_sizes) for _ in range(size)
    ]
    vote = rank = 0
    total = 0
    for perm in itertools.permutations(range(len(labels))):
        order = [labels[p] for p in perm]  # best match first
        total += 1
        counts = np.bincount(order[:k_vote], minlength=len(other_sizes) + 1)
        vote += counts[0] > counts[1:].max()
        first = list(dict.fromkeys(order))
        rank += first.index(0) < k_rank
    return vote / total, rank / total


@pytest.mark.parametrize(
    "a, others, k_vote, k_rank", [(2, [1, 2, 3], 3, 2), (1, [2, 2, 1], 2, 3)]
)
def test_vote_and_rank_chances_equal_enumeration(a, others, k_vote, k_rank):
    sizes, mults = np.unique(others, return_counts=True)
    vote, rank = _enumerated_chances(a, others, k_vote, k_rank)
    assert _reid._vote_chance(a, sizes, mults, k_vote) == pytest.approx(vote, abs=1e-12)
    got = _reid._rank_chance(a, sizes.astype(float), mults, k_rank)
    assert got == pytest.approx(rank, abs=1e-9)


@pytest.mark.slow
def test_chance_is_the_rate_of_embeddings_without_identity():
    # Labels independent of the rows: the mean rate over label permutations
    # is the chance level, for the top-1 vote and the top-k rank.
    X, ids = _unequal(7)
    rng = np.random.default_rng(0)
    rates, topk = [], []
    for _ in range(400):
        a = ReidentificationAuditor(n_neighbors=3, top_k=3, n_bootstrap=0)
        a.fit(X, rng.permutation(ids))
        rates.append(a.rate_)
        topk.append(a.top_k_rate_)
    se = np.std(rates) / np.sqrt(len(rates))
    assert abs(np.mean(rates) - a.chance_) < 4 * se
    se_k = np.std(topk) / np.sqrt(len(topk))
    assert abs(np.mean(topk) - a.top_k_chance_) < 4 * se_k


def test_ties_count_against_the_attacker():
    # Quantised rows: the query ties with a row of another identity.
    X = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    ids = np.array([0, 0, 1, 1, 2])
    a = ReidentificationAuditor(exclude_duplicates=False, n_bootstrap=0).fit(X, ids)
    # Rows 0 and 1 (identity 0) tie with row 2 (identity 1): failures, and
    # ties. Rows 2 and 3 (identity 1) lose outright (cosine 0 to each other).
    assert a.n_reidentified_ == 0
    assert a.n_tied_queries_ == 2
    assert a.n_queries_ == 4  # row 4 is the only row of identity 2


def test_duplicates_are_hidden_from_their_query():
    X, ids = _unequal(8)
    # Copies inside their own identity (exact, float32-cast, rescaled, with
    # 1e-9 noise) and one exact copy under another label.
    rng = np.random.default_rng(0)
    copies = [
        X[0],
        X[5].astype(np.float32).astype(np.float64),
        X[9] * 3.0,
        X[12] + 1e-9 * rng.standard_normal(X.shape[1]),
    ]
    X2 = np.vstack([X, *copies, X[1]])
    ids2 = np.concatenate([ids, ids[[0, 5, 9, 12]], [ids[1] + 100]])
    hidden = ReidentificationAuditor(n_bootstrap=0).fit(X2, ids2)
    shown = ReidentificationAuditor(exclude_duplicates=False, n_bootstrap=0)
    shown.fit(X2, ids2)
    # Four rows and their copies inside identities, and row 1, whose copy
    # under another label is that identity's only row (not a query).
    assert hidden.n_duplicate_queries_ == 9
    # Independent check: brute-force leave-one-out with every row within
    # cosine distance 1e-6 of the query masked as well.
    Z = X2 / np.linalg.norm(X2, axis=1, keepdims=True)
    S = Z @ Z.T
    hits = 0
    for q in range(Z.shape[0]):
        s = np.where(1 - S[q] <= 1e-6, -np.inf, S[q])
        best_own = s[ids2 == ids2[q]].max()
        best_other = s[ids2 != ids2[q]].max()
        hits += best_own > best_other
    assert hidden.n_reidentified_ == hits
    # Shown, the copies are trivially re-identified.
    assert shown.n_reidentified_ > hidden.n_reidentified_


def test_identity_of_duplicates_only_is_not_queried():
    X = np.array([[1.0, 0.1], [1.0, 0.1], [0.0, 1.0], [0.2, 1.0], [0.5, 0.5]])
    ids = np.array([0, 0, 1, 1, 2])
    a = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    assert a.n_non_mated_rows_ == 3  # both rows of 0 (copies), the row of 2
    assert a.n_queries_ == 2
    np.testing.assert_array_equal(np.sort(a.query_indices_), [2, 3])


def test_float32_is_computed_in_float32(monkeypatch):
    X, ids = make_identity_embeddings(10, 6, 8, random_state=0)
    seen = []
    # The globals the class runs with (doctest collection may import a copy
    # of the module under the same name).
    namespace = ReidentificationAuditor._audit.__globals__
    original = namespace["_loo_block"]

    def spy(Zg, *args):
        seen.append(Zg.dtype)
        return original(Zg, *args)

    monkeypatch.setitem(namespace, "_loo_block", spy)
    a32 = ReidentificationAuditor(n_bootstrap=0).fit(X.astype(np.float32), ids)
    assert set(seen) == {np.dtype(np.float32)}
    a64 = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    assert a32.rate_ == a64.rate_


@pytest.mark.parametrize("k", [1, 3])
def test_blocks_and_chunks_do_not_change_results(monkeypatch, k):
    X, ids = _unequal(9, n_ids=14)
    ref = ReidentificationAuditor(n_neighbors=k, n_bootstrap=0).fit(X, ids)
    namespace = ReidentificationAuditor._audit.__globals__
    monkeypatch.setitem(namespace, "_QUERY_BLOCK", 7)
    monkeypatch.setitem(namespace, "_CHUNK_ROWS", 5)
    small = ReidentificationAuditor(n_neighbors=k, n_bootstrap=0).fit(X, ids)
    assert small.n_reidentified_ == ref.n_reidentified_
    assert small.n_top_k_ == ref.n_top_k_
    pd.testing.assert_frame_equal(small.results_, ref.results_)


def test_max_queries_samples_seeded_queries():
    X, ids = _unequal(10, n_ids=12)
    a = ReidentificationAuditor(max_queries=20, random_state=3).fit(X, ids)
    b = ReidentificationAuditor(max_queries=20, random_state=3).fit(X, ids)
    assert a.queries_sampled_ and a.n_queries_ == 20
    np.testing.assert_array_equal(a.query_indices_, b.query_indices_)
    assert a.rate_ == b.rate_ and a.bootstrap_ci_ == b.bootstrap_ci_
    # The sampled queries are searched against every row: brute force.
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    hits = 0
    for q in a.query_indices_:
        s = Z @ Z[q]
        s[q] = -np.inf
        hits += ids[np.argmax(s)] == ids[q]
    assert a.n_reidentified_ == hits
    full = ReidentificationAuditor(max_queries=None).fit(X, ids)
    assert not full.queries_sampled_ and full.n_queries_ == X.shape[0]


def test_results_table_per_identity():
    X, ids = _unequal(11)
    a = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    res = a.results_
    assert list(res.columns) == [
        "identity",
        "n_samples",
        "n_queries",
        "n_reidentified",
        "rate",
        "top_k_rate",
        "chance",
        "n_duplicate_queries",
    ]
    assert res["n_reidentified"].sum() == a.n_reidentified_
    assert res["n_queries"].sum() == a.n_queries_
    np.testing.assert_array_equal(res["n_samples"], np.bincount(ids))
    np.testing.assert_allclose(res["rate"], res["n_reidentified"] / res["n_queries"])


def test_bootstrap_interval_resamples_identities():
    X, ids = _unequal(12)
    a = ReidentificationAuditor(n_bootstrap=400, random_state=0).fit(X, ids)
    lo, hi = a.bootstrap_ci_
    assert 0 <= lo <= a.rate_ <= hi <= 1
    # Identities that all have the same rate leave nothing to resample.
    X1, ids1 = make_identity_embeddings(8, 4, 16, separation=8.0, random_state=0)
    one = ReidentificationAuditor(n_bootstrap=100, random_state=0).fit(X1, ids1)
    assert one.rate_ == 1.0 and one.bootstrap_ci_ == (1.0, 1.0)
    assert ReidentificationAuditor(n_bootstrap=0).fit(X, ids).bootstrap_ci_ is None


def test_score_on_new_data_equals_a_fit_of_that_data():
    X, ids = _unequal(13)
    Y, idy = _unequal(14)
    a = ReidentificationAuditor(n_bootstrap=0).fit(X, ids)
    assert a.score(Y, idy) == clone(a).fit(Y, idy).rate_
    assert a.score() == a.rate_


def test_pipeline_after_a_transformer():
    X, ids = _unequal(15)
    pipe = make_pipeline(StandardScaler(), ReidentificationAuditor(n_bootstrap=0))
    pipe.fit(X, ids)
    direct = ReidentificationAuditor(n_bootstrap=0).fit(
        StandardScaler().fit_transform(X), ids
    )
    assert pipe.score(X, ids) == direct.rate_


def test_no_mated_row_raises():
    X = np.eye(4)
    with pytest.raises(ValueError, match="No row can be a query"):
        ReidentificationAuditor().fit(X, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="requires y"):
        ReidentificationAuditor().fit(X, None)


def test_n_jobs_gives_identical_results():
    X, ids = make_identity_embeddings(40, 8, 16, random_state=0)
    one = ReidentificationAuditor(n_neighbors=2, n_jobs=1, random_state=0)
    two = clone(one).set_params(n_jobs=2)
    with joblib.parallel_config(backend="threading"):
        r2 = two.fit(X, ids)
    r1 = one.fit(X, ids)
    pd.testing.assert_frame_equal(r1.results_, r2.results_, check_exact=True)
    assert r1.bootstrap_ci_ == r2.bootstrap_ci_


@pytest.mark.slow
def test_dask_backend_identical():
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    X, ids = make_identity_embeddings(60, 10, 16, random_state=0)
    auditor = ReidentificationAuditor(n_neighbors=3, random_state=0)
    local = clone(auditor).fit(X, ids)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with joblib.parallel_config(backend="dask"):
            remote = clone(auditor).set_params(n_jobs=2).fit(X, ids)
        n_tasks = sum(len(v) for v in client.run_on_scheduler(_task_prefixes).values())
    pd.testing.assert_frame_equal(local.results_, remote.results_, check_exact=True)
    assert (local.rate_, local.top_k_rate_) == (remote.rate_, remote.top_k_rate_)
    assert n_tasks >= 1  # the blocks really went through the cluster


def _task_prefixes(dask_scheduler=None):
    return {"tasks": list(dask_scheduler.task_prefixes)}


@st.composite
def _datasets(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    n_ids = draw(st.integers(2, 6))
    d = draw(st.integers(2, 8))
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=n_ids)
    sizes[0] = max(sizes[0], 2)  # at least one mated row
    ids = np.repeat(np.arange(n_ids), sizes)
    X = rng.standard_normal((n_ids, d))[ids] * draw(st.floats(0, 2)) + (
        rng.standard_normal((ids.size, d))
    )
    return X, ids, rng


@settings(max_examples=40)
@given(_datasets(), st.integers(1, 3))
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_invariants(data, k):
    X, ids, rng = data
    est = ReidentificationAuditor(n_neighbors=k, top_k=2, n_bootstrap=0)
    a = clone(est).fit(X, ids)
    assert 0.0 <= a.rate_ <= 1.0 and 0.0 <= a.chance_ <= 1.0
    assert a.ci_[0] <= a.rate_ <= a.ci_[1] and 0.0 <= a.p_value_ <= 1.0
    if k == 1:
        assert a.rate_ <= a.top_k_rate_
    # Row order does not matter.
    perm = rng.permutation(ids.size)
    b = clone(est).fit(X[perm], ids[perm])
    assert (b.n_reidentified_, b.n_top_k_) == (a.n_reidentified_, a.n_top_k_)
    assert b.chance_ == pytest.approx(a.chance_, rel=1e-12)
    # Nor does the scale of each row (powers of 2 keep normalisation exact).
    scale = 2.0 ** rng.integers(-8, 20, size=ids.size)
    c = clone(est).fit(X * scale[:, None], ids)
    assert (c.n_reidentified_, c.n_top_k_) == (a.n_reidentified_, a.n_top_k_)


def test_chance_of_a_small_example():
    # Two identities of 3 and 1 rows: each query of the first finds one of
    # its 2 mates among 3 other rows by chance.
    a = ReidentificationAuditor(n_bootstrap=0).fit(
        np.array([[1.0, 0.0], [0.9, 0.1], [0.8, 0.3], [0.0, 1.0]]), [0, 0, 0, 1]
    )
    assert a.n_queries_ == 3
    assert a.chance_ == pytest.approx(2 / 3)
    assert math.isclose(a.rate_, 1.0)


def test_description_holds_what_a_report_reads():
    X, ids = _unequal(16)
    a = ReidentificationAuditor(random_state=0).fit(X, ids)
    entry = a.description_.summary()
    assert entry["value"] == a.rate_ and entry["kind"] == "point estimate"
    assert entry["chance"] == a.chance_ and tuple(entry["ci"]) == a.ci_
    assert entry["p_value"] == a.p_value_ and entry["n_queries"] == a.n_queries_
    assert entry["top_k_rate"] == a.top_k_rate_ and entry["top_k"] == 5
    assert entry["queries_sampled"] is False
    assert tuple(entry["bootstrap_ci"]) == a.bootstrap_ci_
    assert a.description_.pairs is None
