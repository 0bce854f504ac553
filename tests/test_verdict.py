# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The verdict's level, the re-identification entry and the duplicates section."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, mannwhitneyu
from sklearn.neighbors import KNeighborsClassifier

from skprivacy import ISP, audit
from skprivacy.auditors._description import auc_distinguished
from skprivacy.datasets import load_yale_faces, make_identity_embeddings
from skprivacy.report._verdict import LEVELS


def _loo_1nn(X, y):
    """Leave-one-out 1-NN (cosine) by scikit-learn, one fit per held-out row."""
    hits = 0
    for i in range(len(y)):
        rest = np.arange(len(y)) != i
        knn = KNeighborsClassifier(n_neighbors=1, metric="cosine")
        hits += knn.fit(X[rest], y[rest]).predict(X[i : i + 1])[0] == y[i]
    return int(hits)


def test_reid_entry_equals_sklearn_leave_one_out():
    X, y = make_identity_embeddings(8, 6, 16, noise=3.0, random_state=0)
    report = audit(X, y, methods=["reid"], suggest_rank=False)
    entry = report.to_dict()["results"]["reid"]
    k, n = _loo_1nn(np.asarray(X), np.asarray(y)), len(y)
    assert 0 < k < n
    assert entry["value"] == k / n
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert entry["ci"] == pytest.approx([ci.low, ci.high], abs=1e-12)
    sizes = pd.Series(y).value_counts().to_numpy()
    assert entry["chance"] == pytest.approx(
        (sizes * (sizes - 1)).sum() / (n * (n - 1)), rel=1e-12
    )
    assert "point estimate" == entry["kind"]


def _erased(n_ids=12, n_rows=10, d=24, seed=0):
    """Identity-specific covariance with every identity's mean removed exactly.

    Each identity's rows spread along its own direction (both signs), plus
    small isotropic noise; subtracting each identity's sample mean (what an
    eraser fitted on these identities does to the mean differences) leaves
    equal class means, yet each row's nearest neighbour is of its identity.
    """
    rng = np.random.default_rng(seed)
    axes = rng.standard_normal((n_ids, d))
    y = np.repeat(np.arange(n_ids), n_rows)
    X = rng.choice([-1.0, 1.0], size=(len(y), 1)) * rng.uniform(1, 2, (len(y), 1))
    X = X * axes[y] + 0.05 * rng.standard_normal((len(y), d))
    for i in range(n_ids):
        X[y == i] -= X[y == i].mean(axis=0)
    return X, y


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_erased_identities_are_separable_not_reassuring():
    X, y = _erased()
    means = np.stack([X[y == i].mean(axis=0) for i in range(12)])
    assert np.abs(means).max() < 1e-12
    rate, chance = _loo_1nn(X, y) / len(y), 9 / 119
    assert rate >= 5 * chance
    report = audit(
        X,
        y,
        methods=["rocht", "mmdtv", "gaussmech", "permutation", "reid"],
        suggest_rank=False,
    )
    level = report.verdict["level"]
    assert LEVELS.index(level) <= LEVELS.index("separable")
    assert not report.verdict["headline"].startswith("Little evidence")
    assert report.to_dict()["verdict"]["level"] == level


@pytest.mark.slow
def test_in_sample_isp_on_yale_faces_is_separable_without_reid():
    # The eraser fitted on the audited identities: mean-based methods see
    # little, the out-of-fold classifiers anti-learn (AUC below 0.5), which
    # the verdict reads as separation.
    faces = load_yale_faces()
    X, y = faces.data, faces.identity
    Z = ISP(n_components=14).fit_transform(X, y)
    report = audit(Z, y, methods=["gaussmech", "mmdtv", "rocht"], suggest_rank=False)
    assert report.results["rocht"]["mean_auc"] < 0.5
    assert report.verdict["level"] == "separable"
    assert "inversely" in report.verdict["headline"]
    with_reid = audit(Z, y, methods=["rocht", "reid"], suggest_rank=False)
    assert with_reid.verdict["level"] == "separable"
    assert _loo_1nn(Z, y) / len(y) >= 5 * with_reid.results["reid"]["chance"]


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_noise_gives_little_evidence_and_tiny_samples_are_inconclusive():
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(10), 20)
    report = audit(
        rng.standard_normal((200, 8)),
        y,
        methods=["rocht", "permutation", "reid"],
        suggest_rank=False,
    )
    entry = report.results["reid"]
    assert entry["ci"][1] < 5 * entry["chance"]
    assert report.verdict["level"] == "little evidence"
    assert report.verdict["headline"].startswith("Little evidence")
    # Two people with two images each: chance is 1/3, so no rate is five
    # times chance and none can be ruled out.
    tiny = audit(
        rng.standard_normal((4, 8)),
        np.repeat([0, 1], 2),
        methods=["rocht", "reid"],
        suggest_rank=False,
    )
    assert tiny.verdict["level"] == "inconclusive"
    # Without the re-identification attack nothing can say "little evidence".
    blind = audit(
        rng.standard_normal((200, 8)), y, methods=["permutation"], suggest_rank=False
    )
    assert blind.verdict["level"] == "inconclusive"


def test_auc_distinguished_is_the_two_sided_rank_sum_test():
    rng = np.random.default_rng(2)
    rows, expected = [], 0
    for shift in np.linspace(-2, 2, 21):
        a, b = rng.standard_normal(9), rng.standard_normal(12) + shift
        u = mannwhitneyu(b, a, method="asymptotic", use_continuity=True)
        expected += u.pvalue < 0.05
        rows.append({"auc": u.statistic / (9 * 12), "n_a": 9, "n_b": 12})
    got = auc_distinguished(pd.DataFrame(rows))
    assert got == expected and 0 < got < 21


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_leak_headline_states_the_joint_level_of_two_certificates():
    X, y = make_identity_embeddings(3, 60, 8, noise=0.5, random_state=0)
    both = audit(
        X, y, methods=["rocht_certificate", "mmdtv_certificate"], suggest_rank=False
    )
    assert [e["skipped"] for e in both.results.values()] == [False, False]
    assert both.verdict["level"] == "leak"
    # Each at 1 - 0.05 / 2 = 97.5%: the larger of the two holds at 95%.
    assert both.verdict["headline"].endswith(
        "at 95% jointly: each of the 2 certificates at 97.5%."
    )
    assert [e["confidence"] for e in both.results.values()] == [0.975, 0.975]
    summary = both.to_dict()
    assert (summary["confidence"], summary["certificate_confidence"]) == (0.95, 0.975)
    one = audit(X, y, methods=["rocht_certificate"], suggest_rank=False)
    assert one.verdict["headline"].endswith(" at 95%.")
    assert one.results["rocht_certificate"]["confidence"] == 0.95
    assert one.to_dict()["certificate_confidence"] == 0.95


def test_duplicates_of_yale_faces_are_reported():
    faces = load_yale_faces()
    frame = pd.DataFrame(faces.data)
    copies = frame.duplicated(keep=False).to_numpy()
    by_row = frame[copies].apply(lambda r: r.to_numpy().tobytes(), axis=1)
    expected = sorted(
        sorted(np.flatnonzero(copies)[by_row.to_numpy() == key].tolist())
        for key in pd.unique(by_row.to_numpy())
    )
    cross = sum(len(set(faces.identity[rows])) > 1 for rows in expected)
    report = audit(faces.data, faces.identity, methods=["reid"], suggest_rank=False)
    dup = report.to_dict()["duplicates"]
    assert (dup["n_rows"], dup["n_groups"]) == (int(copies.sum()), len(expected))
    assert (dup["n_groups"], dup["n_cross_identity_groups"]) == (9, cross)
    assert sorted(g["rows"] for g in dup["groups"]) == expected
    html = report.to_html()
    assert "9 groups of duplicate rows (18 rows" in html
    for rows in expected:
        assert ", ".join(map(str, rows)) in html


def test_reid_is_skipped_when_every_image_is_a_copy():
    rng = np.random.default_rng(0)
    X, y = np.repeat(rng.standard_normal((5, 8)), 2, axis=0), np.repeat(range(5), 2)
    report = audit(X, y, methods=["rocht", "reid"], suggest_rank=False)
    assert report.results["reid"]["skipped"]
    assert "copies of one image" in report.results["reid"]["reason"]
    assert report.duplicates["n_groups"] == 5
    assert report.verdict["level"] == "inconclusive"


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_infinite_rocht_epsilon_is_read_with_its_interior_companion():
    # Pure noise, few rows: most pairs reach FPR 0 or TPR 1 somewhere.
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((60, 8)), np.repeat(np.arange(10), 6)
    report = audit(X, y, methods=["rocht"], suggest_rank=False)
    entry, pairs = report.results["rocht"], report.pairs
    inf = np.isinf(pairs["rocht_epsilon"].to_numpy())
    assert inf.sum() > len(pairs) / 2 and np.isinf(entry["value"])
    assert entry["n_infinite"] == inf.sum()
    # Every infinite pair has its endpoint, and only those.
    cause = pairs["rocht_infinite_fpr0"] | pairs["rocht_infinite_tpr1"]
    assert (cause.to_numpy(bool) == inf).all()
    assert entry["epsilon_interior_median"] == np.median(
        pairs["rocht_epsilon_interior"].to_numpy()
    )
    finding = [line["text"] for line in report.verdict["lines"]][0]
    assert f"epsilon infinite for {inf.sum()} pairs" in finding
    assert "not proven infinite" in finding and "interior median" in finding
    assert "exact ROC corner gives infinity" not in entry["does_not_say"]
    assert "&infin;<br><small>interior median" in report.to_html()
