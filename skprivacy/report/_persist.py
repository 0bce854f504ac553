# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Saving and reading reports, for both report classes: one implementation.

Strict JSON (:mod:`skprivacy.utils._json`), a staged output directory
swapped into place only when complete, and the Jupyter view of the HTML.
"""

from pathlib import Path

from skprivacy.report._html import html_body
from skprivacy.utils._files import StagedDirectory, atomic_file

__all__ = ["SavedReport"]


class SavedReport:
    """Saving shared by the report classes: ``files()`` gives the text of each file."""

    #: The files :meth:`save` writes.
    FILES = ()

    def files(self):  # pragma: no cover - each report class defines it
        raise NotImplementedError

    def to_html(self):
        """Return the self-contained HTML report (inline CSS, base64 PNG plots)."""
        if self._html is None:
            self._html = self._renderer()
        return self._html

    @classmethod
    def load(cls, path):
        """Read a report written by :meth:`save`.

        Parameters
        ----------
        path : str or path-like
            The report directory.

        Returns
        -------
        report : object
            Equal to the saved one (its tables, results, provenance,
            ``run_id`` and ``to_html()``); fitted estimators are not saved.
        """
        path = Path(path)
        report = cls._read(path)
        report._html = (path / "report.html").read_text(encoding="utf-8")
        return report

    def _repr_html_(self):
        """Return the report's body for Jupyter (the same markup as ``to_html``)."""
        return html_body(self.to_html())

    @classmethod
    def staged(cls, path, *, force=False, inputs=()):
        """Return the staged output directory :meth:`save` uses (checked at once).

        Create it before a long audit so an unwritable or refused destination
        is reported before any computation.

        Parameters
        ----------
        path : str or path-like
            Output directory.
        force : bool, default=False
            Allow replacing a directory holding only a previous report's files.
        inputs : iterable of path-like, default=()
            Files the run read (an output containing one is refused).

        Returns
        -------
        staged : StagedDirectory
            Write into ``staged.path``, then call ``staged.commit()``.
        """
        return StagedDirectory(path, force=force, replaceable=cls.FILES, inputs=inputs)

    def write(self, directory):
        """Write the report's files into an existing (staging) directory.

        Parameters
        ----------
        directory : str or path-like
            The directory, e.g. ``staged.path`` of :meth:`staged`.
        """
        for name, text in self.files().items():
            with atomic_file(Path(directory) / name, "w", encoding="utf-8") as fh:
                fh.write(text)

    def save(self, path, *, force=False, inputs=()):
        """Write the report's files into ``path``, all or nothing.

        The files are written into a temporary directory beside ``path`` which
        then replaces it, so ``path`` holds either the previous complete report
        or this one, never a mixture; no file outside ``path`` is written and
        symbolic links are never followed.

        Parameters
        ----------
        path : str or path-like
            Output directory.
        force : bool, default=False
            Replace an existing report directory (one holding only a previous
            report's files).
        inputs : iterable of path-like, default=()
            Files the run read: an output directory containing one is refused.

        Returns
        -------
        paths : dict
            The written paths by file stem (e.g. ``"summary"``).
        """
        with self.staged(path, force=force, inputs=inputs) as staged:
            self.write(staged.path)
            staged.commit()
        return {Path(name).stem: Path(path) / name for name in self.FILES}
