# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MembershipGeometry: AUCs, ground truth from the generator, sklearn integration."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_allclose
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from skprivacy.datasets import make_membership_embeddings
from skprivacy.membership import (
    STATISTICS,
    MembershipGeometry,
    audit_reference_sets,
    membership_auc,
)


def _data(**kw):
    params = {
        "n_members": 60,
        "n_nonmembers": 60,
        "n_samples_per_identity": 8,
        "n_features": 32,
        "concentration_gap": 0.4,
        "random_state": 0,
    }
    params.update(kw)
    return make_membership_embeddings(**params)


@pytest.fixture(scope="module")
def fitted():
    X, ids, member = _data()
    return MembershipGeometry(random_state=0).fit(X, ids, member=member), (
        X,
        ids,
        member,
    )


def test_statistics_table_and_aucs_match_sklearn(fitted):
    mg, (X, ids, member) = fitted
    table = mg.statistics_
    assert table.columns.tolist() == ["identity", "member", "k", *STATISTICS]
    assert len(table) == 120 and (table["k"] == 8).all()
    assert_allclose(table["member"].astype(bool), np.arange(120) < 60)
    for stat in STATISTICS:
        expected = roc_auc_score(table["member"].astype(bool), table[stat])
        assert mg.auc_[stat] == pytest.approx(expected, abs=1e-12)
    assert (mg.separability_["members_higher"] == (mg.auc_ > 0.5)).all()
    assert 0.5 < mg.fusion_auc_ <= 1 and len(mg.fusion_cv_auc_) == 5
    assert mg.score() == mg.fusion_auc_


def test_membership_auc_is_not_flipped():
    assert membership_auc([1, 1, 0, 0], [0.1, 0.2, 0.8, 0.9]) == 0.0
    assert membership_auc([1, 0, 0], [1.0, 1.0, 0.0]) == 0.75  # ties count 1/2
    assert membership_auc([1, 0], [np.inf, 5.0]) == 1.0


def test_no_difference_gives_chance_auc():
    X, ids, member = _data(n_members=150, n_nonmembers=150, concentration_gap=0.0)
    mg = MembershipGeometry(random_state=0).fit(X, ids, member=member)
    se = mg.separability_["auc_se"]
    # within 3 standard errors of 0.5 (SE ~ 0.033 for 150 vs 150)
    assert ((mg.auc_ - 0.5).abs() < 3 * se).all(), mg.separability_
    assert abs(mg.fusion_auc_ - 0.5) < 3 * se.max()


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_auc_grows_monotonically_with_concentration_gap():
    aucs = []
    for gap in [0.0, 0.15, 0.3, 0.6, 1.0]:
        X, ids, member = _data(concentration_gap=gap)
        aucs.append(MembershipGeometry().fit(X, ids, member=member).auc_)
    aucs = pd.DataFrame(aucs)
    assert (aucs.diff().iloc[1:] > 0).all().all(), aucs


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_fusion_beats_best_single_statistic_on_complementary_case():
    # Members are both tighter (all four statistics) and more isolated from the
    # other identities (ProtoCE only): no single statistic weighs both signals.
    X, ids, member = make_membership_embeddings(
        n_members=300,
        n_nonmembers=300,
        n_features=64,
        concentration_gap=0.1,
        isolation_gap=0.2,
        random_state=0,
    )
    mg = MembershipGeometry(random_state=0).fit(X, ids, member=member)
    assert mg.fusion_auc_ > mg.auc_.max() + 0.02, (mg.fusion_auc_, mg.auc_)


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_domain_shift_inflates_the_auc():
    kw = {
        "n_members": 80,
        "n_nonmembers": 80,
        "n_features": 32,
        "concentration_gap": 0.2,
        "random_state": 1,
    }
    X, ids, m = make_membership_embeddings(**kw)
    Xs, ids_s, _ = make_membership_embeddings(domain_shift=0.4, **kw)
    # the generator keeps the members identical across domain_shift
    assert_allclose(X[m], Xs[m])
    refs = {"held-out": (X[~m], ids[~m]), "shifted": (Xs[~m], ids_s[~m])}
    res = audit_reference_sets(
        X[m],
        ids[m],
        refs,
        same_domain="held-out",
        estimator=MembershipGeometry(random_state=0),
    )
    assert set(res.columns) >= {"reference", "role", "statistic", "auc"}
    wide = res.pivot(index="statistic", columns="reference", values="auc")
    assert (wide["shifted"] > wide["held-out"]).all(), wide
    assert set(res.loc[res.reference == "held-out", "role"]) == {"membership"}
    # the same-domain row equals a direct fit on members + held-out non-members
    direct = MembershipGeometry(random_state=0).fit(X, ids, member=m)
    assert_allclose(
        wide.loc[list(STATISTICS), "held-out"], direct.auc_[list(STATISTICS)]
    )


def test_reference_helper_errors():
    X, ids, m = _data(n_members=5, n_nonmembers=5)
    with pytest.raises(ValueError, match="non-empty dict"):
        audit_reference_sets(X[m], ids[m], {})
    with pytest.raises(ValueError, match="same_domain"):
        audit_reference_sets(X[m], ids[m], {"a": (X[~m], ids[~m])}, same_domain="b")


# ---------------------------------------------------------------------------
# sklearn integration
# ---------------------------------------------------------------------------
@pytest.mark.slow
def test_cross_validate_identity_grouped_two_ways():
    X, ids, member = _data()
    Y = np.column_stack([ids, member.astype(int)])
    plain = cross_validate(
        MembershipGeometry(random_state=0),
        X,
        Y,
        groups=ids,
        cv=GroupKFold(4),
        return_indices=True,
    )
    for train, test in zip(plain["indices"]["train"], plain["indices"]["test"]):
        assert not set(ids[train]) & set(ids[test])  # folds split by identity
    assert (plain["test_score"] > 0.5).all()
    with sklearn.config_context(enable_metadata_routing=True):
        mg = (
            MembershipGeometry(random_state=0)
            .set_fit_request(member=True)
            .set_score_request(member=True)
        )
        routed = cross_validate(
            mg, X, ids, cv=GroupKFold(4), params={"member": member, "groups": ids}
        )
    assert_allclose(routed["test_score"], plain["test_score"])


@pytest.mark.slow
def test_grid_search_round_trip():
    X, ids, member = _data()
    Y = np.column_stack([ids, member.astype(int)])
    grid = GridSearchCV(
        MembershipGeometry(
            statistics=["pair_cos", "prototype_ce"], cv=3, random_state=0
        ),
        {"head": ["arcface", "cosface"]},
        cv=GroupKFold(3),
    ).fit(X, Y, groups=ids)
    assert grid.best_score_ > 0.5
    assert grid.best_estimator_.statistics_.columns[-1] == "prototype_ce"


def test_predictions_on_new_identities(fitted):
    mg, _ = fitted
    X, ids, member = _data(random_state=5)
    X = X.copy()
    X[0] = np.nan  # dropped row
    with pytest.warns(UserWarning, match="Dropped 1"):
        proba = mg.predict_proba(X, ids)
    assert proba.shape == (len(X), 2) and np.isnan(proba[0]).all()
    assert_allclose(proba[1:].sum(axis=1), 1.0)
    # every row of an identity carries that identity's value
    frame = pd.DataFrame({"id": ids[1:], "p": proba[1:, 1]})
    assert (frame.groupby("id")["p"].nunique() == 1).all()
    with pytest.warns(UserWarning):
        dec = mg.decision_function(X, ids)
        table = mg.score_identities(X, ids)
    first = dict(zip(table["identity"], table["membership_score"]))
    assert_allclose(dec[1:], [first[i] for i in ids[1:]])
    # score = AUC over the held-out identities of the fused score
    with pytest.warns(UserWarning):
        auc = mg.score(X, ids, member=member)
    m_id = pd.Series(member, index=ids).groupby(level=0).first()
    expected = roc_auc_score(m_id.loc[table["identity"]], table["membership_score"])
    assert auc == pytest.approx(expected, abs=1e-12)
    # a single new identity can be assessed
    one = mg.predict_proba(X[ids == 3], ids[ids == 3])
    assert one.shape == (8, 2)


@pytest.mark.slow
def test_other_classifier_and_statistics_subset():
    X, ids, member = _data()
    mg = MembershipGeometry(
        statistics=["pair_cos", "penalised_logit"],
        classifier=RandomForestClassifier(n_estimators=20, random_state=0),
        cv=3,
        n_permutations=9,  # each relabelling refits the forest on every fold
        random_state=0,
    ).fit(X, ids, member=member)
    assert list(mg.auc_.index) == ["pair_cos", "penalised_logit"]
    grouped = MembershipGeometry(cv=GroupKFold(4)).fit(X, ids, member=member)
    assert len(grouped.fusion_cv_auc_) == 4
    assert not hasattr(mg, "decision_function")  # the forest has none
    assert mg.predict_proba(X, ids).shape == (len(X), 2)


def test_fit_without_membership_is_a_geometry_table():
    X, ids, _ = _data()
    mg = MembershipGeometry().fit(X, ids)
    assert mg.statistics_["member"].isna().all()
    assert not hasattr(mg, "auc_") and not hasattr(mg, "predict_proba")
    with pytest.raises(ValueError, match="fit with member"):
        mg.score()


def test_errors_are_clear():
    X, ids, member = _data(n_members=6, n_nonmembers=6)
    mixed = member.copy()
    mixed[0] = not mixed[0]
    with pytest.raises(ValueError, match="constant within an identity.*1 identity"):
        MembershipGeometry().fit(X, ids, member=mixed)
    with pytest.raises(ValueError, match="both member and non-member"):
        MembershipGeometry().fit(X, ids, member=np.ones(len(ids)))
    with pytest.raises(ValueError, match="0/1 or boolean"):
        MembershipGeometry().fit(X, ids, member=np.where(member, "in", "out"))
    with pytest.raises(ValueError, match="given twice"):
        MembershipGeometry().fit(X, np.column_stack([ids, member]), member=member)
    with pytest.raises(ValueError, match="cv=10 folds"):
        MembershipGeometry(cv=10).fit(X, ids, member=member)
    with pytest.raises(ValueError, match="statistics must be"):
        MembershipGeometry(statistics=["pair_cos", "entropy"]).fit(X, ids)
    mg = MembershipGeometry(cv=3).fit(X, ids, member=member)
    with pytest.raises(ValueError, match="needs membership labels"):
        mg.score(X, ids)


def test_two_column_y_with_string_ids_and_bool_member():
    X, ids, member = _data(n_members=10, n_nonmembers=10)
    sid = np.array([f"p{i}" for i in ids])
    Y = np.column_stack([sid, member])  # booleans become the strings "True"/"False"
    a = MembershipGeometry(cv=3, random_state=0).fit(X, Y)
    b = MembershipGeometry(cv=3, random_state=0).fit(X, sid, member=member)
    pd.testing.assert_series_equal(a.auc_, b.auc_)
    assert a.score(X, Y) == b.score(X, sid, member=member)


def test_dropped_rows_keep_membership_aligned():
    X, ids, member = _data(n_members=10, n_nonmembers=10)
    X = X.copy()
    X[[0, 85]] = np.nan  # one member row, one non-member row
    with pytest.warns(UserWarning, match="Dropped 2"):
        mg = MembershipGeometry(cv=3).fit(X, ids, member=member)
    assert mg.drop_report_["non_finite"] == 2
    k = mg.statistics_.set_index("identity")["k"]
    assert k[0] == 7 and k[10] == 7 and k.drop([0, 10]).eq(8).all()
    assert mg.statistics_["member"].sum() == 10


def test_same_seed_bit_identical():
    X, ids, member = _data()
    a = MembershipGeometry(random_state=3).fit(X, ids, member=member)
    b = MembershipGeometry(random_state=3).fit(X, ids, member=member)
    assert a.fusion_auc_ == b.fusion_auc_
    pd.testing.assert_frame_equal(a.statistics_, b.statistics_)


# ---------------------------------------------------------------------------
# Calibrated null: permutation p-values, DeLong intervals, out-of-fold fusion
# ---------------------------------------------------------------------------
def _naive_delong_se(member, score):
    # DeLong et al. (1988) from the double loop over (member, non-member) pairs.
    pos, neg = score[member], score[~member]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return np.sqrt(v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg))


def test_delong_interval_matches_double_loop(fitted):
    mg, _ = fitted
    table = mg.statistics_
    member = table["member"].to_numpy(dtype=bool)
    for stat in STATISTICS:
        se = _naive_delong_se(member, table[stat].to_numpy())
        row = mg.separability_.loc[stat]
        assert row["auc_se"] == pytest.approx(se, rel=1e-12)
        assert row["ci_low"] == pytest.approx(max(row["auc"] - 1.959964 * se, 0), 1e-6)
        assert row["ci_high"] == pytest.approx(min(row["auc"] + 1.959964 * se, 1), 1e-6)
    # ties count one half in the placement values too
    m = np.array([1, 1, 0, 0, 0], bool)
    s = np.array([1.0, 0.5, 0.5, 0.0, 1.0])
    from skprivacy.membership._geometry import _delong

    assert _delong(m, s)[1] == pytest.approx(_naive_delong_se(m, s), rel=1e-12)


@pytest.mark.slow
def test_permutation_p_values_replay_a_naive_loop():
    X, ids, member = _data(n_members=12, n_nonmembers=9, concentration_gap=0.2)
    mg = MembershipGeometry(n_permutations=49, cv=3, random_state=7).fit(
        X, ids, member=member
    )
    assert mg.auc_p_values_.index.equals(mg.auc_.index)
    table = mg.statistics_
    m = table["member"].to_numpy(dtype=bool)
    # the same relabellings, drawn as the estimator draws them, scored by sklearn
    rng = np.random.default_rng(7)
    for stat in STATISTICS:
        score = table[stat].to_numpy()
        labels = rng.permuted(np.broadcast_to(m.astype(float), (49, len(m))), axis=1)
        null = [roc_auc_score(lab, score) for lab in labels]
        b = sum(a >= roc_auc_score(m, score) - 1e-12 for a in null)
        assert mg.auc_p_values_[stat] == pytest.approx((b + 1) / 50)


@pytest.mark.slow
def test_fusion_is_out_of_fold_lda_and_its_null_matches_refitting():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, ids, member = _data(n_members=25, n_nonmembers=20, concentration_gap=0.3)
    fast = MembershipGeometry(n_permutations=29, random_state=3).fit(
        X, ids, member=member
    )
    table = fast.statistics_
    F, m = table[list(STATISTICS)].to_numpy(), table["member"].to_numpy(dtype=int)
    lda = make_pipeline(StandardScaler(), LinearDiscriminantAnalysis())
    cv = StratifiedKFold(5, shuffle=True, random_state=3)
    expected = cross_val_score(lda, F, m, cv=cv, scoring="roc_auc")
    assert_allclose(fast.fusion_cv_auc_, expected, atol=1e-10)
    assert fast.fusion_auc_ == pytest.approx(expected.mean(), abs=1e-10)
    # the vectorised null (closed-form LDA) equals refitting sklearn's LDA on
    # every relabelling of the same folds
    slow = MembershipGeometry(classifier=lda, n_permutations=29, random_state=3).fit(
        X, ids, member=member
    )
    assert slow.fusion_auc_ == pytest.approx(fast.fusion_auc_, abs=1e-10)
    assert slow.fusion_p_value_ == fast.fusion_p_value_
    assert 1 / 30 <= fast.fusion_p_value_ <= 1


@pytest.mark.slow
def test_null_audits_are_calibrated():
    # 200 audits without signal (20 + 20 identities): each permutation
    # p-value rejects at 5% no more often than a Binomial(200, 0.05) allows
    # (one-sided, 0.1% false-alarm), and the out-of-fold fusion AUC is
    # centred on 0.5. (The issue measured fusion AUC up to 0.787 before.)
    from scipy.stats import binom

    p_single, p_fusion, fusion = [], [], []
    for seed in range(200):
        X, ids, member = make_membership_embeddings(
            20,
            20,
            n_samples_per_identity=5,
            n_features=32,
            concentration_gap=0.0,
            random_state=seed,
        )
        mg = MembershipGeometry(n_permutations=199, random_state=seed)
        mg.fit(X, ids, member=member)
        p_single.append(mg.auc_p_values_.to_numpy())
        p_fusion.append(mg.fusion_p_value_)
        fusion.append(mg.fusion_auc_)
    limit = binom.isf(0.001, 200, 0.05) / 200
    rejections = (np.array(p_single) < 0.05).mean(axis=0)
    assert (rejections <= limit).all(), (rejections, limit)
    assert np.mean(np.array(p_fusion) < 0.05) <= limit
    assert abs(np.mean(fusion) - 0.5) <= 0.02, np.mean(fusion)


def test_signal_gives_small_p_values():
    X, ids, member = _data(concentration_gap=0.6)
    mg = MembershipGeometry(n_permutations=199, random_state=0).fit(
        X, ids, member=member
    )
    assert (mg.auc_p_values_ == 1 / 200).all()
    assert mg.fusion_p_value_ == 1 / 200
    assert (mg.separability_["ci_low"] > 0.5).all()
    none = MembershipGeometry(n_permutations=0).fit(X, ids, member=member)
    assert none.auc_p_values_.isna().all() and np.isnan(none.fusion_p_value_)


# ---------------------------------------------------------------------------
# Probe-count matching (vMF-kappa depends on k)
# ---------------------------------------------------------------------------
def _k_mismatch(seed, d=512, n=60):
    # identical kappa for every identity; members probed k = 20 times,
    # non-members k = 5
    kw = {
        "n_features": d,
        "concentration_gap": 0.0,
        "identity_spread": 0.0,
        "random_state": seed,
    }
    Xa, ida, ma = make_membership_embeddings(n, n, n_samples_per_identity=20, **kw)
    Xb, idb, mb = make_membership_embeddings(n, n, n_samples_per_identity=5, **kw)
    X = np.vstack([Xa[ma], Xb[~mb]])
    ids = np.concatenate([ida[ma], idb[~mb]])
    member = np.concatenate([ma[ma], mb[~mb]])
    return X, ids, member


@pytest.mark.slow
def test_k_matched_kappa_is_at_chance_under_probe_count_mismatch():
    aucs = []
    for seed in range(6):
        X, ids, member = _k_mismatch(seed)
        mg = MembershipGeometry(n_permutations=0, random_state=seed)
        mg.fit(X, ids, member=member)
        assert mg.k_matched_ == 5
        aucs.append(mg.auc_["vmf_kappa"])
    assert abs(np.mean(aucs) - 0.5) <= 0.1, aucs
    assert (np.abs(np.array(aucs) - 0.5) <= 0.2).all(), aucs


def test_probe_count_warning_when_matching_is_off():
    from skprivacy.exceptions import ProbeCountWarning

    X, ids, member = _k_mismatch(0, n=30)
    with pytest.warns(ProbeCountWarning, match="AUC 1.00"):
        off = MembershipGeometry(match_k=False, n_permutations=0).fit(
            X, ids, member=member
        )
    # the artefact the issue measured: kappa at k = 5 is inflated, so members
    # (k = 20) look *less* concentrated
    assert off.auc_["vmf_kappa"] < 0.1 and off.k_matched_ is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbeCountWarning)
        MembershipGeometry(n_permutations=0).fit(X, ids, member=member)
        same_k = _data(n_members=10, n_nonmembers=10)
        MembershipGeometry(match_k=False, cv=3).fit(*same_k[:2], member=same_k[2])


def test_matched_subsample_equals_statistics_of_the_kept_rows():
    from skprivacy.membership import membership_statistics
    from skprivacy.membership._statistics import _matched_rows

    X, ids, member = _k_mismatch(1, d=32, n=8)
    mg = MembershipGeometry(cv=3, n_permutations=0, random_state=4)
    mg.fit(X, ids, member=member)
    codes = np.unique(ids, return_inverse=True)[1]
    keep = _matched_rows(codes, codes.max() + 1, 5, 4)
    assert np.bincount(codes[keep]).tolist() == [5] * 16
    sub = membership_statistics(X[keep], ids[keep]).set_index("identity")
    full = membership_statistics(X, ids).set_index("identity")
    got = mg.statistics_.set_index("identity")
    for stat in ["vmf_kappa", "penalised_logit", "prototype_ce"]:
        assert_allclose(got[stat], sub[stat], rtol=1e-12)
    assert_allclose(got["pair_cos"], full["pair_cos"], rtol=1e-12)
    assert (got["k"] == full["k"]).all()
    # uniform: over many seeds every probe of a k = 20 identity is kept
    # 5/20 of the time
    counts = np.zeros(20)
    for seed in range(400):
        kept = _matched_rows(np.zeros(20, int), 1, 5, seed)
        counts[kept] += 1
    assert np.abs(counts / 400 - 0.25).max() < 0.08


def test_reference_sets_return_the_distributions_behind_each_auc():
    kw = {
        "n_members": 12,
        "n_nonmembers": 10,
        "n_features": 16,
        "concentration_gap": 0.3,
        "random_state": 2,
    }
    X, ids, m = make_membership_embeddings(**kw)
    Xs, ids_s, _ = make_membership_embeddings(domain_shift=0.5, **kw)
    refs = {"held-out": (X[~m], ids[~m]), "shifted": (Xs[~m], ids_s[~m])}
    est = MembershipGeometry(cv=3, n_permutations=19, random_state=0)
    res, dist = audit_reference_sets(
        X[m],
        ids[m],
        refs,
        same_domain="held-out",
        estimator=est,
        return_distributions=True,
    )
    plain = audit_reference_sets(
        X[m], ids[m], refs, same_domain="held-out", estimator=est
    )
    pd.testing.assert_frame_equal(res, plain)
    assert list(dist.columns) == [
        "reference",
        "role",
        "statistic",
        "identity",
        "member",
        "k",
        "value",
    ]
    # the held-out rows are the statistics of a direct fit, labels as given
    direct = MembershipGeometry(cv=3, n_permutations=19, random_state=0).fit(
        X, ids, member=m
    )
    held = dist[dist["reference"] == "held-out"]
    assert set(held["role"]) == {"membership"}
    for stat in STATISTICS:
        got = held[held["statistic"] == stat].set_index("identity")
        want = direct.statistics_.set_index("identity")
        assert_allclose(got["value"], want.loc[got.index, stat], rtol=1e-12)
        assert (got["member"] == want.loc[got.index, "member"].astype(bool)).all()
        assert sorted(got.index) == sorted(np.unique(ids).tolist())
    # every (reference, statistic) group reproduces the reported AUC
    for (ref, stat), g in dist.groupby(["reference", "statistic"]):
        row = res[(res["reference"] == ref) & (res["statistic"] == stat)]
        assert row["auc"].item() == pytest.approx(
            roc_auc_score(g["member"], g["value"])
        )
        assert (g["member"].sum(), (~g["member"]).sum()) == (12, 10)


def test_float32_input_gives_the_float64_audit():
    # float32 rows stay float32 (ProtoCE's Gram blocks in float32); the
    # statistics agree with the float64 path to the stated rtol 1e-4 and the
    # rank-based AUCs and p-values are the same
    X, ids, member = _data(concentration_gap=0.3)
    X32 = X.astype(np.float32)
    kw = {"n_permutations": 49, "random_state": 0}
    a = MembershipGeometry(**kw).fit(X32, ids, member=member)
    b = MembershipGeometry(**kw).fit(X32.astype(np.float64), ids, member=member)
    for stat in STATISTICS:
        assert_allclose(a.statistics_[stat], b.statistics_[stat], rtol=1e-4)
    assert_allclose(a.auc_, b.auc_, atol=0.02)
    assert a.statistics_[list(STATISTICS)].dtypes.eq(np.float64).all()
    new = a.score_identities(X32[:24], ids[:24])
    assert_allclose(
        new["pair_cos"], b.score_identities(X[:24], ids[:24])["pair_cos"], rtol=1e-5
    )
