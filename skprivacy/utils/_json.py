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
    "SCHEMA_KEYWORDS",
    "dumps",
    "read_json",
    "read_text",
    "restore_infinite",
    "schema_problem",
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


#: The JSON Schema keywords :func:`schema_problem` implements (the shipped
#: schemas use no other; a test checks it).
SCHEMA_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$defs", "$ref", "title", "description",
        "type", "const", "enum", "minLength", "minimum", "exclusiveMinimum",
        "exclusiveMaximum", "required", "properties", "additionalProperties",
        "items", "allOf", "if", "then",
    }
)  # fmt: skip

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def _is(value, name):
    if name == "null":
        return value is None
    if name in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return name == "number" or float(value).is_integer()
    return isinstance(value, _TYPES[name])


def _shown(value):
    kind = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    text = json.dumps(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return kind.get(type(value), "a number") + f" ({text})"


def _at(where, key):
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else str(key)


def schema_problem(instance, schema, *, root=None, where=""):
    """Return the first way ``instance`` breaks ``schema``, or None if it follows it.

    A small JSON Schema check (the keywords of :data:`SCHEMA_KEYWORDS`), so
    reading a report needs no extra dependency.

    Parameters
    ----------
    instance : object
        Parsed JSON.
    schema : dict
        The schema (``$ref`` resolved against ``root``).
    root : dict or None, default=None
        The document holding ``$defs``; ``schema`` itself if None.
    where : str, default=""
        Path of ``instance`` in the file, for the message.

    Returns
    -------
    problem : str or None
        E.g. ``"results: expected an object, found a number (5)"``.

    Examples
    --------
    >>> from skprivacy.report import summary_schema
    >>> from skprivacy.utils._json import schema_problem
    >>> schema_problem({"schema_version": "2"}, summary_schema())
    "missing the key 'run_id'"
    >>> schema_problem([1, 2], summary_schema())
    'expected an object, found an array ([1, 2])'
    """
    root = schema if root is None else root
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return schema_problem(instance, target, root=root, where=where)
    prefix = f"{where}: " if where else ""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(instance, name) for name in names):
            wanted = " or ".join(("an " if n[0] in "aeio" else "a ") + n for n in names)
            return f"{prefix}expected {wanted}, found {_shown(instance)}"
    if "const" in schema and instance != schema["const"]:
        return f"{prefix}expected {schema['const']!r}, found {_shown(instance)}"
    if "enum" in schema and instance not in schema["enum"]:
        return f"{prefix}{_shown(instance)} is not one of {schema['enum']}"
    if isinstance(instance, str) and len(instance) < schema.get("minLength", 0):
        return f"{prefix}is empty"
    if _is(instance, "number"):
        for key, fails in (
            ("minimum", lambda v, b: v < b),
            ("exclusiveMinimum", lambda v, b: v <= b),
            ("exclusiveMaximum", lambda v, b: v >= b),
        ):
            if key in schema and fails(instance, schema[key]):
                return f"{prefix}{instance!r} is out of range ({key} {schema[key]})"
    if isinstance(instance, dict):
        for key in schema.get("required", ()):
            if key not in instance:
                return f"{prefix}missing the key {key!r}"
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            sub = properties.get(key, extra)
            if sub is False:
                return f"{prefix}unexpected key {key!r}"
            if isinstance(sub, dict):
                problem = schema_problem(value, sub, root=root, where=_at(where, key))
                if problem:
                    return problem
    if isinstance(instance, list) and "items" in schema:
        for i, value in enumerate(instance):
            problem = schema_problem(
                value, schema["items"], root=root, where=_at(where, i)
            )
            if problem:
                return problem
    for sub in schema.get("allOf", ()):
        problem = schema_problem(instance, sub, root=root, where=where)
        if problem:
            return problem
    if "if" in schema and schema_problem(instance, schema["if"], root=root) is None:
        return schema_problem(instance, schema.get("then", {}), root=root, where=where)
    return None
