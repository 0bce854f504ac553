# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The API reference lists every public class and function, each with Examples."""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import skprivacy

DOC = Path(__file__).resolve().parents[1] / "doc"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _public_objects():
    """``{(module, name): object}`` for every public class/function."""
    modules = ["skprivacy"] + [
        f"skprivacy.{m.name}"
        for m in pkgutil.iter_modules(skprivacy.__path__)
        if m.ispkg and not m.name.startswith("_")
    ]
    out = {}
    for modname in modules:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                out[(modname, name)] = obj
    return out


def _documented():
    """``{"module.name"}`` entries of the autosummary blocks of ``api.rst``."""
    text = (DOC / "api.rst").read_text()
    current, entries, in_block = None, set(), False
    for line in text.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        if line.startswith(".. autosummary::"):
            in_block = True
            continue
        if in_block:
            if line.strip() == "" or line.strip().startswith(":"):
                continue
            if not line.startswith(" "):
                in_block = False
                continue
            entries.add(f"{current}.{line.strip()}")
    return entries


def _resolve(dotted):
    mod, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError):
        return None


def test_every_public_object_is_in_api_reference():
    documented = {id(_resolve(e)) for e in _documented()}
    missing = sorted(
        f"{mod}.{name}"
        for (mod, name), obj in _public_objects().items()
        if id(obj) not in documented
    )
    assert not missing, f"Add these to doc/api.rst: {missing}"


def test_api_reference_entries_exist():
    broken = sorted(e for e in _documented() if _resolve(e) is None)
    assert not broken, f"doc/api.rst lists names that do not exist: {broken}"


@pytest.mark.parametrize(
    "dotted", sorted({f"{m}.{n}" for (m, n) in _public_objects()}), ids=str
)
def test_public_object_has_doctested_examples(dotted):
    obj = _resolve(dotted)
    if inspect.isclass(obj) and issubclass(obj, Exception | Warning):
        pytest.skip("warning and exception classes are documented by their text")
    doc = inspect.getdoc(obj) or ""
    assert re.search(r"^Examples\n-{8}", doc, flags=re.M), f"{dotted}: no Examples"
    examples = doc.split("Examples\n--------", 1)[1]
    assert ">>> " in examples, f"{dotted}: Examples section has no doctest"


def test_gallery_layout():
    assert (EXAMPLES / "README.txt").exists()
    for sub in EXAMPLES.iterdir():
        if sub.is_dir() and any(sub.glob("plot_*.py")):
            readme = sub / "README.txt"
            assert readme.exists(), f"{sub} needs a README.txt for the gallery"
            first = readme.read_text().splitlines()
            assert len(first) >= 2 and set(first[1]) <= set("=-~^"), readme
    for script in EXAMPLES.rglob("plot_*.py"):
        head = script.read_text().lstrip()
        assert head.startswith(('"""', "#")), f"{script}: needs an RST docstring"


def test_every_user_guide_page_in_toctree():
    index = (DOC / "user_guide" / "index.rst").read_text()
    assert "   *" in index  # glob toctree picks up every family's page
