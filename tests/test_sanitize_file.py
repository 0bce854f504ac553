# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy.sanitize.sanitize_file``: the library behind ``skprivacy sanitize``."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import ISP, sanitize_file


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    X, ids = make_identity_embeddings(12, 6, 8, random_state=3)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
    frame.insert(0, "identity", [f"p{i}" for i in ids])
    path = tmp_path_factory.mktemp("in") / "emb.csv"
    frame.to_csv(path, index=False)
    return path, X, ids


def test_streamed_output_equals_a_fit_on_the_whole_file(source, tmp_path):
    path, X, ids = source
    record = sanitize_file(
        path, tmp_path / "out", n_components=3, chunk_rows=7, command_line="cmd"
    )
    out = pd.read_csv(tmp_path / "out" / "sanitized.csv.gz")
    expected = ISP(n_components=3).fit(X, [f"p{i}" for i in ids]).transform(X)
    np.testing.assert_allclose(out[[f"e{j}" for j in range(8)]], expected, atol=1e-12)
    assert out["source_row"].tolist() == list(range(len(X)))
    on_disk = json.loads((tmp_path / "out" / "sanitize.json").read_text())
    assert on_disk["rank"] == record["rank"] == 3
    assert on_disk["command_line"] == "cmd" and on_disk["versions"]["numpy"]
    assert on_disk["start_time"] <= on_disk["end_time"]


def test_errors_are_raised_not_printed(source, tmp_path):
    path, _, _ = source
    with pytest.raises(FileNotFoundError, match="input file not found"):
        sanitize_file(tmp_path / "missing.csv", tmp_path / "a")
    with pytest.raises(ValueError, match="not both"):
        sanitize_file(path, tmp_path / "b", n_components=2, projector=path)
    with pytest.raises(ValueError, match="chunk_rows must be >= 1"):
        sanitize_file(path, tmp_path / "c", chunk_rows=0)
    with pytest.raises(ValueError, match="output_format"):
        sanitize_file(path, tmp_path / "d", output_format="xml")
    assert not any((tmp_path / name).exists() for name in "abcd")


# -- the columns: one peek, whatever the chunk size -------------------------------------
def _frame(n_identities, n_rows, d=6, seed=0):
    X, ids = make_identity_embeddings(n_identities, n_rows, d, random_state=seed)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(d)])
    frame.insert(0, "identity", [f"p{i}" for i in ids])
    frame["path"] = [f"img{k}.png" for k in range(len(frame))]  # a row key
    frame["pose"] = np.resize([0.5, 1.5, 2.5], len(frame))  # low cardinality
    return frame


@pytest.mark.parametrize("chunk_rows", [1, 2, 7, 100_000])
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_feature_columns_do_not_depend_on_chunk_rows(chunk_rows, tmp_path):
    from skprivacy.datasets import select_feature_columns

    frame = _frame(6, 8)
    path = tmp_path / "emb.csv"
    frame.to_csv(path, index=False)
    record = sanitize_file(
        path, tmp_path / "out", n_components=2, chunk_rows=chunk_rows,
        leakage_summary=False,
    )  # fmt: skip
    # The rule applied to the whole table at once.
    columns, excluded = select_feature_columns(frame, id_column="identity")
    assert record["input"]["feature_columns"] == columns == [f"e{j}" for j in range(6)]
    assert record["input"]["excluded_columns"] == excluded
    out = pd.read_csv(tmp_path / "out" / "sanitized.csv.gz")
    expected = ISP(n_components=2).fit(frame[columns].to_numpy(), frame["identity"])
    np.testing.assert_allclose(
        out[columns], expected.transform(frame[columns].to_numpy()), atol=1e-12
    )


@pytest.mark.parametrize(
    "id_column, fragment",
    [
        ("path", "column 'path' does not look like identity labels: each of its 48 "),
        ("e1", "column 'e1' does not look like identity labels: it holds numbers"),
    ],
)
def test_an_identity_column_that_is_not_identities_is_refused(
    id_column, fragment, tmp_path
):
    path = tmp_path / "emb.csv"
    _frame(6, 8).to_csv(path, index=False)
    with pytest.raises(ValueError) as excinfo:
        sanitize_file(path, tmp_path / "out", id_column=id_column, chunk_rows=5)
    assert fragment in str(excinfo.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb.csv"]


def test_a_pipe_is_refused_since_it_is_read_twice(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(
        ValueError, match="is not a regular file .* read more than once"
    ):
        sanitize_file(fifo, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- metadata columns: one type from the first row to the last --------------------------
N_ROWS = 1200  # more than the 1000 rows the columns are classified on


def _metadata_frame():
    frame = _frame(60, N_ROWS // 60, d=4, seed=1)
    k = np.arange(N_ROWS)
    # Whole numbers in the first 1100 rows, then text: widened to text.
    frame["tag"] = [str(v) if v < 1100 else f"x{v}" for v in k]
    # Whole numbers, missing in some rows after the peek: stays whole numbers.
    frame["shot"] = pd.array(
        [v % 7 if v < 1050 or v % 3 else None for v in k], dtype="Int64"
    )
    frame["flag"] = k % 2 == 0
    return frame.drop(columns=["path", "pose"])


def _cells(path):
    """Every cell of a CSV as its text (independent of any type guess)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "parquet"])
def test_csv_metadata_columns_keep_one_type_in_every_format(fmt, tmp_path):
    pytest.importorskip("pyarrow")
    frame = _metadata_frame()
    source = tmp_path / "emb.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "out"
    sanitize_file(
        source, out, n_components=2, output_format=fmt, chunk_rows=100,
        leakage_summary=False,
    )  # fmt: skip
    name = {"csv": "sanitized.csv", "csv.gz": "sanitized.csv.gz"}.get(fmt)
    metadata = ["identity", "tag", "shot", "flag"]
    if name is not None:
        # CSV output: every metadata cell is the input's text, unchanged
        # (a whole number stays "3", never "3.0", in every chunk).
        got, given = _cells(out / name), _cells(source)
        pd.testing.assert_frame_equal(got[metadata], given[metadata])
        assert set(got["shot"]) == {str(v) for v in range(7)} | {""}
        return
    import pyarrow.parquet as pq

    schema = pq.read_schema(out / "sanitized.parquet")
    types = {c: str(schema.field(c).type) for c in metadata}
    assert types == {
        "identity": "string",
        "tag": "string",
        "shot": "int64",
        "flag": "bool",
    }
    result = pd.read_parquet(out / "sanitized.parquet")
    assert result["tag"].tolist() == frame["tag"].tolist()
    assert result["shot"].astype(object).where(
        result["shot"].notna(), None
    ).tolist() == [None if pd.isna(v) else int(v) for v in frame["shot"]]
    assert result["flag"].tolist() == frame["flag"].tolist()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_parquet_integer_column_with_late_gaps_stays_integer(fmt, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    frame = _metadata_frame()[["identity", "e0", "e1", "e2", "e3"]]
    shot = [v % 7 if v < 1050 or v % 3 else None for v in range(N_ROWS)]
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata()
    table = table.append_column("shot", pa.array(shot, pa.int64()))
    source = tmp_path / "emb.parquet"
    pq.write_table(table, source, row_group_size=100)  # gaps in some groups only
    out = tmp_path / "out"
    sanitize_file(
        source, out, n_components=2, output_format=fmt, chunk_rows=100,
        leakage_summary=False,
    )  # fmt: skip
    if fmt == "csv":
        cells = _cells(out / "sanitized.csv")["shot"].tolist()
        assert cells == ["" if v is None else str(v) for v in shot]
    else:
        result = pq.read_table(out / "sanitized.parquet")
        assert result.schema.field("shot").type == pa.int64()
        assert result.column("shot").to_pylist() == shot
