# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy audit``: outputs, numbers equal to the estimators', error handling."""

import hashlib
import json
import os
import re
import subprocess
import sys
from html import escape as html_escape

import numpy as np
import pandas as pd
import pytest

from skprivacy.cli import main
from skprivacy.datasets import make_identity_embeddings, read_embeddings
from skprivacy.report import available_methods

OUTPUTS = {"report.html", "summary.json", "pairs.csv", "provenance.json"}


def _cli(*args, cwd=None):
    """Run the console entry point in a subprocess (as users do)."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [sys.executable, "-m", "skprivacy", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    X, ids = make_identity_embeddings(12, 10, 16, noise=2.0, random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame.insert(0, "person", np.array([f"p{i:02d}" for i in ids]))
    frame.insert(1, "note", "x")  # a non-numeric column: ignored and reported
    frame.loc[3, "f0"] = np.nan  # one unusable row: dropped and reported
    path = tmp_path_factory.mktemp("data") / "emb.csv.gz"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def audit_dir(csv_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "report"
    status = main(
        ["audit", str(csv_file), "--id-column", "person", "--out", str(out), "--quiet"]
    )
    assert status == 0
    return out


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_writes_four_outputs(audit_dir):
    assert {p.name for p in audit_dir.iterdir()} == OUTPUTS


@pytest.mark.slow
def test_console_script_audits_the_bundled_data(tmp_path):
    """The README's first command, as a user runs it: a real process."""
    out = tmp_path / "skprivacy_report"
    proc = _cli("audit", "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} == OUTPUTS
    assert proc.stdout.strip().splitlines()[-1] == f"report: {out / 'report.html'}"
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["input"]["name"] == "bundled Cropped Yale B (dlib ResNet, 128-d)"
    assert provenance["n_identities_after"] == 38
    assert provenance["command_line"] == f"skprivacy audit --out {out}"


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_output_modes(csv_file, tmp_path, capsys):
    out = tmp_path / "r"
    args = ["audit", str(csv_file), "--id-column", "person"]
    args += ["--methods", "gaussmech", "--out", str(out)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert {p.name for p in out.iterdir()} == OUTPUTS
    # Not a terminal: periodic plain lines with percentages, no carriage returns.
    assert "%" in captured.err and "\r" not in captured.err
    # The result on stdout: the verdict, ending with the report's path.
    lines = captured.out.strip().splitlines()
    assert lines[-1] == f"report: {out / 'report.html'}"
    assert "epsilon" in captured.out
    assert main([*args, "--force", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_report_is_self_contained(audit_dir):
    html = (audit_dir / "report.html").read_text()
    assert "http://" not in html and "https://" not in html
    assert "<link" not in html and "<script" not in html
    srcs = [s.split('"')[1] for s in html.split("src=")[1:]]
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "point estimate" in html


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_summary_equals_estimators(audit_dir, csv_file):
    """summary.json numbers are what the public estimators return, same seed."""
    from skprivacy.auditors import (
        GaussMechAuditor,
        KDELRAuditor,
        MMDTVAuditor,
        ROCHTAuditor,
        ROCHTCertifier,
        residual_gaussianity,
    )
    from skprivacy.report import PROTOCOLS

    p = PROTOCOLS["quick"]
    X, ids, _ = read_embeddings(csv_file, id_column="person")
    document = json.loads((audit_dir / "summary.json").read_text())
    summary = document["results"]

    est = GaussMechAuditor(n_pairs=p["gaussmech_pairs"], random_state=0)
    with pytest.warns(UserWarning):
        assert summary["gaussmech"]["value"] == pytest.approx(
            est.fit(X, ids).score(), rel=1e-9
        )
    assert summary["gaussmech"]["kind"] == "point estimate"

    est = MMDTVAuditor(n_pairs=p["mmdtv_pairs"], random_state=0)
    with pytest.warns(UserWarning):
        assert summary["mmdtv"]["value"] == pytest.approx(
            est.fit(X, ids).score(), rel=1e-9
        )
    assert summary["mmdtv"]["parameters"]["n_pairs"] == p["mmdtv_pairs"]
    cert = MMDTVAuditor(
        n_pairs=p["mmdtv_certified_pairs"], confidence=0.95, random_state=0
    )
    with pytest.warns(UserWarning):
        value = cert.fit(X, ids).score()
    assert summary["mmdtv_certificate"]["value"] == pytest.approx(value, rel=1e-9)
    assert summary["mmdtv_certificate"]["kind"] == "certificate"

    for alpha in p["kdelr_alphas"]:
        est = KDELRAuditor(alpha=alpha, n_pairs=p["kdelr_pairs"], random_state=0)
        with pytest.warns(UserWarning):
            value = est.fit(X, ids).score()
        assert summary[f"kdelr_alpha={alpha:g}"]["value"] == pytest.approx(
            value, rel=1e-9
        )

    est = ROCHTAuditor(n_pairs=p["rocht_pairs"], random_state=0)
    with pytest.warns(UserWarning):
        value = est.fit(X, ids).score()
    # These identities separate perfectly: the median is +inf, written as null.
    assert value == np.inf
    assert summary["rocht"]["value"] is None
    assert "results.rocht.value" in document["infinite"]

    est = ROCHTCertifier(n_pairs=p["certificate_pairs"], random_state=0)
    with pytest.warns(UserWarning):
        value = est.fit(X, ids).score()
    entry = summary["rocht_certificate"]
    assert entry["kind"] == "certificate"
    # 10 rows per identity: 3 reserved rows cannot certify anything (ceiling 0).
    assert entry["ceiling"] == est.ceiling_ == 0.0 and value == 0.0
    assert entry["skipped"] and "ceiling is 0" in entry["reason"]

    with pytest.warns(UserWarning):
        diag = residual_gaussianity(X, ids, random_state=0)
    assert summary["residual_gaussianity"]["value"] == diag.n_rejected


def test_pairs_csv_matches_estimator_results(audit_dir, csv_file):
    pairs = pd.read_csv(audit_dir / "pairs.csv")
    # 12 identities: 66 pairs; quick audits GaussMech on min(100, 66) of them.
    assert len(pairs) == 66
    assert not pairs[["id_a", "id_b"]].duplicated().any()
    assert (pairs["id_a"] < pairs["id_b"]).all()
    assert pairs["pair_rank"].tolist() == list(range(66))
    from skprivacy.auditors import GaussMechAuditor

    X, ids, _ = read_embeddings(csv_file, id_column="person")
    with pytest.warns(UserWarning):
        res = GaussMechAuditor(n_pairs=100, random_state=0).fit(X, ids).results_
    np.testing.assert_array_equal(pairs["id_a"], res["id_a"])
    np.testing.assert_allclose(pairs["gaussmech_epsilon"], res["epsilon"], rtol=1e-15)


def test_every_method_is_available():
    """The core dependencies provide every method the tests above read."""
    read = {"gaussmech", "kdelr", "mmdtv", "mmdtv_certificate", "rocht"}
    assert read | {"rocht_certificate", "gaussianity"} <= set(available_methods())


def test_provenance(audit_dir, csv_file):
    prov = json.loads((audit_dir / "provenance.json").read_text())
    assert prov["input"]["sha256"] == hashlib.sha256(csv_file.read_bytes()).hexdigest()
    assert set(prov["input"]["excluded_columns"]) == {"note"}
    assert prov["n_rows_before"] == 120 and prov["n_rows_after"] == 119
    assert prov["dropped_rows"]["non_finite"] == 1
    assert prov["n_identities_before"] == prov["n_identities_after"] == 12
    assert prov["seed"] == 0 and len(prov["pairs"]) == 66
    assert prov["pairs"][0] == pd.read_csv(audit_dir / "pairs.csv").iloc[0, :2].tolist()
    assert {"numpy", "scikit-learn", "skprivacy", "python"} <= set(prov["versions"])
    assert prov["start_time"] <= prov["end_time"]
    assert prov["command_line"].startswith("skprivacy audit ")


def test_meta_recorded_and_missing_generation_fields_listed(csv_file, tmp_path):
    """Issue 16 item 3: --meta in provenance.json and the report; the rest listed."""
    from skprivacy.report import GENERATION_FIELDS

    out = tmp_path / "r"
    args = ["audit", str(csv_file), "--id-column", "person", "--methods"]
    args += ["gaussianity", "--out", str(out), "--quiet"]
    args += ["--meta", "generator_revision=abc123", "--meta", "prompts=a = b"]
    args += ["--meta", "site=lab 2"]
    assert main(args) == 0
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["metadata"] == {
        "generator_revision": "abc123",
        "prompts": "a = b",  # split on the first '=' only
        "site": "lab 2",
    }
    expected = [
        k for k in GENERATION_FIELDS if k not in ("generator_revision", "prompts")
    ]
    assert prov["missing_generation_fields"] == expected
    html = (out / "report.html").read_text()
    assert "generator_revision = abc123" in html and "site = lab 2" in html
    for field in expected:
        assert f"<code>{field}</code>" in html
    # The audited matrix and labels as read from the file, hashed by hand.
    X, ids, _ = read_embeddings(csv_file, id_column="person", features=r"^f")
    arrays = prov["input"]["arrays"]
    values = np.ascontiguousarray(X.to_numpy())
    assert arrays["X"] == {
        "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
        "shape": [120, 16],
        "dtype": "float64",
        "hashed": "C-order bytes",
    }
    lines = "\n".join(str(i) for i in ids).encode()
    assert arrays["ids"]["sha256"] == hashlib.sha256(lines).hexdigest()


# -- errors: one line on stderr, exit status 2, never a traceback -----------------------


def _bad_inputs(tmp, argparse_says):
    """``{case: (argv, the whole stderr line after 'skprivacy: error: ')}``."""
    no_pairs = tmp / "single.csv"
    pd.DataFrame({"identity": ["a", "b", "c"], "e0": [0.1, 2.3, 3.7]}).to_csv(
        no_pairs, index=False
    )
    garbage = tmp / "garbage.parquet"
    garbage.write_bytes(b"\x00\x01 not parquet at all")
    text_only = tmp / "text.csv"
    text_only.write_text("identity,name\na,x\nb,y\n")
    good = tmp / "good.csv"
    pd.DataFrame(
        {"identity": ["a", "a", "b", "b"], "e0": [1.0, 1.1, -1.0, -1.2], "e1": 1.0}
    ).to_csv(good, index=False)
    existing = tmp / "exists"
    existing.mkdir()
    npz_1d = tmp / "flat.npz"
    np.savez(npz_1d, X=np.arange(4.0), identity=np.array(["a", "a", "b", "b"]))
    odd = tmp / "odd"
    (odd / "summary.json").mkdir(parents=True)
    header_only = tmp / "header.csv"
    header_only.write_text("identity,e0,e1\n")
    all_nan = tmp / "all_nan.csv"
    pd.DataFrame({"identity": ["a", "a", "b", "b"], "e0": np.nan, "e1": np.inf}).to_csv(
        all_nan, index=False
    )
    empty = tmp / "empty.csv"
    empty.write_bytes(b"")
    text_cell = tmp / "text_cell.csv"
    frame = pd.DataFrame(
        {"identity": list("aaabbbccc"), "e0": np.linspace(0.1, 0.9, 9), "e1": 0.5}
    )
    frame["e1"] = np.linspace(-0.9, 0.9, 9).astype(object)
    frame.loc[4, "e1"] = "oops"
    frame.to_csv(text_cell, index=False)
    see_help = " (see 'skprivacy audit --help')"
    protocols = ["exhaustive", "paper", "quick"]
    return {
        "missing file": (
            ["audit", tmp / "nope.csv"],
            f"input file not found: {tmp}/nope.csv",
        ),
        "missing id column": (
            ["audit", good, "--id-column", "person"],
            f"reading input: Identity column 'person' not found in {good}; "
            "columns are: identity, e0, e1.",
        ),
        # the reason after the colon is pyarrow's own text
        "unreadable data": (
            ["audit", garbage],
            re.compile(
                re.escape(f"reading input: Could not read {garbage} as PARQUET: ")
                + ".+"
            ),
        ),
        "no numeric column": (
            ["audit", text_only],
            "reading input: no embedding column found: every column other than the "
            "identity column looks like metadata (name: text). Name the embedding "
            "columns with --features REGEX (features=).",
        ),
        "no auditable pairs": (
            ["audit", no_pairs],
            "no auditable identity pairs: 0 of 3 identities have at least 2 usable "
            "rows (3 rows before cleaning, 0 after)",
        ),
        "existing output": (
            ["audit", good, "--out", existing],
            f"preparing output: output directory {existing} already exists; use "
            "--force (force=True) to replace it",
        ),
        "bad protocol": (
            ["audit", good, "--protocol", "fast"],
            argparse_says("--protocol", "fast", choices=protocols) + see_help,
        ),
        "bad features regex": (
            ["audit", good, "--features", "["],
            "reading input: invalid regular expression for features: '[' "
            "(unterminated character set at position 0)",
        ),
        "1-D npz": (
            ["audit", npz_1d],
            "reading input: 'X' holds a 1-D array of shape (4,); expected a 2-D "
            "embedding matrix (rows x dimensions).",
        ),
        "zero jobs": (
            ["audit", good, "--n-jobs", "0"],
            "argument --n-jobs: 0 is not a number of jobs; use a positive count, or "
            "-1 for all cores" + see_help,
        ),
        "huge seed": (
            ["audit", good, "--seed", "1099511627776"],
            "argument --seed: 1099511627776 is outside 0 .. 2**32 - 1" + see_help,
        ),
        "out below a file": (
            ["audit", good, "--out", good / "sub"],
            f"preparing output: output directory {good}/sub: {good} is a file, not "
            "a directory",
        ),
        "summary.json is a directory": (
            ["audit", good, "--out", odd, "--force"],
            f"preparing output: output directory {odd} holds files skprivacy did "
            "not write (summary.json); refusing to replace it, choose another --out",
        ),
        "confidence out of range": (
            ["audit", good, "--confidence", "1.5"],
            "argument --confidence: 1.5 is not strictly between 0 and 1" + see_help,
        ),
        "test size out of range": (
            ["audit", good, "--test-size", "0"],
            "argument --test-size: 0.0 is not strictly between 0 and 1" + see_help,
        ),
        "text cell": (
            ["audit", text_cell],
            "reading input: column 'e1' looks numeric but row 4 holds 'oops', which "
            "is not a number (rows are counted from 0 after the header); fix those "
            "cells, or exclude the column with --exclude / exclude=.",
        ),
        "meta without =": (
            ["audit", good, "--meta", "seeds"],
            "argument --meta: 'seeds' is not KEY=VALUE (e.g. --meta "
            "generator_revision=abc123)" + see_help,
        ),
        "meta key twice": (
            ["audit", good, "--meta", "seeds=1", "--meta", "seeds=2"],
            "--meta seeds is given twice",
        ),
        "labels with a CSV": (
            ["audit", good, "--labels", good],
            "--labels gives the identities of a bare .npy matrix; good.csv carries "
            "its own (column 'identity', see --id-column): drop --labels",
        ),
        "labels without FILE": (
            ["audit", "--labels", good],
            "--labels needs the bare .npy FILE whose rows it labels",
        ),
        "header only": (
            ["audit", header_only],
            f"reading input: {header_only} has no data rows (only a header): there "
            "are no embeddings to use.",
        ),
        "empty file": (
            ["audit", empty],
            f"reading input: {empty} is empty (0 bytes).",
        ),
        "all NaN": (
            ["audit", all_nan],
            "reading input: none of the 2 identities has a finite row: the float "
            "columns ('e0', 'e1') hold only NaN or infinite values, so there is no "
            "embedding to use.",
        ),
    }


def test_errors_one_line_exit_2(tmp_path, capsys, monkeypatch, argparse_says):
    monkeypatch.chdir(tmp_path)
    cases = _bad_inputs(tmp_path, argparse_says)
    before = sorted(tmp_path.rglob("*"))
    for case, (args, expected) in cases.items():
        assert main([str(a) for a in args]) == 2, case
        out, err = capsys.readouterr()
        assert out == "", case
        assert err.endswith("\n") and err.count("\n") == 1, (case, err)
        line = err.removeprefix("skprivacy: error: ").rstrip("\n")
        if isinstance(expected, re.Pattern):
            assert expected.fullmatch(line), (case, line)
        else:
            assert line == expected, case
    assert sorted(tmp_path.rglob("*")) == before  # nothing written


@pytest.mark.slow
def test_force_overwrites(csv_file, tmp_path):
    out = tmp_path / "o"
    args = ["audit", str(csv_file), "--id-column", "person", "--methods"]
    args += ["gaussianity", "--out", str(out), "--quiet"]
    assert main(args) == 0
    assert main(args) == 2
    assert main([*args, "--force"]) == 0


# -- a user's own files: metadata columns, two photos per person ------------------------
def _messy_csv(path, rows_per_identity):
    X, ids = make_identity_embeddings(10, rows_per_identity, 16, random_state=4)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(16)])
    frame.insert(0, "identity", [f"id{i}" for i in ids])
    frame.insert(1, "image", [f"faces/{i}/{k}.jpg" for k, i in enumerate(ids)])
    frame.insert(2, "shot", np.tile(np.arange(1, rows_per_identity + 1), 10))
    frame.insert(3, "is_train", np.arange(len(frame)) % 2 == 0)
    frame.to_csv(path)  # with pandas' index: the 'Unnamed: 0' column
    return path


_TOO_FEW_FOR_CONTROLS = {"controls", "permutation"}
_CERTIFICATES = {"mmdtv_certificate", "rocht_certificate"}


@pytest.mark.parametrize(
    "rows, skipped",
    # 2-3 rows: no split-half control and no permutation p below 0.05; every
    # row count: too few reserved rows to certify anything (ceilings 0)
    [
        (2, _TOO_FEW_FOR_CONTROLS | _CERTIFICATES),
        pytest.param(3, _TOO_FEW_FOR_CONTROLS | _CERTIFICATES, marks=pytest.mark.slow),
        pytest.param(10, _CERTIFICATES, marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_messy_file_audits_the_embedding_only(rows, skipped, tmp_path, capsys):
    path = _messy_csv(tmp_path / "messy.csv.gz", rows)
    out = tmp_path / "r"
    assert main(["audit", str(path), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    warning = [line for line in captured.err.splitlines() if "warning" in line]
    assert warning == [
        "skprivacy: warning: messy.csv.gz: Columns not used as embedding "
        "dimensions: 'Unnamed: 0' (index column written by pandas (df.to_csv "
        "without index=False)); 'image' (text); 'shot' (integer-valued (metadata "
        "such as a frame, shot or pose number)); 'is_train' (boolean). Pass "
        "features=/--features to choose the embedding columns explicitly."
    ]
    assert captured.out.strip().splitlines()[-1] == f"report: {out / 'report.html'}"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["feature_columns"] == [f"e{j}" for j in range(16)]
    assert set(prov["excluded_columns"]) == {"Unnamed: 0", "image", "shot", "is_train"}
    assert prov["n_features"] == 16
    html = (out / "report.html").read_text()
    columns = html.split("<h2>Columns</h2>")[1].split("<h2>")[0]
    for column in ("Unnamed: 0", "image", "shot", "is_train"):
        assert f"<code>{column}</code>" in columns
    results = json.loads((out / "summary.json").read_text())["results"]
    assert {k for k, e in results.items() if e["skipped"]} == skipped
    for key in skipped:  # every reason is in the report
        reason = results[key]["reason"]
        assert html_escape(reason.split(";")[0]) in html, key
    for key in _CERTIFICATES:
        assert results[key]["reason"].startswith("its ceiling is 0 on these data")
    assert ("Split-half controls skipped" in html) == ("controls" in skipped)
    ran = {e["method"] for e in results.values() if not e["skipped"]}
    assert {"gaussmech", "kdelr", "mmdtv", "rocht", "gaussianity"} <= ran


@pytest.mark.slow
def test_bundled_file_by_path_certificates_next_to_their_ceilings(tmp_path, capsys):
    """Cropped Yale B given by path: its azimuth/elevation/image columns are named and
    left out, and every certificate is shown with its ceiling, at-ceiling ones marked.
    """
    from importlib import resources

    from skprivacy.auditors import certifiable_epsilon_ceiling

    data = resources.files("skprivacy.datasets").joinpath("data", "cropped-yale-b")
    out = tmp_path / "yale"
    with resources.as_file(data / "dlib_resnet128.csv.gz") as path:
        args = ["audit", str(path), "--out", str(out), "--methods"]
        assert main([*args, "mmdtv_certificate", "rocht_certificate"]) == 0
    err = capsys.readouterr().err
    assert all(c in err for c in ("'image'", "'azimuth'", "'elevation'"))
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["feature_columns"] == [f"e{j}" for j in range(128)]
    assert set(prov["excluded_columns"]) == {"image", "azimuth", "elevation"}
    summary = json.loads((out / "summary.json").read_text())
    pairs = pd.read_csv(out / "pairs.csv")
    html = (out / "report.html").read_text()
    certs = html.split("<h2>Certificates and their ceilings</h2>")[1].split("<h2>")[0]
    top = html.split("<h2>Most leaky pairs</h2>")[1].split("<h2>")[0]
    for key, column, ceiling_column in [
        ("rocht_certificate", "cert_epsilon", "cert_ceiling"),
        ("mmdtv_certificate", "mmdtv_epsilon_lower", "mmdtv_ceiling"),
    ]:
        entry = summary["results"][key]
        assert isinstance(entry["value"], float) and isinstance(
            entry["at_ceiling"], bool
        )
        assert entry["ceiling"] == pytest.approx(pairs[ceiling_column].max(), rel=1e-12)
        at = np.isclose(pairs[column], pairs[ceiling_column], rtol=1e-9, atol=0)
        at &= pairs[ceiling_column] > 0
        assert entry["n_at_ceiling"] == int(at.sum())
        row = certs.split(f"<code>{key}</code>")[1].split("</tr>")[0]
        assert f"{entry['ceiling']:.4g}" in row
        assert ("at ceiling" in row) == entry["at_ceiling"]
    # ROC-HT: 38 identities x ~45 images at test size 0.3 certify the ceiling on
    # almost every pair; the ceiling is the by-hand Clopper-Pearson maximum.
    rocht = summary["results"]["rocht_certificate"]
    assert rocht["at_ceiling"] and rocht["n_at_ceiling"] >= 25
    by_hand = certifiable_epsilon_ceiling(
        pairs["cert_n_pos"].dropna().to_numpy(int),
        pairs["cert_n_neg"].dropna().to_numpy(int),
        n_comparisons=rocht["n_pairs"],
        confidence=1 - 0.05 / 2,  # each of the two certificates, 0.95 jointly
    )
    assert rocht["ceiling"] == pytest.approx(float(np.max(by_hand)), rel=1e-12)
    # In the most-leaky table each certified value stands above its ceiling.
    assert top.count("<small>ceiling ") == 2 * top.count("<tr><td class='num'>")
    assert "at ceiling" in top


# -- outputs that cannot lie -----------------------------------------------------------
_RUN_ID = {
    "summary.json": r'"run_id": "([0-9a-f]+)"',
    "provenance.json": r'"run_id": "([0-9a-f]+)"',
    "report.html": r'name="skprivacy-run-id" content="([0-9a-f]+)"',
}


def _run_ids(out):
    import re

    return {
        name: re.search(pattern, (out / name).read_text()).group(1)
        for name, pattern in _RUN_ID.items()
    }


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["1", "2", "3", "4", "swap", "swap-thread"])
def test_sigterm_leaves_old_or_new_report(
    moment, csv_file, tmp_path, monkeypatch, capsys
):
    """SIGTERM right after the k-th file is renamed into the staging directory
    (k = 1..4), or while the staged directory is swapped in: the folder holds
    one run's files, the old or the new, and stderr says which.
    """
    import signal
    import threading

    import skprivacy.utils._files as files

    out = tmp_path / "r"
    args = ["audit", str(csv_file), "--id-column", "person", "--methods"]
    args += ["gaussmech", "--out", str(out), "--quiet"]
    assert main(args) == 0
    (first,) = set(_run_ids(out).values())
    calls = {"replace": 0}
    real_replace, real_rename, real_rename2 = os.replace, os.rename, files._rename2

    def replace(a, b):
        real_replace(a, b)
        calls["replace"] += 1
        if moment == str(calls["replace"]):
            os.kill(os.getpid(), signal.SIGTERM)

    def rename(a, b):
        if moment.startswith("swap"):
            os.kill(os.getpid(), signal.SIGTERM)  # deferred during the swap
        real_rename(a, b)

    def rename2(*a):  # the atomic exchange, where the system has one
        if moment.startswith("swap"):
            os.kill(os.getpid(), signal.SIGTERM)
        return real_rename2(*a)

    done = threading.Event()
    if moment == "swap-thread":
        # A second thread (BLAS and joblib start some) may take a process
        # signal; the swap must be deferred all the same.
        threading.Thread(target=done.wait, daemon=True).start()
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(files, "_rename2", rename2)
    try:
        status = main([*args, "--force"])
    finally:
        done.set()
        monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 143, err
    assert {p.name for p in out.iterdir()} == OUTPUTS
    ids = set(_run_ids(out).values())
    assert len(ids) == 1, ids
    if moment.startswith("swap"):  # the swap completes, then the signal is handled
        assert ids != {first}
        assert err == f"skprivacy: terminated (SIGTERM); {out} holds the new output\n"
    else:
        assert ids == {first}
        assert err == (
            f"skprivacy: terminated (SIGTERM); {out} keeps the previous output (the "
            "new one was discarded)\n"
        )
    # No staging or backup directory is left beside the output.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


@pytest.mark.slow
def test_symlinks_are_never_followed(csv_file, tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("user data")
    out = tmp_path / "r"
    args = ["audit", str(csv_file), "--id-column", "person", "--methods"]
    args += ["gaussmech", "--out", str(out), "--quiet", "--force"]
    assert main(args) == 0
    for name in ("summary.json", "report.html"):
        (out / name).unlink()
        (out / name).symlink_to(outside)
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main(args) == 0
    assert outside.read_text() == "user data"
    assert {p: p.read_bytes() for p in before} == before
    assert not any(p.is_symlink() for p in out.iterdir())
    # An output directory that is itself a link is refused.
    link = tmp_path / "link"
    link.symlink_to(out, target_is_directory=True)
    assert main([*args[:-3], str(link), "--quiet", "--force"]) == 2


# -- inputs: what is parsed is what is hashed; --labels only where it means something ---
def _feed(fifo, data):
    """Write ``data`` into a named pipe from a thread (the reader opens it)."""
    import threading

    def write():
        with open(fifo, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("compressed", [False, True], ids=["csv", "csv.gz"])
def test_a_pipe_is_read_once_and_hashed_as_read(
    compressed, csv_file, audit_dir, tmp_path
):
    import gzip

    data = csv_file.read_bytes()  # gzip-compressed CSV
    if not compressed:
        data = gzip.decompress(data)
    fifo = tmp_path / "fifo"  # like <(zcat emb.csv.gz): no name suffix, one read
    os.mkfifo(fifo)
    thread = _feed(fifo, data)
    out = tmp_path / "r"
    args = ["audit", str(fifo), "--id-column", "person", "--out", str(out), "--quiet"]
    args += ["--methods", "gaussmech"]
    assert main(args) == 0
    thread.join()
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["input"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert prov["input"]["format"] == "csv" and prov["input"]["n_rows_read"] == 120
    # The matrix parsed from the pipe is the one parsed from the file.
    from_file = json.loads((audit_dir / "provenance.json").read_text())
    assert prov["input"]["arrays"] == from_file["input"]["arrays"]


def test_labels_with_a_bare_npy_matrix(tmp_path, capsys):
    X, ids = make_identity_embeddings(6, 5, 8, random_state=0)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "y.txt").write_text("\n".join(f"p{i}" for i in ids) + "\n")
    out = tmp_path / "r"
    args = ["audit", str(tmp_path / "x.npy"), "--labels", str(tmp_path / "y.txt")]
    assert main([*args, "--methods", "gaussmech", "--out", str(out), "--quiet"]) == 0
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["n_identities_before"] == 6 and prov["n_rows_before"] == 30
    digest = hashlib.sha256((tmp_path / "x.npy").read_bytes()).hexdigest()
    assert prov["input"]["sha256"] == digest


def test_an_identity_without_a_finite_row_is_named(tmp_path, capsys):
    X, ids = make_identity_embeddings(6, 5, 8, random_state=0)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
    frame.insert(0, "identity", [f"p{i}" for i in ids])
    frame.loc[frame["identity"] == "p3", "e0"] = np.nan  # every row of p3
    frame.loc[0, "e1"] = np.inf  # one row of p0: p0 keeps finite rows
    frame.to_csv(tmp_path / "emb.csv", index=False)
    args = ["audit", str(tmp_path / "emb.csv"), "--methods", "gaussmech"]
    assert main([*args, "--out", str(tmp_path / "r")]) == 0
    warned = [
        line for line in capsys.readouterr().err.splitlines() if "finite row" in line
    ]
    assert warned == [
        "skprivacy: warning: emb.csv: identity 'p3' has no finite row (every row "
        "holds NaN or inf in an embedding column) and cannot be audited."
    ]


# -- first run: a default output folder per input ---------------------------------------
@pytest.mark.slow
def test_default_outputs_are_named_after_the_input(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    names = []
    for seed, name in enumerate(["faces.csv.gz", "voices.parquet"]):
        pytest.importorskip("pyarrow") if name.endswith("parquet") else None
        X, ids = make_identity_embeddings(6, 5, 8, random_state=seed)
        frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
        frame.insert(0, "identity", [f"p{i}" for i in ids])
        if name.endswith("parquet"):
            frame.to_parquet(tmp_path / name, index=False)
        else:
            frame.to_csv(tmp_path / name, index=False)
        names.append(name)
    previous = os.umask(0o027)
    try:
        for name in names:
            assert main(["audit", name, "--methods", "gaussmech"]) == 0
    finally:
        os.umask(previous)
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("report:")] == [
        "report: faces_skprivacy_report/report.html",
        "report: voices_skprivacy_report/report.html",
    ]
    for folder in ("faces_skprivacy_report", "voices_skprivacy_report"):
        assert {p.name for p in (tmp_path / folder).iterdir()} == OUTPUTS
        # The umask is honoured: group may read, others nothing.
        assert (tmp_path / folder).stat().st_mode & 0o777 == 0o750
        for path in (tmp_path / folder).iterdir():
            assert path.stat().st_mode & 0o777 == 0o640, path
    # The same file again: its own folder exists; --force replaces it.
    assert main(["audit", names[0], "--methods", "gaussmech", "--quiet"]) == 2
    assert "faces_skprivacy_report already exists" in capsys.readouterr().err


@pytest.mark.slow
def test_quiet_is_quiet_and_labels_the_font_lacks_draw_without_warning(
    tmp_path, capsys
):
    import warnings

    X, ids = make_identity_embeddings(6, 6, 8, random_state=0)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
    frame.insert(0, "identity", [f"\u674e{i}\U0001f642" for i in ids])
    source = tmp_path / "\u4eba\u8138.csv"
    frame.to_csv(source, index=False)
    single = ["audit", str(source), "--methods", "rocht", "gaussmech"]
    several = ["audit", str(source), str(source), "--names", "\u4eba,$x$"]
    several += ["--methods", "gaussmech"]
    for k, args in enumerate([single, several]):
        assert main([*args, "--out", str(tmp_path / f"q{k}"), "--quiet"]) == 0
        assert capsys.readouterr() == ("", "")
        # Not quiet: no warning about glyphs (the labels are drawn literally).
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            assert main([*args, "--out", str(tmp_path / f"v{k}")]) == 0
        assert not [w for w in record if "Glyph" in str(w.message)]
        assert "Glyph" not in capsys.readouterr().err
