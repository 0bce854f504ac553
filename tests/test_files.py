import os
import signal
import subprocess
import sys

import pytest

from skprivacy.cli._errors import UserError, run_command, user_errors
from skprivacy.utils._files import StagedDirectory, atomic_file, check_not_input

REPORT_FILES = {"summary.json", "report.html"}


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


def test_sigterm_unwinds_and_discards_the_staged_output(tmp_path):
    """SIGTERM mid-write: exit 143, the previous report intact, no staging left."""
    target = tmp_path / "report"
    target.mkdir()
    _write_report(target, "old")
    script = f"""
import os, signal, sys
from pathlib import Path
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
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True
    )
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "terminated" in proc.stderr
    assert {p.read_text() for p in target.iterdir()} == {"old"}
    assert sorted(os.listdir(tmp_path)) == ["report"]
