"""Display objects: drawn data checked against independent computations."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import normalize

from skprivacy import (
    GaussMechAuditor,
    KDELRAuditor,
    MembershipGeometry,
    MMDTVAuditor,
    PrototypeAttacker,
    RenyiPressure,
    RetrievalAttacker,
    ROCHTAuditor,
    pressure_ladder,
)
from skprivacy.auditors import (
    mmd_bandwidth_sweep,
    residual_gaussianity,
    split_half_controls,
)
from skprivacy.datasets import make_identity_embeddings, make_membership_embeddings
from skprivacy.plotting import (
    BandwidthSweepDisplay,
    EpsilonDistributionDisplay,
    MembershipDistributionDisplay,
    PairROCDisplay,
    PermutationPValueDisplay,
    PressureStagesDisplay,
    PrivacyUtilityDisplay,
    ResidualQQDisplay,
)
from skprivacy.sanitize import plot_privacy_utility


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    return make_identity_embeddings(5, 12, 8, noise=1.5, random_state=0)


def _box_medians(artists):
    # Horizontal boxes: the median line is vertical at x = median.
    return [line.get_xdata()[0] for line in artists["medians"]]


def _ticklabels(ax, axis="y"):
    ticks = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    return [t.get_text() for t in ticks]


# ------------------------------------------------------------ epsilon display
def test_epsilon_display_from_auditors(data):
    X, ids = data
    auditors = {
        "GaussMech": GaussMechAuditor(n_pairs=None).fit(X, ids),
        "KDE-LR": KDELRAuditor(n_pairs=None).fit(X, ids),
        "MMD-TV": MMDTVAuditor(n_pairs=None).fit(X, ids),
    }
    display = EpsilonDistributionDisplay.from_estimator(auditors)
    assert _ticklabels(display.ax_) == [f"{k} (n=10)" for k in auditors]
    expected = [np.median(a.results_["epsilon"]) for a in auditors.values()]
    assert_allclose(_box_medians(display.distributions_), expected, rtol=1e-12)
    # First series on top.
    positions = [line.get_ydata().mean() for line in display.distributions_["medians"]]
    assert positions == sorted(positions, reverse=True)
    assert display.ax_.get_xscale() == "symlog"
    assert display.figure_ is display.ax_.figure


def test_epsilon_display_counts_infinite_values_and_violins():
    eps = {"ROC-HT": [0.5, np.inf, 1.5, np.inf, np.nan], "all infinite": [np.inf]}
    display = EpsilonDistributionDisplay.from_epsilons(eps, kind="violin")
    assert display.n_infinite_ == {"ROC-HT": 2, "all infinite": 1}
    texts = sorted(t.get_text() for t in display.ax_.texts)
    assert texts == ["+1 infinite", "+2 infinite"]
    # NaN is ignored in the count n; only the finite values form the violin.
    assert _ticklabels(display.ax_) == ["ROC-HT (n=4)", "all infinite (n=1)"]
    assert len(display.distributions_["bodies"]) == 1


def test_epsilon_display_certificate_column_and_labels(data):
    X, ids = data
    cert = MMDTVAuditor(n_pairs=None, confidence=0.9).fit(X, ids)
    point = GaussMechAuditor(n_pairs=None).fit(X, ids)
    display = EpsilonDistributionDisplay.from_estimator([point, cert])
    assert _ticklabels(display.ax_) == [
        "GaussMechAuditor (n=10)",
        "MMDTVAuditor (certificate) (n=10)",
    ]
    assert_allclose(
        _box_medians(display.distributions_)[1],
        np.median(cert.results_["epsilon_lower"]),
    )
    explicit = EpsilonDistributionDisplay.from_estimator(cert, column="epsilon")
    assert_allclose(
        _box_medians(explicit.distributions_), [np.median(cert.results_["epsilon"])]
    )


def test_epsilon_display_errors(data):
    X, ids = data
    with pytest.raises(NotFittedError):
        EpsilonDistributionDisplay.from_estimator(GaussMechAuditor())
    with pytest.raises(TypeError, match="pair auditors"):
        EpsilonDistributionDisplay.from_estimator(
            MembershipGeometry().fit(*make_membership_embeddings(random_state=0)[:2])
        )
    gm = GaussMechAuditor().fit(X, ids)
    with pytest.raises(ValueError, match="no column 'p_value'"):
        EpsilonDistributionDisplay.from_estimator(gm, column="p_value")
    with pytest.raises(ValueError, match="same label"):
        EpsilonDistributionDisplay.from_estimator([gm, gm])
    with pytest.raises(ValueError, match="non-empty dict"):
        EpsilonDistributionDisplay.from_epsilons([1.0, 2.0])
    with pytest.raises(ValueError, match="'box' or 'violin'"):
        EpsilonDistributionDisplay.from_epsilons({"a": [1.0]}, kind="bar")


# ----------------------------------------------------------------- pair ROC
def _independent_oof_roc(X, ids, id_a, id_b, n_folds, seed):
    """Out-of-fold LR scores of a pair, written from DESIGN's ROC-HT recipe."""
    Z = normalize(X)
    Xp = np.vstack([Z[ids == id_a], Z[ids == id_b]])
    yp = np.r_[np.zeros((ids == id_a).sum()), np.ones((ids == id_b).sum())]
    scores = np.empty(len(yp))
    for train, test in StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(
        Xp, yp
    ):
        clf = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)
        scores[test] = clf.fit(Xp[train], yp[train]).predict_proba(Xp[test])[:, 1]
    return yp, scores


def test_pair_roc_from_estimator_matches_independent_curve(data):
    X, ids = data
    audit = ROCHTAuditor(n_pairs=None, random_state=3).fit(X, ids)
    display = PairROCDisplay.from_estimator(audit, X, ids)
    best = audit.results_.sort_values(["auc", "epsilon"], ascending=False).iloc[0]
    assert display.pair == (best["id_a"], best["id_b"])
    y_true, y_score = _independent_oof_roc(
        X, ids, best["id_a"], best["id_b"], int(best["n_folds"]), 3
    )
    fpr, tpr, _ = roc_curve(y_true, y_score, drop_intermediate=False)
    assert_allclose(display.fpr, fpr)
    assert_allclose(display.tpr, tpr)
    assert display.roc_auc == pytest.approx(roc_auc_score(y_true, y_score), abs=1e-12)
    assert display.roc_auc == pytest.approx(best["auc"], abs=1e-12)
    assert display.epsilon == best["epsilon"]
    assert (display.kov_fpr, display.kov_tpr) == (best["fpr"], best["tpr"])
    assert_allclose(display.line_.get_xdata(), fpr)
    assert display.chance_level_.get_xdata().tolist() == [0, 1]
    assert_allclose(display.kov_point_.get_offsets(), [[best["fpr"], best["tpr"]]])


def test_pair_roc_replays_seeded_classifier_of_every_pair(data):
    # A random forest left unseeded gets a per-pair seed during fit; the
    # accessor must replay it, so each pair's curve gives its table row.
    X, ids = data
    rf = RandomForestClassifier(n_estimators=8, max_depth=3)
    audit = ROCHTAuditor(clone(rf), n_pairs=4, cv=3, random_state=1).fit(X, ids)
    for row in audit.results_.itertuples():
        # Reversed order on purpose: the display keeps the audit's orientation.
        display = PairROCDisplay.from_estimator(
            audit, X, ids, pair=(row.id_b, row.id_a)
        )
        assert display.pair == (row.id_a, row.id_b)
        assert display.epsilon == row.epsilon
        assert display.roc_auc == pytest.approx(row.auc, abs=1e-12)


def test_pair_roc_from_predictions_by_hand_and_region():
    y = [0, 0, 0, 1, 1, 1]
    s = [0.9, 0.2, 0.5, 0.1, 0.6, 0.8]
    display = PairROCDisplay.from_predictions(y, s, show_region=True)
    # Operating points (1/3, 2/3) give log((2/3)/(1/3)) = log 2 both ways.
    assert display.epsilon == pytest.approx(math.log(2))
    assert (display.kov_fpr, display.kov_tpr) == pytest.approx((1 / 3, 2 / 3))
    assert display.roc_auc == pytest.approx(roc_auc_score(y, s))
    upper, lower = display.region_
    # Both boundary lines of the epsilon-DP region pass through the KOV point.
    for line in (upper, lower):
        assert np.interp(1 / 3, line.get_xdata(), line.get_ydata()) == pytest.approx(
            2 / 3, abs=1e-9
        )
    inf = PairROCDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    assert inf.epsilon == math.inf
    assert inf.region_ == []
    assert "epsilon inf" in inf.kov_point_.get_label()


def test_pair_roc_errors(data):
    X, ids = data
    with pytest.raises(TypeError, match="ROCHTAuditor"):
        PairROCDisplay.from_estimator(GaussMechAuditor().fit(X, ids), X, ids)
    audit = ROCHTAuditor(n_pairs=2).fit(X, ids)
    with pytest.raises(ValueError, match="not among the audited"):
        PairROCDisplay.from_estimator(audit, X, ids, pair=(0, 99))
    with pytest.raises(ValueError, match="two different identities"):
        audit.pair_scores(X, ids, (0, 0))
    unseeded = ROCHTAuditor(n_pairs=2, random_state=np.random.RandomState(0))
    with pytest.raises(ValueError, match="integer random_state"):
        PairROCDisplay.from_estimator(unseeded.fit(X, ids), X, ids)


# ------------------------------------------------------------ bandwidth sweep
def test_bandwidth_sweep_display(data):
    X, ids = data
    display = BandwidthSweepDisplay.from_data(X, ids, scales=[0.5, 1.0, 2.0])
    sweep = mmd_bandwidth_sweep(X, ids, scales=[0.5, 1.0, 2.0])
    assert_allclose(display.lines_["max"].get_ydata(), sweep["max_epsilon"])
    assert_allclose(display.lines_["median"].get_ydata(), sweep["median_epsilon"])
    assert_allclose(display.lines_["max"].get_xdata(), [0.5, 1.0, 2.0])
    ceiling = 2 * math.atanh(math.sqrt(2) / 2)
    assert display.ceiling_line_.get_ydata()[0] == pytest.approx(ceiling)
    gonzalez = BandwidthSweepDisplay.from_data(X, ids, scales=[1.0], bound="gonzalez")
    assert gonzalez.ceiling_line_ is None
    only_max = BandwidthSweepDisplay.from_sweep(
        sweep[["bandwidth_scale", "max_epsilon"]]
    )
    assert list(only_max.lines_) == ["max"]
    with pytest.raises(ValueError, match="max_epsilon"):
        BandwidthSweepDisplay.from_sweep(sweep[["bandwidth_scale"]])


# --------------------------------------------------------- privacy-utility
@pytest.fixture
def tradeoff_table():
    return pd.DataFrame(
        {
            "n_components": [0, 2, 8],
            "tar": [0.7, 0.3, 0.05],
            "tar_lower": [0.6, 0.2, 0.01],
            "tar_upper": [0.8, 0.4, 0.1],
            "attribute_accuracy": [0.9, 0.88, 0.8],
            "precision_at_5": [0.6, 0.55, 0.4],
        }
    )


def test_privacy_utility_display(tradeoff_table):
    display = PrivacyUtilityDisplay.from_tradeoff(tradeoff_table)
    assert_allclose(display.line_.get_ydata(), tradeoff_table["tar"])
    assert list(display.utility_lines_) == ["attribute_accuracy", "precision_at_5"]
    assert_allclose(
        display.utility_lines_["precision_at_5"].get_ydata(),
        tradeoff_table["precision_at_5"],
    )
    assert _ticklabels(display.ax_, "x") == ["0", "2", "8"]
    assert display.ax_.get_xlabel() == "n_components"
    band = display.band_.get_paths()[0].vertices
    assert band[:, 1].min() == 0.01 and band[:, 1].max() == 0.8
    assert display.right_ax_.get_shared_x_axes().joined(display.ax_, display.right_ax_)
    narrowed = PrivacyUtilityDisplay.from_tradeoff(
        tradeoff_table.drop(columns=["tar_lower", "tar_upper"]),
        utility="precision_at_5",
    )
    assert narrowed.band_ is None and list(narrowed.utility_lines_) == [
        "precision_at_5"
    ]
    with pytest.raises(ValueError, match="'tar'"):
        PrivacyUtilityDisplay.from_tradeoff(tradeoff_table.drop(columns="tar"))


def test_plot_privacy_utility_delegates(tradeoff_table):
    fig, ax = plt.subplots()
    out = plot_privacy_utility(tradeoff_table, ax=ax)
    assert out is ax
    assert_allclose(ax.lines[0].get_ydata(), tradeoff_table["tar"])
    assert [line.get_label() for line in ax.right_ax.lines] == [
        "attribute_accuracy",
        "precision_at_5",
    ]


# ------------------------------------------------------------------ pressure
@pytest.fixture(scope="module")
def releases_data():
    X1, ids = make_identity_embeddings(8, 10, 8, random_state=0)
    X2, _ = make_identity_embeddings(8, 10, 8, separation=0.3, random_state=1)
    return np.hstack([X1, X2]), ids, {"face": slice(0, 8), "body": slice(8, 16)}


def test_pressure_display_from_estimator(releases_data):
    X, ids, releases = releases_data
    audit = RenyiPressure(releases=releases, n_repeats=2, random_state=0).fit(X, ids)
    display = PressureStagesDisplay.from_estimator(audit, alpha=2)
    res = audit.results_[audit.results_["alpha"] == 2]
    cum = res[res["kind"] == "cumulative"].sort_values("t")
    single = res[res["kind"] == "single"].sort_values("t")
    (series,) = display.lines_
    assert series == "alpha=2"
    line = display.lines_[series].lines[0]
    assert_allclose(line.get_ydata(), cum["vrpi"])
    assert_allclose(display.single_markers_[series].get_ydata(), single["vrpi"])
    assert _ticklabels(display.ax_, "x") == ["face", "face+body"]
    assert display.ceiling_line_.get_ydata()[0] == pytest.approx(math.log(8))
    # Error bars span +- one standard deviation over the repeats.
    segments = display.lines_[series].lines[2][0].get_segments()
    assert_allclose([s[1, 1] - s[0, 1] for s in segments], 2 * cum["vrpi_std"])
    every = PressureStagesDisplay.from_estimator(audit, measure="p_guess")
    assert len(every.lines_) == len(np.atleast_1d(audit.alphas))
    assert every.ceiling == 1.0


def test_pressure_display_from_ladder(releases_data):
    X, ids, releases = releases_data
    table = pressure_ladder(
        X,
        ids,
        {"A0": RetrievalAttacker(), "A2": PrototypeAttacker(n_neighbors=3)},
        releases=releases,
        alphas=(2.0, np.inf),
        random_state=0,
    )
    display = PressureStagesDisplay.from_results(table, alpha=np.inf, show_single=False)
    assert list(display.lines_) == ["A0", "A2"]
    assert display.single_markers_ == {}
    a2 = table[(table["attacker"] == "A2") & (table["alpha"] == np.inf)]
    a2 = a2[a2["kind"] == "cumulative"].sort_values("t")
    assert_allclose(display.lines_["A2"].lines[0].get_ydata(), a2["vrpi"])
    both = PressureStagesDisplay.from_results(table)
    assert sorted(both.lines_) == [
        "A0, alpha=2",
        "A0, alpha=inf",
        "A2, alpha=2",
        "A2, alpha=inf",
    ]
    with pytest.raises(ValueError, match="not among the table's orders"):
        PressureStagesDisplay.from_results(table, alpha=7)
    with pytest.raises(ValueError, match="lack column"):
        PressureStagesDisplay.from_results(table, measure="nope")
    with pytest.raises(TypeError, match="RenyiPressure"):
        PressureStagesDisplay.from_estimator(ROCHTAuditor())


# ---------------------------------------------------------------- membership
def _long_frame(seed=0):
    """A frame in the layout of audit_reference_sets' per-identity output."""
    rng = np.random.default_rng(seed)
    rows = []
    for ref, shift in [("held-out", 0.2), ("web", 1.5)]:
        for stat, scale in [("pair_cos", 0.1), ("vmf_kappa", 50.0)]:
            for i in range(12):
                rows.append((ref, stat, f"m{i}", True, scale * rng.normal(shift)))
            for i in range(9):
                rows.append((ref, stat, f"{ref}/n{i}", False, scale * rng.normal()))
    return pd.DataFrame(
        rows, columns=["reference", "statistic", "identity", "member", "value"]
    )


def test_membership_display_from_frame():
    frame = _long_frame()
    display = MembershipDistributionDisplay.from_frame(frame)
    assert len(display.axes_) == 2
    for ref in ["held-out", "web"]:
        for stat in ["pair_cos", "vmf_kappa"]:
            sub = frame[(frame["reference"] == ref) & (frame["statistic"] == stat)]
            assert display.auc.loc[ref, stat] == pytest.approx(
                roc_auc_score(sub["member"], sub["value"])
            )
    # Box order: held-out members, held-out non-members, web members, web non-members.
    sub = frame[frame["statistic"] == "vmf_kappa"]
    expected = [
        np.median(sub[(sub["reference"] == r) & (sub["member"] == m)]["value"])
        for r in ["held-out", "web"]
        for m in [True, False]
    ]
    assert_allclose(_box_medians(display.distributions_["vmf_kappa"]), expected)
    assert _ticklabels(display.axes_[0]) == [
        "held-out: members (n=12)",
        "held-out: non-members (n=9)",
        "web: members (n=12)",
        "web: non-members (n=9)",
    ]
    annotations = [t.get_text() for t in display.axes_[1].texts]
    assert annotations == [
        f"AUC {display.auc.loc['held-out', 'vmf_kappa']:.2f}",
        f"AUC {display.auc.loc['web', 'vmf_kappa']:.2f}",
    ]
    only = MembershipDistributionDisplay.from_frame(
        frame.assign(member=frame["member"].astype(int)), statistics="vmf_kappa"
    )
    assert list(only.auc.columns) == ["vmf_kappa"] and len(only.axes_) == 1


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_membership_display_from_estimator():
    X, ids, member = make_membership_embeddings(
        n_members=15, n_nonmembers=15, concentration_gap=0.4, random_state=1
    )
    mg = MembershipGeometry(random_state=0).fit(X, ids, member=member)
    display = MembershipDistributionDisplay.from_estimator(mg)
    stats = mg.statistics_
    for name in mg.auc_.index:
        assert display.auc.loc["non-members", name] == pytest.approx(
            roc_auc_score(stats["member"].astype(bool), stats[name])
        )
        assert display.auc.loc["non-members", name] == pytest.approx(mg.auc_[name])
    assert len(display.axes_) == len(mg.auc_)
    assert display.axes_[0].get_title().startswith("pair_cos\nAUC ")
    with pytest.raises(ValueError, match="without membership labels"):
        MembershipDistributionDisplay.from_estimator(MembershipGeometry().fit(X, ids))
    with pytest.raises(TypeError, match="MembershipGeometry"):
        MembershipDistributionDisplay.from_estimator(GaussMechAuditor())


def test_membership_display_from_reference_sets():
    from skprivacy.membership import audit_reference_sets

    kw = {
        "n_members": 12,
        "n_nonmembers": 10,
        "n_features": 16,
        "concentration_gap": 0.3,
        "random_state": 4,
    }
    X, ids, m = make_membership_embeddings(**kw)
    Xs, ids_s, _ = make_membership_embeddings(domain_shift=0.6, **kw)
    refs = {"held-out": (X[~m], ids[~m]), "shifted": (Xs[~m], ids_s[~m])}
    est = MembershipGeometry(cv=3, n_permutations=9, random_state=0)
    fig, axes = plt.subplots(1, 2)
    display = MembershipDistributionDisplay.from_reference_sets(
        X[m],
        ids[m],
        refs,
        same_domain="held-out",
        estimator=est,
        statistics=["pair_cos", "prototype_ce"],
        ax=axes,
    )
    assert list(display.axes_) == list(axes) and display.figure_ is fig
    _, dist = audit_reference_sets(
        X[m],
        ids[m],
        refs,
        same_domain="held-out",
        estimator=est,
        return_distributions=True,
    )
    res = display.results_
    names = {
        "held-out": "held-out (membership)",
        "shifted": "shifted (membership + domain shift)",
    }
    for ref, label in names.items():
        for stat in ["pair_cos", "prototype_ce"]:
            want = res[(res["reference"] == ref) & (res["statistic"] == stat)]
            assert display.auc.loc[label, stat] == pytest.approx(want["auc"].item())
    # boxes: per reference, members then non-members, medians of the values
    sub = dist[dist["statistic"] == "prototype_ce"]
    expected = [
        np.median(sub[(sub["reference"] == r) & (sub["member"] == mem)]["value"])
        for r in names
        for mem in [True, False]
    ]
    assert_allclose(
        _box_medians(display.distributions_["prototype_ce"]), expected, rtol=1e-12
    )
    assert _ticklabels(display.axes_[0])[2] == (
        "shifted (membership + domain shift): members (n=12)"
    )
    redrawn = display.plot(ax=plt.subplots(1, 2)[1], kind="violin")
    assert redrawn is display and len(display.axes_) == 2


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda f: f.drop(columns="value"), "lacks column"),
        (
            lambda f: f.assign(member=f["member"].astype(object).where(f.index > 0)),
            "missing",
        ),
        (lambda f: f.assign(member="yes"), "boolean"),
    ],
)
def test_membership_frame_errors(change, match):
    with pytest.raises(ValueError, match=match):
        MembershipDistributionDisplay.from_frame(change(_long_frame()))
    with pytest.raises(ValueError, match="not in the frame"):
        MembershipDistributionDisplay.from_frame(_long_frame(), statistics=["x"])


def test_membership_axes_handling():
    frame = _long_frame()
    fig, ax = plt.subplots()
    display = MembershipDistributionDisplay.from_frame(frame, ax=ax, kind="violin")
    assert len(display.axes_) == 2 and display.figure_ is fig
    assert ax not in fig.axes  # its cell was split into the two panels
    fig, axes = plt.subplots(1, 2)
    display = MembershipDistributionDisplay.from_frame(frame, ax=axes)
    assert list(display.axes_) == list(axes)
    with pytest.raises(ValueError, match="Expected 2 Axes"):
        MembershipDistributionDisplay.from_frame(frame, ax=[axes[0]])


# ------------------------------------------------- calibration diagnostics
def test_permutation_pvalue_display(data):
    X, ids = data
    auditor = MMDTVAuditor(n_pairs=None, n_permutations=99).fit(X, ids)
    controls = split_half_controls(auditor, X, ids)
    display = PermutationPValueDisplay.from_estimator(auditor, controls=controls)
    edges = np.linspace(0, 1, 21)
    counts = [patch.get_height() for patch in display.bars_["identity pairs"]]
    assert_allclose(counts, np.histogram(auditor.results_["p_value"], edges)[0])
    label = "split-half controls (same identity)"
    counts = [patch.get_height() for patch in display.bars_[label]]
    assert_allclose(counts, np.histogram(controls.results["p_value"], edges)[0])
    assert display.level_line_.get_xdata()[0] == 0.05
    assert display.ax_.get_xlabel() == "permutation p-value (m = 99)"
    with pytest.raises(ValueError, match="no permutation test"):
        PermutationPValueDisplay.from_estimator(MMDTVAuditor().fit(X, ids))
    with pytest.raises(TypeError, match="p_value column"):
        PermutationPValueDisplay.from_estimator(GaussMechAuditor().fit(X, ids))
    with pytest.raises(ValueError, match="non-empty dict"):
        PermutationPValueDisplay.from_pvalues([0.5])


def test_residual_qq_display(data):
    X, ids = data
    diag = residual_gaussianity(X, ids)
    display = ResidualQQDisplay.from_diagnostic(diag)
    p = diag.results.set_index("dimension")["p_value"]
    ranked = p.sort_values(kind="stable").index.tolist()
    assert list(display.lines_) == [ranked[0], ranked[len(ranked) // 2], ranked[-1]]
    for dim, line in display.lines_.items():
        assert_allclose(line.get_xdata(), diag.qq["theoretical"])
        assert_allclose(line.get_ydata(), diag.qq[dim])
    assert display.axes_[0].get_title() == f"dim {ranked[0]}: p={p[ranked[0]]:.1e}"
    assert display.figure_._suptitle is not None
    fig, ax = plt.subplots()
    one = ResidualQQDisplay.from_data(X, ids, dimensions=[2], ax=ax)
    assert list(one.axes_) == [ax] and fig._suptitle is None
    with pytest.raises(ValueError, match="No Q-Q data"):
        ResidualQQDisplay.from_diagnostic(diag, dimensions=[99])


# --------------------------------------------------------------- all displays
@pytest.mark.slow
def test_displays_draw_on_a_bare_figure_and_replot(data, tradeoff_table):
    # The report renders on pyplot-free Figures; plot() redraws on new axes.
    X, ids = data
    builders = [
        lambda ax: EpsilonDistributionDisplay.from_epsilons({"a": [0.1, 0.2]}, ax=ax),
        lambda ax: PairROCDisplay.from_predictions(
            [0, 1, 0, 1], [0.1, 0.9, 0.4, 0.3], ax=ax
        ),
        lambda ax: BandwidthSweepDisplay.from_sweep(
            pd.DataFrame({"bandwidth_scale": [1.0], "max_epsilon": [0.5]}), ax=ax
        ),
        lambda ax: PrivacyUtilityDisplay.from_tradeoff(tradeoff_table, ax=ax),
        lambda ax: MembershipDistributionDisplay.from_frame(
            _long_frame(), statistics=["pair_cos"], ax=ax
        ),
        lambda ax: PermutationPValueDisplay.from_pvalues({"a": [0.1, 0.7]}, ax=ax),
        lambda ax: ResidualQQDisplay.from_data(X, ids, dimensions=[0], ax=ax),
    ]
    for build in builders:
        ax = Figure().subplots()
        display = build(ax)
        assert display.figure_ is ax.figure
        assert (getattr(display, "ax_", None) or display.axes_[0]) is ax
        other = Figure().subplots()
        assert display.plot(ax=other) is display
        assert display.figure_ is other.figure
