# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Saving and reading reports, for both report classes: one implementation.

Strict JSON (infinity written as null, its path listed in ``infinite``), a
staged output directory swapped into place only when complete, and the
Jupyter view of the HTML.
"""

import json
import math
from pathlib import Path

import numpy as np

from skprivacy.report._html import html_body
from skprivacy.utils._files import StagedDirectory, atomic_file

__all__ = ["SavedReport", "dumps", "read_json", "strict"]


def strict(value, infinite, path=""):
    """Return a JSON-ready copy of ``value``; ``inf`` becomes null, its path recorded."""
    if isinstance(value, dict):
        return {
            str(k): strict(v, infinite, f"{path}.{k}" if path else str(k))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | np.ndarray):
        return [strict(v, infinite, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isinf(value):
            infinite.append(path)
            return None
        return None if math.isnan(value) else value
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def dumps(obj):
    """Return strict JSON text (no NaN or Infinity tokens)."""
    return json.dumps(obj, indent=2, allow_nan=False) + "\n"


def read_json(path, schema_version):
    """Read a report's JSON file, check its layout version, restore infinities."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("schema_version") != schema_version:
        raise ValueError(
            f"{path} has schema_version {data.get('schema_version')!r}; this "
            f"skprivacy reads {schema_version!r}."
        )
    return restore_infinite(data)


def restore_infinite(obj):
    """Put ``inf`` back at the paths listed in ``obj["infinite"]``."""
    for path in obj["infinite"]:
        keys = []
        for part in path.split("."):
            name, *items = part.replace("]", "").split("[")
            keys.append(name)
            keys.extend(int(i) for i in items)
        target = obj
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = math.inf
    return obj


class SavedReport:
    """Saving shared by the report classes: ``files()`` gives the text of each file."""

    #: The files :meth:`save` writes.
    FILES = ()

    def files(self):  # pragma: no cover - each report class defines it
        raise NotImplementedError

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
