# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy.sanitize.sanitize_file``: the library behind ``skprivacy sanitize``."""

import json

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
