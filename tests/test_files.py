# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
import contextlib
import os
import re
import signal
import subprocess
import sys

import pytest

from skprivacy.cli._errors import UserError, run_command, user_errors
from skprivacy.utils._files import StagedDirectory, atomic_file, check_not_input

REPORT_FILES = {"summary.json", "report.html"}


# The start of every child process: only the file layer, the exceptions and
# the command-line error handling are imported, not the whole package, so a
# child is up in milliseconds.
STUB_PACKAGES = r"""
import importlib.util, os, signal, sys, types, warnings
from pathlib import Path
root = Path(importlib.util.find_spec("skprivacy").origin).parent
for name in ("skprivacy", "skprivacy.utils", "skprivacy.cli"):
    package = types.ModuleType(name)
    package.__path__ = [str(root / name.partition(".")[2])]
    sys.modules[name] = package
"""


def _write_report(directory, tag):
    for name in REPORT_FILES:
        (directory / name).write_text(tag)


def test_atomic_file_keeps_previous_content_on_error(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_file(path, "w") as fh:
        fh.write("partial")
        raise RuntimeError("boom")
    assert path.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]  # no temporary left over


def test_atomic_file_replaces_a_symlink_not_its_target(tmp_path):
    outside = tmp_path / "user_file.txt"
    outside.write_text("precious")
    link = tmp_path / "out.txt"
    link.symlink_to(outside)
    with atomic_file(link, "w") as fh:
        fh.write("new")
    assert outside.read_text() == "precious"
    assert not link.is_symlink() and link.read_text() == "new"


def test_staged_directory_commit_and_discard(tmp_path):
    target = tmp_path / "report"
    with StagedDirectory(target) as staged:
        _write_report(staged.path, "run1")
        staged.commit()
    assert (target / "summary.json").read_text() == "run1"
    # Not committed (an error mid-way): the previous report stays whole.
    with pytest.raises(RuntimeError):
        with StagedDirectory(target, force=True, replaceable=REPORT_FILES) as staged:
            (staged.path / "summary.json").write_text("run2")
            raise RuntimeError("interrupted")
    assert {p.read_text() for p in target.iterdir()} == {"run1"}
    assert sorted(os.listdir(tmp_path)) == ["report"]


def test_staged_directory_never_touches_files_behind_links(tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text("user data")
    target = tmp_path / "report"
    target.mkdir()
    (target / "summary.json").symlink_to(outside)
    with StagedDirectory(target, force=True, replaceable=REPORT_FILES) as staged:
        _write_report(staged.path, "new")
        staged.commit()
    assert outside.read_text() == "user data"
    assert (target / "summary.json").read_text() == "new"


@pytest.mark.parametrize(
    "setup, kwargs, error, match",
    [
        (lambda t: t.mkdir(), {}, FileExistsError, "already exists"),
        (
            lambda t: (t.mkdir(), (t / "thesis.tex").write_text("x")),
            {"force": True, "replaceable": REPORT_FILES},
            FileExistsError,
            "did not write .thesis.tex",
        ),
        (lambda t: t.write_text("x"), {"force": True}, NotADirectoryError, "a file"),
        (
            lambda t: t.symlink_to(t.parent),
            {"force": True},
            ValueError,
            "symbolic link",
        ),
    ],
)
def test_staged_directory_refusals(tmp_path, setup, kwargs, error, match):
    target = tmp_path / "report"
    setup(target)
    with pytest.raises(error, match=match):
        StagedDirectory(target, **kwargs)


def test_staged_directory_below_a_regular_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file"):
        StagedDirectory(blocker / "report")


def test_check_not_input(tmp_path):
    source = tmp_path / "emb.csv"
    source.write_text("x")
    check_not_input(tmp_path / "other.csv", [source, None])
    with pytest.raises(ValueError, match="is the input"):
        check_not_input(source, [source])
    alias = tmp_path / "alias.csv"
    os.link(source, alias)  # the same file under another name
    with pytest.raises(ValueError, match="is the input"):
        check_not_input(alias, [source])
    with pytest.raises(ValueError, match="contains the input"):
        check_not_input(tmp_path, [source])


def test_run_command_exit_statuses(capsys):
    def user():
        with user_errors("reading input"):
            raise ValueError("column 'e3'\n row 7")

    assert run_command(user) == 2
    assert capsys.readouterr().err == (
        "skprivacy: error: reading input: column 'e3' row 7\n"
    )

    def missing():
        with user_errors("reading input"):
            open("/no/such/file.csv")

    assert run_command(missing) == 2
    assert "No such file or directory: /no/such/file.csv" in capsys.readouterr().err

    def bug():
        return {}["no key"]

    assert run_command(bug) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "this is a bug in skprivacy" in err

    def interrupted():
        raise KeyboardInterrupt

    assert run_command(interrupted) == 130
    assert run_command(lambda: 0) == 0
    with pytest.raises(UserError):
        with user_errors("x"):
            raise UserError("passes through")


@pytest.mark.slow
def test_sigterm_unwinds_and_discards_the_staged_output(tmp_path):
    """SIGTERM mid-write: exit 143, the previous report intact, no staging left."""
    target = tmp_path / "report"
    target.mkdir()
    _write_report(target, "old")
    script = (
        STUB_PACKAGES
        + f"""
from skprivacy.cli._errors import run_command
from skprivacy.utils._files import StagedDirectory

def work():
    with StagedDirectory({str(target)!r}, force=True,
                         replaceable={sorted(REPORT_FILES)!r}) as staged:
        (staged.path / "summary.json").write_text("new")
        os.kill(os.getpid(), signal.SIGTERM)
        staged.commit()
    return 0

sys.exit(run_command(work))
"""
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True
    )
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "terminated" in proc.stderr
    assert {p.read_text() for p in target.iterdir()} == {"old"}
    assert sorted(os.listdir(tmp_path)) == ["report"]


# ----------------------------------------------------------------- claims
def _entries(directory):
    return sorted(os.listdir(directory))


def test_a_second_claimant_fails_at_once_even_with_force(tmp_path):
    from skprivacy.exceptions import OutputBusyError

    target = tmp_path / "report"
    first = StagedDirectory(target)
    for force in (False, True):
        with pytest.raises(OutputBusyError) as excinfo:
            StagedDirectory(target, force=force, replaceable=REPORT_FILES)
        msg = str(excinfo.value)
        assert msg == (
            f"output {target} is being written by another skprivacy run (pid "
            f"{os.getpid()}); wait for it to finish, or choose another output"
        )
    with first:
        _write_report(first.path, "first")
        first.commit()
    assert {p.read_text() for p in target.iterdir()} == {"first"}
    # The claim ends with the commit: the next run sees an existing report.
    with pytest.raises(FileExistsError, match="already exists"):
        StagedDirectory(target)
    with StagedDirectory(target, force=True, replaceable=REPORT_FILES) as again:
        _write_report(again.path, "second")
        again.commit()
    assert {p.read_text() for p in target.iterdir()} == {"second"}
    assert _entries(tmp_path) == ["report"]  # no claim, no staging left


def test_commit_never_replaces_a_target_that_appeared(tmp_path):
    # A program that does not claim the output creates it meanwhile: without
    # force, the commit refuses rather than replacing it.
    target = tmp_path / "report"
    with StagedDirectory(target) as staged:
        _write_report(staged.path, "new")
        target.mkdir()
        (target / "theirs.txt").write_text("theirs")
        with pytest.raises(FileExistsError, match="appeared while this run was"):
            staged.commit()
    assert staged.state == "discarded" and not staged.committed
    assert _entries(target) == ["theirs.txt"]
    assert _entries(tmp_path) == ["report"]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_outputs_follow_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        target = tmp_path / "report"
        with StagedDirectory(target) as staged:
            with atomic_file(staged.path / "summary.json", "w") as fh:
                fh.write("{}")
            (staged.path / "pairs.csv").write_text("a")
            staged.commit()
    finally:
        os.umask(previous)
    assert (target.stat().st_mode & 0o777) == 0o777 & ~umask
    for name in ("summary.json", "pairs.csv"):
        assert ((target / name).stat().st_mode & 0o777) == 0o666 & ~umask


def _dead_pid():
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


def test_debris_of_dead_runs_is_swept_and_named(tmp_path):
    from skprivacy.exceptions import StaleOutputWarning

    target = tmp_path / "report"
    dead = _dead_pid()
    debris = tmp_path / f".report.{dead}.0a1b2c3d.tmp"
    debris.mkdir()
    (debris / "sanitized.csv.gz").write_bytes(b"truncated")
    (tmp_path / ".report.claim").write_text(f"{dead} somehost\n")
    other = tmp_path / f".other.{dead}.0a1b2c3d.tmp"  # another target's: kept
    other.mkdir()
    with pytest.warns(StaleOutputWarning) as record:
        staged = StagedDirectory(target)
    messages = " | ".join(str(w.message) for w in record)
    assert f"taking over the claim on {target} left by an interrupted" in messages
    assert f"pid {dead}, no longer running" in messages
    assert "removed 1 unfinished output(s)" in messages
    assert f".report.{dead}.0a1b2c3d.tmp (pid {dead})" in messages
    with staged:
        staged.commit()
    assert _entries(tmp_path) == [other.name, "report"]


def test_a_swap_killed_between_renames_restores_the_previous_output(tmp_path):
    from skprivacy.exceptions import StaleOutputWarning

    target = tmp_path / "report"
    aside = tmp_path / f".report.{_dead_pid()}.0a1b2c3d.old.tmp"
    aside.mkdir()
    _write_report(aside, "old")
    with pytest.warns(StaleOutputWarning, match=f"restored the previous {target}"):
        with pytest.raises(FileExistsError, match="already exists"):
            StagedDirectory(target)
    assert {p.read_text() for p in target.iterdir()} == {"old"}
    assert _entries(tmp_path) == ["report"]


def test_debris_of_a_running_process_is_named_not_removed(tmp_path):
    from skprivacy.exceptions import StaleOutputWarning

    target = tmp_path / "report"
    # A running process (blocked reading its stdin) owns this staging name.
    proc = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    try:
        live = tmp_path / f".report.{proc.pid}.0a1b2c3d.tmp"
        live.mkdir()
        legacy = tmp_path / ".report.ab_cd123.tmp"  # an earlier version's name
        legacy.mkdir()
        with pytest.warns(StaleOutputWarning) as record:
            with StagedDirectory(target) as staged:
                staged.commit()
    finally:
        proc.communicate(b"\n")
    (message,) = [str(w.message) for w in record]
    assert f"{live.name} (pid {proc.pid}), of a running process" in message
    assert f"{legacy.name}, of an unknown run" in message
    assert live.is_dir() and legacy.is_dir() and target.is_dir()


# ------------------------------------------- real processes: races and signals
CHILD = (
    STUB_PACKAGES
    + r"""
warnings.simplefilter("ignore")
from skprivacy.utils import _files
from skprivacy.utils._files import StagedDirectory, staged_outputs

target, tag, force, pause_at = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", sys.argv[4]


class Terminated(BaseException):
    pass


def on_sigterm(signum, frame):
    raise Terminated()


signal.signal(signal.SIGTERM, on_sigterm)


def pause(stage):
    # A barrier through pipes: say where we are, wait for the parent's word.
    if stage in pause_at.split(","):
        print(stage, flush=True)
        sys.stdin.readline()


for name in ("_rename2", "_remove"):
    original = getattr(_files, name)

    def wrapped(*args, _original=original, _name=name):
        pause("swap" if _name == "_rename2" else "cleanup")
        return _original(*args)

    setattr(_files, name, wrapped)

try:
    pause("start")
    staged = StagedDirectory(target, force=force,
                             replaceable={"summary.json", "report.html", "big.bin"})
    with staged:
        (staged.path / "summary.json").write_text(tag)
        pause("staging")
        (staged.path / "report.html").write_text(tag)
        (staged.path / "big.bin").write_bytes(tag.encode() * 100000)
        pause("claimed")
        staged.commit()
    pause("committed")
    print("OK", flush=True)
except Terminated:
    for s in staged_outputs():
        print("STATUS", s.state, s.describe(), flush=True)
    sys.exit(143)
except OSError as exc:
    print("ERROR", type(exc).__name__, exc, flush=True)
    sys.exit(2)
"""
)


def _foreground_sigint():
    """Give the child the SIGINT disposition of a foreground terminal process.

    A shell starts background jobs with SIGINT ignored, children inherit
    that, and Python then installs no KeyboardInterrupt handler: restoring the
    default lets the test's Ctrl-C reach the child as a user's would.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _child(tmp_path, target, tag, *, force=False, pause_at=""):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(target),
            tag,
            "1" if force else "0",
            pause_at,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_foreground_sigint,
    )


def _wait_for(proc, stage):
    line = proc.stdout.readline().strip()
    assert line == stage, (line, proc.stderr.read() if not line else "")


def _release(proc):
    with contextlib.suppress(BrokenPipeError):  # it may have exited already
        proc.stdin.write("go\n")
        proc.stdin.flush()


def _finish(proc):
    out, err = proc.communicate()
    return proc.returncode, out.strip().splitlines(), err


def _report_state(target):
    if not target.exists():
        return None
    contents = {p.name: p.read_bytes() for p in target.iterdir()}
    tags = {contents["summary.json"].decode(), contents["report.html"].decode()}
    (tag,) = tags  # one run's files only, never a mixture
    assert contents["big.bin"] == tag.encode() * 100000  # complete
    assert sorted(contents) == ["big.bin", "report.html", "summary.json"]
    return tag


def test_two_processes_racing_for_one_output(tmp_path):
    target = tmp_path / "out" / "report"
    procs = [_child(tmp_path, target, tag, pause_at="start") for tag in ("A", "B")]
    for proc in procs:
        _wait_for(proc, "start")
    for proc in procs:  # released together
        _release(proc)
    results = [_finish(proc) for proc in procs]
    winners = [i for i, (rc, _, _) in enumerate(results) if rc == 0]
    assert len(winners) == 1, results
    (winner,) = winners
    rc, out, _ = results[1 - winner]
    # Refused while the winner held the claim or, had it finished already,
    # because the output exists: one line naming the path either way (the
    # winner's pid once it has written it into the claim: a lock taken a
    # moment before names no one yet).
    assert rc == 2
    assert out in (
        *(
            [
                f"ERROR OutputBusyError output {target} is being written by another "
                f"skprivacy run{owner}; wait for it to finish, or choose another "
                "output"
            ]
            for owner in (f" (pid {procs[winner].pid})", "")
        ),
        [
            f"ERROR FileExistsError output directory {target} already exists; use "
            "--force (force=True) to replace it"
        ],
    ), out
    assert _report_state(target) == "AB"[winner]
    assert _entries(target.parent) == ["report"]


@pytest.mark.parametrize("force", [False, True])
def test_a_second_process_fails_while_the_first_holds_the_claim(tmp_path, force):
    target = tmp_path / "report"
    first = _child(tmp_path, target, "A", force=force, pause_at="claimed")
    _wait_for(first, "claimed")
    second = _child(tmp_path, target, "B", force=force)
    rc, out, _ = _finish(second)
    assert rc == 2
    assert out == [
        f"ERROR OutputBusyError output {target} is being written by another "
        f"skprivacy run (pid {first.pid}); wait for it to finish, or choose "
        "another output"
    ]
    _release(first)
    assert _finish(first)[:2] == (0, ["OK"])
    assert _report_state(target) == "A"
    assert _entries(tmp_path) == ["child.py", "report"]


def test_a_claim_taken_before_its_owner_is_written_is_busy_without_a_pid(tmp_path):
    # The moment between a winner's flock and its pid landing in the claim
    # file (the racing test meets it by chance): held here on purpose, by
    # this process, with the file still empty.
    fcntl = pytest.importorskip("fcntl")
    target = tmp_path / "report"
    fd = os.open(tmp_path / ".report.claim", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        rc, out, _ = _finish(_child(tmp_path, target, "B"))
    finally:
        os.close(fd)
    assert rc == 2
    assert out == [
        f"ERROR OutputBusyError output {target} is being written by another "
        "skprivacy run; wait for it to finish, or choose another output"
    ]
    assert not target.exists()


def test_a_second_process_after_the_first_finished_finds_the_output(tmp_path):
    target = tmp_path / "report"
    assert _finish(_child(tmp_path, target, "A"))[:2] == (0, ["OK"])
    rc, out, _ = _finish(_child(tmp_path, target, "B"))
    assert rc == 2
    assert out == [
        f"ERROR FileExistsError output directory {target} already exists; use "
        "--force (force=True) to replace it"
    ]
    assert _report_state(target) == "A"
    assert _entries(tmp_path) == ["child.py", "report"]


def test_kill_9_mid_staging_leaves_debris_the_next_run_sweeps(tmp_path):
    from skprivacy.exceptions import StaleOutputWarning

    target = tmp_path / "out" / "report"
    proc = _child(tmp_path, target, "A", pause_at="staging")
    _wait_for(proc, "staging")
    proc.kill()
    proc.communicate()
    (staging,) = set(_entries(target.parent)) - {".report.claim"}
    assert ".report.claim" in _entries(target.parent)
    assert re.fullmatch(rf"\.report\.{proc.pid}\.[0-9a-f]{{8}}\.tmp", staging)
    assert (target.parent / staging / "summary.json").read_text() == "A"
    with pytest.warns(StaleOutputWarning) as record:
        staged = StagedDirectory(target)
    messages = " | ".join(str(w.message) for w in record)
    assert f"pid {proc.pid}, no longer running" in messages
    assert f"{staging} (pid {proc.pid})" in messages
    with staged:
        _write_report(staged.path, "next")
        staged.commit()
    assert _entries(target.parent) == ["report"]


SIGNAL_STAGES = {
    # stage: whether the new output is committed when the signal lands there
    "staging": False,
    "claimed": False,
    "swap": True,  # signals are deferred during the swap: it completes
    "cleanup": True,
    "committed": True,
}


@pytest.mark.parametrize(
    "stage, previous",
    [
        (stage, previous)
        for stage in SIGNAL_STAGES
        for previous in (False, True)
        # Without a previous output there is nothing to clean up.
        if previous or stage != "cleanup"
    ],
)
def test_sigterm_at_each_stage_reports_what_is_on_disk(tmp_path, stage, previous):
    target = tmp_path / "report"
    if previous:
        target.mkdir()
        _write_report(target, "old")
        (target / "big.bin").write_bytes(b"old" * 100000)
    proc = _child(tmp_path, target, "new", force=True, pause_at=stage)
    _wait_for(proc, stage)
    proc.send_signal(signal.SIGTERM)
    _release(proc)
    rc, out, err = _finish(proc)
    assert rc == 143, (out, err)
    (status,) = out
    on_disk = _report_state(target)
    if SIGNAL_STAGES[stage]:
        assert status == f"STATUS committed {target} holds the new output"
        assert on_disk == "new"
    elif previous:
        assert status == (
            f"STATUS discarded {target} keeps the previous output (the new one "
            "was discarded)"
        )
        assert on_disk == "old"
    else:
        assert status == f"STATUS discarded nothing was written to {target}"
        assert on_disk is None
    assert _entries(tmp_path) == (["child.py", "report"] if on_disk else ["child.py"])


@pytest.mark.slow  # four processes importing the whole package
@pytest.mark.parametrize("command", ["audit", "sanitize"])
def test_two_command_runs_into_one_new_output(tmp_path, command):
    """Two runs without --force into one new --out: exactly one writes it."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 6)), columns=[f"e{i}" for i in range(6)])
    frame.insert(0, "identity", np.repeat([f"p{i}" for i in range(8)], 5))
    source = tmp_path / "emb.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "out"
    args = [sys.executable, "-m", "skprivacy", command, str(source), "--out", str(out)]
    if command == "audit":
        args += ["--methods", "gaussmech", "--quiet"]
    else:
        args += ["--quiet", "--no-audit", "--n-components", "1"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    procs = [
        subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate() for proc in procs]
    results = [(proc.returncode, *out) for proc, out in zip(procs, outputs)]
    codes = sorted(rc for rc, _, _ in results)
    assert codes == [0, 2], results
    ((_, _, err),) = [r for r in results if r[0] == 2]
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # Refused while the other held the claim, or because it had finished.
    assert (
        f"output {out} is being written by another skprivacy run" in lines[0]
        or f"output directory {out} already exists" in lines[0]
    ), lines[0]
    assert sorted(os.listdir(tmp_path)) == ["emb.csv", "out"]
