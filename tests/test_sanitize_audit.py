# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the open-set verification audit, utility helpers and transfer."""

import itertools
import warnings

import matplotlib
import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import binomtest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GroupKFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline

from skprivacy.datasets import make_identity_embeddings
from skprivacy.exceptions import UnresolvableRateWarning
from skprivacy.sanitize import (
    ISP,
    OpenSetVerificationAuditor,
    attribute_probe_accuracy,
    plot_privacy_utility,
    privacy_utility_tradeoff,
    retrieval_precision_at_k,
    tar_at_far,
    transfer_audit,
)

matplotlib.use("Agg")


def _naive_tar(F, ids, far):
    """TAR at FAR from a double loop over pairs: sort impostors, threshold, count."""
    F = F / np.linalg.norm(F, axis=1, keepdims=True)
    genuine, impostor = [], []
    for i, j in itertools.combinations(range(len(F)), 2):
        s = float(np.dot(F[i], F[j]))
        (genuine if ids[i] == ids[j] else impostor).append(s)
    impostor = sorted(impostor, reverse=True)
    k = int(np.floor(far * len(impostor) + 1e-9))
    threshold = impostor[k]
    tar = sum(g > threshold for g in genuine) / len(genuine)
    return tar, threshold, len(genuine), len(impostor)


@pytest.fixture(scope="module")
def split():
    X, ids = make_identity_embeddings(
        30, 8, 16, n_identity_dims=4, noise=0.8, random_state=0
    )
    train, test = ids < 15, ids >= 15
    return X[train], ids[train], X[test], ids[test]


@pytest.mark.parametrize("far", [1e-3, 1e-2, 0.05])
def test_tar_matches_independent_computation_raw(split, far):
    Xtr, idtr, Xte, idte = split
    auditor = OpenSetVerificationAuditor("raw", far=far).fit(Xtr, idtr)
    tar, thr, n_gen, n_imp = _naive_tar(Xte, idte, far)
    assert auditor.score(Xte, idte) == pytest.approx(tar, abs=1e-12)
    audit = auditor.audit(Xte, idte)
    assert audit.threshold == pytest.approx(thr, abs=1e-12)
    assert (audit.n_genuine_pairs, audit.n_impostor_pairs) == (n_gen, n_imp)
    assert audit.far_achieved <= far
    assert not audit.impostor_pairs_sampled


def test_tar_matches_independent_computation_ridge(split):
    Xtr, idtr, Xte, idte = split
    auditor = OpenSetVerificationAuditor("ridge", far=1e-2).fit(Xtr, idtr)
    # Independent attacker: sklearn Ridge on the centred one-hot of unit rows.
    Ztr = Xtr / np.linalg.norm(Xtr, axis=1, keepdims=True)
    onehot = (idtr[:, None] == np.unique(idtr)[None, :]).astype(float)
    ridge = Ridge(alpha=1.0).fit(Ztr, onehot - onehot.mean(0))
    F = ridge.predict(Xte / np.linalg.norm(Xte, axis=1, keepdims=True))
    tar, thr, _, _ = _naive_tar(F, idte, 1e-2)
    assert auditor.score(Xte, idte) == pytest.approx(tar, abs=1e-12)
    assert auditor.audit(Xte, idte).threshold == pytest.approx(thr, abs=1e-10)


def test_tar_at_far_hand_worked_case():
    # Impostors 0.1..0.5: FAR 0.2 allows k = 1 false accept; threshold = 2nd
    # largest impostor = 0.4; genuine 0.9, 0.45 pass, 0.3 does not.
    res = tar_at_far([0.9, 0.45, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5], far=0.2)
    assert res.threshold == 0.4
    assert res.tar == pytest.approx(2 / 3)
    assert res.n_false_accepts == 1 and res.far_achieved == pytest.approx(0.2)
    # Clopper-Pearson interval as scipy computes it.
    ci = binomtest(2, 3).proportion_ci(confidence_level=0.95, method="exact")
    assert_allclose(res.tar_interval, (ci.low, ci.high), rtol=1e-8)
    ub = binomtest(1, 5, alternative="less").proportion_ci(
        confidence_level=0.95, method="exact"
    )
    assert res.far_upper == pytest.approx(ub.high, rel=1e-8)


def test_unresolvable_far_warns(split):
    Xtr, idtr, Xte, idte = split
    auditor = OpenSetVerificationAuditor("raw", far=1e-4).fit(Xtr, idtr)
    with pytest.warns(UnresolvableRateWarning, match="at least 10000"):
        audit = auditor.audit(Xte, idte)
    assert not audit.resolvable
    assert audit.far_achieved == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnresolvableRateWarning)
        OpenSetVerificationAuditor("raw", far=1e-2).fit(Xtr, idtr).score(Xte, idte)


def test_impostor_sampling_is_seeded_and_sized(split):
    Xtr, idtr, Xte, idte = split
    kw = {"far": 1e-2, "max_impostor_pairs": 3000, "random_state": 3}
    a = OpenSetVerificationAuditor("raw", **kw).fit(Xtr, idtr)
    b = OpenSetVerificationAuditor("raw", **kw).fit(Xtr, idtr)
    assert a.score(Xte, idte) == b.score(Xte, idte)
    audit = a.audit(Xte, idte)
    assert audit.impostor_pairs_sampled
    assert audit.n_impostor_pairs == 3000
    assert audit.n_impostor_pairs_total == 120 * 119 // 2 - 15 * 28
    # The sample estimates the same quantity as the exhaustive audit.
    full = OpenSetVerificationAuditor("raw", far=1e-2).fit(Xtr, idtr)
    assert abs(full.score(Xte, idte) - audit.tar) < 0.15


def test_score_attributes_roc_and_results(split):
    Xtr, idtr, Xte, idte = split
    auditor = OpenSetVerificationAuditor(far=1e-2).fit(Xtr, idtr)
    state = dict(vars(auditor))
    tar = auditor.score(Xte, idte)
    assert vars(auditor).keys() == state.keys()  # score has no side effects
    audit = auditor.audit(Xte, idte)
    assert audit.tar == tar
    lo, hi = audit.tar_interval
    assert lo <= tar <= hi
    assert list(audit.roc.columns) == ["far", "tar", "threshold"]
    assert audit.roc["far"].is_monotonic_increasing
    assert 0.5 < audit.auc <= 1
    assert len(audit.results) == 15
    assert audit.results["n_genuine_pairs"].sum() == audit.n_genuine_pairs


def test_overlapping_identities_warn(split):
    Xtr, idtr, _, _ = split
    auditor = OpenSetVerificationAuditor(far=1e-2).fit(Xtr, idtr)
    with pytest.warns(UserWarning, match="open-set verification assumes disjoint"):
        auditor.score(Xtr, idtr)


@pytest.mark.parametrize("probe", ["mlp", LogisticRegression(max_iter=500)])
def test_other_probes_run(split, probe):
    Xtr, idtr, Xte, idte = split
    auditor = OpenSetVerificationAuditor(probe, far=1e-2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MLP convergence on tiny data
        tar = auditor.fit(Xtr, idtr).score(Xte, idte)
    assert 0 <= tar <= 1


def test_pipeline_under_identity_disjoint_cross_validation():
    X, ids = make_identity_embeddings(
        40, 8, 24, n_identity_dims=4, separation=2.0, noise=0.5, random_state=1
    )
    raw = cross_validate(
        OpenSetVerificationAuditor(far=1e-3),
        X,
        ids,
        groups=ids,
        cv=GroupKFold(n_splits=2),
    )
    sanitised = cross_validate(
        make_pipeline(ISP(4), OpenSetVerificationAuditor(far=1e-3)),
        X,
        ids,
        groups=ids,
        cv=GroupKFold(n_splits=2),
    )
    assert np.all(np.isfinite(sanitised["test_score"]))
    assert sanitised["test_score"].mean() < raw["test_score"].mean() - 0.3


def test_leakage_scorer_selects_the_most_private(split):
    metrics = pytest.importorskip("skprivacy.metrics")
    X, ids = make_identity_embeddings(
        40, 8, 24, n_identity_dims=4, noise=0.5, random_state=1
    )
    res = cross_validate(
        make_pipeline(ISP(4), OpenSetVerificationAuditor(far=1e-3)),
        X,
        ids,
        groups=ids,
        cv=GroupKFold(n_splits=2),
        scoring=metrics.leakage_scorer,
    )
    assert np.all(res["test_score"] <= 0)


@pytest.mark.slow
def test_synthetic_acceptance_tar_and_attribute_utility():
    # Known identity subspace (k = 6) and an orthogonal attribute subspace.
    b = make_identity_embeddings(
        160,
        16,
        48,
        n_identity_dims=6,
        n_attribute_classes=3,
        attribute_strength=0.12,
        separation=1.5,
        noise=0.5,
        return_X_y=False,
        random_state=0,
    )
    X, ids, attr = b.data, b.identity, b.attribute
    train, test = ids < 80, ids >= 80
    kw = {"far": 1e-4, "max_impostor_pairs": 300_000, "random_state": 0}
    before = OpenSetVerificationAuditor(**kw).fit(X[train], ids[train])
    audit_before = before.audit(X[test], ids[test])
    tar_before = audit_before.tar
    isp = ISP(n_components=6).fit(X[train], ids[train])
    # The estimated subspace is the planted one.
    assert subspace_angles_max(isp.components_.T, b.identity_basis) < 0.2
    Z = isp.transform(X)
    after = OpenSetVerificationAuditor(**kw).fit(Z[train], ids[train])
    audit_after = after.audit(Z[test], ids[test])
    tar_after = audit_after.tar
    assert audit_before.resolvable and audit_after.resolvable
    assert tar_before > 0.3
    assert tar_after <= 0.01
    acc_before = attribute_probe_accuracy(X[test], attr[test], groups=ids[test])
    acc_after = attribute_probe_accuracy(Z[test], attr[test], groups=ids[test])
    assert 0.6 < acc_before < 0.99  # not saturated, so a drop would show
    assert abs(acc_after - acc_before) <= 0.02


def subspace_angles_max(A, B):
    from scipy.linalg import subspace_angles

    return subspace_angles(A, B).max()


def test_retrieval_precision_matches_loop():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 5))
    labels = rng.integers(0, 3, 30)
    groups = np.repeat(np.arange(10), 3)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    for k, use_groups in [(1, False), (4, False), (4, True)]:
        precisions = []
        for q in range(30):
            cands = [
                j
                for j in range(30)
                if j != q and not (use_groups and groups[j] == groups[q])
            ]
            top = sorted(cands, key=lambda j: -Z[q] @ Z[j])[:k]
            precisions.append(np.mean([labels[j] == labels[q] for j in top]))
        got = retrieval_precision_at_k(
            X, labels, k=k, groups=groups if use_groups else None
        )
        assert got == pytest.approx(np.mean(precisions))


def test_attribute_probe_accuracy_matches_cross_val_score():
    X, ids, attr = make_identity_embeddings(
        12, 10, 16, n_identity_dims=3, n_attribute_classes=2, random_state=0
    )
    expected = cross_val_score(
        LogisticRegression(max_iter=1000), X, attr, groups=ids, cv=GroupKFold(4)
    ).mean()
    assert attribute_probe_accuracy(X, attr, groups=ids, cv=4) == pytest.approx(
        expected
    )


@pytest.mark.slow
def test_tradeoff_table_and_plot():
    X, ids, attr = make_identity_embeddings(
        40,
        8,
        24,
        n_identity_dims=4,
        n_attribute_classes=2,
        attribute_strength=0.3,
        random_state=0,
    )
    table = privacy_utility_tradeoff(
        X,
        ids,
        attr,
        param_values=[None, 0, 4],
        auditor=OpenSetVerificationAuditor(far=1e-2, random_state=0),
    )
    assert np.isnan(table["n_components"].iloc[0])  # None: no sanitiser at all
    assert list(table["n_components"].iloc[1:]) == [0, 4]
    for col in [
        "tar",
        "tar_lower",
        "tar_upper",
        "attribute_accuracy",
        "precision_at_5",
    ]:
        assert col in table
    assert table.tar.iloc[2] < table.tar.iloc[1] - 0.2
    assert (table.tar_lower <= table.tar).all() and (table.tar <= table.tar_upper).all()
    # Pooled over the two held-out halves of 20 identities x 8 rows.
    assert table.n_impostor_pairs.iloc[0] == 2 * (160 * 159 // 2 - 20 * 28)
    ax = plot_privacy_utility(table.iloc[1:])
    assert ax.get_xlabel() == "n_components"


def test_transfer_audit_on_disjoint_identities():
    X, ids = make_identity_embeddings(
        90, 8, 24, n_identity_dims=4, separation=2.0, noise=0.5, random_state=4
    )
    src, tgt = ids < 30, ids >= 30
    table = transfer_audit(
        ISP(4),
        X[src],
        ids[src],
        X[tgt],
        ids[tgt],
        auditor=OpenSetVerificationAuditor(far=1e-3, random_state=0),
    )
    assert list(table.stage) == ["before", "after"]
    assert table.tar.iloc[1] < table.tar.iloc[0] - 0.3
    with pytest.raises(ValueError, match="disjoint identities"):
        transfer_audit(ISP(2), X[src], ids[src], X, ids)


@pytest.mark.slow
def test_clopper_pearson_coverage_by_simulation():
    # With i.i.d. continuous scores the FAR at the order-statistic threshold is
    # Beta(k + 1, n - k) distributed, so the one-sided bound must cover the true
    # FAR in 95% of runs; given the threshold, genuine accepts are binomial, so
    # the two-sided TAR interval must cover the true TAR in at least 95%.
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    n_rep, n_imp, n_gen, far = 1500, 1000, 60, 0.01
    far_covered = tar_covered = 0
    for _ in range(n_rep):
        imp = rng.standard_normal(n_imp)
        gen = rng.standard_normal(n_gen) + 2.0
        res = tar_at_far(gen, imp, far=far)
        true_far = norm.sf(res.threshold)
        true_tar = norm.sf(res.threshold - 2.0)
        far_covered += true_far <= res.far_upper
        tar_covered += res.tar_interval[0] <= true_tar <= res.tar_interval[1]
    # Binomial standard error of a 95% rate over 1500 runs is 0.0056.
    assert abs(far_covered / n_rep - 0.95) < 0.02
    assert tar_covered / n_rep >= 0.94
