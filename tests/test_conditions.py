# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-condition audits: Table I against per-condition audits and the estimators."""

import json

import numpy as np
import pandas as pd
import pytest

from skprivacy import GaussMechAuditor, MMDTVAuditor, audit, audit_conditions
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


def test_table_i_equals_per_condition_audits_on_the_prefix(report, conditions):
    """Each cell = the median/max of a separate skprivacy.audit's pairs, rank < 30."""
    raised = {**PROTOCOL, "kdelr_pairs": TABLE_PAIRS, "rocht_pairs": TABLE_PAIRS}
    columns = {
        "GaussMech": "gaussmech_epsilon",
        "KDE-LR alpha=0": "kdelr_a0_epsilon",
        "KDE-LR alpha=0.01": "kdelr_a0.01_epsilon",
        "MMD-TV": "mmdtv_epsilon",
        "ROC-HT": "rocht_epsilon",
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
        "sweep_pairs": [5, TABLE_PAIRS],
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
    assert loaded.to_html() == report.to_html()
    assert loaded.provenance == json.loads(json.dumps(report.provenance))
    for name, sub in report.reports.items():
        got = loaded.reports[name]
        pd.testing.assert_frame_equal(got.pairs, sub.pairs, check_dtype=False)
        assert got.verdict == sub.verdict and got.run_id == sub.run_id
        assert got.to_html() == sub.to_html()
    # Strict JSON, and the run id in every file that carries one.
    text = paths["conditions"].read_text()
    assert "NaN" not in text and "Infinity" not in text
    for name in ("conditions.json", "report.html"):
        assert report.run_id in (tmp_path / "out" / name).read_text()
    # Replacing needs force; a second save then succeeds.
    with pytest.raises(FileExistsError):
        report.save(tmp_path / "out")
    report.save(tmp_path / "out", force=True)


def test_html_is_self_contained_and_shows_table_i(report):
    import re

    html = report.to_html()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<h2>Table I</h2>" in html and "data:image/png;base64," in html
    for name in report.reports:
        assert f"<strong>{name}</strong>" in html
    for column in report.table_i.columns:
        assert f"<th>{column}</th>" in html
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
