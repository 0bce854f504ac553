# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Outputs that cannot lie: atomic files and directories, inputs never overwritten.

Every file skprivacy writes is first written under a temporary name in the
directory that will hold it, flushed to disk, then renamed into place, so a
reader sees either the previous complete file or the new complete one. A
report directory is staged the same way: its files are written into a
temporary sibling directory which then replaces the target. Writes never go
through a symbolic link, and a target that is (or contains) one of the run's
inputs is refused before any work starts.

A staged directory also *claims* its target from start to commit: a lock file
``.<name>.claim`` beside the target, held with ``flock`` and naming the owner's
pid. A second run writing the same target fails at once (never a silent
replacement of the other's output, with or without ``force``); a claim left by
a killed run is taken over with a warning, and the staging directories such a
run left behind (``.<name>.<pid>.<token>.tmp``) are removed by the next run.
Created files and directories get the permissions the umask allows.
"""

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import signal
import socket
import threading
import warnings
from pathlib import Path

from skprivacy.exceptions import OutputBusyError, StaleOutputWarning

try:
    import fcntl
except ImportError:  # not POSIX: claims fall back to O_EXCL files
    fcntl = None

__all__ = [
    "StagedDirectory",
    "atomic_file",
    "check_not_input",
    "staged_outputs",
]

# The renames that swap a staged directory into place must not be split by a
# signal: deferring these while swapping leaves either the old or the new
# directory under the target name (SIGKILL cannot be deferred; nothing can).
_SWAP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# Every StagedDirectory of this process, in creation order (staged_outputs).
_STAGED = []


@contextlib.contextmanager
def _signals_deferred():
    # Masking the signals with pthread_sigmask is not enough: the mask is per
    # thread, and a process with BLAS or joblib threads may take the signal on
    # one of them, after which Python runs the handler in the main thread at
    # the next bytecode, i.e. between the two renames. Replacing the Python
    # handlers defers them whichever thread the kernel picks; the signals that
    # arrived are re-raised once the previous handlers are back.
    if threading.current_thread() is not threading.main_thread():
        # Python only ever runs signal handlers in the main thread.
        yield
        return
    received = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: received.append(signum))
        for signum in _SWAP_SIGNALS
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)


# -- renames that never replace by accident ----------------------------------------
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _load_renameat2():
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError, TypeError):  # not Linux/glibc
        return None


_renameat2 = _load_renameat2()


def _rename2(src, dst, flags):
    """``renameat2(2)``; False if the system or file system lacks it."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags):
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            return False
        raise OSError(code, os.strerror(code), str(src), None, str(dst))
    return True


def _pid_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or cannot tell: assume alive
    return True


def _token():
    return f"{os.getpid()}.{secrets.token_hex(4)}"


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_not_input(target, inputs):
    """Raise ``ValueError`` if writing ``target`` could overwrite one of ``inputs``.

    Parameters
    ----------
    target : path-like
        File or directory about to be written (a directory is replaced whole).
    inputs : iterable of path-like
        Files the run reads.

    Raises
    ------
    ValueError
        If ``target`` is an input (same path, or the same file through another
        name or a hard link), or a directory that contains an input.

    Examples
    --------
    >>> import os, tempfile
    >>> from skprivacy.utils._files import check_not_input
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, "emb.csv")
    >>> open(src, "w").close()
    >>> check_not_input(os.path.join(d, "out.csv"), [src])  # fine
    >>> check_not_input(d, [src])
    Traceback (most recent call last):
    ...
    ValueError: ...contains the input...
    """
    target = Path(target)
    resolved = target.resolve()
    for source in inputs:
        if source is None:
            continue
        source = Path(source)
        if _same_file(target, source) or resolved == source.resolve():
            raise ValueError(f"output {target} is the input file {source}; refusing.")
        if target.is_dir() and resolved in source.resolve().parents:
            raise ValueError(
                f"output directory {target} contains the input {source}; refusing "
                "to replace it."
            )


@contextlib.contextmanager
def atomic_file(path, mode="wb", **open_kwargs):
    """Open a temporary file beside ``path``; rename it onto ``path`` on success.

    On any exception (``KeyboardInterrupt`` and ``SystemExit`` included) the
    temporary file is removed and ``path`` keeps its previous content. An
    existing symbolic link at ``path`` is replaced by the new file, never
    written through. The file gets the permissions the umask allows.

    Parameters
    ----------
    path : path-like
        Destination; its directory must exist.
    mode : str, default="wb"
        ``"wb"`` or ``"w"`` (text; pass ``encoding`` in ``open_kwargs``).
    **open_kwargs
        Passed to :func:`open`.

    Yields
    ------
    fh : file object
        The open temporary file.

    Examples
    --------
    >>> import os, tempfile
    >>> from skprivacy.utils._files import atomic_file
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_file(path, "w") as fh:
    ...     _ = fh.write("done")
    >>> open(path).read()
    'done'
    """
    path = Path(path)
    if mode not in {"w", "wb"}:
        raise ValueError(f"mode must be 'w' or 'wb'; got {mode!r}.")
    tmp = path.parent / f".{path.name}.{_token()}.tmp"
    # 0o666 & ~umask, as open() gives (mkstemp would give 0600 whatever the umask).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class _Claim:
    """An exclusive claim on an output path: ``.<name>.claim`` held with ``flock``.

    The lock dies with its process (kill -9 included), so a claim file whose
    lock can be taken is stale: it is taken over with a warning naming the
    pid it records. The file is removed on release.
    """

    def __init__(self, target):
        self.target = target
        self.path = target.parent / f".{target.name}.claim"
        self._fd = None
        while self._fd is None:
            self._fd = self._try_acquire()

    def _busy(self, owner):
        who = f" (pid {owner})" if owner else ""
        return OutputBusyError(
            f"output {self.target} is being written by another skprivacy run{who}; "
            "wait for it to finish, or choose another output"
        )

    def _try_acquire(self):
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
        if fcntl is None:
            return self._try_acquire_exclusive()
        fd = os.open(self.path, flags, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read_owner(fd)
            os.close(fd)
            raise self._busy(owner) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            # The previous holder unlinks the file before unlocking it: a lock
            # taken on an unlinked (or replaced) file claims nothing. Retry.
            if not _same_inode(fd, self.path):
                os.close(fd)
                return None
            stale = _read_owner(fd)
            if stale:
                self._warn_taken_over(stale, stacklevel=5)
            _write_owner(fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _warn_taken_over(self, pid, stacklevel):
        warnings.warn(
            f"taking over the claim on {self.target} left by an interrupted "
            f"skprivacy run (pid {pid}, no longer running)",
            StaleOutputWarning,
            stacklevel=stacklevel,
        )

    def _try_acquire_exclusive(self):
        # Without flock: an O_EXCL file naming its owner; the claim of a pid
        # that no longer runs is stale.
        try:
            fd = os.open(
                self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666
            )
        except FileExistsError:
            try:
                with open(self.path, "rb") as fh:
                    owner = _parse_owner(fh.read())
            except FileNotFoundError:
                return None
            if owner is None or _pid_alive(owner):
                raise self._busy(owner) from None
            self._warn_taken_over(owner, stacklevel=6)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            return None
        _write_owner(fd)
        return fd

    def release(self):
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


def _same_inode(fd, path):
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _parse_owner(raw):
    try:
        return int(raw.split()[0])
    except (IndexError, ValueError):
        return None


def _read_owner(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    return _parse_owner(os.read(fd, 256))


def _write_owner(fd):
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())


class StagedDirectory:
    """A directory written in a temporary sibling, then swapped into place.

    Creating the object claims the target (see below), checks it and creates
    the staging directory at once, so a busy, unwritable or refused
    destination is reported before any computation. Write the outputs into
    :attr:`path`, then call :meth:`commit`; leaving a ``with`` block without
    committing (an error, an interrupt) removes the staging directory and
    leaves the target as it was.

    The target is claimed from creation to commit or discard: a second
    ``StagedDirectory`` for the same target, in this process or another,
    fails with :class:`~skprivacy.exceptions.OutputBusyError` (with or
    without ``force``), so two runs never replace each other's output. A
    claim left by a killed run is taken over with a
    :class:`~skprivacy.exceptions.StaleOutputWarning`, and the staging
    directories killed runs left beside the target are removed (those of a
    running process are named in a warning and left alone).

    After an exception (a signal included), :attr:`state` and
    :meth:`describe` say what is on disk; :func:`staged_outputs` lists every
    staged directory of the process for that purpose.

    Parameters
    ----------
    target : path-like
        The directory to produce.
    force : bool, default=False
        Allow replacing an existing ``target``.
    replaceable : iterable of str or None, default=None
        With ``force``, the names an existing ``target`` may contain for it to
        be replaced (e.g. a previous report's files). Any other entry makes the
        replacement an error, so ``--force`` can never delete a user's
        unrelated files. ``None`` allows only an empty directory.
    inputs : iterable of path-like, default=()
        Files the run reads: a target that contains one is refused.

    Attributes
    ----------
    path : Path
        The staging directory to write into.
    state : {"staging", "committed", "discarded"}
        ``"committed"`` once the new output is in place (even if a signal
        then interrupts the caller), ``"discarded"`` once the staging
        directory is removed without committing.
    committed : bool
        Whether the new output replaced the target.
    had_previous : bool
        Whether the target existed when it was claimed (what a discard
        leaves in place).

    Examples
    --------
    >>> import os, tempfile
    >>> from skprivacy.utils._files import StagedDirectory
    >>> target = os.path.join(tempfile.mkdtemp(), "report")
    >>> with StagedDirectory(target) as staged:
    ...     _ = (staged.path / "summary.json").write_text("{}")
    ...     staged.commit()
    >>> sorted(os.listdir(target)), staged.state
    (['summary.json'], 'committed')
    >>> staged.describe().endswith("report holds the new output")
    True
    """

    def __init__(self, target, *, force=False, replaceable=None, inputs=()):
        self.target = Path(target)
        self.force = bool(force)
        self._replaceable = set(replaceable or ())
        self.committed = False
        self.state = "claiming"
        self.had_previous = False
        self._check_shape()
        parent = self.target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise NotADirectoryError(
                f"cannot create output directory {self.target}: {exc.filename} is a "
                "file, not a directory"
            ) from exc
        self._claim = _Claim(self.target)
        try:
            self._sweep()
            self._check_existing()
            check_not_input(self.target, inputs)
            self.had_previous = os.path.lexists(self.target)
            self.path = parent / f".{self.target.name}.{_token()}.tmp"
            os.mkdir(self.path, 0o777)  # 0o777 & ~umask
        except BaseException:
            self._claim.release()
            raise
        self.state = "staging"
        _STAGED.append(self)

    # -- checks --------------------------------------------------------------------
    def _check_shape(self):
        target = self.target
        for ancestor in [target, *target.parents]:
            if ancestor.is_symlink() and ancestor == target:
                raise ValueError(
                    f"output directory {target} is a symbolic link; give a real "
                    "directory"
                )
            if ancestor.exists() and not ancestor.is_dir():
                raise NotADirectoryError(
                    f"output directory {target}: {ancestor} is a file, not a directory"
                )
            if ancestor.exists():
                break

    def _check_existing(self):
        target = self.target
        if not os.path.lexists(target):
            return
        if not self.force:
            raise FileExistsError(
                f"output directory {target} already exists; use --force "
                "(force=True) to replace it"
            )
        if target.is_symlink() or not target.is_dir():
            raise NotADirectoryError(
                f"output directory {target} is not a directory; refusing to replace it"
            )
        foreign = sorted(
            entry.name
            for entry in target.iterdir()
            if entry.name not in self._replaceable or entry.is_dir()
        )
        if foreign:
            shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
            raise FileExistsError(
                f"output directory {target} holds files skprivacy did not write "
                f"({shown}); refusing to replace it, choose another --out"
            )

    # -- debris of interrupted runs ------------------------------------------------
    def _sweep(self):
        """Remove what killed runs left beside the target (the claim is held)."""
        name = re.escape(self.target.name)
        ours = re.compile(rf"^\.{name}\.(\d+)\.[0-9a-f]{{8}}(\.old)?\.tmp$")
        legacy = re.compile(rf"^\.{name}\.(old\.)?[a-z0-9_]{{8}}\.tmp$")
        removed, live, unknown = [], [], []
        for entry in sorted(self.target.parent.iterdir()):
            match = ours.match(entry.name)
            if match is None:
                if legacy.match(entry.name):
                    unknown.append(entry.name)
                continue
            pid, old = int(match.group(1)), match.group(2)
            if pid != os.getpid() and _pid_alive(pid):
                live.append(f"{entry.name} (pid {pid})")
                continue
            if old and not os.path.lexists(self.target):
                # Killed between the two renames of a swap: the previous
                # output was set aside and the new one never arrived.
                os.rename(entry, self.target)
                warnings.warn(
                    f"restored the previous {self.target} from {entry.name}, left "
                    f"by an interrupted skprivacy run (pid {pid})",
                    StaleOutputWarning,
                    stacklevel=3,
                )
                continue
            _remove(entry)
            removed.append(f"{entry.name} (pid {pid})")
        if removed:
            warnings.warn(
                f"removed {len(removed)} unfinished output(s) of interrupted "
                f"skprivacy runs beside {self.target}: {', '.join(removed)}",
                StaleOutputWarning,
                stacklevel=3,
            )
        if live or unknown:
            warnings.warn(
                f"left in place beside {self.target}: "
                + ", ".join(
                    [f"{e}, of a running process" for e in live]
                    + [f"{e}, of an unknown run" for e in unknown]
                )
                + "; remove them once no skprivacy run is writing there",
                StaleOutputWarning,
                stacklevel=3,
            )

    # -- the swap ------------------------------------------------------------------
    def commit(self):
        """Swap the staged directory into place (the old target is removed).

        Raises
        ------
        FileExistsError
            If, without ``force``, the target appeared while this run was
            writing (created by a program that does not claim it): nothing is
            replaced and the staged output is discarded.
        """
        if self.state != "staging":
            raise RuntimeError(f"cannot commit a staged directory that is {self.state}")
        with _signals_deferred():
            if os.path.lexists(self.target):
                if not self.force:
                    raise FileExistsError(
                        f"output directory {self.target} appeared while this run was "
                        "writing it; nothing was replaced"
                    )
                self._check_existing()
                self._swap_existing()
            else:
                self._move_into_place()
            self.committed = True
            self.state = "committed"
            self._claim.release()

    def _move_into_place(self):
        if not _rename2(self.path, self.target, _RENAME_NOREPLACE):
            os.rename(self.path, self.target)

    def _swap_existing(self):
        # Atomic exchange where the system has it: the target always names a
        # complete directory; the old one ends up under the staging name.
        if _rename2(self.path, self.target, _RENAME_EXCHANGE):
            old = self.path
        else:
            old = self.target.parent / f".{self.target.name}.{_token()}.old.tmp"
            os.rename(self.target, old)
            try:
                os.rename(self.path, self.target)
            except BaseException:
                os.rename(old, self.target)  # the previous output back in place
                raise
        # Still deferred: a signal must not leave the previous output behind
        # as a stray sibling. rmtree removes links themselves, never what they
        # point to.
        _remove(old)

    def discard(self):
        """Remove the staging directory and release the claim (no effect after commit)."""
        if self.state == "staging":
            _remove(self.path)
            self.state = "discarded"
        if self.state in ("committed", "discarded"):
            self._claim.release()

    def describe(self):
        """Say in one line what is on disk at the target now.

        Returns
        -------
        line : str
            E.g. ``"out holds the new output"``, ``"out keeps the previous
            output (the new one was discarded)"``, or ``"nothing was written to
            out"``.
        """
        if self.state == "committed":
            return f"{self.target} holds the new output"
        if self.had_previous:
            if self.state == "discarded":
                return f"{self.target} keeps the previous output (the new one was discarded)"
            return (
                f"{self.target} keeps the previous output (the new one is unfinished)"
            )
        return f"nothing was written to {self.target}"

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.discard()
        return False


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def staged_outputs():
    """Return every :class:`StagedDirectory` created in this process, oldest first.

    For a command interrupted by a signal or an error: each one's
    :meth:`~StagedDirectory.describe` says what is on disk at its target.

    Returns
    -------
    staged : list of StagedDirectory
    """
    return list(_STAGED)
