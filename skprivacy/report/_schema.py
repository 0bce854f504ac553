# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The JSON Schema of ``summary.json``, shipped with the package.

Its check is :func:`skprivacy.utils._json.schema_problem`, a small JSON Schema
validator for every record the package reads back.
"""

import json
from importlib import resources

__all__ = ["summary_schema"]


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
