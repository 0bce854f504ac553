# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The JSON Schema of ``summary.json``, shipped with the package, and its check."""

import json
from importlib import resources

__all__ = ["SCHEMA_KEYWORDS", "schema_problem", "summary_schema"]


def summary_schema():
    """Return the JSON Schema (draft 2020-12) that ``summary.json`` validates against.

    Returns
    -------
    schema : dict
        The schema; ``schema["properties"]`` documents every field.

    Examples
    --------
    >>> from skprivacy.report import summary_schema
    >>> summary_schema()["properties"]["schema_version"]["const"]
    '2'
    """
    text = resources.files("skprivacy.report").joinpath("summary.schema.json")
    return json.loads(text.read_text(encoding="utf-8"))


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
    >>> from skprivacy.report._schema import schema_problem, summary_schema
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
