# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Membership at low false-positive rates: by-hand sweeps and exact intervals."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import binomtest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import roc_curve
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skprivacy.datasets import make_membership_embeddings
from skprivacy.membership import MembershipGeometry, membership_roc_curve


def _sweep_by_hand(member, score, target):
    """Largest TPR over thresholds (score >= t) whose FPR share is <= target."""
    member = np.asarray(member, bool)
    best = (0.0, np.inf, 0)  # t = +inf accepts nobody
    for t in sorted(set(score.tolist()), reverse=True):  # highest first
        accept = score >= t
        fpr = (accept & ~member).sum() / (~member).sum()
        tpr = (accept & member).sum() / member.sum()
        if fpr <= target + 1e-12 and tpr > best[0]:
            best = (tpr, t, int((accept & ~member).sum()))
    return best


@pytest.fixture(scope="module")
def fitted():
    X, ids, member = make_membership_embeddings(
        n_members=40, n_nonmembers=60, concentration_gap=0.4, random_state=1
    )
    mg = MembershipGeometry(random_state=0, n_permutations=0).fit(X, ids, member=member)
    return mg


def test_tpr_at_fpr_equals_a_by_hand_sweep(fitted):
    mg = fitted
    member = mg.statistics_["member"].to_numpy(dtype=bool)
    table = mg.tpr_at_fpr_
    assert list(table.index.get_level_values("statistic").unique()) == [
        "pair_cos",
        "vmf_kappa",
        "penalised_logit",
        "prototype_ce",
        "fusion",
    ]
    for (stat, fpr), row in table.iterrows():
        score = (
            mg.fusion_scores_
            if stat == "fusion"
            else mg.statistics_[stat].to_numpy(dtype=float)
        )
        tpr, threshold, n_fp = _sweep_by_hand(member, score, fpr)
        assert row["tpr"] == tpr
        assert row["threshold"] == threshold
        assert row["fpr_achieved"] == n_fp / 60
        assert row["resolvable"] == (60 >= 1 / fpr)


def test_tpr_intervals_equal_scipy_exact_binomial(fitted):
    for _, row in fitted.tpr_at_fpr_.iterrows():
        k = round(row["tpr"] * row["n_members"])
        ci = binomtest(k, int(row["n_members"])).proportion_ci(0.95, method="exact")
        assert_allclose([row["tpr_ci_low"], row["tpr_ci_high"]], [ci.low, ci.high])
        k = round(row["fpr_achieved"] * row["n_nonmembers"])
        ci = binomtest(k, int(row["n_nonmembers"])).proportion_ci(0.95, method="exact")
        assert_allclose(row["fpr_ci_high"], ci.high)


def test_fusion_scores_are_out_of_fold(fitted):
    mg = fitted
    F = mg.statistics_[list(mg.auc_.index)].to_numpy(dtype=float)
    member = mg.statistics_["member"].to_numpy(dtype=int)
    want = np.empty(len(member))
    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(F, member)
    for train, test in folds:
        model = make_pipeline(StandardScaler(), LinearDiscriminantAnalysis())
        want[test] = model.fit(F[train], member[train]).decision_function(F[test])
    assert_allclose(mg.fusion_scores_, want, rtol=1e-10)


@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 30),
    values=st.sampled_from([3, 10, 1000]),
)
def test_roc_curve_matches_sklearn_and_a_loop(seed, n, values):
    rng = np.random.default_rng(seed)
    member = np.r_[0, 1, rng.integers(0, 2, n)]
    score = rng.integers(0, values, member.size).astype(float)  # ties
    fpr, tpr, thr = membership_roc_curve(member, score)
    s_fpr, s_tpr, s_thr = roc_curve(member, score, drop_intermediate=False)
    assert_allclose(fpr, s_fpr)
    assert_allclose(tpr, s_tpr)
    assert_array_equal(thr[1:], s_thr[1:])
    for f, t, c in zip(fpr[1:], tpr[1:], thr[1:]):
        assert f == np.mean(score[member == 0] >= c)
        assert t == np.mean(score[member == 1] >= c)


def test_roc_curve_with_infinite_scores_and_bad_input():
    fpr, tpr, thr = membership_roc_curve([1, 1, 0], [np.inf, 1.0, 0.5])
    assert thr.tolist() == [np.inf, np.inf, 1.0, 0.5]
    assert tpr.tolist() == [0.0, 0.5, 1.0, 1.0] and fpr.tolist() == [0, 0, 0, 1]
    with pytest.raises(ValueError, match="both members .1. and non-members .0."):
        membership_roc_curve([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"score has 1 NaN.*row\(s\) 1"):
        membership_roc_curve([1, 0, 1], [0.1, np.nan, 0.2])
    with pytest.raises(ValueError, match="same length"):
        membership_roc_curve([1, 0], [0.1])


def test_tpr_at_fpr_absent_without_membership():
    X, ids, _ = make_membership_embeddings(n_members=6, n_nonmembers=6, random_state=0)
    mg = MembershipGeometry().fit(X, ids)
    assert not hasattr(mg, "tpr_at_fpr_") and not hasattr(mg, "fusion_scores_")


def test_sweep_reports_the_fewest_false_positives_at_the_best_tpr():
    from skprivacy.membership._geometry import _tpr_at_fpr_sweep

    # Scores: members 0.9, 0.8; non-members 0.7, 0.6, 0.1 ... (10 non-members).
    member = np.r_[1, 1, np.zeros(10)]
    score = np.r_[0.9, 0.8, 0.7, 0.6, np.linspace(0.0, 0.1, 8)]
    (r,) = _tpr_at_fpr_sweep(member, score, [0.2])  # 2 false positives allowed
    assert (r["n_tp"], r["n_fp"], r["threshold"]) == (2, 0, 0.8)
    assert _sweep_by_hand(member, score, 0.2) == (1.0, 0.8, 0)


# ---------------------------------------------------------------- displays
def test_membership_roc_display_draws_the_curves_on_log_axes(fitted):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skprivacy.plotting import MembershipROCDisplay

    mg = fitted
    display = MembershipROCDisplay.from_estimator(mg)
    member = mg.statistics_["member"].to_numpy(dtype=int)
    for name in ("pair_cos", "fusion"):
        score = mg.fusion_scores_ if name == "fusion" else mg.statistics_[name]
        fpr, tpr, _ = roc_curve(member, score, drop_intermediate=False)
        line = display.lines_[name]
        assert_allclose(line.get_xdata(), fpr)
        assert_allclose(line.get_ydata(), tpr)
    assert display.ax_.get_xscale() == "log" and display.ax_.get_yscale() == "log"
    assert_allclose(display.ax_.get_xlim()[0], 1 / (2 * 60))
    linear = MembershipROCDisplay.from_estimator(
        mg, statistics=["vmf_kappa"], log_scale=False
    )
    assert list(linear.lines_) == ["vmf_kappa"] and linear.ax_.get_xscale() == "linear"
    with pytest.raises(ValueError, match="Unknown statistics"):
        MembershipROCDisplay.from_estimator(mg, statistics=["nope"])
    X, ids, _ = make_membership_embeddings(n_members=6, n_nonmembers=6, random_state=0)
    with pytest.raises(ValueError, match="without membership"):
        MembershipROCDisplay.from_estimator(MembershipGeometry().fit(X, ids))
    plt.close("all")


def test_pair_roc_display_log_scale():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skprivacy.plotting import PairROCDisplay

    y = np.r_[np.zeros(20), np.ones(20)]
    s = np.r_[np.linspace(0, 1, 20), np.linspace(0.5, 1.5, 20)]
    display = PairROCDisplay.from_predictions(y, s, log_scale=True)
    assert display.ax_.get_xscale() == "log"
    assert_allclose(display.ax_.get_xlim()[0], 1 / 20 / 2)
    assert PairROCDisplay.from_predictions(y, s).ax_.get_xscale() == "linear"
    plt.close("all")


def test_unfittable_fusion_folds_give_nan_rows_not_an_error():
    X, ids, member = make_membership_embeddings(
        n_members=2, n_nonmembers=3, n_samples_per_identity=4, random_state=0
    )
    mg = MembershipGeometry(cv=2, n_permutations=0, random_state=0)
    mg.fit(X, ids, member=member)
    # Training folds of 2 identities cannot fit the fused LDA: NaN scores.
    assert np.isnan(mg.fusion_scores_).any()
    assert mg.tpr_at_fpr_.loc["pair_cos"]["tpr"].notna().all()
