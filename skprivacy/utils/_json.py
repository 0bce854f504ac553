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

__all__ = ["dumps", "read_json", "restore_infinite", "strict", "strict_record"]


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


def strict_record(head, body):
    """Return ``head`` then ``body`` made strict, and the ``infinite`` paths of ``body``."""
    infinite = []
    return {**head, **strict(body, infinite), "infinite": infinite}
