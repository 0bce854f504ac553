# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""How every ``skprivacy`` subcommand reports errors.

A user error (bad path, bad data, bad option, an output that cannot be
written) is one line on stderr and exit status 2. An interrupt (Ctrl-C or
SIGTERM) unwinds normally, so staged outputs are removed, and exits 130 or
143. Anything else is a bug: its traceback is shown with a request to report
it, and the exit status is 1.
"""

import contextlib
import re
import signal
import sys
import traceback

__all__ = ["EXIT_USAGE", "UserError", "run_command", "user_errors"]

#: Exit status of every user error (bad path, bad data, bad option).
EXIT_USAGE = 2


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
        for SIGTERM, 1 for an unexpected exception (a bug).

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
    try:
        return command(*args)
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(
            f"{prog}: interrupted; unfinished outputs were discarded", file=sys.stderr
        )
        return 130
    except _Terminated:
        print(f"{prog}: terminated; unfinished outputs were discarded", file=sys.stderr)
        return 143
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
