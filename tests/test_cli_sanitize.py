# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy sanitize``: streaming, lossless, atomic, and honest about rows."""

import argparse
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest

from skprivacy.cli import _sanitize as san
from skprivacy.cli import main
from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import ISP
from skprivacy.sanitize import _file as sanitize_module

pytest.importorskip("pyarrow")


D = 16


@pytest.fixture(scope="module")
def table():
    X, ids = make_identity_embeddings(30, 10, D, random_state=0)
    order = np.random.default_rng(0).permutation(len(X))  # identities interleaved
    X, ids = X[order], ids[order]
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(D)])
    frame.insert(0, "identity", [f"p{i:02d}" for i in ids])
    frame.insert(1, "image", [f"img/{i:04d}.jpg" for i in range(len(frame))])
    frame["frame"] = np.arange(len(frame)) % 7  # integer metadata column
    frame.loc[[5, 40], "identity"] = None  # rows without an identity
    frame.loc[7, "e3"] = np.nan  # a non-finite row
    return frame


@pytest.fixture(scope="module")
def files(table, tmp_path_factory):
    root = tmp_path_factory.mktemp("in")
    table.to_csv(root / "emb.csv.gz", index=False)
    table.to_parquet(root / "emb.parquet", index=False)
    return root


def _expected(table, n_components):
    X = table[[f"e{j}" for j in range(D)]].to_numpy()
    ok = table["identity"].notna().to_numpy() & np.isfinite(X).all(axis=1)
    isp = ISP(n_components).fit(X[ok], table["identity"][ok].to_numpy())
    Z = isp.transform(np.where(np.isfinite(X), X, np.nan))
    return isp, Z


@pytest.mark.parametrize(
    "source,fmt,reader",
    [
        ("emb.csv.gz", "csv.gz", pd.read_csv),
        ("emb.parquet", "parquet", pd.read_parquet),
        ("emb.parquet", "csv", pd.read_csv),
    ],
)
def test_streaming_sanitize_keeps_every_row_and_column(
    table, files, tmp_path, source, fmt, reader
):
    out = tmp_path / "out"
    args = ["sanitize", str(files / source), "--n-components", "4"]
    args += ["--id-column", "identity", "--out", str(out), "--format", fmt]
    assert main([*args, "--chunk-rows", "37", "--quiet"]) == 0
    name = {"csv": "sanitized.csv", "csv.gz": "sanitized.csv.gz"}.get(
        fmt, "sanitized.parquet"
    )
    written = {p.name for p in out.iterdir()}
    assert written == {
        name,
        name + ".provenance.json",
        "projector.npz",
        "sanitize.json",
    }
    result = reader(out / name)
    assert list(result.columns) == ["source_row", *table.columns]
    assert len(result) == len(table)
    assert (result["source_row"].to_numpy() == np.arange(len(table))).all()
    assert (result["image"] == table["image"]).all()
    assert (result["frame"] == table["frame"]).all()
    pd.testing.assert_series_equal(result["identity"], table["identity"])
    # Equal, row for row, to fitting ISP in memory on the usable rows.
    isp, Z = _expected(table, 4)
    got = result[[f"e{j}" for j in range(D)]].to_numpy()
    np.testing.assert_allclose(got, Z, atol=1e-9, equal_nan=True)
    assert np.isnan(got[7]).all()
    record = json.loads((out / "sanitize.json").read_text())
    assert record["rank"] == 4
    assert record["rows"]["n_input"] == record["rows"]["n_output"] == len(table)
    assert record["rows"]["not_used_for_fit"] == {
        "missing_identity": 2,
        "non_finite": 1,
        "low_norm": 0,
    }
    assert record["rows"]["written_as_nan_non_finite"] == 1
    saved = ISP.from_npz(out / "projector.npz")
    assert np.abs(saved.components_ @ isp.components_.T).max() > 0.99
    leak = record["leakage"]
    assert leak["tar_after"] < leak["tar_before"]
    assert leak["n_impostor_pairs"] * leak["far"] >= 10  # resolvable
    assert len(record["projector_sha256"]) == 64


def test_apply_projector_equals_from_npz_transform(table, files, tmp_path):
    fitted = tmp_path / "fit"
    assert (
        main(
            [
                "sanitize",
                str(files / "emb.csv.gz"),
                "--out",
                str(fitted),
                "--n-components",
                "3",
                "--quiet",
            ]
        )
        == 0
    )
    # New data without an identity column.
    new = table.drop(columns=["identity"]).iloc[::-1].reset_index(drop=True)
    new_path = tmp_path / "new.parquet"
    new.to_parquet(new_path, index=False)
    out = tmp_path / "applied"
    status = main(
        [
            "sanitize",
            str(new_path),
            "--projector",
            str(fitted / "projector.npz"),
            "--out",
            str(out),
            "--chunk-rows",
            "50",
            "--quiet",
        ]
    )
    assert status == 0
    result = pd.read_parquet(out / "sanitized.parquet")
    X = new[[f"e{j}" for j in range(D)]].to_numpy()
    expected = ISP.from_npz(fitted / "projector.npz").transform(X)
    np.testing.assert_allclose(
        result[[f"e{j}" for j in range(D)]].to_numpy(),
        expected,
        atol=1e-12,
        equal_nan=True,
    )
    assert (result["image"] == new["image"]).all()
    record = json.loads((out / "sanitize.json").read_text())
    assert record["mode"] == "apply projector"
    assert record["leakage"] is None  # no identity column


def test_refuses_to_write_over_its_input(files, tmp_path, capsys):
    source = tmp_path / "copy.parquet"
    source.write_bytes((files / "emb.parquet").read_bytes())
    before = source.read_bytes()
    link = tmp_path / "d" / "hard.parquet"
    link.parent.mkdir()
    os.link(source, link)
    other = tmp_path / "x.txt"
    other.write_text("keep")
    refusals = {
        source: f"output {source} is the input file {source}; refusing.",
        tmp_path: (
            f"output directory {tmp_path} contains the input {source}; refusing "
            "to replace it."
        ),
        link: f"output {link} is the input file {source}; refusing.",
        link.parent: (
            f"output directory {link.parent} holds files skprivacy did not write "
            "(hard.parquet); refusing to replace it, choose another --out"
        ),
        # an existing file as --out
        other: f"output directory {other}: {other} is a file, not a directory",
    }
    for target, message in refusals.items():
        status = main(["sanitize", str(source), "--out", str(target), "--force"])
        assert status == 2
        assert capsys.readouterr().err == f"skprivacy: error: {message}\n"
    assert source.read_bytes() == before
    assert other.read_text() == "keep"


def test_interrupt_leaves_no_partial_output(files, tmp_path, monkeypatch):
    calls = []
    real = sanitize_module._Writer.write

    def interrupted(self, frame):
        calls.append(len(frame))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, frame)

    monkeypatch.setattr(sanitize_module._Writer, "write", interrupted)
    out = tmp_path / "out"
    status = main(
        [
            "sanitize",
            str(files / "emb.csv.gz"),
            "--out",
            str(out),
            "--chunk-rows",
            "50",
            "--quiet",
        ]
    )
    assert status == 130
    assert not out.exists()
    assert os.listdir(tmp_path) == []  # no staging directory or temp file left


def test_errors_are_one_line(files, tmp_path, capsys):
    src = str(files / "emb.csv.gz")
    bad = {
        f"input file not found: {tmp_path}/missing.csv": [
            str(tmp_path / "missing.csv")
        ],
        "--n-components must be an int >= 0, a float in (0, 1), 'auto' or "
        "'full'; got '1.5'": [src, "--n-components", "1.5"],
        "identity column 'person' not found (columns: identity, image, e0, e1, "
        "e2, e3, e4, e5...); name it with id_column (--id-column), or apply a "
        "saved projector": [src, "--id-column", "person"],
        f"projector file {files}/emb.parquet: not an .npz archive written by "
        "ISP.to_npz (it does not start like one).": [
            src,
            "--projector",
            str(files / "emb.parquet"),
        ],
    }
    for k, (message, argv) in enumerate(bad.items()):
        out = tmp_path / f"out{k}"
        assert main(["sanitize", *argv, "--out", str(out)]) == 2, argv
        assert capsys.readouterr() == ("", f"skprivacy: error: {message}\n")
        assert not out.exists()


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_every_documented_error_is_one_line_exit_2(
    table, files, tmp_path, capsys, argparse_says
):
    # The errors listed in doc/user_guide/audit_command.rst (skprivacy
    # sanitize), each as a user would meet it: one line on stderr, exit 2,
    # nothing written.
    features = [f"e{j}" for j in range(D)]
    odd = tmp_path / "emb.json"
    odd.write_text("{}")
    one = table.assign(identity="same").dropna(subset=features)
    one.to_csv(tmp_path / "one.csv", index=False)
    bad = table.astype({"e3": object})
    bad.loc[[0, 45], "e3"] = ["0.5", "oops"]  # row 45 of the file: in the peek
    bad.to_csv(tmp_path / "bad.csv", index=False)
    # Beyond the first 1000 rows the columns are classified on: met streaming.
    late = pd.concat([table] * 4, ignore_index=True).astype({"e3": object})
    late.loc[1105, "e3"] = "oops"
    late.to_csv(tmp_path / "late.csv", index=False)
    table.drop(columns=features[:4]).to_csv(tmp_path / "narrow.csv", index=False)
    projector = tmp_path / "p"
    fitted = ["sanitize", str(files / "emb.csv.gz"), "--out", str(projector)]
    assert main([*fitted, "--n-components", "2", "--quiet"]) == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("keep")
    npz = str(projector / "projector.npz")
    src = str(files / "emb.csv.gz")
    cases = {
        "unsupported input emb.json: give a .csv, .csv.gz or .parquet file": [str(odd)],
        "give either --projector or --n-components, not both": [
            src,
            "--projector",
            npz,
            "--n-components",
            "2",
        ],
        "--chunk-rows must be >= 1; got 0": [src, "--chunk-rows", "0"],
        "fewer than 2 identities with usable rows: nothing to fit": [
            str(tmp_path / "one.csv")
        ],
        "column 'e3' looks numeric but row 45 holds 'oops', which is not a number "
        "(rows are counted from 0 after the header); fix those cells, or exclude "
        "the column with --exclude / exclude=.": [
            str(tmp_path / "bad.csv"),
            "--chunk-rows",
            "20",
        ],
        "a feature column holds a non-numeric cell in rows 1100..1119: could not "
        "convert string to float: 'oops'": [
            str(tmp_path / "late.csv"),
            "--chunk-rows",
            "20",
        ],
        "projector has 16 features but narrow.csv has 12 embedding columns": [
            str(tmp_path / "narrow.csv"),
            "--projector",
            npz,
        ],
        f"output directory {other} already exists; use --force (force=True) to "
        "replace it": [src, "--out", str(other)],
        f"output directory {other} holds files skprivacy did not write "
        "(keep.txt); refusing to replace it, choose another --out": [
            src,
            "--out",
            str(other),
            "--force",
        ],
        "no column matches the features pattern 'zzz'.": [
            src,
            "--features",
            "zzz",
        ],
        argparse_says("--format", "xml", choices=["csv", "csv.gz", "parquet"])
        + " (see 'skprivacy sanitize --help')": [src, "--format", "xml"],
    }
    for k, (message, argv) in enumerate(cases.items()):
        if "--out" not in argv:
            argv = [*argv, "--out", str(tmp_path / f"out{k}")]
        status = main(["sanitize", *argv, "--quiet"])
        assert (status, *capsys.readouterr()) == (
            2,
            "",
            f"skprivacy: error: {message}\n",
        )
        assert not (tmp_path / f"out{k}").exists()
    assert (other / "keep.txt").read_text() == "keep"


def test_help_describes_every_option(capsys):
    with pytest.raises(SystemExit):
        main(["sanitize", "--help"])
    text = capsys.readouterr().out
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd = san.add_sanitize_parser(sub)
    for action in cmd._actions:
        assert action.help, action.dest
        for flag in action.option_strings:
            assert flag in text
    for name in ("csv", "csv.gz", "parquet", "--projector", "--n-components"):
        assert name in text


def test_wide_file_keeps_column_dtypes_without_fragmentation(tmp_path):
    # 130 embedding columns: writing them into the input frame one by one
    # fragmented it (pandas PerformanceWarning on every chunk).
    X, ids = make_identity_embeddings(12, 5, 130, random_state=1)
    frame = pd.DataFrame(X.astype(np.float32), columns=[f"e{j}" for j in range(130)])
    frame.insert(0, "identity", pd.array([f"p{i}" for i in ids], dtype="string"))
    frame.insert(1, "image", [f"img/{i}.jpg" for i in range(len(frame))])
    frame["frame"] = pd.array(np.arange(len(frame)) % 3, dtype="Int64")
    frame.loc[3, "frame"] = pd.NA
    source = tmp_path / "wide.parquet"
    frame.to_parquet(source, index=False)
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        status = main(
            ["sanitize", str(source), "--out", str(out), "--chunk-rows", "25"]
            + ["--n-components", "3", "--quiet", "--no-audit"]
        )
    assert status == 0
    result = pd.read_parquet(out / "sanitized.parquet")
    assert list(result.columns) == ["source_row", *frame.columns]
    for column in ("identity", "image", "frame"):
        pd.testing.assert_series_equal(result[column], frame[column])
    assert result["e0"].dtype == np.float32
    isp = ISP(3).fit(X.astype(np.float32), ids)
    np.testing.assert_allclose(
        result[[f"e{j}" for j in range(130)]].to_numpy(),
        isp.transform(X.astype(np.float32)),
        atol=1e-5,
    )


def _projector_bytes(**changes):
    """The bytes of a valid projector archive (4 features, rank 1), with ``changes``."""
    import io

    fields = {
        "components": np.eye(4)[:1],
        "projector": np.eye(4) - np.diag([1.0, 0, 0, 0]),
        "mean": np.zeros(4),
        "singular_values": np.ones(1),
        "explained_energy_ratio": np.ones(1),
        "renormalize": np.asarray(True),
        **changes,
    }
    buffer = io.BytesIO()
    np.savez(buffer, **fields)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda p: p.write_text("e0,e1,identity\n0.1,0.2,a\n"), "it is text starting"),
        (lambda p: p.write_bytes(b"PK\x03\x04 broken"), "damaged .npz archive"),
        # A real projector cut short (a copy interrupted): its zip directory lost.
        (
            lambda p: p.write_bytes(_projector_bytes()[:300]),
            "damaged .npz archive (File is not a zip file)",
        ),
        (
            lambda p: p.write_bytes(_projector_bytes(renormalize=np.array([1, 0]))),
            "renormalize must be a single boolean; it has shape (2,).",
        ),
    ],
)
def test_a_bad_projector_file_is_one_line_in_skprivacys_words(
    make, fragment, files, tmp_path, capsys
):
    projector = tmp_path / "p.npz"
    make(projector)
    argv = ["sanitize", str(files / "emb.csv.gz"), "--projector", str(projector)]
    assert main([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"skprivacy: error: projector file {projector}: "), line
    assert fragment in line and "allow_pickle" not in line
    assert not (tmp_path / "out").exists()
