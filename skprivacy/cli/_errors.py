# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""How every ``skprivacy`` subcommand reports errors.

A user error (bad path, bad data, bad option, an output that cannot be
written) is one line on stderr and exit status 2. An interrupt unwinds
normally, so unfinished staged outputs are removed, and exits 130 (Ctrl-C) or
143 (SIGTERM) whenever it lands, with one line per output of the command
saying what is on disk: "R holds the new output" (the signal came after the
output was committed: it is complete), "R keeps the previous output (the new
one was discarded)", or "nothing was written to R". Anything else is a bug:
its traceback is shown with a request to report it, and the exit status is 1.
"""

import contextlib
import re
import signal
import sys
import traceback

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "UserError",
    "interrupted_lines",
    "run_command",
    "user_errors",
]

#: Exit status of every user error (bad path, bad data, bad option).
EXIT_USAGE = 2
#: Exit status after Ctrl-C (SIGINT) and after SIGTERM (128 + signal number).
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class UserError(Exception):
    """An error caused by the user's input: one line on stderr, exit code 2."""


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


# Raised by reading input or preparing output; each is the user's to fix.
_USER_EXCEPTIONS = (
    ValueError,
    TypeError,
    OSError,
    UnicodeError,
    ImportError,
    re.error,
    KeyError,
    IndexError,
)


@contextlib.contextmanager
def audit_data_errors(progress):
    """One-line errors for data an audit cannot use; a failing method is a bug.

    ``NoAuditablePairsError`` and a ``ValueError`` raised before any method
    started (``progress.stage`` still empty: the audit's own validation of
    the data) become a :class:`UserError`; a ``ValueError`` from inside a
    method keeps its traceback.

    Parameters
    ----------
    progress : Progress
        The audit's progress reporter.
    """
    # The report loads only when a command runs (--help stays fast).
    from skprivacy.report import NoAuditablePairsError

    try:
        yield
    except NoAuditablePairsError as exc:
        raise UserError(" ".join(str(exc).split())) from exc
    except ValueError as exc:
        if progress.stage:
            raise
        raise UserError(f"unusable data: {' '.join(str(exc).split())}") from exc


@contextlib.contextmanager
def user_errors(stage):
    """Turn the exceptions of one user-facing stage into a one-line :class:`UserError`.

    Wrap only code whose failures are caused by the user's input or
    environment (reading the input, preparing the output directory), so that
    a genuine bug elsewhere still shows its traceback.

    Parameters
    ----------
    stage : str or None
        What was being done, e.g. ``"reading input"``; starts the message
        (None: the exception's message alone, for errors that name their cause).

    Examples
    --------
    >>> from skprivacy.cli._errors import UserError, user_errors
    >>> try:
    ...     with user_errors("reading input"):
    ...         raise ValueError("column 'e3' row 7 holds 'n/a'")
    ... except UserError as exc:
    ...     print(exc)
    reading input: column 'e3' row 7 holds 'n/a'
    """
    try:
        yield
    except UserError:
        raise
    except FileNotFoundError as exc:
        name = f": {exc.filename}" if exc.filename and exc.strerror else ""
        text = f"{exc.strerror or _one_line(exc)}{name}"
        raise UserError(text if stage is None else f"{stage}: {text}") from exc
    except _USER_EXCEPTIONS as exc:
        text = _one_line(exc)
        raise UserError(text if stage is None else f"{stage}: {text}") from exc


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so ``finally`` blocks still run."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def _staged_outputs():
    # The file layer is loaded by the commands that write: if it never was,
    # nothing was staged (and --help stays free of its imports).
    files = sys.modules.get("skprivacy.utils._files")
    return files.staged_outputs() if files is not None else []


def interrupted_lines(cause, staged, prog="skprivacy"):
    """Return the lines said after an interrupt: one per output of the command.

    Parameters
    ----------
    cause : str
        What happened, e.g. ``"interrupted (Ctrl-C)"``.
    staged : list of StagedDirectory
        The outputs the command staged (their ``describe()`` says what is on
        disk now).
    prog : str, default="skprivacy"
        Program name that starts every line.

    Returns
    -------
    lines : list of str
        At least one line.

    Examples
    --------
    >>> from skprivacy.cli._errors import interrupted_lines
    >>> interrupted_lines("interrupted (Ctrl-C)", [])
    ['skprivacy: interrupted (Ctrl-C); nothing was written']
    """
    if not staged:
        return [f"{prog}: {cause}; nothing was written"]
    return [f"{prog}: {cause}; {s.describe()}" for s in staged]


def run_command(command, *args, prog="skprivacy"):
    """Run ``command(*args)`` and map its outcome to an exit status.

    Parameters
    ----------
    command : callable
        Returns the exit status (normally 0).
    *args
        Passed to ``command``.
    prog : str, default="skprivacy"
        Program name that starts every message.

    Returns
    -------
    status : int
        ``command``'s status; 2 for a :class:`UserError`, 130 for Ctrl-C, 143
        for SIGTERM (also when the output was already committed: the line on
        stderr says so), 1 for an unexpected exception (a bug).

    Examples
    --------
    >>> from skprivacy.cli._errors import UserError, run_command
    >>> def bad():
    ...     raise UserError("input file not found: x.csv")
    >>> run_command(bad)
    2
    """
    previous = signal.getsignal(signal.SIGTERM)
    with contextlib.suppress(ValueError):  # not the main thread: leave it alone
        signal.signal(signal.SIGTERM, _on_sigterm)
    first = len(_staged_outputs())
    try:
        try:
            return command(*args)
        finally:
            # An output still staging when the command ends (e.g. interrupted
            # between creating it and entering its ``with`` block) is unfinished.
            for staged in _staged_outputs()[first:]:
                if staged.state == "staging":
                    staged.discard()
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return _interrupted("interrupted (Ctrl-C)", EXIT_INTERRUPTED, first, prog)
    except _Terminated:
        return _interrupted("terminated (SIGTERM)", EXIT_TERMINATED, first, prog)
    except Exception:
        traceback.print_exc()
        print(
            f"{prog}: internal error: this is a bug in skprivacy, not in your input. "
            "Please report it to the skprivacy developers with the command line and "
            "the traceback above.",
            file=sys.stderr,
        )
        return 1
    finally:
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGTERM, previous)


def _interrupted(cause, status, first, prog):
    # A second signal while this is said would cut it short (or show a
    # traceback): both are ignored until the lines are out.
    ignored = {}
    with contextlib.suppress(ValueError):  # not the main thread
        for signum in (signal.SIGINT, signal.SIGTERM):
            ignored[signum] = signal.signal(signum, signal.SIG_IGN)
    try:
        for line in interrupted_lines(cause, _staged_outputs()[first:], prog):
            print(line, file=sys.stderr)
    finally:
        for signum, handler in ignored.items():
            signal.signal(signum, handler)
    return status
