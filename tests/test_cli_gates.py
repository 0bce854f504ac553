# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Release gates of ``skprivacy audit``: ``--fail-on`` and ``--max-certified-epsilon``."""

import json
import os
import subprocess
import sys
from argparse import Namespace

import numpy as np
import pandas as pd
import pytest

from skprivacy.cli._errors import UserError
from skprivacy.cli._gates import LEVELS, gate_failure


def _summary(level="little evidence", certificates=()):
    results = {
        f"cert{i}": {"kind": "certificate", "title": f"C{i}", "value": v, "skipped": s}
        for i, (v, s) in enumerate(certificates)
    }
    results["test"] = {"kind": "hypothesis test", "value": 1.0, "skipped": False}
    return {"results": results, "verdict": {"headline": "h", "level": level}}


def _args(fail_on=None, max_certified_epsilon=None):
    return Namespace(fail_on=fail_on, max_certified_epsilon=max_certified_epsilon)


@pytest.mark.parametrize("fail_on", ["separable", "leak"])
@pytest.mark.parametrize("level", LEVELS)
def test_fail_on_is_at_or_above_the_level(level, fail_on):
    order = ["little evidence", "inconclusive", "separable", "leak"]
    fails = order.index(level) >= order.index(fail_on)
    line = gate_failure({None: _summary(level)}, _args(fail_on=fail_on))
    expected = (
        f"skprivacy: release gate failed: --fail-on {fail_on}: the verdict level "
        f"is '{level}'"
    )
    assert line == (expected if fails else None)


def test_max_certified_epsilon_names_the_largest_certificate():
    summary = _summary(certificates=[(0.8, False), (2.5, False), (9.0, True)])
    # The skipped certificate's value is not a certificate.
    assert gate_failure({None: summary}, _args(max_certified_epsilon=2.5)) is None
    line = gate_failure({None: summary}, _args(max_certified_epsilon=0.5))
    assert line == (
        "skprivacy: release gate failed: --max-certified-epsilon 0.5: C1 certifies "
        "epsilon >= 2.5"
    )
    inf = _summary(certificates=[(np.inf, False)])
    assert "epsilon >= inf" in gate_failure({"a": inf}, _args(max_certified_epsilon=9))


def test_both_gates_and_conditions_in_one_line():
    summaries = {
        "a": _summary("leak", [(3.0, False)]),
        "b": _summary("inconclusive", [(0.0, False)]),
    }
    line = gate_failure(summaries, _args("separable", 1.0))
    assert line == (
        "skprivacy: release gate failed: condition 'a': --fail-on separable: the "
        "verdict level is 'leak'; condition 'a': --max-certified-epsilon 1: C0 "
        "certifies epsilon >= 3"
    )
    assert gate_failure(summaries, _args()) is None


def test_a_verdict_without_level_is_a_user_error():
    summary = _summary()
    del summary["verdict"]["level"]
    with pytest.raises(UserError, match="verdict has no level"):
        gate_failure({None: summary}, _args(fail_on="leak"))


def test_bad_gate_options_exit_2(capsys):
    from skprivacy.cli import main

    assert main(["audit", "--fail-on", "inconclusive"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["audit", "--max-certified-epsilon", "-1"]) == 2
    assert "-1 is not an epsilon >= 0" in capsys.readouterr().err


# ---------------------------------------------------------- real processes
@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Leaky: 4 identities 10 standard deviations apart; clean: one distribution."""
    rng = np.random.default_rng(0)
    n_ids, n_rows, dim = 4, 60, 4
    ids = np.repeat(np.arange(n_ids), n_rows)
    leaky = 10.0 * np.eye(dim)[ids] + rng.normal(size=(ids.size, dim))
    clean = rng.normal(size=(ids.size, dim))
    folder = tmp_path_factory.mktemp("planted")
    paths = {}
    for name, X in (("leaky", leaky), ("clean", clean)):
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(dim)])
        frame.insert(0, "identity", ids)
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _audit(path, out, *gates):
    """``python -m skprivacy audit`` in a real process, with the fast methods."""
    methods = ["rocht_certificate", "mmdtv_certificate", "permutation"]
    proc = subprocess.run(
        [sys.executable, "-m", "skprivacy", "audit", str(path), "--out", str(out)]
        + ["--quiet", "--methods", *methods, *gates],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=600,
    )
    summary = json.loads((out / "summary.json").read_text())
    return proc, summary


def _certified(summary):
    return [
        e["value"]
        for e in summary["results"].values()
        if e["kind"] == "certificate" and not e["skipped"]
    ]


@pytest.mark.slow
def test_max_certified_epsilon_gate_in_a_real_process(planted, tmp_path):
    gate = ["--max-certified-epsilon", "0.5"]
    proc, summary = _audit(planted["leaky"], tmp_path / "leaky", *gate)
    # The report is written, then the gate fails with one line saying why.
    assert proc.returncode == 1, proc.stderr
    assert max(_certified(summary)) > 0.5
    assert proc.stderr.strip().splitlines() == [
        "skprivacy: release gate failed: --max-certified-epsilon 0.5: ROC-HT "
        f"reserved-test certificate certifies epsilon >= {max(_certified(summary)):.4g}"
    ]
    assert (tmp_path / "leaky" / "report.html").is_file()
    proc, summary = _audit(planted["clean"], tmp_path / "clean", *gate)
    assert proc.returncode == 0, proc.stderr
    assert max(_certified(summary)) <= 0.5
    assert proc.stderr == ""


@pytest.mark.slow
def test_fail_on_gate_in_a_real_process(planted, tmp_path):
    proc, summary = _audit(planted["leaky"], tmp_path / "leaky", "--fail-on", "leak")
    assert summary["verdict"]["level"] == "leak"
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "skprivacy: release gate failed: --fail-on leak: the verdict level is 'leak'"
    ]
    gate = ["--fail-on", "separable"]
    proc, summary = _audit(planted["clean"], tmp_path / "clean", *gate)
    # No pair distinguished, nothing certified; without a re-identification
    # rate the sample cannot rule a leak out: below "separable" either way.
    assert summary["verdict"]["level"] == "inconclusive"
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
