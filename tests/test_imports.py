# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""One import direction: the package's import graph, read with ``ast``.

cli -> report -> {sanitize, plotting} -> {auditors, pressure, membership,
datasets, metrics, stats} -> _kernels -> utils -> exceptions, with no cycle;
no import of another subpackage's private name; imports inside functions
only for optional dependencies and in the command line, each with a reason;
no module-level switch that functions mutate.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "skprivacy"

#: Layer of each subpackage: a module may import its own layer (if the
#: package graph stays acyclic) and the layers below, never above.
LAYERS = {
    "skprivacy.__main__": 8,
    "skprivacy.cli": 7,
    "skprivacy.report": 6,
    "skprivacy.sanitize": 5,
    "skprivacy.plotting": 5,
    "skprivacy.auditors": 4,
    "skprivacy.pressure": 4,
    "skprivacy.membership": 4,
    "skprivacy.datasets": 4,
    "skprivacy.metrics": 4,
    "skprivacy.stats": 4,
    "skprivacy._kernels": 3,
    "skprivacy.utils": 2,
    "skprivacy.exceptions": 1,
    # The package itself holds __version__ and resolves its public names
    # lazily (no import statement); _lazy is that mechanism.
    "skprivacy": 0,
    "skprivacy._lazy": 0,
}
#: Imports a function may defer: optional dependencies.
OPTIONAL = ("matplotlib", "dask", "distributed", "pyarrow")
#: Private names of another subpackage that may be imported: scikit-learn's
#: own private helpers, re-exported by the one module that imports sklearn's
#: private API (so that only it changes if sklearn moves them).
SKLEARN_SHIM = "skprivacy.utils._sklearn"


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _package(module):
    """The subpackage (or top-level module) a module belongs to."""
    parts = module.split(".")
    name = ".".join(parts[:2])
    return name if name in LAYERS else "skprivacy"


def _resolve(importer, node):
    """Yield ``(module, name or None)`` for each skprivacy import of ``node``."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "skprivacy":
                yield alias.name, None
        return
    base = node.module or ""  # absolute: ruff's TID252 forbids relative imports
    if node.level or base.split(".")[0] != "skprivacy":
        return
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        yield (sub, None) if sub in MODULES else (base, alias.name)


class _Imports(ast.NodeVisitor):
    """Every import of a module, marked function-level or not."""

    def __init__(self):
        self.found = []  # (node, in_function)
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node):
        self.found.append((node, self.depth > 0))

    visit_ImportFrom = visit_Import


def _lazy_origins(tree):
    """Modules named by a lazy-attribute map (``_ORIGINS = {...}``)."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", None) == "_ORIGINS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            yield from (v.value for v in node.value.values)


def _graph():
    """``{module: [(imported module, name, in_function, node)]}`` of skprivacy."""
    out, sources = {}, {}
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        sources[module] = text.splitlines()
        visitor = _Imports()
        visitor.visit(tree)
        edges = []
        for node, in_function in visitor.found:
            for target, name in _resolve(module, node):
                edges.append((target, name, in_function, node))
        edges += [(m, None, False, None) for m in _lazy_origins(tree)]
        out[module] = edges
    return out, sources


GRAPH, SOURCES = _graph()


def _cycles(edges):
    """Return the strongly connected components with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _edges(all_imports):
    """Module graph: import-time edges only, or every import (also in functions)."""
    return {
        m: {
            t
            for t, _, in_function, _ in edges
            if t != m and (all_imports or not in_function)
        }
        for m, edges in GRAPH.items()
    }


def _package_edges():
    out = {}
    for m, edges in GRAPH.items():
        pm = _package(m)
        out.setdefault(pm, set()).update(
            _package(t) for t, _, _, _ in edges if _package(t) != pm
        )
    return out


def _private_imports():
    return [
        f"{m} imports {name} from {t}"
        for m, edges in GRAPH.items()
        for t, name, _, _ in edges
        if name is not None
        and name.startswith("_")
        and not name.startswith("__")
        and _package(t) != _package(m)
        and t != SKLEARN_SHIM
    ]


def _has_reason(module, node):
    """A comment on the import's line, or on the line above its import block."""
    lines = SOURCES[module]
    if "#" in lines[node.lineno - 1]:
        return True
    i = node.lineno - 2
    while i >= 0 and re.match(r"\s*(import|from)\s", lines[i]):
        i -= 1
    return i >= 0 and lines[i].strip().startswith("#")


def _function_level_imports():
    bad = []
    for module, path in MODULES.items():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        for node, in_function in visitor.found:
            if not in_function:
                continue
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            optional = all(n.split(".")[0] in OPTIONAL for n in names)
            allowed = optional or module.startswith("skprivacy.cli")
            if not allowed or not _has_reason(module, node):
                why = "not allowed" if not allowed else "no reason comment"
                bad.append(f"{module}:{node.lineno} {', '.join(names)} ({why})")
    return bad


def _mutable(value):
    if isinstance(value, ast.Dict | ast.List | ast.Set):
        return True
    func = getattr(value, "func", None)
    return getattr(func, "id", getattr(func, "attr", None)) in {
        "dict",
        "list",
        "set",
        "SimpleNamespace",
    }


def _switches():
    """Module-level mutable state that functions change: ``global`` and ``*STATE*``."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{module}:{n.lineno} global {', '.join(n.names)}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Global)
        ]
        for node in tree.body:
            if not isinstance(node, ast.Assign) or not _mutable(node.value):
                continue
            for target in node.targets:
                name = getattr(target, "id", "")
                if "STATE" in name.upper() or "SWITCH" in name.upper():
                    found.append(f"{module}:{node.lineno} {name}")
    return found


def test_no_import_time_cycle():
    assert _cycles(_edges(all_imports=False)) == []


def test_no_package_level_cycle():
    assert _cycles(_package_edges()) == []


def test_imports_follow_the_layers():
    upward = [
        f"{m} imports {t}"
        for m, edges in GRAPH.items()
        for t, _, _, node in edges
        if node is not None and LAYERS[_package(t)] > LAYERS[_package(m)]
    ]
    assert not upward, upward


def test_no_cycle_even_through_deferred_imports():
    assert [" ".join(c) for c in _cycles(_edges(all_imports=True))] == []


def test_no_private_name_of_another_subpackage():
    assert _private_imports() == []


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_function_level_imports_only_where_allowed_and_explained():
    assert _function_level_imports() == []


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_no_module_level_switch():
    assert _switches() == []


# -- start-up: the command line's parser loads nothing heavy --------------------------
def test_help_imports_no_scientific_stack():
    code = (
        "import sys\n"
        "from skprivacy.cli._main import _build_parser\n"
        "_build_parser().format_help()\n"
        "heavy = [m for m in ('numpy', 'pandas', 'sklearn', 'scipy', 'matplotlib')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_light_listings_equal_the_library():
    from skprivacy.cli._sanitize import FORMATS, SOURCE_ROW
    from skprivacy.report import METHOD_NAMES, METHODS
    from skprivacy.sanitize import _file

    assert tuple(METHODS) == METHOD_NAMES
    assert FORMATS == tuple(_file.FORMATS) and SOURCE_ROW == _file.SOURCE_ROW


def test_lazy_package_names():
    import skprivacy

    assert set(skprivacy.__all__) <= set(dir(skprivacy))
    assert all(getattr(skprivacy, name) is not None for name in skprivacy.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        skprivacy.nope  # noqa: B018
