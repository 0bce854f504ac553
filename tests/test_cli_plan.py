# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy plan``: plan_audit's table on the command line."""

import json
import math
import os
import subprocess
import sys

import pandas as pd
import pytest

from skprivacy import plan_audit
from skprivacy.cli import main


def _same(cell, value):
    """A JSON cell against a DataFrame value: null for a missing one, else equal."""
    if pd.isna(value):
        return cell is None
    return cell == value and not isinstance(cell, bool)


@pytest.mark.parametrize(
    "argv, kwargs",
    [
        ([], {}),
        (
            ["--confidence", "0.9", "--test-size", "0.5", "--pairs", "25"],
            {"confidence": 0.9, "test_size": 0.5, "n_pairs": 25},
        ),
        (["--epsilon", "2", "--far", "1e-4"], {"epsilon": 2.0, "far": 1e-4}),
    ],
)
@pytest.mark.parametrize("n_identities, rows", [(40, 10), (8, 60)])
def test_json_equals_plan_audit(argv, kwargs, n_identities, rows, capsys):
    args = ["plan", "--identities", str(n_identities), "--rows", str(rows)]
    assert main([*args, *argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = plan_audit(n_identities, rows, **kwargs)
    assert out["n_identities"] == n_identities and out["rows_per_identity"] == rows
    assert len(out["plan"]) == len(expected)
    for cells, (_, row) in zip(out["plan"], expected.iterrows()):
        assert list(cells) == list(expected.columns)
        assert all(_same(cells[c], row[c]) for c in expected.columns), cells


def test_text_is_the_table(capsys):
    assert main(["plan", "--identities", "40", "--rows", "10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "Plan for 40 identities x 10 rows per identity (confidence 0.95, test "
        "size 0.3, every pair certified together):"
    )
    expected = plan_audit(40, 10).set_index("method")
    assert lines[1].split()[:3] == ["method", "kind", "n_comparisons"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == list(expected.index)
    # The rows needed to certify epsilon > 1, and the smallest resolvable FAR.
    cert = rows["rocht_certificate"].split()
    assert str(expected.loc["rocht_certificate", "rows_needed"]) in cert
    far = expected.loc["verification", "smallest_far"]
    assert format(far, ".4g") in rows["verification"].split()
    assert not math.isnan(far)


def test_bad_sizes_exit_2_with_one_line(capsys):
    assert main(["plan", "--identities", "1", "--rows", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "n_identities" in err[0]
    assert main(["plan", "--rows", "10"]) == 2
    assert "--identities" in capsys.readouterr().err


@pytest.mark.slow
def test_plan_in_a_real_process():
    proc = subprocess.run(
        [sys.executable, "-m", "skprivacy", "plan", "--identities", "38"]
        + ["--rows", "45", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)["plan"]
    expected = plan_audit(38, 45).set_index("method")["ceiling"]
    got = {row["method"]: row["ceiling"] for row in plan}
    assert got["rocht_certificate"] == expected["rocht_certificate"]
    assert got["mmdtv_certificate"] == expected["mmdtv_certificate"]
