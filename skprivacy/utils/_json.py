# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Strict JSON for the written records: infinity as null, its path listed.

JSON has no infinity; a record keeps it as ``null`` and lists the field's
path (dot-separated keys, ``[i]`` for list items) in ``infinite``, so a
reader puts it back (:func:`restore_infinite`).
"""

import json
import math
from pathlib import Path

import numpy as np

from skprivacy.exceptions import ReportFileError

__all__ = [
    "dumps",
    "read_json",
    "read_text",
    "restore_infinite",
    "strict",
    "strict_record",
]


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


def read_text(path):
    """Return a written file's text; a file that is not UTF-8 is named as damaged."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportFileError(
            f"{path}: not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x}); "
            "the file is damaged"
        ) from None


def read_json(path, schema_version=None, check=None):
    """Read a report's JSON file, check its version and layout, restore infinities.

    Parameters
    ----------
    path : path-like
        The file.
    schema_version : str or None, default=None
        The layout version this skprivacy reads (None: the file has none).
    check : callable or None, default=None
        ``check(data)`` returns what is wrong with the file's layout (a
        sentence naming the field) or None.

    Returns
    -------
    data : dict

    Raises
    ------
    ReportFileError
        If the file is not UTF-8, not JSON (e.g. truncated), not a JSON
        object, of another version, or fails ``check`` (the message names the
        file, and the field).
    """
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ReportFileError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); the file is damaged or truncated"
        ) from None
    if not isinstance(data, dict):
        problem = None if check is None else check(data)
        raise ReportFileError(
            f"{path}: {problem or 'a JSON value where an object is expected'}"
        )
    if schema_version is not None and data.get("schema_version") != schema_version:
        raise ReportFileError(
            f"{path} has schema_version {data.get('schema_version')!r}; this "
            f"skprivacy reads {schema_version!r}."
        )
    problem = None if check is None else check(data)
    if problem:
        raise ReportFileError(f"{path}: {problem}")
    return restore_infinite(data, path) if "infinite" in data else data


def restore_infinite(obj, path=None):
    """Put ``inf`` back at the paths listed in ``obj["infinite"]``.

    ``path``: the file ``obj`` was read from, named if a listed path is not
    one of its fields (or ``infinite`` is missing).
    """
    try:
        for entry in obj["infinite"]:
            keys = []
            for part in entry.split("."):
                name, *items = part.replace("]", "").split("[")
                keys.append(name)
                keys.extend(int(i) for i in items)
            target = obj
            for key in keys[:-1]:
                target = target[key]
            if isinstance(target, dict) and keys[-1] not in target:
                raise KeyError(keys[-1])  # a listed field must exist
            target[keys[-1]] = math.inf
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        where = path if path is not None else "a report"
        raise ReportFileError(
            f"{where}: the 'infinite' list names a field the file does not have "
            f"({type(exc).__name__}: {exc})"
        ) from None
    return obj


def strict_record(head, body):
    """Return ``head`` then ``body`` made strict, and the ``infinite`` paths of ``body``."""
    infinite = []
    return {**head, **strict(body, infinite), "infinite": infinite}
