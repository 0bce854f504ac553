# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-condition audits: Table I against per-condition audits and the estimators."""

import json

import numpy as np
import pandas as pd
import pytest

from skprivacy import GaussMechAuditor, MMDTVAuditor, audit, audit_conditions
from skprivacy.cli import main
from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import ConditionsReport

# Pair counts below and above the prefix: Table I must raise the first ones and
# filter the second ones to the prefix.
TABLE_PAIRS = 30
PROTOCOL = {
    "gaussmech_pairs": None,  # every pair (45): the prefix is a strict subset
    "mmdtv_pairs": 40,
    "sweep_pairs": 5,
    "kdelr_pairs": 5,  # raised to 30
    "kdelr_alphas": (0.0, 1e-2),
    "rocht_pairs": 5,  # raised to 30
}
METHODS = ["gaussmech", "kdelr", "mmdtv", "rocht"]


def _conditions():
    return {
        "clean": make_identity_embeddings(10, 8, 6, noise=0.7, random_state=0),
        "noisy": make_identity_embeddings(10, 8, 6, noise=2.5, random_state=1),
    }


@pytest.fixture(scope="module")
def conditions():
    return _conditions()


@pytest.fixture(scope="module")
def report(conditions):
    return audit_conditions(
        conditions,
        table_pairs=TABLE_PAIRS,
        protocol=PROTOCOL,
        methods=METHODS,
        random_state=5,
        suggest_rank=False,
    )


def _median(values):
    """Median by hand: sort, take the middle one or the mean of the middle two."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_table_i_equals_per_condition_audits_on_the_prefix(report, conditions):
    """Each cell = the median/max of a separate skprivacy.audit's pairs, rank < 30."""
    raised = {**PROTOCOL, "kdelr_pairs": TABLE_PAIRS, "rocht_pairs": TABLE_PAIRS}
    # In the registry's order (skprivacy.report.METHOD_NAMES).
    columns = {
        "ROC-HT": "rocht_epsilon",
        "ROC-HT interior": "rocht_epsilon_interior",  # its finite companion
        "MMD-TV": "mmdtv_epsilon",
        "GaussMech": "gaussmech_epsilon",
        "KDE-LR alpha=0": "kdelr_a0_epsilon",
        "KDE-LR alpha=0.01": "kdelr_a0.01_epsilon",
    }
    assert list(report.table_i.index) == ["clean", "noisy"]
    assert list(report.table_i.columns) == [
        "n_rows",
        "n_identities",
        "n_pairs",
        *(f"{label} median" for label in columns),
        *(f"{label} max" for label in columns),
    ]
    for name, (X, ids) in conditions.items():
        single = audit(
            X,
            ids,
            protocol=raised,
            methods=METHODS,
            random_state=5,
            suggest_rank=False,
        )
        pairs = single.pairs
        assert len(pairs) == 45  # GaussMech audited every pair
        prefix = pairs[pairs["pair_rank"] < TABLE_PAIRS]
        row = report.table_i.loc[name]
        assert row["n_pairs"] == TABLE_PAIRS == len(prefix)
        assert row["n_identities"] == 10 and row["n_rows"] == 80
        for label, column in columns.items():
            values = prefix[column].tolist()
            assert len(values) == TABLE_PAIRS and not np.isnan(values).any()
            expected_median, expected_max = _median(values), max(values)
            assert row[f"{label} median"] == pytest.approx(expected_median, rel=1e-12)
            assert row[f"{label} max"] == pytest.approx(expected_max, rel=1e-12)
        # The prefix is a strict subset where the method audited more pairs.
        full = pairs["gaussmech_epsilon"].tolist()
        assert _median(full) != pytest.approx(row["GaussMech median"], rel=1e-12)


def test_table_i_equals_the_estimators_on_their_first_pairs(report, conditions):
    """Independent of the report: a 30-pair auditor audits the same 30 pairs."""
    for name, (X, ids) in conditions.items():
        row = report.table_i.loc[name]
        for est, label in (
            (GaussMechAuditor(n_pairs=TABLE_PAIRS, random_state=5), "GaussMech"),
            (MMDTVAuditor(n_pairs=TABLE_PAIRS, random_state=5), "MMD-TV"),
        ):
            eps = est.fit(X, ids).results_["epsilon"].to_numpy()
            assert row[f"{label} median"] == pytest.approx(np.median(eps), rel=1e-12)
            assert row[f"{label} max"] == pytest.approx(eps.max(), rel=1e-12)


def test_raised_pair_counts_are_recorded(report):
    prov = report.provenance
    assert prov["raised_pair_counts"] == {
        "kdelr_pairs": [5, TABLE_PAIRS],
        "rocht_pairs": [5, TABLE_PAIRS],
    }
    assert prov["table_pairs"] == TABLE_PAIRS and prov["conditions"] == [
        "clean",
        "noisy",
    ]
    for sub in report.reports.values():
        assert sub.run_id == report.run_id
        assert sub.provenance["condition"] in report.reports
        assert sub.provenance["protocol_settings"]["rocht_pairs"] == TABLE_PAIRS


def test_fewer_pairs_than_the_prefix_uses_every_pair():
    X, ids = make_identity_embeddings(5, 6, 4, random_state=0)
    rep = audit_conditions(
        {"a": (X, ids)}, methods=["gaussmech"], suggest_rank=False, random_state=0
    )
    eps = GaussMechAuditor(random_state=0).fit(X, ids).results_["epsilon"]
    assert rep.table_i.loc["a", "n_pairs"] == 10
    assert rep.table_i.loc["a", "GaussMech median"] == pytest.approx(eps.median())


def test_default_prefix_is_100_pairs():
    X, ids = make_identity_embeddings(16, 4, 4, random_state=0)  # 120 pairs
    rep = audit_conditions(
        {"a": (X, ids)},
        protocol={"gaussmech_pairs": None},
        methods=["gaussmech"],
        suggest_rank=False,
    )
    eps = GaussMechAuditor(n_pairs=100, random_state=0).fit(X, ids).results_
    assert len(rep.reports["a"].pairs) == 120
    assert rep.table_i.loc["a", "n_pairs"] == 100
    assert rep.table_i.loc["a", "GaussMech max"] == pytest.approx(eps["epsilon"].max())


def test_save_load_round_trip(report, tmp_path):
    paths = report.save(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        ["conditions.json", "pairs.csv", "report.html", "table_i.csv"]
    )
    loaded = ConditionsReport.load(tmp_path / "out")
    assert loaded.run_id == report.run_id
    pd.testing.assert_frame_equal(loaded.table_i, report.table_i)
    pd.testing.assert_frame_equal(loaded.summary, report.summary)
    pd.testing.assert_frame_equal(loaded.comparison, report.comparison)
    pd.testing.assert_frame_equal(loaded.table_i_intervals, report.table_i_intervals)
    assert loaded.comparison_sentence == report.comparison_sentence
    assert loaded.to_html() == report.to_html()
    assert loaded.provenance == json.loads(json.dumps(report.provenance))
    for name, sub in report.reports.items():
        got = loaded.reports[name]
        pd.testing.assert_frame_equal(got.pairs, sub.pairs, check_dtype=False)
        assert got.verdict == sub.verdict and got.run_id == sub.run_id
        assert got.to_html() == sub.to_html()
    # Strict JSON, and the run id in every file that carries one.
    # (A NaN or Infinity token makes the parser call parse_constant; the
    # base64 figures may hold those letters, so no substring test.)
    constants = []
    json.loads(paths["conditions"].read_text(), parse_constant=constants.append)
    assert constants == []
    for name in ("conditions.json", "report.html"):
        assert report.run_id in (tmp_path / "out" / name).read_text()
    # Replacing needs force; a second save then succeeds.
    with pytest.raises(FileExistsError):
        report.save(tmp_path / "out")
    report.save(tmp_path / "out", force=True)


def test_comparison_is_compare_conditions_on_the_prefix(report):
    """The report's comparison is the stats function on Table I's pairs."""
    from skprivacy.stats import compare_conditions, comparison_sentence

    pairs = report.prefix_pairs()
    # ROC-HT, its interior companion, MMD-TV, GaussMech, KDE-LR at two alphas
    n_methods = 6
    assert all(t.shape[1] == 2 + n_methods for t in pairs.values())
    # 6 rows at 95 %: 20 * 6 / 0.05 = 2400 replicates leave 10 beyond each
    # simultaneous tail (2.5 % / 6 of 2400 = 10).
    direct = compare_conditions(pairs, n_resamples=2400, random_state=5)
    pd.testing.assert_frame_equal(report.comparison, direct.comparison)
    pd.testing.assert_frame_equal(report.table_i_intervals, direct.table_i_intervals)
    assert list(report.comparison.columns) == [
        "condition_a", "condition_b", "method", "difference", "ci_low", "ci_high",
        "resolved",
    ]  # fmt: skip
    assert list(report.table_i_intervals.columns) == [
        "condition", "method", "median", "ci_low", "ci_high",
    ]  # fmt: skip
    # Each interval's median is Table I's, read from the per-pair table by hand.
    for row in report.table_i_intervals.itertuples():
        values = pairs[row.condition][row.method].tolist()
        assert row.median == _median(values)
    sentence = comparison_sentence(direct.comparison)
    assert report.comparison_sentence == sentence
    assert sentence.startswith("clean leaks more than noisy")
    assert f"<strong>{sentence}.</strong>" in report.to_html()


def test_one_condition_has_intervals_and_no_comparison(conditions):
    one = audit_conditions(
        {"clean": conditions["clean"]}, methods=["gaussmech"], suggest_rank=False
    )
    assert one.comparison.empty and one.comparison_sentence == ""
    assert one.table_i_intervals["method"].tolist() == ["GaussMech"]
    html = one.to_html()
    assert "<h2>Comparison</h2>" in html and "simultaneous over the table" not in html


def test_html_is_self_contained_and_shows_table_i(report):
    import re

    html = report.to_html()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<h2>Table I</h2>" in html and "data:image/png;base64," in html
    for name in report.reports:
        assert f"<strong>{name}</strong>" in html
    # Each method's median and max under one method header.
    for column in report.table_i.columns:
        method, _, statistic = column.rpartition(" ")
        if statistic in ("median", "max"):
            assert f"<th colspan='2'>{method} &epsilon;</th>" in html
        else:
            assert f"<th rowspan='2'>{column.removeprefix('n_')}</th>" in html
    body = report._repr_html_()
    assert "<html" not in body and body.split("</style>", 1)[1] in html


def test_prefix_epsilons_feed_the_figure(report):
    import matplotlib

    matplotlib.use("Agg")
    from skprivacy.plotting import ConditionsEpsilonDisplay

    eps = report.prefix_epsilons()
    for label, per in eps.items():
        for name, values in per.items():
            assert np.median(values) == pytest.approx(
                report.table_i.loc[name, f"{label} median"]
            )
    display = ConditionsEpsilonDisplay.from_report(report)
    assert len(display.axes_) == len(eps)
    assert display.n_infinite_["ROC-HT"] == {
        name: int(np.isinf(v).sum()) for name, v in eps["ROC-HT"].items()
    }
    with pytest.raises(TypeError, match="ConditionsReport"):
        ConditionsEpsilonDisplay.from_report(report.reports["clean"])


@pytest.mark.parametrize(
    "conditions, match",
    [
        ([], "dict"),
        ({}, "empty"),
        ({"": (np.zeros((4, 2)), [0, 0, 1, 1])}, "non-empty"),
        ({"a": np.zeros((4, 2))}, r"pair \(X, ids\)"),
    ],
)
def test_bad_conditions(conditions, match):
    with pytest.raises((TypeError, ValueError), match=match):
        audit_conditions(conditions)


def test_errors_name_the_condition():
    good = make_identity_embeddings(4, 4, 8, random_state=0)
    bad = (np.ones((4, 8)), [0, 0, 0, 0])
    with pytest.raises(ValueError, match="condition 'b'"):
        audit_conditions(
            {"a": good, "b": bad}, methods=["gaussmech"], suggest_rank=False
        )
    with pytest.raises(ValueError, match="table_pairs"):
        audit_conditions({"a": good}, table_pairs=0)


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            (np.ones((4, 8)), [0, 0, 0, 0]),
            "condition 'late': no auditable identity pairs: 1 of 1 identities have "
            "at least 2 usable rows (4 rows before cleaning, 4 after)",
        ),
        (
            (np.ones((3, 8)), [0, 1]),
            "condition 'late': y has 2 label(s) but X has 3 row(s); one identity label "
            "per row of X is needed.",
        ),
    ],
)
def test_every_condition_is_checked_before_any_is_computed(bad, message, monkeypatch):
    from skprivacy.report import _conditions

    calls = []
    monkeypatch.setattr(_conditions, "audit", lambda *a, **k: calls.append(a))
    good = make_identity_embeddings(4, 4, 8, random_state=0)
    with pytest.raises(ValueError) as info:
        audit_conditions({"a": good, "b": good, "late": bad}, methods=["gaussmech"])
    assert str(info.value) == message
    assert calls == []  # no condition was audited


# -- command line ---------------------------------------------------------------------
def _write_csv(path, X, ids):
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(X.shape[1])])
    frame.insert(0, "identity", [f"p{i:02d}" for i in ids])
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("conditions")
    return [
        _write_csv(
            root / "enc_a.csv",
            *make_identity_embeddings(16, 5, 8, noise=0.8, random_state=0),
        ),
        _write_csv(
            root / "enc_b.csv.gz",
            *make_identity_embeddings(16, 5, 8, noise=2.0, random_state=1),
        ),
    ]


@pytest.mark.slow
def test_cli_multi_file_table_i_equals_single_file_runs(csv_files, tmp_path, capsys):
    """Table I of one multi-file run = medians of single-file runs' pairs.csv, rank < 100."""
    common = ["--protocol", "paper", "--methods", "gaussmech", "--seed", "4"]
    common += ["--meta", "generator_revision=abc"]
    out = tmp_path / "multi"
    code = main(
        ["audit", *map(str, csv_files), "--names", "A,B", "--out", str(out), *common]
    )
    assert code == 0
    stdout = capsys.readouterr().out
    assert stdout.strip().splitlines()[-1] == f"report: {out / 'report.html'}"
    assert "Table I (medians on the first 100 pairs)" in stdout
    saved = ConditionsReport.load(out)
    assert f"Comparison: {saved.comparison_sentence}\n" in stdout
    assert {p.name for p in out.iterdir()} == {
        "conditions.json",
        "table_i.csv",
        "pairs.csv",
        "report.html",
    }
    table = pd.read_csv(out / "table_i.csv", index_col="condition")
    assert list(table.index) == ["A", "B"]
    for name, path in zip("AB", csv_files):
        single = tmp_path / f"single_{name}"
        assert main(["audit", str(path), "--out", str(single), "--quiet", *common]) == 0
        pairs = pd.read_csv(single / "pairs.csv")
        assert len(pairs) == 120  # paper protocol: every pair of 16 identities
        eps = pairs.loc[pairs["pair_rank"] < 100, "gaussmech_epsilon"].tolist()
        assert len(eps) == 100
        assert table.loc[name, "n_pairs"] == 100
        assert table.loc[name, "GaussMech median"] == pytest.approx(_median(eps))
        assert table.loc[name, "GaussMech max"] == pytest.approx(max(eps))
    loaded = ConditionsReport.load(out)
    assert loaded.reports["B"].provenance["input"]["path"].endswith("enc_b.csv.gz")
    for sub in loaded.reports.values():
        assert sub.provenance["metadata"] == {"generator_revision": "abc"}
    assert loaded.provenance["metadata"] == {"generator_revision": "abc"}
    assert loaded.provenance["command_line"].startswith("skprivacy audit ")
    # Default names are the file names without their suffixes.
    out2 = tmp_path / "default_names"
    assert (
        main(
            [
                "audit",
                *map(str, csv_files),
                "--out",
                str(out2),
                "--quiet",
                "--methods",
                "gaussmech",
            ]
        )
        == 0
    )
    assert list(pd.read_csv(out2 / "table_i.csv")["condition"]) == ["enc_a", "enc_b"]


def test_cli_multi_file_errors_one_line_exit_2(csv_files, tmp_path, capsys):
    a, b = map(str, csv_files)
    twin = tmp_path / "twin"
    twin.mkdir()
    same_name = str(
        _write_csv(
            twin / "enc_a.csv", *make_identity_embeddings(4, 4, 8, random_state=0)
        )
    )
    cases = {
        "count": (
            ["audit", a, b, "--names", "x"],
            "--names gives 1 name(s) for 2 file(s); give one comma-separated name "
            "per FILE, in order",
        ),
        "empty": (["audit", a, b, "--names", "x,"], "--names 'x,' has an empty name"),
        "repeat": (
            ["audit", a, b, "--names", "x,x"],
            "--names repeats the condition name 'x'",
        ),
        "default clash": (
            ["audit", a, same_name],
            "two input files give the condition name 'enc_a'; name the conditions "
            "with --names a,b,...",
        ),
        "labels": (
            ["audit", a, b, "--labels", a],
            "--labels applies to one bare .npy file; with several files give each "
            "its identity column",
        ),
        "table pairs": (
            ["audit", a, b, "--table-pairs", "0"],
            "argument --table-pairs: 0 is not a positive integer (see 'skprivacy "
            "audit --help')",
        ),
        "missing": (
            ["audit", a, str(tmp_path / "nope.csv")],
            f"input file not found: {tmp_path / 'nope.csv'}",
        ),
        "names only": (
            ["audit", "--names", "x"],
            "--names needs the input files it names (FILE ...)",
        ),
    }
    for case, (args, message) in cases.items():
        assert main([*args, "--out", str(tmp_path / case)]) == 2, case
        assert capsys.readouterr() == ("", f"skprivacy: error: {message}\n"), case
        assert not (tmp_path / case).exists(), case


def test_rank_suggestion_keeps_a_dimension():
    """More identities than dimensions: the ISP sweep stops at n_features - 1.

    Removing every dimension left only zero rows, and the audit crashed in its
    "what next" sweep after all methods had run.
    """
    X, ids = make_identity_embeddings(12, 4, 4, random_state=0)
    report = audit(X, ids, methods=["gaussmech"])
    [step] = [s for s in report.next_steps if s["action"] == "sanitize"]
    # The cross-fitted sweep stops at 3, the largest rank that keeps a
    # dimension of 4 (12 identities cannot confirm the target there).
    assert step["text"].startswith("No ISP rank up to 3 brings")


# -- protocol methods: split-half ROC-HT controls, classifier sensitivity ---------------
def test_paper_protocol_runs_the_roc_checks_quick_does_not():
    from skprivacy.report import PROTOCOLS, available_methods

    quick, paper = available_methods("quick"), available_methods("paper")
    for name in ("rocht_controls", "classifier_sensitivity"):
        assert name in paper and name not in quick
    assert PROTOCOLS["paper"]["rocht_control_identities"] == 100
    assert PROTOCOLS["paper"]["sensitivity_pairs"] == 50
    # The exhaustive protocol runs paper 000's forest: 100 trees, 5 folds.
    assert PROTOCOLS["exhaustive"]["sensitivity_trees"] == 100
    assert PROTOCOLS["exhaustive"]["sensitivity_folds"] == 5


@pytest.fixture(scope="module")
def roc_checks():
    X, ids = make_identity_embeddings(6, 10, 6, noise=1.5, random_state=2)
    report = audit(
        X,
        ids,
        protocol={
            "rocht_pairs": 3,
            "rocht_control_identities": 4,
            "sensitivity_pairs": 3,
            "sensitivity_trees": 20,
            "sensitivity_folds": 3,
        },
        methods=["rocht", "rocht_controls", "classifier_sensitivity"],
        random_state=7,
        suggest_rank=False,
    )
    return X, ids, report


@pytest.mark.slow
def test_rocht_controls_equal_split_half_controls(roc_checks):
    from skprivacy import ROCHTAuditor
    from skprivacy.auditors import split_half_controls

    X, ids, report = roc_checks
    entry = report.results["rocht_split_half_controls"]
    # The same 4 identities the registry draws (seeded), audited directly.
    chosen = np.random.default_rng(7).choice(np.unique(ids), 4, replace=False)
    mask = np.isin(ids, chosen)
    direct = split_half_controls(
        ROCHTAuditor(n_pairs=3, random_state=7), X[mask], ids[mask], random_state=7
    )
    assert entry["kind"] == "control" and entry["n_identities"] == 4
    assert entry["value"] == pytest.approx(direct.results["auc"].mean(), rel=1e-12)
    assert entry["n_corners"] == int(direct.results["corner"].sum())
    assert entry["max_control_epsilon"] == pytest.approx(direct.epsilon_max)


@pytest.mark.slow
def test_classifier_sensitivity_equals_two_roc_audits(roc_checks):
    from sklearn.ensemble import RandomForestClassifier

    from skprivacy import ROCHTAuditor

    X, ids, report = roc_checks
    entry = report.results["classifier_sensitivity"]
    lr = ROCHTAuditor(n_pairs=3, cv=3, random_state=7).fit(X, ids)
    rf = ROCHTAuditor(
        RandomForestClassifier(n_estimators=20, random_state=7),
        n_pairs=3,
        cv=3,
        random_state=7,
    ).fit(X, ids)
    assert entry["mean_auc_logistic"] == pytest.approx(lr.auc_mean_, rel=1e-12)
    assert entry["mean_auc_forest"] == pytest.approx(rf.auc_mean_, rel=1e-12)
    assert entry["value"] == pytest.approx(lr.auc_mean_ - rf.auc_mean_, rel=1e-12)
    assert entry["n_trees"] == 20 and "20-tree" in entry["statistic"]
    assert entry["n_folds"] == 3 and "same 3 folds" in entry["statistic"]
    # Per pair: logistic regression under the check's 3 folds minus the forest.
    pairs = report.pairs.set_index(["id_a", "id_b"]).loc[
        list(zip(lr.results_["id_a"], lr.results_["id_b"]))
    ]
    assert np.allclose(pairs["forest_auc"], rf.results_["auc"].to_numpy())
    diff = lr.results_["auc"].to_numpy() - rf.results_["auc"].to_numpy()
    assert np.allclose(pairs["auc_lr_minus_forest"], diff)


def test_roc_checks_skip_with_a_reason():
    X, ids = make_identity_embeddings(6, 3, 6, random_state=0)  # 3 rows each
    report = audit(
        X,
        ids,
        protocol="paper",
        methods=["gaussmech", "rocht_controls"],
        suggest_rank=False,
    )
    assert report.results["rocht_controls"]["skipped"]
    assert "at least 4 rows" in report.results["rocht_controls"]["reason"]


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_display_scales_and_infinite_counts():
    import matplotlib

    matplotlib.use("Agg")
    from skprivacy.plotting import ConditionsEpsilonDisplay

    eps = {
        "big": {"a": np.array([20.0, 400.0]), "b": np.array([10.0, np.inf])},
        "small": {"a": np.array([0.0, 0.5]), "b": np.array([np.nan, 0.2])},
        "mixed": {"a": np.array([0.0, 200.0])},
        # Within one decade: a log axis would have no labelled decade.
        "narrow": {"a": np.array([45.0, 95.0])},
    }
    display = ConditionsEpsilonDisplay.from_epsilons(eps)
    scales = [ax.get_xscale() for ax in display.axes_]
    assert scales == ["log", "linear", "symlog", "linear"]
    assert display.n_infinite_["big"] == {"a": 0, "b": 1}
    # A condition missing from a method is an empty row, not an error.
    assert display.n_infinite_["mixed"] == {"a": 0, "b": 0}
    with pytest.raises(TypeError, match="dict"):
        ConditionsEpsilonDisplay.from_epsilons({"big": [1.0, 2.0]})
    with pytest.raises(ValueError, match="empty"):
        ConditionsEpsilonDisplay.from_epsilons({})


@pytest.mark.parametrize("split", [False, True])
def test_display_wraps_panels_in_rows(split):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from skprivacy.plotting import ConditionsEpsilonDisplay

    eps = {m: {"a": np.array([1.0, 2.0]), "b": np.array([3.0])} for m in "pqr"}
    ax = Figure().subplots() if split else None
    display = ConditionsEpsilonDisplay.from_epsilons(eps, ax=ax, n_cols=2)
    spans = [a.get_subplotspec() for a in display.axes_]
    assert [(s.rowspan.start, s.colspan.start) for s in spans] == [
        (0, 0),
        (0, 1),
        (1, 0),
    ]
    assert len(display.figure_.axes) == 3  # the fourth cell holds no panel
    shown = [a.yaxis.majorTicks[0].label1.get_visible() for a in display.axes_]
    assert shown == [True, False, True]  # condition names on each row's first panel
