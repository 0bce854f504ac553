# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Run every Python code block of the documentation pages as a reader would.

Each page (``doc/*.rst`` and ``doc/user_guide/*.rst``) is run on its own, in a
fresh ``python`` process started in an empty temporary directory: its Python
blocks (``.. code-block:: python`` and doctest ``>>>`` blocks) are executed in
page order in one namespace, as a reader who copies them one after the other
would, so every page must start with its imports and data. Blocks of other
languages (``bash``, ``text``, ...) are shown, not run. A bare ``::`` literal
block is an error: its language must be said.

Usage::

    python doc/check_guide_blocks.py [PAGE.rst ...] [--timeout SECONDS]

With no page, every page is checked. The exit status is 1 when a page fails,
with the page, the block's line and the traceback (whose file name and line
numbers are those of the ``.rst`` page). ``tests/test_docs.py`` runs the same
check in the test suite.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parent

#: Languages whose blocks are executed; a ``>>>`` block is run as a doctest.
RUN_LANGUAGES = {"python", "python3", "py", "pycon", "doctest"}
#: Languages that are shown but never run.
SHOW_LANGUAGES = {"bash", "console", "shell", "sh", "text", "none", "json", "html"}

_DIRECTIVE = re.compile(
    r"^(?P<indent>\s*)\.\.\s+(?P<name>code-block|code|sourcecode|doctest|testcode)"
    r"::\s*(?P<lang>\S*)\s*$"
)
_OTHER_DIRECTIVE = re.compile(r"^\s*\.\.\s+\S+::")
_COMMENT = re.compile(r"^\s*\.\.(\s|$)")


@dataclass
class Block:
    """One code block of a page: 1-based line of its first code line."""

    page: str
    line: int
    language: str
    code: str

    @property
    def runs(self):
        return self.language in RUN_LANGUAGES


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _body(lines, start, parent_indent):
    """Indented body starting at ``start``: (first code line index, code, end)."""
    i = start
    # directive options (":linenos:") and blank lines before the code
    while i < len(lines) and (
        not lines[i].strip()
        or (
            lines[i].strip().startswith(":")
            and _indent(lines[i]) > parent_indent
            and not lines[i].strip().startswith("::")
        )
    ):
        i += 1
    first = i
    body = []
    while i < len(lines) and (
        not lines[i].strip() or _indent(lines[i]) > parent_indent
    ):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return first, "", i
    strip = min(_indent(b) for b in body if b.strip())
    return first, "\n".join(b[strip:] for b in body) + "\n", i


def extract_blocks(path):
    """Every literal/code block of the reStructuredText page ``path``.

    Returns a list of :class:`Block`; a bare ``::`` block gets the language
    ``""`` (unsaid).
    """
    path = Path(path)
    try:
        page = str(path.relative_to(DOC.parent))
    except ValueError:
        page = str(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _DIRECTIVE.match(line)
        if m:
            lang = m["lang"].lower() or ("pycon" if m["name"] == "doctest" else "")
            if m["name"] == "testcode":
                lang = lang or "python"
            first, code, end = _body(lines, i + 1, len(m["indent"]))
            if code:
                blocks.append(Block(page, first + 1, lang, code))
            i = end
            continue
        if _OTHER_DIRECTIVE.match(line) or _COMMENT.match(line):
            # other directives (math, list-table, ...) and comments: skip the body
            _, _, end = _body(lines, i + 1, _indent(line))
            i = max(end, i + 1)
            continue
        if line.rstrip().endswith("::"):
            first, code, end = _body(lines, i + 1, _indent(line))
            if code:
                blocks.append(Block(page, first + 1, "", code))
                i = end
                continue
        if line.lstrip().startswith(">>>"):
            start = i
            while i < len(lines) and lines[i].strip():
                i += 1
            strip = _indent(lines[start])
            code = "\n".join(x[strip:] for x in lines[start:i]) + "\n"
            blocks.append(Block(page, start + 1, "pycon", code))
            continue
        i += 1
    for block in blocks:
        if block.language == "python" and block.code.lstrip().startswith(">>>"):
            block.language = "pycon"
    return blocks


#: Pages written by the documentation build, not by hand.
GENERATED = {"sg_execution_times.rst"}


def pages():
    """The pages checked by default: ``doc/*.rst`` and ``doc/user_guide/*.rst``."""
    found = sorted(DOC.glob("*.rst")) + sorted((DOC / "user_guide").glob("*.rst"))
    return [p for p in found if p.name not in GENERATED]


def lint(blocks):
    """Problems that need no execution: unsaid or unknown block languages."""
    problems = []
    for b in blocks:
        if not b.language:
            problems.append(
                f"{b.page}:{b.line}: a bare '::' literal block; say its language "
                "(.. code-block:: python, bash or text)"
            )
        elif b.language not in RUN_LANGUAGES | SHOW_LANGUAGES:
            problems.append(f"{b.page}:{b.line}: unknown block language {b.language!r}")
    return problems


# Executed by a fresh interpreter: ``python -c _DRIVER blocks.json``.
_DRIVER = r"""
import doctest, json, sys, traceback
blocks = json.load(open(sys.argv[1], encoding="utf-8"))
ns = {"__name__": "__main__"}
flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
for b in blocks:
    where = f"{b['page']}:{b['line']}"
    try:
        if b["language"] in ("pycon", "doctest"):
            parser = doctest.DocTestParser()
            test = parser.get_doctest(b["code"], ns, where, b["page"], b["line"] - 1)
            runner = doctest.DocTestRunner(optionflags=flags)
            runner.run(test, clear_globs=False)
            if runner.failures:
                raise AssertionError(f"{runner.failures} doctest example(s) failed")
        else:
            source = "\n" * (b["line"] - 1) + b["code"]
            exec(compile(source, b["page"], "exec"), ns)
    except BaseException:
        print(f"FAILED {where} (a {b['language']} block)", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
    print(f"ok {where}", flush=True)
"""


def run_page(path, *, timeout=300, python=sys.executable):
    """Run the Python blocks of one page in a fresh process.

    Returns ``(ok, n_blocks, seconds, output)``.
    """
    blocks = [b for b in extract_blocks(path) if b.runs]
    if not blocks:
        return True, 0, 0.0, ""
    env = dict(os.environ, MPLBACKEND="Agg")
    # The reader's package: the checkout this script belongs to comes first.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(DOC.parent), env.get("PYTHONPATH", "")) if p
    )
    with tempfile.TemporaryDirectory(prefix="skprivacy-doc-") as tmp:
        spec = Path(tmp) / "blocks.json"
        spec.write_text(json.dumps([b.__dict__ for b in blocks]), encoding="utf-8")
        work = Path(tmp) / "work"
        work.mkdir()
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                [python, "-c", _DRIVER, str(spec)],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            seconds = time.perf_counter() - start
            out = exc.stdout or ""
            out = out.decode() if isinstance(out, bytes) else out
            done = sum(line.startswith("ok ") for line in out.splitlines())
            return (
                False,
                len(blocks),
                seconds,
                f"timed out after {timeout} s in the block after {done} finished "
                f"block(s) ({blocks[min(done, len(blocks) - 1)].page}:"
                f"{blocks[min(done, len(blocks) - 1)].line})",
            )
        seconds = time.perf_counter() - start
    return proc.returncode == 0, len(blocks), seconds, proc.stdout + proc.stderr


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="default: every page")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per page")
    args = parser.parse_args(argv)
    paths = args.pages or pages()
    failed, n_pages, n_blocks, total = [], 0, 0, 0.0
    for path in paths:
        blocks = extract_blocks(path)
        problems = lint(blocks)
        ok, n, seconds, output = run_page(path, timeout=args.timeout)
        total += seconds
        if n:
            n_pages += 1
            n_blocks += n
        if problems or not ok:
            failed.append(path)
            print("\n".join(problems))
            if not ok:
                print(output.rstrip())
        name = (
            path.resolve().relative_to(DOC)
            if path.resolve().is_relative_to(DOC)
            else path
        )
        status = "FAIL" if path in failed else "ok"
        print(f"{status:4} {name}: {n} block(s), {seconds:.1f} s")
    print(
        f"{n_blocks} Python block(s) on {n_pages} page(s) in {total:.1f} s; "
        f"{len(failed)} page(s) failed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
