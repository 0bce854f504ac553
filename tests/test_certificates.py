# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reserved-test certificates: exact bounds, the paper's finding, soundness."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import beta
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skprivacy import ROCHTCertifier
from skprivacy.auditors import (
    certifiable_epsilon_ceiling,
    certified_epsilon_lb,
    clopper_pearson_bound,
)
from skprivacy.auditors._certify_sim import (
    make_mechanism_data,
    run_soundness,
    true_pair_epsilon,
)
from skprivacy.auditors._roc_core import reserved_test_mask, select_threshold
from skprivacy.datasets import make_identity_embeddings


# --------------------------------------------------------- Clopper–Pearson by hand
def test_clopper_pearson_matches_beta_ppf_by_hand():
    a = 0.025
    assert_allclose(clopper_pearson_bound(7, 20, a), beta.ppf(a, 7, 14), rtol=1e-14)
    assert_allclose(
        clopper_pearson_bound(7, 20, a, side="upper"),
        beta.ppf(1 - a, 8, 13),
        rtol=1e-14,
    )
    # Closed forms at the edges: k = n -> a^(1/n); k = 0 -> 1 - a^(1/n).
    assert_allclose(clopper_pearson_bound(10, 10, a), a ** (1 / 10), rtol=1e-12)
    assert_allclose(
        clopper_pearson_bound(0, 10, a, side="upper"), 1 - a ** (1 / 10), rtol=1e-12
    )
    assert clopper_pearson_bound(0, 10, a) == 0.0
    assert clopper_pearson_bound(10, 10, a, side="upper") == 1.0
    # Vectorised.
    got = clopper_pearson_bound([1, 5], [10, 10], 0.05)
    assert_allclose(got, [beta.ppf(0.05, 1, 10), beta.ppf(0.05, 5, 6)], rtol=1e-14)


def test_clopper_pearson_rejects_bad_counts():
    with pytest.raises(ValueError, match="k cannot exceed n"):
        clopper_pearson_bound(11, 10, 0.05)
    with pytest.raises(ValueError, match="n must hold whole counts >= 1"):
        clopper_pearson_bound(0, 0, 0.05)


@pytest.mark.parametrize(
    ("counts", "named"),
    [
        ((-1, 5, 0, 5), "tp must"),
        ((6, 5, 0, 5), "tp cannot exceed n_pos"),
        ((1, 5, 6, 5), "fp cannot exceed n_neg"),
        ((1, 0, 0, 5), "n_pos must"),
        ((1, 5, 0, 0), "n_neg must"),
    ],
)
def test_certified_epsilon_lb_names_the_bad_count(counts, named):
    with pytest.raises(ValueError, match=named):
        certified_epsilon_lb(*counts)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson_bound(1, 10, 1.5)


def test_certified_epsilon_written_out():
    tp, n_pos, fp, n_neg, K = 27, 30, 2, 30, 3
    a = 0.05 / (2 * K)
    lo = beta.ppf(a, tp, n_pos - tp + 1)
    hi = beta.ppf(1 - a, fp + 1, n_neg - fp)
    expected = max(0.0, math.log(lo / hi), math.log((1 - hi) / (1 - lo)))
    eps, got_lo, got_hi = certified_epsilon_lb(
        tp, n_pos, fp, n_neg, n_comparisons=K, return_bounds=True
    )
    assert_allclose([eps, got_lo, got_hi], [expected, lo, hi], rtol=1e-12)


def test_paper_finding_n6_not_certifiable_n30_certifiable():
    # Zero-error reserved tests under the global 40-pair correction.
    assert certified_epsilon_lb(6, 6, 0, 6, n_comparisons=40) == 0.0
    eps30 = certified_epsilon_lb(30, 30, 0, 30, n_comparisons=40)
    a = 0.05 / 80
    assert_allclose(eps30, math.log(a ** (1 / 30) / (1 - a ** (1 / 30))), rtol=1e-12)
    assert eps30 > 1.0
    # The ceiling is that same perfect-classifier value.
    assert certifiable_epsilon_ceiling(30, 30, n_comparisons=40) == eps30
    # DESIGN.md: ~100 per identity, one threshold, 95%: about 3.3.
    assert_allclose(certifiable_epsilon_ceiling(100, 100), 3.28, atol=0.01)


@pytest.mark.parametrize("n_samples, certifiable", [(20, False), (100, True)])
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_paper_finding_with_the_estimator(n_samples, certifiable):
    # ceil(0.3 * 20) = 6 and ceil(0.3 * 100) = 30 test rows per identity.
    X, ids = make_identity_embeddings(10, n_samples, 16, noise=0.3, random_state=0)
    cert = ROCHTCertifier(n_pairs=40).fit(X, ids)
    r = cert.results_
    assert cert.n_certified_ == 40
    n_test = 6 if n_samples == 20 else 30
    assert (r["n_pos"] == n_test).all() and (r["n_neg"] == n_test).all()
    # Zero errors on every reserved test ...
    assert (r["tp"] == r["n_pos"]).all() and (r["fp"] == 0).all()
    if certifiable:
        expected = certified_epsilon_lb(30, 30, 0, 30, n_comparisons=40)
        assert_allclose(r["epsilon"], expected)
        assert cert.score() == pytest.approx(expected)
    else:  # ... yet nothing is certified with 6 per class.
        assert (r["epsilon"] == 0).all() and cert.score() == 0.0
    assert_allclose(cert.alpha_per_bound_, 0.05 / 80)
    assert_allclose(r["ceiling"], r["epsilon"])
    assert cert.guarantee_ == "certificate"


# --------------------------------------------------- fit / score(X_test, y_test)
def test_held_out_certificate_recomputed_by_hand():
    X, ids = make_identity_embeddings(6, 60, 16, noise=1.5, random_state=1)
    train = np.arange(len(ids)) % 2 == 0
    cert = ROCHTCertifier(n_pairs=8, test_size=None).fit(X[train], ids[train])
    value = cert.score(X[~train], ids[~train])
    table = cert.certify(X[~train], ids[~train])
    assert value == table["epsilon"].max()
    K = len(table)
    assert K == 8
    a = 0.05 / (2 * K)
    Z = X[~train] / np.linalg.norm(X[~train], axis=1, keepdims=True)
    y_te = ids[~train]
    for i, row in enumerate(table.itertuples()):
        est = cert.estimators_[i]
        Xa, Xb = Z[y_te == row.id_a], Z[y_te == row.id_b]
        sa = cert.directions_[i] * est.predict_proba(Xa)[:, 1]
        sb = cert.directions_[i] * est.predict_proba(Xb)[:, 1]
        t = cert.thresholds_[i, 0]
        tp, fp = int((sb > t).sum()), int((sa > t).sum())
        assert (row.tp, row.fp) == (tp, fp)
        lo = 0.0 if tp == 0 else beta.ppf(a, tp, len(Xb) - tp + 1)
        hi = 1.0 if fp == len(Xa) else beta.ppf(1 - a, fp + 1, len(Xa) - fp)
        with np.errstate(divide="ignore"):
            expected = max(0.0, np.log(lo) - np.log(hi), np.log1p(-hi) - np.log1p(-lo))
        assert_allclose(row.epsilon, expected, rtol=1e-10, atol=1e-12)


def test_held_out_pairs_missing_an_identity_are_not_counted():
    X, ids = make_identity_embeddings(5, 30, 16, random_state=2)
    train = np.arange(len(ids)) % 2 == 0
    cert = ROCHTCertifier(n_pairs=10, test_size=None).fit(X[train], ids[train])
    keep = ~train & (ids != 0)
    table = cert.certify(X[keep], ids[keep])
    assert len(table) == 6  # pairs among identities 1..4
    assert not (table[["id_a", "id_b"]] == 0).any().any()


# ------------------------------------------------------------ rows seen in fit
def _identical_distributions(n_rows, seed):
    # Two identities with the same distribution: every pair's true ε is 0.
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2 * n_rows, 8)), np.repeat([0, 1], n_rows)


def test_scoring_training_rows_is_refused():
    from sklearn.neighbors import KNeighborsClassifier

    X, ids = _identical_distributions(60, 0)
    cert = ROCHTCertifier(KNeighborsClassifier(1), test_size=None).fit(X, ids)
    before = cert.n_seen_rows_dropped_
    with pytest.raises(
        ValueError, match="120 of the 120 rows passed to certify/score copy"
    ):
        cert.score(X, ids)
    with pytest.raises(ValueError, match="allow_seen_rows=True"):
        cert.certify(X[::3], ids[::3])
    assert cert.n_seen_rows_dropped_ == before == 0


def test_allow_seen_rows_drops_them_and_certifies_zero():
    from sklearn.neighbors import KNeighborsClassifier

    X, ids = _identical_distributions(60, 1)
    fresh, fresh_ids = _identical_distributions(60, 2)
    cert = ROCHTCertifier(KNeighborsClassifier(1), test_size=None).fit(X, ids)
    # Only seen rows: all dropped, nothing certifiable, the trivial 0.
    with pytest.warns(UserWarning, match="Dropped 120 of 120"):
        assert cert.score(X, ids, allow_seen_rows=True) == 0.0
    assert cert.n_seen_rows_dropped_ == 120
    # Seen rows mixed with fresh rows: the seen ones are dropped, the
    # certificate is computed on the fresh ones only and is 0 (true ε = 0).
    mixed = np.r_[X, fresh]
    mixed_ids = np.r_[ids, fresh_ids]
    with pytest.warns(UserWarning, match="Dropped 120 of 240"):
        table = cert.certify(mixed, mixed_ids, allow_seen_rows=True)
    assert table.attrs["n_seen_rows_dropped"] == 120
    assert cert.n_seen_rows_dropped_ == 120
    assert (table["n_pos"] + table["n_neg"]).tolist() == [120]
    assert table["epsilon"].tolist() == [0.0]
    assert_allclose(
        table["epsilon"], cert.certify(fresh, fresh_ids)["epsilon"], rtol=0, atol=0
    )


def test_reserved_test_rows_are_not_seen_rows():
    X, ids = make_identity_embeddings(4, 20, 16, random_state=3)
    cert = ROCHTCertifier(n_pairs=3, test_size=0.3).fit(X, ids)
    assert cert.seen_rows_.shape[0] == len(ids) - 4 * 6
    from skprivacy.utils import validate_identity_data

    data = validate_identity_data(cert, X, ids, reset=False)
    test, _ = reserved_test_mask(data, 0.3, 0)
    # Re-certifying the reserved test of fit reproduces fit's certificates.
    table = cert.certify(X[test], ids[test])
    assert_allclose(table["epsilon"], cert.results_["epsilon"])


def test_family_confidence_union_bound():
    from skprivacy.auditors import family_confidence

    per = family_confidence(0.95, 20)
    assert per == pytest.approx(1 - 0.05 / 20)
    # G * F candidates at `per` keep the family at 0.95 by the union bound.
    assert 1 - 20 * (1 - per) == pytest.approx(0.95)
    assert family_confidence(0.9, 1) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="n_candidates"):
        family_confidence(0.95, 0)


def test_score_without_reserved_test_raises():
    X, ids = make_identity_embeddings(3, 20, 8, random_state=0)
    cert = ROCHTCertifier(test_size=None).fit(X, ids)
    assert np.isnan(cert.results_["epsilon"]).all()
    with pytest.raises(ValueError, match="test_size=None"):
        cert.score()


def test_threshold_grid_pays_for_the_search():
    X, ids = make_identity_embeddings(4, 50, 16, noise=0.3, random_state=3)
    one = ROCHTCertifier(n_pairs=6).fit(X, ids)
    grid = ROCHTCertifier(n_pairs=6, thresholds=5).fit(X, ids)
    assert_allclose(grid.alpha_per_bound_, 0.05 / (2 * 6 * 5))
    assert grid.thresholds_.shape == (6, 5)
    assert (grid.results_["ceiling"] < one.results_["ceiling"]).all()


def test_select_threshold_centres_a_separating_gap():
    y = np.r_[np.zeros(5), np.ones(5)]
    s = np.r_[np.linspace(0, 0.4, 5), np.linspace(0.6, 1.0, 5)]
    t, anticipated = select_threshold(y, s, 0.025)
    assert t == pytest.approx(0.5)
    assert anticipated == pytest.approx(certifiable_epsilon_ceiling(5, 5))


@pytest.mark.slow
def test_n_jobs_and_pipeline():
    X, ids = make_identity_embeddings(6, 20, 16, noise=1.0, random_state=4)
    r1 = ROCHTCertifier(n_pairs=10, n_jobs=1).fit(X, ids).results_
    r2 = ROCHTCertifier(n_pairs=10, n_jobs=2).fit(X, ids).results_
    assert r1.equals(r2)
    pipe = make_pipeline(StandardScaler(), ROCHTCertifier(n_pairs=10)).fit(X, ids)
    assert pipe[-1].score() >= 0.0
    direct = ROCHTCertifier(n_pairs=10).fit(StandardScaler().fit_transform(X), ids)
    assert pipe[-1].results_.equals(direct.results_)


# ------------------------------------------------------------------- soundness
def test_mechanisms_have_the_stated_structure():
    X, ids = make_mechanism_data("laplace", 1.0, n_samples=20000, random_state=0)
    # Laplace(1/ε) around 0 and 1: the likelihood ratio at x >= 1 is e^ε.
    a, b = X[ids == 0, 0], X[ids == 1, 0]
    assert_allclose(np.mean(b > 1) / np.mean(a > 1), math.e, rtol=0.1)
    X, ids = make_mechanism_data(
        "randomized_response", 1.0, n_samples=20000, random_state=0
    )
    p0, p1 = np.mean(X[ids == 0, 0] > 0), np.mean(X[ids == 1, 0] > 0)
    assert_allclose(p0 / p1, math.e, rtol=0.05)
    assert X.shape[1] == 16
    assert true_pair_epsilon("laplace", 0.5, 0, 3) == 1.5
    assert true_pair_epsilon("randomized_response", 1.0, 0, 2) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism, epsilon, n_identities, thresholds",
    [
        ("laplace", 2.0, 2, "train"),
        ("randomized_response", 1.0, 2, "train"),
        ("identical", 0.0, 2, "train"),
        ("randomized_response", 2.0, 3, "train"),  # pairs with ε and 0, together
        ("laplace", 2.0, 2, 4),  # Bonferroni-paid search over 4 thresholds
    ],
)
@pytest.mark.slow
def test_soundness_fast_subset(mechanism, epsilon, n_identities, thresholds):
    certifier = ROCHTCertifier(
        # Soundness holds for any classifier; LDA keeps the subset fast (the
        # full battery in benchmarks/soundness.py uses the default LR).
        LinearDiscriminantAnalysis(),
        test_size=0.5,
        thresholds=thresholds,
    )
    report = run_soundness(
        mechanism,
        epsilon,
        60,
        certifier=certifier,
        n_identities=n_identities,
        n_samples=80,
        n_jobs=2,
    )
    assert report.n_certifications == 60
    assert report.violation_rate <= report.allowed_rate_99
    if mechanism == "identical":
        assert report.certified_fraction <= report.allowed_rate_99
    else:  # the certificate is not vacuous on these mechanisms
        assert report.certified_fraction > 0.2


def test_cross_val_score_certifies_each_held_out_fold():
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, ids = make_identity_embeddings(4, 30, 16, noise=0.3, random_state=5)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(ROCHTCertifier(test_size=None, n_pairs=6), X, ids, cv=cv)
    # Separable identities, 10 held-out rows each, K = 6: every fold at the ceiling.
    expected = certifiable_epsilon_ceiling(10, 10, n_comparisons=6)
    assert_allclose(scores, expected)


# ----------------------------------------------- selected pairs under a fixed K
def test_selected_pairs_under_a_declared_family_by_hand():
    X, ids = make_identity_embeddings(8, 60, 16, noise=1.0, random_state=4)
    train = np.arange(len(ids)) % 2 == 0
    chosen = [(3, 1), (0, 5), (2, 7)]
    cert = ROCHTCertifier(pairs=chosen, n_comparisons=40, test_size=None).fit(
        X[train], ids[train]
    )
    assert list(map(tuple, cert.identities_[cert.pairs_].tolist())) == chosen
    assert cert.n_comparisons_ == 40
    table = cert.certify(X[~train], ids[~train])
    assert list(zip(table["id_a"], table["id_b"])) == chosen
    expected = certified_epsilon_lb(
        table["tp"].to_numpy(),
        table["n_pos"].to_numpy(),
        table["fp"].to_numpy(),
        table["n_neg"].to_numpy(),
        n_comparisons=40,
    )
    assert_allclose(table["epsilon"], expected, rtol=0, atol=0)
    # Counts recomputed by hand from the fitted tests.
    Z = X[~train] / np.linalg.norm(X[~train], axis=1, keepdims=True)
    y_te = ids[~train]
    for i, (a, b) in enumerate(chosen):
        est, d, t = cert.estimators_[i], cert.directions_[i], cert.thresholds_[i, 0]
        sa = d * est.predict_proba(Z[y_te == a])[:, 1]
        sb = d * est.predict_proba(Z[y_te == b])[:, 1]
        assert (table["tp"][i], table["fp"][i]) == ((sb > t).sum(), (sa > t).sum())
    # The declared K is stricter than the default K = 3.
    plain = ROCHTCertifier(pairs=chosen, test_size=None).fit(X[train], ids[train])
    loose = plain.certify(X[~train], ids[~train])
    assert (loose["epsilon"].to_numpy() >= table["epsilon"].to_numpy()).all()
    assert_allclose(
        loose["epsilon"],
        certified_epsilon_lb(
            loose["tp"].to_numpy(),
            loose["n_pos"].to_numpy(),
            loose["fp"].to_numpy(),
            loose["n_neg"].to_numpy(),
            n_comparisons=3,
        ),
    )


def test_selected_pairs_with_reserved_test():
    X, ids = make_identity_embeddings(6, 40, 16, noise=1.0, random_state=5)
    cert = ROCHTCertifier(pairs=[(0, 1), (4, 2)], n_comparisons=10).fit(X, ids)
    r = cert.results_
    assert cert.n_certified_ == 2 and cert.n_comparisons_ == 10
    assert_allclose(cert.alpha_per_bound_, 0.05 / 20)
    assert_allclose(
        r["epsilon"],
        certified_epsilon_lb(
            r["tp"].to_numpy(),
            r["n_pos"].to_numpy(),
            r["fp"].to_numpy(),
            r["n_neg"].to_numpy(),
            n_comparisons=10,
        ),
    )


@pytest.mark.parametrize(
    "params, match",
    [
        ({"pairs": [(0, 1), (1, 2)], "n_comparisons": 1}, "n_comparisons=1"),
        ({"pairs": [(0, 99)]}, "99"),
        ({"pairs": [(0, 0)]}, "two identities"),
        ({"pairs": [(0, 1), (1, 0)]}, "twice"),
        ({"pairs": [(0, 1, 2)]}, "pairs must be"),
    ],
)
def test_selected_pairs_errors(params, match):
    X, ids = make_identity_embeddings(4, 20, 8, random_state=0)
    with pytest.raises(ValueError, match=match):
        ROCHTCertifier(**params).fit(X, ids)


def test_certifier_checks_column_names_on_held_out_rows():
    # The contract of check_dataframe_column_names_consistency (expected to
    # fail there only because the check scores the rows it fitted on).
    import warnings

    import pandas as pd

    X, ids = make_identity_embeddings(6, 20, 8, random_state=0)
    names = [f"e{i}" for i in range(8)]
    df = pd.DataFrame(X, columns=names)
    train = np.arange(len(ids)) % 2 == 0
    cert = ROCHTCertifier(n_pairs=3, test_size=None).fit(df[train], ids[train])
    assert list(cert.feature_names_in_) == names
    renamed = df[~train].rename(columns={"e0": "other"})
    with pytest.raises(ValueError, match="feature names"):
        cert.score(renamed, ids[~train])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cert.score(X[~train], ids[~train])
    assert any("feature names" in str(w.message) for w in caught)


# --------------------------------------------- the family is fixed in fit
def test_subsets_are_certified_at_the_family_size_of_fit():
    X, ids = make_identity_embeddings(5, 40, 16, noise=1.0, random_state=6)
    train = np.arange(len(ids)) % 2 == 0
    cert = ROCHTCertifier(n_pairs=None, test_size=None).fit(X[train], ids[train])
    assert cert.n_comparisons_ == 10
    X_te, y_te = X[~train], ids[~train]
    full = cert.certify(X_te, y_te)
    for a, b in [(0, 1), (2, 4)]:
        rows = (y_te == a) | (y_te == b)
        one = cert.certify(X_te[rows], y_te[rows])
        assert len(one) == 1
        # K = 10 (the family of fit), not 1: the same value as in the full table.
        expected = certified_epsilon_lb(
            one["tp"].to_numpy(),
            one["n_pos"].to_numpy(),
            one["fp"].to_numpy(),
            one["n_neg"].to_numpy(),
            n_comparisons=10,
        )
        assert_allclose(one["epsilon"], expected, rtol=0, atol=0)
        same = (full["id_a"] == one["id_a"][0]) & (full["id_b"] == one["id_b"][0])
        assert one["epsilon"].tolist() == full.loc[same, "epsilon"].tolist()


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_select_top_certifies_the_training_selection_at_its_size():
    X, ids = make_identity_embeddings(6, 40, 16, noise=2.0, random_state=7)
    top = ROCHTCertifier(n_pairs=None, select_top=3).fit(X, ids)
    every = ROCHTCertifier(n_pairs=None).fit(X, ids)
    assert top.n_candidate_pairs_ == 15 and len(top.pairs_) == 3
    assert top.n_comparisons_ == 3 and top.n_certified_ == 3
    # The three pairs of highest oriented training AUC, by an independent sort.
    auc = np.where(every.directions_ > 0, every.train_auc_, 1 - every.train_auc_)
    chosen = np.sort(np.argsort(-auc, kind="stable")[:3])
    assert_array_equal(top.pairs_, every.pairs_[chosen])
    # Equal to certifying those pairs, declared beforehand, at K = 3.
    labels = [tuple(p) for p in every.identities_[every.pairs_[chosen]].tolist()]
    declared = ROCHTCertifier(pairs=labels, n_comparisons=3).fit(X, ids)
    assert_array_equal(top.results_["epsilon"], declared.results_["epsilon"])
    assert_allclose(top.alpha_per_bound_, 0.05 / 6)


def test_solver_of_the_certifier():
    from skprivacy import CentroidClassifier

    X, ids = make_identity_embeddings(4, 20, 8, random_state=0)
    assert ROCHTCertifier(n_pairs=2).fit(X, ids).solver_ == "per_pair"
    assert ROCHTCertifier(CentroidClassifier(), n_pairs=2).fit(X, ids).solver_ == (
        "shared"
    )
    with pytest.raises(ValueError, match="solver='shared'"):
        ROCHTCertifier(n_pairs=2, solver="shared").fit(X, ids)


# ---------------------------------------------------------------- duplicates
def test_duplicates_in_the_reserved_test_count_once():
    X, ids = make_identity_embeddings(3, 30, 8, noise=1.0, random_state=8)
    # Ten rows of each identity appear twice (an exact copy).
    copies = np.r_[0:10, 30:40, 60:70]
    X2, ids2 = np.vstack([X, X[copies]]), np.r_[ids, ids[copies]]
    cert = ROCHTCertifier(n_pairs=None, random_state=1).fit(X2, ids2)
    assert cert.n_duplicate_groups_ == 30
    n_test = cert.results_[["n_pos", "n_neg"]].to_numpy()
    # Each group on one side; a group in the test counted once.
    from skprivacy.utils import validate_identity_data

    data = validate_identity_data(cert, X2, ids2, reset=False)
    mask, groups = reserved_test_mask(data, 0.3, 1)
    in_test = mask & (groups >= 0)
    assert cert.n_test_duplicates_dropped_ == int(in_test.sum() // 2)
    counted = [int(mask[data.codes == c].sum()) for c in range(3)]
    dropped = [int((in_test & (data.codes == c)).sum() // 2) for c in range(3)]
    per_identity = np.subtract(counted, dropped)
    for row, (a, b) in zip(n_test, cert.pairs_):
        assert row.tolist() == [per_identity[b], per_identity[a]]
    # Held-out copies among themselves: one draw, counted once.
    fresh, fresh_ids = make_identity_embeddings(3, 30, 8, noise=1.0, random_state=9)
    fit = ROCHTCertifier(n_pairs=None, test_size=None).fit(X, ids)
    once = fit.certify(fresh, fresh_ids)
    twice = fit.certify(np.vstack([fresh, fresh * 2]), np.r_[fresh_ids, fresh_ids])
    assert twice.attrs["n_test_duplicates_dropped"] == len(fresh)
    assert twice[["epsilon", "tp", "fp", "n_pos", "n_neg"]].equals(
        once[["epsilon", "tp", "fp", "n_pos", "n_neg"]]
    )
