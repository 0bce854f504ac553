# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx directive ``.. protocol-table::``: the audit protocols, from the registry.

One row per registered method (``skprivacy.report.METHODS``, in its order),
one column per protocol, each cell the settings the method reads under that
protocol, so the table in the user guide is the registry and never a copy.
"""

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

from skprivacy.report import METHODS, PROTOCOL_HELP


def _value(key, value):
    if value is None:
        return "every pair" if key.endswith("_pairs") else "all"
    if isinstance(value, list | tuple):
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def cell(method, protocol):
    """The settings a method reads under a protocol, in words."""
    settings = method.sizes[protocol]
    text = "; ".join(f"``{k}`` {_value(k, v)}" for k, v in settings.items()) or "--"
    if method.protocols is not None and protocol not in method.protocols:
        return f"not run ({text} when named)"
    return text


def table_lines():
    """The rows of a ``list-table`` of every method under every protocol."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    lines += ["   * - method"] + [f"     - ``{p}``" for p in PROTOCOL_HELP]
    for name, method in METHODS.items():
        lines.append(f"   * - {method.title} (``{name}``)")
        lines += [f"     - {cell(method, p)}" for p in PROTOCOL_HELP]
    return lines


class ProtocolTable(Directive):
    """Insert the protocol table."""

    def run(self):
        container = nodes.container()
        self.state.nested_parse(
            StringList(table_lines()), self.content_offset, container
        )
        return container.children


def setup(app):
    app.add_directive("protocol-table", ProtocolTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
