# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit (``run_audit``) and its self-contained HTML report."""

import math
import re

import numpy as np
import pytest

from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import (
    METHOD_NAMES,
    METHODS,
    PROTOCOLS,
    NoAuditablePairsError,
    audit,
    available_methods,
    run_audit,
)
from skprivacy.utils import identity_pairs

SMALL = {
    "gaussmech_pairs": 15,
    "mmdtv_pairs": 10,
    "mmdtv_certified_pairs": 10,
    "kdelr_pairs": 4,
    "rocht_pairs": 6,
    "certificate_pairs": 6,
    "permutation_pairs": 5,
    "n_permutations": 99,
    "control_identities": 3,
    "sweep_pairs": 5,
}


@pytest.fixture(scope="module")
def data():
    return make_identity_embeddings(8, 12, 8, noise=1.5, random_state=1)


@pytest.fixture(scope="module")
def report(data):
    X, ids = data
    return run_audit(X, ids, protocol=SMALL, random_state=3)


@pytest.fixture(scope="module")
def html(report):
    return report.to_html()


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_every_available_method_reports(report):
    # A custom protocol runs what "quick" runs by default.
    assert report.provenance["methods"] == available_methods("quick")
    for entry in report.results.values():
        assert entry["kind"] in {
            "point estimate",
            "certificate",
            "hypothesis test",
            "control",
            "diagnostic",
        }
        # A skipped method has no number, so nothing said: its reason instead.
        assert (entry["says"] and entry["does_not_say"]) or entry["reason"]


def test_pairs_follow_shared_seeded_ordering(report):
    # 8 identities (codes = sorted labels 0..7), seed 3: every method audits a
    # prefix of identity_pairs(8, random_state=3).
    expected = identity_pairs(8, 15, random_state=3)
    np.testing.assert_array_equal(report.pairs[["id_a", "id_b"]].to_numpy(), expected)
    assert report.pairs["pair_rank"].tolist() == list(range(15))
    audited = report.pairs["mmdtv_epsilon"].notna().to_numpy()
    assert audited.tolist() == [True] * 10 + [False] * 5
    assert report.provenance["pairs"] == expected.tolist()


def test_pair_counts_honour_protocol(report):
    s = report.results
    assert s["gaussmech"]["n_pairs"] == 15
    assert s["rocht"]["n_pairs"] == 6
    assert s["mmd_permutation_test"]["n_permutations"] == 99
    # Phipson-Smyth: p-values are never below 1 / (m + 1).
    assert (report.pairs["perm_p_value"].dropna() >= 1 / 100).all()


def test_html_is_self_contained(report, html):
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(script|link|iframe)\b", html)
    srcs = re.findall(r'src="([^"]*)"', html)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "url(" not in html  # no CSS resource either
    # Each plot the issue asks for, when its method ran.
    expected = 1 + sum(len(METHODS[m].figures) for m in report.fitted)
    assert len(srcs) == expected


def test_summary_table_speaks_words(html):
    assert "what it does not say" in html
    assert "Only results labelled <em>certificate</em>" in html


def test_summary_reads_the_fitted_estimators(report):
    """Each summary value is the fitted estimator's own score (nothing re-fitted)."""
    # the results whose value is the score of the method's fitted auditor
    for key in ("gaussmech", "mmdtv", "rocht"):
        entry = report.results[key]
        est = report.fitted[entry["method"]][key]
        assert (entry["estimator"], entry["kind"]) == (
            type(est).__name__,
            est.guarantee_,
        )
        assert entry["value"] == est.score(), key
    summary = report.summary
    assert list(summary.index) == list(report.results)
    assert summary.loc[list(report.results)[0], "value"] == pytest.approx(
        next(iter(report.results.values()))["value"]
    )


@pytest.mark.slow
def test_cleaning_reported(data):
    X, ids = data
    X = X.copy()
    X[0] = np.nan
    X[1] = 0.0
    ids = np.asarray(ids).copy()
    ids[2] = 99  # a singleton identity: excluded
    rep = run_audit(X, ids, methods=["gaussianity"])
    prov = rep.provenance
    assert prov["dropped_rows"] == {"non_finite": 1, "low_norm": 1, "small_identity": 1}
    assert prov["excluded_identities"] == [99]
    assert prov["n_rows_before"] == 96 and prov["n_rows_after"] == 93
    assert prov["n_identities_before"] == 9 and prov["n_identities_after"] == 8
    assert any("DroppedRowsWarning" in w for w in prov["warnings"])


def test_errors():
    X = np.eye(4)
    with pytest.raises(NoAuditablePairsError, match="no auditable identity pairs"):
        run_audit(X, ["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="Unknown protocol"):
        run_audit(X, ["a", "a", "b", "b"], protocol="fast")
    with pytest.raises(ValueError, match="Unknown method"):
        run_audit(X, ["a", "a", "b", "b"], methods=["nope"])


def test_registry_consistent():
    assert tuple(METHODS) == METHOD_NAMES
    for settings in PROTOCOLS.values():
        assert set(settings) == set(PROTOCOLS["quick"])
    assert PROTOCOLS["exhaustive"]["gaussmech_pairs"] is None
    assert PROTOCOLS["exhaustive"]["mmdtv_pairs"] is None
    assert PROTOCOLS["paper"]["mmdtv_pairs"] == 500
    assert PROTOCOLS["paper"]["kdelr_pairs"] == 100
    assert PROTOCOLS["paper"]["rocht_pairs"] == 200
    assert PROTOCOLS["paper"]["n_permutations"] == 10_000


@pytest.mark.slow
def test_classifier_witness_ratio_from_the_estimators(data, report):
    """witness_ratio = ROC-HT's max(TPR - FPR) / (MMD / 2) on the shared pairs."""
    from sklearn.metrics import roc_curve
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from skprivacy.auditors import MMDTVAuditor, ROCHTAuditor

    X, ids = data
    mmd = MMDTVAuditor(n_pairs=SMALL["mmdtv_pairs"], random_state=3).fit(X, ids)
    roc = ROCHTAuditor(n_pairs=SMALL["rocht_pairs"], random_state=3).fit(X, ids)
    joined = roc.results_.merge(mmd.results_, on=["id_a", "id_b"])
    assert len(joined) == SMALL["rocht_pairs"]  # ROC-HT's prefix is inside MMD's
    pairs = report.pairs.set_index(["id_a", "id_b"])
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    for _, row in joined.iterrows():
        # Independent TV witness: out-of-fold scores, ROC, max(TPR - FPR).
        rows = np.r_[
            np.flatnonzero(ids == row["id_a"]), np.flatnonzero(ids == row["id_b"])
        ]
        labels = (ids[rows] == row["id_b"]).astype(int)
        folds = StratifiedKFold(
            int(row["n_folds"]), shuffle=True, random_state=roc.fold_seed_
        )
        scores = cross_val_predict(
            _default_lr(), Z[rows], labels, cv=folds, method="predict_proba"
        )[:, 1]
        fpr, tpr, _ = roc_curve(labels, scores)
        expected = np.max(tpr - fpr) / (row["mmd"] / 2)
        got = pairs.loc[(row["id_a"], row["id_b"]), "witness_ratio"]
        np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert report.results["classifier_witness"]["kind"] == "diagnostic"
    assert report.results["classifier_witness"]["n_pairs"] == SMALL["rocht_pairs"]


def _default_lr():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)


# -- public API: summary, save/load, schema ---------------------------------------------
def test_round_trip_and_schema(report, tmp_path):
    import json

    import jsonschema
    import pandas as pd

    from skprivacy import AuditReport
    from skprivacy.report import summary_schema

    paths = report.save(tmp_path / "r")
    loaded = AuditReport.load(tmp_path / "r")
    assert loaded.run_id == report.run_id
    pd.testing.assert_frame_equal(loaded.summary, report.summary)
    pd.testing.assert_frame_equal(loaded.pairs, report.pairs, check_dtype=False)
    assert loaded.provenance == json.loads(json.dumps(report.provenance))
    assert loaded.to_html() == report.to_html()
    assert loaded.verdict == report.verdict
    # _repr_html_ is the document's body (and style), nothing else.
    body = report._repr_html_()
    assert "<html" not in body and body.split("</style>", 1)[1] in report.to_html()
    # Strict JSON: no NaN/Infinity tokens, infinity listed; valid against the schema.
    text = paths["summary"].read_text()
    constants = []  # NaN or Infinity tokens
    summary = json.loads(text, parse_constant=constants.append)
    assert constants == [] and '"inf"' not in text
    jsonschema.validate(summary, summary_schema())
    infinite = [k for k, e in report.results.items() if e.get("value") == np.inf]
    assert {f"results.{k}.value" for k in infinite} <= set(summary["infinite"])
    for name in ("summary.json", "provenance.json", "report.html"):
        assert report.run_id in (tmp_path / "r" / name).read_text()


def test_certificate_without_reserved_rows_is_skipped_with_its_reason(data, report):
    """ceiling = certifiable_epsilon_ceiling of the reserved test sizes, by hand."""
    from skprivacy.auditors import ROCHTCertifier, certifiable_epsilon_ceiling

    entry = report.results["rocht_certificate"]
    X, ids = data
    # One certificate method runs: it is issued at the audit's confidence.
    cert = ROCHTCertifier(
        n_pairs=SMALL["certificate_pairs"], confidence=0.95, random_state=3
    )
    res = cert.fit(X, ids).results_
    by_hand = certifiable_epsilon_ceiling(
        res["n_pos"].to_numpy(), res["n_neg"].to_numpy(), n_comparisons=len(res)
    )
    # 12 rows per identity: 4 reserved rows cannot certify anything over 6 pairs
    assert float(np.max(by_hand)) == 0.0
    assert (entry["skipped"], entry["value"], entry["ceiling"]) == (True, 0.0, 0.0)
    assert entry["at_ceiling"] is False and "lift" not in entry
    # n all-correct reserved rows certify epsilon > 0 once the Clopper-Pearson
    # bounds a^(1/n) and 1 - a^(1/n) cross, a = 0.025 / (6 pairs * 2 bounds):
    # n > log2(1 / a) = 8.9, so 9 rows, 9 / 0.3 = 30 rows per identity.
    assert math.ceil(math.log2(6 * 2 / 0.025)) == 9
    assert entry["reason"] == (
        "its ceiling is 0 on these data: test_size 0.3 reserves at most 4 row(s) "
        "per identity, too few to certify any epsilon > 0 at confidence 0.975 over "
        "6 pairs; it needs at least 9 reserved rows per identity (about 30 rows "
        "per identity at this test size)"
    )


@pytest.mark.slow
def test_certificates_show_their_ceiling_and_lift():
    """ceiling and lift = certifiable_epsilon_ceiling and a refit, by hand."""
    from skprivacy.auditors import ROCHTCertifier, certifiable_epsilon_ceiling

    X, ids = make_identity_embeddings(6, 40, 8, noise=1.5, random_state=1)
    report = run_audit(
        X,
        ids,
        protocol=SMALL,
        methods=["rocht_certificate"],
        random_state=3,
        suggest_rank=False,
    )
    entry = report.results["rocht_certificate"]
    # One certificate method runs: it is issued at the audit's confidence.
    cert = ROCHTCertifier(
        n_pairs=SMALL["certificate_pairs"], confidence=0.95, random_state=3
    )
    res = cert.fit(X, ids).results_
    by_hand = certifiable_epsilon_ceiling(
        res["n_pos"].to_numpy(), res["n_neg"].to_numpy(), n_comparisons=len(res)
    )
    assert entry["skipped"] is False
    assert entry["value"] == cert.score()
    assert entry["ceiling"] == pytest.approx(float(np.max(by_hand)), rel=1e-12)
    # these identities separate perfectly: the certificate is its ceiling
    assert entry["value"] == entry["ceiling"] and entry["at_ceiling"] is True
    lift = entry["lift"]
    lifted = ROCHTCertifier(
        n_pairs=SMALL["certificate_pairs"], test_size=lift["test_size"], random_state=3
    ).fit(X, ids)
    assert lift["test_size"] == 0.4
    assert lift["ceiling"] == pytest.approx(lifted.ceiling_, rel=1e-12)
    assert lift["ceiling"] >= 1.1 * entry["ceiling"]  # "at least 10 % higher"
    html = report.to_html()
    assert "Certificates and their ceilings" in html


def test_most_leaky_ordered_by_point_estimate(report):
    html = report.to_html()
    table = html.split("<h2>Most leaky pairs</h2>", 1)[1].split("</table>", 1)[0]
    # The registry's order: ROC-HT's out-of-fold estimate leads.
    primary = next(
        e["epsilon_column"] for e in report.results.values() if "epsilon_column" in e
    )
    assert primary == "rocht_epsilon"
    assert f"<code>{primary}</code>" in html.split("<h2>Most leaky pairs</h2>")[1]
    expected = report.pairs.dropna(subset=[primary]).sort_values(
        primary, ascending=False, kind="stable"
    )[primary]
    rows = re.findall(r"<tr><td class='num'>(\d+)</td>", table)
    shown = report.pairs.set_index("pair_rank").loc[list(map(int, rows)), primary]
    np.testing.assert_array_equal(shown.to_numpy(), expected.to_numpy()[: len(rows)])


def test_method_names_only_in_the_registry():
    """Method names appear as strings in the registry and the name listing only.

    Docstring examples (``>>>`` lines) are user code and may name methods.
    """
    from pathlib import Path

    import skprivacy

    root = Path(skprivacy.__file__).parent
    registry = ("_registry.py", "_names.py")
    sources = [p for p in (root / "report").glob("*.py") if p.name not in registry]
    sources += list((root / "cli").glob("*.py"))
    for path in sources:
        text = "\n".join(
            line for line in path.read_text().splitlines() if ">>>" not in line
        )
        for name in METHOD_NAMES:
            for quoted in (f'"{name}"', f"'{name}'"):
                assert quoted not in text, (path.name, name)


def test_registry_declares_the_listed_names_in_order():
    """The light listing the command line reads is the registry, in order."""
    from skprivacy.report._names import PROTOCOL_HELP

    assert tuple(METHODS) == METHOD_NAMES
    assert set(PROTOCOLS) == set(PROTOCOL_HELP)
    assert all(set(m.sizes) == set(PROTOCOL_HELP) for m in METHODS.values())


# -- provenance of in-memory input (issue 16 item 3) ----------------------------------
@pytest.mark.slow
def test_array_hashes_and_metadata(data):
    import hashlib
    import json

    from skprivacy import audit
    from skprivacy.report import GENERATION_FIELDS

    X, ids = data
    labels = np.array([f"person {i}" for i in ids], dtype=object)
    meta = {"generator": "sd-1.5", "seeds": [0, 1, 2], "checkpoint_ok": True}
    rep = audit(X, labels, methods=["gaussmech"], suggest_rank=False, metadata=meta)
    arrays = rep.provenance["input"]["arrays"]
    assert arrays["X"]["sha256"] == hashlib.sha256(X.tobytes()).hexdigest()
    assert arrays["X"]["shape"] == list(X.shape) and arrays["X"]["dtype"] == "float64"
    by_hand = hashlib.sha256("\n".join(labels.tolist()).encode("utf-8")).hexdigest()
    assert arrays["ids"] == {
        "sha256": by_hand,
        "shape": [len(labels)],
        "dtype": "object",
        "hashed": "str of each element, one UTF-8 line each",
    }
    assert rep.provenance["input"]["sha256"] == arrays["X"]["sha256"]
    # The same numbers in float32 are a different input (their audit may differ).
    rep32 = audit(
        X.astype(np.float32), labels, methods=["gaussmech"], suggest_rank=False
    )
    a32 = rep32.provenance["input"]["arrays"]["X"]
    assert a32["dtype"] == "float32" and a32["sha256"] != arrays["X"]["sha256"]
    assert a32["sha256"] == hashlib.sha256(X.astype(np.float32).tobytes()).hexdigest()
    # Metadata kept as given; the generation fields not supplied are listed.
    assert rep.provenance["metadata"] == meta
    missing = rep.provenance["missing_generation_fields"]
    assert missing == [k for k in GENERATION_FIELDS if k not in meta]
    assert rep32.provenance["missing_generation_fields"] == list(GENERATION_FIELDS)
    html = rep.to_html()
    assert "generator = sd-1.5" in html and arrays["X"]["sha256"] in html
    assert all(f"<code>{k}</code>" in html for k in missing)
    json.dumps(rep.provenance, allow_nan=False)  # strict JSON as it stands


@pytest.mark.parametrize(
    "meta, exc, match",
    [
        ("generator=sd", TypeError, "metadata must be a dict"),
        ({"": "x"}, ValueError, "non-empty strings"),
        ({"seeds": object()}, TypeError, r"metadata\['seeds'\]"),
        ({"seeds": [1, None]}, TypeError, r"metadata\['seeds'\]"),
        ({"snr": float("nan")}, ValueError, "finite"),
    ],
)
def test_bad_metadata_named(data, meta, exc, match):
    from skprivacy import audit

    X, ids = data
    with pytest.raises(exc, match=match):
        audit(X, ids, methods=["gaussmech"], suggest_rank=False, metadata=meta)


# -- data a user brings: metadata columns, tiny identities ------------------------------
def _messy_frame(rows_per_identity=8, n_identities=10, dim=16):
    import pandas as pd

    X, ids = make_identity_embeddings(
        n_identities, rows_per_identity, dim, noise=1.5, random_state=2
    )
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(dim)])
    frame.insert(0, "identity", [f"person{i}" for i in ids])
    frame.insert(1, "image", [f"img/{i}_{k}.png" for k, i in enumerate(ids)])
    frame.insert(2, "shot", np.tile(np.arange(1, rows_per_identity + 1), n_identities))
    frame.insert(3, "Unnamed: 0", np.arange(len(frame)))
    frame.insert(4, "is_train", np.arange(len(frame)) % 3 == 0)
    return frame


@pytest.mark.slow
def test_metadata_columns_are_named_not_audited(tmp_path):
    from skprivacy import audit
    from skprivacy.datasets import read_embeddings
    from skprivacy.exceptions import ExcludedColumnsWarning

    frame = _messy_frame()
    path = tmp_path / "messy.csv.gz"
    frame.to_csv(path, index=False)
    with pytest.warns(ExcludedColumnsWarning, match="shot") as record:
        X, ids, info = read_embeddings(path)
    message = str(record[0].message)
    for column in ("image", "shot", "Unnamed: 0", "is_train"):
        assert column in message
    embedding = [f"e{j}" for j in range(16)]
    assert list(X.columns) == embedding
    report = audit(X, ids, methods=["gaussmech"], input_info=info, suggest_rank=False)
    assert report.provenance["feature_columns"] == embedding
    assert set(report.provenance["excluded_columns"]) == {
        "image",
        "shot",
        "Unnamed: 0",
        "is_train",
    }
    assert report.provenance["n_features"] == 16
    html = report.to_html()
    for column in ("shot", "Unnamed: 0", "is_train"):
        assert f"<code>{column}</code>" in html
    # The same rule on a DataFrame given to audit() directly.
    with pytest.warns(ExcludedColumnsWarning):
        direct = audit(
            frame.drop(columns="identity"),
            frame["identity"],
            methods=["gaussmech"],
            suggest_rank=False,
        )
    assert direct.provenance["feature_columns"] == embedding
    assert direct.results["gaussmech"]["value"] == report.results["gaussmech"]["value"]
    assert len(direct.provenance["input"]["sha256"]) == 64


def test_text_cell_is_an_error_naming_column_and_row(tmp_path):
    from skprivacy.datasets import read_embeddings

    frame = _messy_frame()
    frame["e3"] = frame["e3"].astype(object)
    frame.loc[7, "e3"] = "n/a?"
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"'e3'.*row 7"):
        read_embeddings(path)


@pytest.mark.slow
@pytest.mark.parametrize("rows", [2, 3])
def test_tiny_identities_give_a_full_report(rows, tmp_path):
    import json

    import jsonschema

    from skprivacy import audit
    from skprivacy.report import summary_schema

    frame = _messy_frame(rows_per_identity=rows, n_identities=12)
    X = frame[[f"e{j}" for j in range(16)]]
    report = audit(X, frame["identity"], protocol=SMALL, random_state=0)
    skipped = {k: e for k, e in report.results.items() if e["skipped"]}
    assert "controls" in skipped and "4 rows" in skipped["controls"]["reason"]
    assert "rocht_certificate" in skipped
    assert "ceiling is 0" in skipped["rocht_certificate"]["reason"]
    assert skipped["rocht_certificate"]["ceiling"] == 0.0
    assert skipped["rocht_certificate"]["at_ceiling"] is False
    ran = {e["method"] for e in report.results.values() if not e["skipped"]}
    assert {"gaussmech", "rocht"} <= ran
    report.save(tmp_path / "r")
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    jsonschema.validate(summary, summary_schema())
    assert summary["results"]["controls"]["skipped"] is True
    html = report.to_html()
    assert skipped["controls"]["reason"].split(";")[0] in html
    assert any(line["family"] == "skipped" for line in report.verdict["lines"])
    # 2 + 2 rows split 6 ways and 3 + 3 rows 20 ways: p < 0.05 is out of
    # reach, so the test is skipped instead of reporting "none distinguished".
    assert "permutation" in skipped
    assert "smallest attainable p-value" in skipped["permutation"]["reason"]
    assert "distinguished" not in report.verdict["headline"]


def _unbiased_mmd2(A, B):
    # Straight from the formula, RBF kernel with unit bandwidth.
    def k(U, V):
        return np.exp(-((U[:, None, :] - V[None, :, :]) ** 2).sum(-1) / 2)

    m, n = len(A), len(B)
    kaa, kbb = k(A, A), k(B, B)
    return (
        (kaa.sum() - np.trace(kaa)) / (m * (m - 1))
        + (kbb.sum() - np.trace(kbb)) / (n * (n - 1))
        - 2 * k(A, B).mean()
    )


@pytest.mark.parametrize(("n_a", "n_b"), [(2, 2), (3, 3), (2, 3), (3, 4), (4, 4)])
def test_permutation_p_value_floor_by_enumeration(n_a, n_b):
    # With maximal separation the observed split is the most extreme of all
    # C(n_a + n_b, n_a) splits (tied with its mirror when n_a == n_b); the
    # exact permutation p-value is the share of splits at least as extreme.
    from itertools import combinations

    from skprivacy.auditors import permutation_p_value_floor

    rng = np.random.default_rng(0)
    A = rng.normal(size=(n_a, 3))
    B = rng.normal(size=(n_b, 3)) + 50.0
    pooled = np.vstack([A, B])
    observed = _unbiased_mmd2(A, B)
    splits = list(combinations(range(n_a + n_b), n_a))
    extreme = 0
    for idx in splits:
        rest = np.setdiff1d(np.arange(n_a + n_b), idx)
        extreme += _unbiased_mmd2(pooled[list(idx)], pooled[rest]) >= observed - 1e-12
    floor = permutation_p_value_floor(n_a, n_b)
    assert floor == pytest.approx(extreme / len(splits))


@pytest.mark.parametrize("protocol", ["quick", "paper", "exhaustive"])
def test_next_steps_never_recommend_the_protocol_that_ran(protocol):
    # 40 identities: 780 pairs, more than the quick and paper protocols audit.
    X, ids = make_identity_embeddings(40, 4, 8, random_state=0)
    report = audit(X, ids, protocol=protocol, methods=["gaussmech"], suggest_rank=False)
    commands = [step.get("command") or "" for step in report.next_steps]
    assert not any(f"--protocol {protocol}" in c for c in commands)
    # A limited protocol still points to the paper's.
    assert any("--protocol paper" in c for c in commands) == (protocol == "quick")
