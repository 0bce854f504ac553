# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The documentation: API reference, gallery layout, code blocks that run, and text.

The API reference lists every public class and function, each with Examples;
every Python block of the pages runs as copied (doc/check_guide_blocks.py); and
user-facing text speaks of the library, not of how it was made.
"""

import ast
import importlib
import importlib.util
import inspect
import io
import pkgutil
import re
import tokenize
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


# -- every code block of the user guide runs as copied ----------------------------------
def _block_checker():
    """``doc/check_guide_blocks.py``, imported from the checkout."""
    spec = importlib.util.spec_from_file_location(
        "check_guide_blocks", DOC / "check_guide_blocks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CHECKER = _block_checker()
_PAGES_WITH_CODE = [
    p for p in _CHECKER.pages() if any(b.runs for b in _CHECKER.extract_blocks(p))
]


def test_doc_blocks_say_their_language():
    problems = [
        problem
        for page in _CHECKER.pages()
        for problem in _CHECKER.lint(_CHECKER.extract_blocks(page))
    ]
    assert problems == []


def test_guide_pages_have_code():
    names = {p.name for p in _PAGES_WITH_CODE}
    assert {"getting_started.rst", "sanitize.rst", "membership.rst"} <= names


def test_block_extraction_on_a_sample_page(tmp_path):
    page = tmp_path / "page.rst"
    page.write_text(
        "Title\n=====\n\nText::\n\n    shown = 1\n\n"
        ".. code-block:: python\n\n    x = 1\n    y = x + 1\n\n"
        ".. math::\n\n   a = b\n\n"
        "* a bullet ending in a block:\n\n  .. code-block:: bash\n\n"
        "      skprivacy audit\n\n"
        ">>> 1 + 1\n2\n"
    )
    blocks = _CHECKER.extract_blocks(page)
    assert [(b.line, b.language, b.code) for b in blocks] == [
        (6, "", "shown = 1\n"),
        (10, "python", "x = 1\ny = x + 1\n"),
        (21, "bash", "skprivacy audit\n"),
        (23, "pycon", ">>> 1 + 1\n2\n"),
    ]
    assert _CHECKER.lint(blocks) == [
        f"{page}:6: a bare '::' literal block; say its language "
        "(.. code-block:: python, bash or text)"
    ]


def test_block_runner_names_the_failing_block(tmp_path):
    page = tmp_path / "page.rst"
    page.write_text(
        ".. code-block:: python\n\n    x = 1\n\n"
        ".. code-block:: python\n\n    y = x + undefined_name\n"
    )
    ok, n_blocks, _, output = _CHECKER.run_page(page, timeout=60)
    assert (ok, n_blocks) == (False, 2)
    assert f"FAILED {page}:7 (a python block)" in output
    assert "NameError: name 'undefined_name' is not defined" in output


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", _PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(DOC))
)
def test_guide_page_runs_as_copied(page):
    """Every Python block of the page, in order, in a fresh ``python`` process."""
    ok, _, _, output = _CHECKER.run_page(page, timeout=600)
    assert ok, output


# -- user-facing text speaks of the library, not of how it was made ---------------------
ROOT = DOC.parent
_TEXT_RULES = {
    "a ticket number": re.compile(
        r"(?i)\bissues?\s*#?\d+|\btickets?\b|(?<![\w&/#])#\d{2,5}\b|\bthe issue\b"
    ),
    "a design-sheet reference": re.compile(
        r"DESIGN\.md|\bDESIGN\b|(?i:formula sheet|design sheet)"
    ),
    "an INTEGRATE note": re.compile(r"\bINTEGRATE\b"),
    "a machine-load log": re.compile(
        r"(?i)load average|\bload\s*~?\s*\d|quiet[- ]?(machine|window|period|re-?run)"
        r"|\bthe lead\b|development machine|shared,? (heavily loaded )?2-core machine"
    ),
}
# Comments are read by developers only, but notes for integration and references
# to tickets or the design sheet have no place there either.
_COMMENT_RULES = {k: _TEXT_RULES[k] for k in list(_TEXT_RULES)[:3]}


def _findings(text, where, first_line=1, rules=_TEXT_RULES):
    return [
        f"{where}:{first_line + i}: {what}: {line.strip()}"
        for i, line in enumerate(text.splitlines())
        for what, rule in rules.items()
        if rule.search(line)
    ]


def _doc_pages():
    skip = {"_build", "generated", "auto_examples"}
    return [
        p
        for p in DOC.rglob("*.rst")
        if not skip & set(p.parts) and p.name not in _CHECKER.GENERATED
    ]


def _user_facing_files():
    """Pages, what they include, the README and the gallery, read whole."""
    files = set(_doc_pages())
    for page in _doc_pages():
        for target in re.findall(r"\.\. literalinclude:: (\S+)", page.read_text()):
            files.add((page.parent / target).resolve())
    files.add(ROOT / "README.md")
    files.update(EXAMPLES.rglob("*.py"))
    files.update(EXAMPLES.rglob("*.txt"))
    return sorted(files)


def _python_strings_and_comments(path):
    """``(text, line, rules)`` of every string literal and comment of a module."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value, node.lineno, _TEXT_RULES
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.string, token.start[0], _COMMENT_RULES


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_user_facing_text_describes_the_library():
    """No ticket numbers, design-sheet references, INTEGRATE notes or load logs.

    Read: the documentation pages and the files they include, README.md, the
    gallery, every docstring, message and other string literal of the package
    (and its comments for tickets, design-sheet references and INTEGRATE
    notes), and the expected-failure reasons of the common tests. Measured
    figures belong in benchmarks/README.md with the command that produces them.
    """
    found = []
    for path in _user_facing_files():
        found += _findings(path.read_text(), path.relative_to(ROOT))
    modules = sorted((ROOT / "skprivacy").rglob("*.py")) + [
        ROOT / "tests/test_common.py"
    ]
    for path in modules:
        for text, line, rules in _python_strings_and_comments(path):
            found += _findings(text, path.relative_to(ROOT), line, rules)
    assert found == []


def test_text_rules_catch_what_they_should():
    caught = [
        "as issue 16 saw",
        "see ticket 3",
        "fixed in #123",
        "DESIGN.md 'Pair protocol'",
        'DESIGN "shared preprocessing"',
        "# INTEGRATE: area D",
        "at load average 1.0-1.3",
        "load ~40",
        "run it on a quiet machine",
        "quiet-window runs",
        "the lead re-runs the benchmark",
    ]
    passed = [
        "color: #116329;",
        "the pair protocol",
        "a download of 10 MB",
        "integrate.quad over the density",
    ]
    assert [t for t in caught if not _findings(t, "x")] == []
    assert [t for t in passed if _findings(t, "x")] == []
