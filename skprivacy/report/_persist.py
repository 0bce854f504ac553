# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Saving and reading reports, for both report classes: one implementation.

Strict JSON (:mod:`skprivacy.utils._json`), a staged output directory
swapped into place only when complete, and the Jupyter view of the HTML.
Reading checks every file: text that is not UTF-8, JSON that does not parse
or does not follow its layout, a CSV that does not parse, and files of
different runs in one folder each raise a one-line
:class:`~skprivacy.exceptions.ReportFileError` naming the file.
"""

import re
from pathlib import Path

import pandas as pd

from skprivacy.exceptions import ReportFileError
from skprivacy.report._html import html_body
from skprivacy.report._schema import summary_schema
from skprivacy.utils._files import StagedDirectory, atomic_file
from skprivacy.utils._json import (
    read_json,
    read_text,
    restore_infinite,
    schema_problem,
)

__all__ = [
    "SavedReport",
    "check_run_ids",
    "html_run_id",
    "read_audit_files",
    "read_conditions_files",
    "read_csv",
]

# The run identifier report.html carries (page.html's meta element).
_HTML_RUN_ID = re.compile(r'<meta name="skprivacy-run-id" content="([^"]*)">')


def _schema_check(schema):
    """Return the layout check :func:`~skprivacy.utils._json.read_json` applies."""
    return lambda data: schema_problem(data, schema)


def read_csv(path, **kwargs):
    """Read a report's CSV file; a damaged one is named (one line)."""
    try:
        return pd.read_csv(path, **kwargs)
    except (FileNotFoundError, PermissionError):
        raise
    except (ValueError, UnicodeError, pd.errors.ParserError, OSError) as exc:
        raise ReportFileError(
            f"{path}: not a readable CSV table ({' '.join(str(exc).split())})"
        ) from None


def html_run_id(html):
    """Return the run id ``report.html`` carries (its meta element), or None."""
    match = _HTML_RUN_ID.search(html)
    return None if match is None else match.group(1)


def check_run_ids(run_ids):
    """Check that every file of a report folder comes from one run.

    Parameters
    ----------
    run_ids : dict of path-like to str or None
        The run id each file carries (None: it carries none), the reference
        file first.

    Raises
    ------
    ReportFileError
        Naming the file that carries no run id, or another run's.
    """
    (first, expected), *rest = run_ids.items()
    for path, run_id in [(first, expected), *rest]:
        if not isinstance(run_id, str) or not run_id:
            raise ReportFileError(
                f"{path}: no run_id; it is not a complete report file"
            )
        if run_id != expected:
            raise ReportFileError(
                f"{path} is from run {run_id}, but {first} from run {expected}: the "
                "folder mixes files of two runs"
            )


#: What provenance.json must hold to be read back (the rest is free-form).
_PROVENANCE = {
    "type": "object",
    "required": ["run_id"],
    "properties": {"run_id": {"type": "string", "minLength": 1}},
}
#: The layout of conditions.json (each condition's summary: summary_schema()).
_CONDITIONS = {
    "type": "object",
    "required": [
        "schema_version", "run_id", "table_pairs", "table_i_columns",
        "provenance", "figures", "conditions", "infinite",
    ],
    "properties": {
        "run_id": {"type": "string", "minLength": 1},
        "table_pairs": {"type": "integer", "minimum": 1},
        "table_i_columns": {"type": "array", "items": {"type": "string"}},
        "provenance": {"type": "object"},
        "figures": {"type": "object"},
        "infinite": {"type": "array", "items": {"type": "string"}},
        "conditions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "summary", "provenance", "figures", "pairs_columns"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "summary": {"type": "object"},
                    "provenance": {"type": "object"},
                    "figures": {"type": "object"},
                    "pairs_columns": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}  # fmt: skip


def read_audit_files(path, schema_version):
    """Read the files of a saved audit report, each checked, all of one run.

    Parameters
    ----------
    path : path-like
        The report directory.
    schema_version : str
        The ``summary.json`` layout this skprivacy reads.

    Returns
    -------
    summary, pairs, provenance, html : dict, DataFrame, dict, str

    Raises
    ------
    ReportFileError
        Naming the file that is damaged, breaks its layout or belongs to
        another run.
    """
    path = Path(path)
    summary = read_json(
        path / "summary.json", schema_version, _schema_check(summary_schema())
    )
    provenance = read_json(path / "provenance.json", check=_schema_check(_PROVENANCE))
    html = read_text(path / "report.html")
    check_run_ids(
        {
            path / "summary.json": summary["run_id"],
            path / "provenance.json": provenance["run_id"],
            path / "report.html": html_run_id(html),
        }
    )
    return summary, read_csv(path / "pairs.csv"), provenance, html


def read_conditions_files(path, schema_version):
    """Read the files of a saved multi-condition report, each checked, of one run.

    Parameters
    ----------
    path : path-like
        The report directory.
    schema_version : str
        The ``conditions.json`` layout this skprivacy reads.

    Returns
    -------
    data : dict
        ``conditions.json``, each condition's summary checked against
        ``summary_schema()`` and its infinities restored.
    pairs : DataFrame
        ``pairs.csv`` as text (every column ``str``, no missing values).
    table_i : DataFrame
        ``table_i.csv``, indexed by condition.
    html : str
        ``report.html``.

    Raises
    ------
    ReportFileError
        Naming the file (and the condition) that is damaged, breaks its
        layout or belongs to another run.
    """
    path = Path(path)
    file = path / "conditions.json"
    data = read_json(file, schema_version, _schema_check(_CONDITIONS))
    schema = summary_schema()
    run_ids = {file: data["run_id"]}
    for i, entry in enumerate(data["conditions"]):
        where = f"conditions[{i}].summary"
        problem = schema_problem(entry["summary"], schema, where=where)
        if problem:
            raise ReportFileError(f"{file}: {problem}")
        restore_infinite(entry["summary"], f"{file} ({where})")
        run_ids[f"{file} (condition {entry['name']!r})"] = entry["summary"]["run_id"]
    html = read_text(path / "report.html")
    run_ids[path / "report.html"] = html_run_id(html)
    check_run_ids(run_ids)
    pairs = read_csv(path / "pairs.csv", dtype=str, keep_default_na=False)
    table = read_csv(path / "table_i.csv", index_col="condition")
    return data, pairs, table, html


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
        report, html = cls._read(Path(path))
        report._html = html
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
