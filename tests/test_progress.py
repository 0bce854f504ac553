# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Progress output (``verbose``) of sweeps and the shared helper."""

import io
import re

import pytest

from skprivacy import audit
from skprivacy.auditors import mmd_bandwidth_sweep
from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import OpenSetVerificationAuditor, privacy_utility_tradeoff
from skprivacy.utils import Progress


def test_progress_lines(capsys):
    say = Progress("job", 1)
    say("step 1")
    say("start", timed=False)
    Progress("job", 0)("hidden")
    out = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\[job\] step 1 \(\d+\.\d s\)", out[0])
    assert out[1:] == ["[job] start"]


def test_mmd_bandwidth_sweep_verbose(capsys):
    X, ids = make_identity_embeddings(5, 8, 8, random_state=0)
    sweep = mmd_bandwidth_sweep(X, ids, scales=(0.5, 2.0), n_pairs=4, verbose=1)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    for line, (_, row) in zip(out, sweep.iterrows()):
        scale = row["bandwidth_scale"]
        assert line.startswith("[mmd_bandwidth_sweep] scale ")
        assert f"({scale:g}): max epsilon {row['max_epsilon']:.3f} (" in line
    mmd_bandwidth_sweep(X, ids, scales=(0.5,), n_pairs=4)
    assert capsys.readouterr().out == ""


def test_privacy_utility_tradeoff_verbose(capsys):
    X, ids = make_identity_embeddings(8, 6, 8, random_state=0)
    table = privacy_utility_tradeoff(
        X,
        ids,
        param_values=[0, 2],
        auditor=OpenSetVerificationAuditor(far=0.1, random_state=0),
        verbose=1,
    )
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == [
        "[privacy_utility_tradeoff] n_components=0 (1/2)",
        "[privacy_utility_tradeoff] n_components=2 (2/2)",
    ]
    for line, tar in zip(out, table["tar"]):
        assert f"tar {tar:.3f} (" in line
    with pytest.raises(ValueError, match="verbose"):
        privacy_utility_tradeoff(X, ids, verbose="loud")


class _TTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_stages_bar_lines_quiet():
    tty = _TTY()
    with Progress(stream=tty) as p:
        p.plan(2.0)
        p.start("stage one", 1.0)
        p.finish()
    assert "\r" in tty.getvalue() and "ETA" in tty.getvalue()
    plain = io.StringIO()
    with Progress(stream=plain) as p:
        p.plan(2.0)
        p.start("stage one", 1.0)
        p.finish()
    lines = plain.getvalue().splitlines()
    assert "\r" not in plain.getvalue()
    assert re.fullmatch(r"\[skprivacy 0:00\]   0% \| stage one \.\.\.", lines[0])
    assert re.fullmatch(
        r"\[skprivacy 0:00\]  50%, ETA 0:00 \| stage one done in 0\.0 s", lines[1]
    )
    quiet = io.StringIO()
    with Progress(verbose=0, stream=quiet) as p:
        p.plan(2.0)
        p.start("stage one", 1.0)
        p.finish()
        p.message("hidden")
    assert quiet.getvalue() == ""


def test_finish_without_a_running_stage_does_nothing():
    plain = io.StringIO()
    p = Progress(stream=plain, tty=False)
    p.plan(2.0)
    p.start("outer", 2.0)
    p.start("inner", 1.0)  # a computation's own step replaces the stage
    p.finish()
    p.finish()  # the caller's closing finish
    lines = plain.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].endswith("inner done in 0.0 s")
    assert p.done == 1.0


def test_audit_progress_moves_inside_the_sensitivity_step():
    X, ids = make_identity_embeddings(6, 6, 6, noise=2.0, random_state=0)
    plain = io.StringIO()
    audit(
        X,
        ids,
        protocol={"sensitivity_pairs": 15, "sensitivity_trees": 2},
        methods=["classifier_sensitivity"],
        suggest_rank=False,
        progress=Progress(stream=plain, tty=False),
    )
    shares = [
        int(m.group(1))
        for m in re.finditer(
            r"\] +(\d+)%.*\| (?:logistic regression|Random).* done", plain.getvalue()
        )
    ]
    # The logistic audit and two blocks of forest pairs each advance the bar.
    assert len(shares) == 3
    assert shares[0] < shares[1] < shares[2] <= 100
