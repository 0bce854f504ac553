# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Ctrl-C and SIGTERM at every stage of a command: one line per output saying
what is on disk, exit 130 or 143, never a traceback, nothing lost.

The signals are real (``os.kill`` of this process, or of a child process by
its parent); the stage is reached by hooking the function that starts it, so
no test sleeps.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from skprivacy.cli import _audit as cli_audit
from skprivacy.cli import main
from skprivacy.cli._errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import AuditReport
from skprivacy.sanitize import _file as sanitize_module
from skprivacy.utils import _files

SIGNALS = {"SIGINT": EXIT_INTERRUPTED, "SIGTERM": EXIT_TERMINATED}
CAUSE = {"SIGINT": "interrupted (Ctrl-C)", "SIGTERM": "terminated (SIGTERM)"}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    X, ids = make_identity_embeddings(8, 5, 6, random_state=0)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(6)])
    frame.insert(0, "identity", [f"p{i}" for i in ids])
    path = tmp_path_factory.mktemp("in") / "emb.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def computed(source):
    """The audit of ``source``, computed once (the commands return it instantly)."""
    X, ids, info = cli_audit.read_embeddings(source)
    return cli_audit.audit(X, ids.to_numpy(), methods=["gaussmech"], input_info=info)


def _kill(name):
    os.kill(os.getpid(), getattr(signal, name))


def _run_id(out):
    if not out.exists():
        return None
    return json.loads((out / "summary.json").read_text())["run_id"]


def _hook(monkeypatch, owner, attribute, name, *, after=False):
    """Make ``owner.attribute`` send signal ``name`` to this process (before or after)."""
    original = getattr(owner, attribute)

    def hooked(*args, **kwargs):
        if not after:
            _kill(name)
        result = original(*args, **kwargs)
        if after:
            _kill(name)
        return result

    monkeypatch.setattr(owner, attribute, hooked)


def _owner(name):
    from skprivacy.cli import _main

    return {
        "_main": _main,
        "cli_audit": cli_audit,
        "AuditReport": AuditReport,
        "_files": _files,
        "StagedDirectory": _files.StagedDirectory,
        "sanitize": sanitize_module,
        "_Layout": sanitize_module._Layout,
        "_Writer": sanitize_module._Writer,
    }[name]


# stage: (owner, function, signal after the call?, is the new output committed?)
AUDIT_STAGES = {
    "parsing the arguments": ("_main", "_build_parser", False, False),
    "claiming the output": ("AuditReport", "staged", True, False),
    "reading the input": ("cli_audit", "_read", False, False),
    "computing": ("cli_audit", "audit", False, False),
    "writing the files": ("AuditReport", "write", True, False),
    "swapping the output in": ("_files", "_rename2", False, True),
    "after the commit": ("StagedDirectory", "commit", True, True),
}


def _mark_previous(out, name):
    """Make the previous output recognisable (as what an earlier run wrote)."""
    path = out / name
    data = json.loads(path.read_text())
    data["run_id"] = "previous"
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("previous", [False, True], ids=["new out", "previous out"])
@pytest.mark.parametrize("name", list(SIGNALS))
@pytest.mark.parametrize("stage", list(AUDIT_STAGES))
def test_audit_signal_at_each_stage(
    stage, name, previous, source, computed, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "out"
    args = ["audit", str(source), "--methods", "gaussmech", "--out", str(out)]
    monkeypatch.setattr(cli_audit, "audit", lambda *a, **k: computed)
    if previous:
        assert main([*args, "--quiet"]) == 0
        _mark_previous(out, "summary.json")
        args.append("--force")
    before = _run_id(out)
    owner, function, after, committed = AUDIT_STAGES[stage]
    _hook(monkeypatch, _owner(owner), function, name, after=after)
    status = main([*args, "--quiet"])
    err = capsys.readouterr().err
    assert status == SIGNALS[name], err
    (line,) = err.strip().splitlines()  # one line, no traceback
    prefix = f"skprivacy: {CAUSE[name]}; "
    if stage == "parsing the arguments":
        assert line == f"{prefix}nothing was written"
        assert _run_id(out) == before
    elif committed:
        assert line == f"{prefix}{out} holds the new output"
        assert _run_id(out) == computed.run_id
    elif previous:
        assert line == (
            f"{prefix}{out} keeps the previous output (the new one was discarded)"
        )
        assert _run_id(out) == before
    else:
        assert line == f"{prefix}nothing was written to {out}"
        assert not out.exists()
    # No staging directory, backup or claim is left beside the output.
    assert sorted(os.listdir(tmp_path)) == (["out"] if out.exists() else [])


SANITIZE_STAGES = {
    "peeking at the columns": ("_Layout", "__init__", False, False),
    "fitting (pass 1)": ("sanitize", "_fit_pass", False, False),
    "writing (pass 2)": ("_Writer", "write", True, False),
    "after the commit": ("StagedDirectory", "commit", True, True),
}


@pytest.mark.parametrize("previous", [False, True], ids=["new out", "previous out"])
@pytest.mark.parametrize("name", list(SIGNALS))
@pytest.mark.parametrize("stage", list(SANITIZE_STAGES))
def test_sanitize_signal_at_each_stage(
    stage, name, previous, source, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "out"
    args = ["sanitize", str(source), "--out", str(out), "--n-components", "1"]
    args += ["--no-audit", "--quiet", "--chunk-rows", "10"]
    if previous:
        assert main(args) == 0
        _mark_previous(out, "sanitize.json")
        args.append("--force")
    owner, function, after, committed = SANITIZE_STAGES[stage]
    _hook(monkeypatch, _owner(owner), function, name, after=after)
    status = main(args)
    err = capsys.readouterr().err
    assert status == SIGNALS[name], err
    (line,) = err.strip().splitlines()
    prefix = f"skprivacy: {CAUSE[name]}; "
    run_id = None
    if out.exists():
        run_id = json.loads((out / "sanitize.json").read_text()).get("run_id")
    if committed:
        assert line == f"{prefix}{out} holds the new output"
        assert run_id != "previous"
        assert json.loads((out / "sanitize.json").read_text())["rank"] == 1
    elif previous:
        assert line == (
            f"{prefix}{out} keeps the previous output (the new one was discarded)"
        )
        assert run_id == "previous"
    else:
        assert line == f"{prefix}nothing was written to {out}"
        assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == (["out"] if out.exists() else [])


# -- real processes -------------------------------------------------------------------
# The child pauses where the hook says (printing the stage, then waiting for a
# line on stdin) and the parent sends the signal there: a barrier, no sleep.
PAUSE = """
import importlib.abc, runpy, sys

def pause(stage):
    print(stage, flush=True)
    sys.stdin.readline()
"""

# While `skprivacy.cli` loads (the start-up, before the command line runs).
WHILE_LOADING = (
    PAUSE
    + """
class Loading(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "skprivacy.cli._main":
            pause("loading")
        return None

sys.meta_path.insert(0, Loading())
sys.argv = ["skprivacy", *sys.argv[1:]]
runpy.run_module("skprivacy", run_name="__main__", alter_sys=True)
"""
)

# While argparse parses the command line.
WHILE_PARSING = (
    PAUSE
    + """
import argparse
parse_args = argparse.ArgumentParser.parse_args

def paused(self, *args, **kwargs):
    pause("parsing")
    return parse_args(self, *args, **kwargs)

argparse.ArgumentParser.parse_args = paused
sys.argv = ["skprivacy", *sys.argv[1:]]
runpy.run_module("skprivacy", run_name="__main__", alter_sys=True)
"""
)

# While the audit computes (the whole package is loaded: slower).
WHILE_COMPUTING = (
    PAUSE
    + """
from skprivacy.cli import _audit
audit = _audit.audit

def paused(*args, **kwargs):
    pause("computing")
    return audit(*args, **kwargs)

_audit.audit = paused
sys.argv = ["skprivacy", *sys.argv[1:]]
runpy.run_module("skprivacy", run_name="__main__", alter_sys=True)
"""
)


def _foreground_sigint():
    """Give the child the SIGINT disposition of a foreground terminal process.

    A shell starts background jobs with SIGINT ignored, children inherit
    that, and Python then installs no KeyboardInterrupt handler: restoring the
    default lets the test's Ctrl-C reach the child as a user's would.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _child(script, *args, cwd):
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        preexec_fn=_foreground_sigint,
    )


def _signal_at(proc, stage, name):
    line = proc.stdout.readline().strip()
    assert line == stage, (line, proc.stderr.read() if not line else "")
    proc.send_signal(getattr(signal, name))
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def test_ctrl_c_while_the_command_line_loads(source, tmp_path):
    proc = _child(WHILE_LOADING, "audit", source, cwd=tmp_path)
    rc, _, err = _signal_at(proc, "loading", "SIGINT")
    assert rc == 130
    assert err == "skprivacy: interrupted (Ctrl-C); nothing was written\n"
    assert os.listdir(tmp_path) == []


def test_sigterm_while_the_command_line_loads_ends_it_at_once(source, tmp_path):
    # Before the command line installs its handler, SIGTERM does what it does
    # by default: the process ends (by the signal), silently, nothing written.
    proc = _child(WHILE_LOADING, "audit", source, cwd=tmp_path)
    rc, _, err = _signal_at(proc, "loading", "SIGTERM")
    assert rc == -signal.SIGTERM and err == ""
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", list(SIGNALS))
def test_a_signal_while_parsing_the_arguments(name, source, tmp_path):
    proc = _child(WHILE_PARSING, "audit", source, cwd=tmp_path)
    rc, _, err = _signal_at(proc, "parsing", name)
    assert rc == SIGNALS[name]
    assert err == f"skprivacy: {CAUSE[name]}; nothing was written\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # two processes load the whole package
@pytest.mark.parametrize("name", list(SIGNALS))
def test_a_signal_while_computing_keeps_the_previous_report(name, source, tmp_path):
    out = tmp_path / "out"
    args = ["audit", source, "--methods", "gaussmech", "--out", out, "--quiet"]
    first = subprocess.run(
        [sys.executable, "-m", "skprivacy", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert first.returncode == 0, first.stderr
    before = _run_id(out)
    proc = _child(WHILE_COMPUTING, *args, "--force", cwd=tmp_path)
    rc, stdout, err = _signal_at(proc, "computing", name)
    assert rc == SIGNALS[name]
    assert err == (
        f"skprivacy: {CAUSE[name]}; {out} keeps the previous output (the new one "
        "was discarded)\n"
    )
    assert stdout == "" and _run_id(out) == before
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_two_commands_in_one_process_report_only_their_own_outputs(
    source, tmp_path, monkeypatch, capsys
):
    # The second command's interrupt names its own output, not the first's.
    first = tmp_path / "first"
    args = ["sanitize", str(source), "--n-components", "1", "--no-audit", "--quiet"]
    assert main([*args, "--out", str(first)]) == 0
    _hook(monkeypatch, sanitize_module, "_fit_pass", "SIGINT")
    assert main([*args, "--out", str(tmp_path / "second")]) == 130
    assert capsys.readouterr().err == (
        f"skprivacy: interrupted (Ctrl-C); nothing was written to "
        f"{tmp_path / 'second'}\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["first"]
