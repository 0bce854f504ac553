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
"""

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

__all__ = [
    "StagedDirectory",
    "atomic_file",
    "check_not_input",
]

# The two renames that swap a staged directory into place must not be split by
# a signal: deferring these while swapping leaves either the old or the new
# directory under the target name (SIGKILL cannot be deferred; nothing can).
_SWAP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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
    written through.

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
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


class StagedDirectory:
    """A directory written in a temporary sibling, then swapped into place.

    Creating the object checks the target and creates the staging directory at
    once, so an unwritable or refused destination is reported before any
    computation. Write the outputs into :attr:`path`, then call
    :meth:`commit`; leaving a ``with`` block without committing (an error, an
    interrupt) removes the staging directory and leaves the target as it was.

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

    Examples
    --------
    >>> import os, tempfile
    >>> from skprivacy.utils._files import StagedDirectory
    >>> target = os.path.join(tempfile.mkdtemp(), "report")
    >>> with StagedDirectory(target) as staged:
    ...     _ = (staged.path / "summary.json").write_text("{}")
    ...     staged.commit()
    >>> sorted(os.listdir(target))
    ['summary.json']
    """

    def __init__(self, target, *, force=False, replaceable=None, inputs=()):
        self.target = Path(target)
        self._check(force, set(replaceable or ()), inputs)
        parent = self.target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise NotADirectoryError(
                f"cannot create output directory {self.target}: {exc.filename} is a "
                "file, not a directory"
            ) from exc
        self.path = Path(
            tempfile.mkdtemp(dir=parent, prefix=f".{self.target.name}.", suffix=".tmp")
        )
        self.committed = False

    def _check(self, force, replaceable, inputs):
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
        if target.exists():
            if not force:
                raise FileExistsError(
                    f"output directory {target} already exists; use --force "
                    "(force=True) to replace it"
                )
            foreign = sorted(
                entry.name
                for entry in target.iterdir()
                if entry.name not in replaceable or entry.is_dir()
            )
            if foreign:
                shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
                raise FileExistsError(
                    f"output directory {target} holds files skprivacy did not write "
                    f"({shown}); refusing to replace it, choose another --out"
                )
        check_not_input(target, inputs)

    def commit(self):
        """Swap the staged directory into place (the old target is removed)."""
        backup = None
        with _signals_deferred():
            if self.target.exists():
                backup = Path(
                    tempfile.mkdtemp(
                        dir=self.target.parent,
                        prefix=f".{self.target.name}.old.",
                        suffix=".tmp",
                    )
                )
                os.rmdir(backup)
                os.rename(self.target, backup)
            os.rename(self.path, self.target)
            self.committed = True
            if backup is not None:
                # Still deferred: a signal arriving during the swap must not
                # leave the previous report behind as a stray sibling. rmtree
                # removes links themselves, never what they point to.
                shutil.rmtree(backup, ignore_errors=True)

    def discard(self):
        """Remove the staging directory (no effect after :meth:`commit`)."""
        if not self.committed:
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.discard()
        return False
