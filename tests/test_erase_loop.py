# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Audit -> erase -> audit, honestly: cross-fitted after-audits and suggestions."""

import json
import os
import subprocess
import sys
import warnings

import jsonschema
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GroupKFold

from skprivacy import audit
from skprivacy.cli import main
from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import AuditReport, summary_schema
from skprivacy.sanitize import ISP, sanitize_file, sanitize_provenance, select_rank
from skprivacy.sanitize._rank import suggest_isp_rank

METHODS = ["gaussmech", "permutation"]


def _normalize(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _loop(eraser, X, ids, n_splits):
    """Fit on the other folds, transform this fold: the plain loop."""
    out = np.full(X.shape, np.nan)
    for train, test in GroupKFold(n_splits=n_splits).split(X, ids, groups=ids):
        out[test] = clone(eraser).fit(X[train], ids[train]).transform(X[test])
    return out


def _loo_1nn(Z, ids):
    """Leave-one-out cosine 1-NN identification rate, by brute force."""
    Z = _normalize(Z)
    S = Z @ Z.T
    np.fill_diagonal(S, -np.inf)
    return float(np.mean(ids[np.argmax(S, axis=1)] == ids))


@pytest.fixture(scope="module")
def planted():
    """Identity in 12 mean directions of 64 dims: every person has their own.

    ISP fitted on these identities removes their means (in-sample the rows look
    anonymous); a new person's mean lies outside the training identities'
    span, so cross-fitted ISP leaves them re-identifiable.
    """
    rng = np.random.default_rng(0)
    m, n, d = 12, 8, 64
    means = rng.normal(size=(m, d))
    ids = np.repeat(np.arange(m), n)
    X = means[ids] + 0.35 * rng.normal(size=(m * n, d))
    return _normalize(X), ids


@pytest.mark.slow
def test_audit_with_eraser_equals_audit_of_an_independent_cross_fit(planted):
    X, ids = planted
    eraser = ISP(n_components=4)
    got = audit(X, ids, methods=METHODS, eraser=eraser, suggest_rank=False)
    Z = _loop(eraser, X, ids, 5)
    ref = audit(Z, ids, methods=METHODS, suggest_rank=False)
    for key, entry in ref.results.items():
        np.testing.assert_allclose(got.results[key]["value"], entry["value"], 1e-12)
    pd.testing.assert_frame_equal(got.pairs, ref.pairs, rtol=1e-12)
    erasure = got.to_dict()["erasure"]
    assert erasure["mode"] == "cross-fitted"
    assert erasure["eraser"] == "ISP(n_components=4)"
    assert erasure["params"]["n_components"] == 4
    assert erasure["cv"] == 5
    assert got.provenance["erasure"] == erasure
    # The re-identification figures come from the rows before and after.
    assert erasure["reid_before"]["rate"] == pytest.approx(_loo_1nn(X, ids), abs=0)
    assert erasure["reid_after"]["rate"] == pytest.approx(_loo_1nn(Z, ids), abs=0)
    assert got.verdict["headline"].startswith("After cross-fitted erasure by ISP")


@pytest.mark.slow
def test_planted_in_sample_erasure_hides_what_the_cross_fitted_audit_shows(planted):
    X, ids = planted
    chance = 7 / (ids.size - 1)
    in_sample = ISP(n_components="full").fit(X, ids).transform(X)
    cross = audit(X, ids, methods=METHODS, eraser=ISP(n_components="full"))
    after = cross.to_dict()["erasure"]["reid_after"]
    # In-sample the erasure looks near-complete; on held-out identities the
    # nearest-neighbour attack still finds almost everyone.
    assert _loo_1nn(in_sample, ids) < 3 * chance
    assert after["rate"] == pytest.approx(_loo_1nn(_loop(ISP("full"), X, ids, 5), ids))
    assert after["chance"] == pytest.approx(chance)
    assert after["ci"][0] > 5 * chance
    assert "Little evidence" not in cross.verdict["headline"]
    # And the suggestion (cross-fitted) says ISP does not protect them.
    step = next(s for s in cross.next_steps if s["action"] == "sanitize")
    assert "does not protect these identities" in step["text"]
    assert "held out of the projector's fit" in step["text"]
    # Its command would be this very audit again: not repeated.
    assert step["command"] is None


def test_eraser_rank_the_folds_cannot_support_is_refused(planted):
    X, ids = planted
    with pytest.raises(ValueError, match="as few as 9 identities, so at most 8"):
        audit(X, ids, methods=METHODS, eraser=ISP(n_components=10))


@pytest.mark.slow
def test_suggested_rank_is_select_ranks_and_says_what_it_measured():
    X, ids = make_identity_embeddings(
        40, 6, 16, n_identity_dims=4, separation=2.0, random_state=0
    )
    s = suggest_isp_rank(X, ids, target=0.2, source="emb.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = select_rank(ISP(), X, ids, target=0.2, far=1e-3, cv=5, random_state=0)
    assert s["rank"] == ref.rank_ == 4
    row = ref.table_.set_index("rank").loc[4]
    assert f"upper bound {row['tar_upper']:.3f}" in s["text"]
    assert "identities held out of the projector's fit" in s["text"]
    assert s["command"] == "skprivacy sanitize emb.csv --n-components 4 --out sanitized"
    # No leakage to remove: rank 0 meets the target and nothing is suggested.
    noise = np.random.default_rng(0).normal(size=(240, 16))
    assert suggest_isp_rank(noise, ids, target=0.2)["text"] is None


@pytest.fixture(scope="module")
def csv_file(planted, tmp_path_factory):
    X, ids = planted
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(X.shape[1])])
    frame.insert(0, "identity", [f"p{i:02d}" for i in ids])
    path = tmp_path_factory.mktemp("loop") / "emb.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_cli_erase(csv_file, tmp_path, capsys):
    out = tmp_path / "r"
    args = ["audit", csv_file, "--methods", *METHODS, "--out", out]
    assert main([*map(str, args), "--erase", "isp:3"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("After cross-fitted erasure by ISP(n_components=3)")
    summary = json.loads((out / "summary.json").read_text())
    provenance = json.loads((out / "provenance.json").read_text())
    assert summary["erasure"]["eraser"] == "ISP(n_components=3)"
    assert provenance["erasure"] == summary["erasure"]
    jsonschema.validate(summary, summary_schema())
    assert AuditReport.load(out).to_dict()["erasure"] == summary["erasure"]
    for bad, says in [
        ("pca:3", "--erase must be isp:RANK"),
        ("isp:-1", "--erase must be isp:RANK"),
        ("isp:10", "the training folds hold as few as 9 identities"),
    ]:
        assert main([*map(str, args), "--erase", bad, "--force"]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_cli_target_tar(tmp_path, capsys):
    X, ids = make_identity_embeddings(
        40, 6, 16, n_identity_dims=4, separation=2.0, random_state=0
    )
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(16)])
    frame.insert(0, "identity", [f"p{i:02d}" for i in ids])
    frame.to_csv(tmp_path / "emb.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = select_rank(ISP(), X, ids, target=0.2, far=1e-2, random_state=0)
    row = ref.table_.set_index("rank").loc[ref.rank_]
    base = ["sanitize", str(tmp_path / "emb.csv"), "--out", str(tmp_path / "s")]
    assert main([*base, "--target-tar", "0.2", "--far", "0.01"]) == 0
    err = capsys.readouterr().err
    assert f"chose rank {ref.rank_}" in err
    assert f"{row['tar']:.3f} (point estimate), upper 95% bound " in err
    record = json.loads((tmp_path / "s" / "sanitize.json").read_text())
    assert record["rank"] == ref.rank_
    assert record["rank_selection"]["tar_upper"] == pytest.approx(row["tar_upper"])
    table = pd.read_csv(tmp_path / "s" / "rank_selection.csv")
    np.testing.assert_allclose(table["tar_upper"], ref.table_["tar_upper"])
    both = [*base, "--force", "--target-tar", "0.2", "--n-components", "2"]
    assert main(both) == 2
    assert "--target-tar chooses the rank" in capsys.readouterr().err
    assert main([*base, "--force", "--target-tar", "0.001", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no ISP rank up to" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_audit_of_a_sanitized_file_says_it_is_in_sample(csv_file, tmp_path, capsys):
    sanitize_file(csv_file, tmp_path / "s", n_components=4, leakage_summary=False)
    output = tmp_path / "s" / "sanitized.csv.gz"
    record = sanitize_provenance(output)
    assert record["rank"] == 4 and record["fitted_on"]["n_identities"] == 12
    args = ["audit", str(output), "--methods", *METHODS, "--out", str(tmp_path / "r")]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("In-sample audit of a sanitised file (optimistic;")
    assert f"next: skprivacy audit {csv_file} --erase isp:4" in printed
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["erasure"]["mode"] == "in-sample"
    assert summary["erasure"]["n_shared"] == 12
    jsonschema.validate(summary, summary_schema())
    Z = pd.read_csv(output).filter(regex=r"^e\d+$").to_numpy()
    ids = pd.read_csv(output)["identity"].to_numpy()
    assert summary["erasure"]["reid"]["rate"] == pytest.approx(_loo_1nn(Z, ids))
    assert f"still re-identifies {_loo_1nn(Z, ids):.3f}" in printed
    # The record passed explicitly (here after moving it away from the file).
    moved = tmp_path / "elsewhere.provenance.json"
    output.with_name(output.name + ".provenance.json").rename(moved)
    assert main([*args, "--force"]) == 0
    assert capsys.readouterr().out.startswith("Identities")
    assert main([*args, "--force", "--sanitize-provenance", str(moved)]) == 0
    assert capsys.readouterr().out.startswith("In-sample audit")


@pytest.mark.slow
def test_cli_erase_in_a_real_process(csv_file, tmp_path):
    out = tmp_path / "r"
    proc = subprocess.run(
        [sys.executable, "-m", "skprivacy", "audit", str(csv_file), "--methods",
         *METHODS, "--erase", "isp:full", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("After cross-fitted erasure by ISP(n_components=")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["erasure"]["reid_after"]["rate"] > 0.9
