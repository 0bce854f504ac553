# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Saved report folders read back: every damaged file is named, in one line."""

import json
import shutil
import uuid

import pytest

from skprivacy import audit, audit_conditions
from skprivacy.datasets import make_identity_embeddings
from skprivacy.exceptions import ReportFileError
from skprivacy.report import AuditReport, ConditionsReport, summary_schema
from skprivacy.utils._json import SCHEMA_KEYWORDS, schema_problem


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One audit report and one multi-condition report, each saved by two runs."""
    root = tmp_path_factory.mktemp("reports")
    X, ids = make_identity_embeddings(6, 6, 8, random_state=0)
    options = {"methods": ["gaussmech"], "suggest_rank": False}
    conditions = {
        "a": make_identity_embeddings(5, 6, 8, random_state=1),
        "b": make_identity_embeddings(5, 6, 8, random_state=2),
    }
    for report, name in [
        (audit(X, ids, **options), "audit"),
        (audit_conditions(conditions, **options), "conditions"),
    ]:
        report.save(root / name)
        # The same numbers saved by another run (another run_id).
        report.run_id = uuid.uuid4().hex
        report._html = None
        for condition in getattr(report, "reports", {}).values():
            condition.run_id, condition._html = report.run_id, None
        report.save(root / f"{name}_other")
    return root


def _copy(saved, name, tmp_path):
    target = tmp_path / name
    shutil.copytree(saved / name, target)
    return target


def _edit_json(path, change):
    data = json.loads(path.read_text())
    path.write_text(json.dumps(change(data)))


def _truncate(path):
    text = path.read_bytes()
    path.write_bytes(text[: len(text) // 2])


def _not_utf8(path):
    text = path.read_bytes()
    path.write_bytes(text[:40] + b"\xff\xfe" + text[40:])


def _without(key):
    def change(data):
        del data[key]
        return data

    return change


def _with(key, value):
    def change(data):
        data[key] = value
        return data

    return change


def _result_kind(data):
    next(iter(data["results"].values()))["kind"] = "guess"
    return data


# (file, damage, fragment of the message after "<file>: ")
AUDIT_CASES = {
    "truncated summary": ("summary.json", _truncate, "not valid JSON ("),
    "summary not UTF-8": (
        "summary.json",
        _not_utf8,
        "not UTF-8 text (byte 40 is 0xff)",
    ),
    "no infinite key": (
        "summary.json",
        lambda p: _edit_json(p, _without("infinite")),
        "missing the key 'infinite'",
    ),
    "no run_id": (
        "summary.json",
        lambda p: _edit_json(p, _without("run_id")),
        "missing the key 'run_id'",
    ),
    "a list": (
        "summary.json",
        lambda p: p.write_text("[1, 2]"),
        "expected an object, found an array ([1, 2])",
    ),
    "results: 5": (
        "summary.json",
        lambda p: _edit_json(p, _with("results", 5)),
        "results: expected an object, found a number (5)",
    ),
    "unknown result kind": (
        "summary.json",
        lambda p: _edit_json(p, _result_kind),
        'results.gaussmech.kind: a string ("guess") is not one of',
    ),
    "infinite names no field": (
        "summary.json",
        lambda p: _edit_json(p, _with("infinite", ["results.nothing.value"])),
        "the 'infinite' list names a field the file does not have",
    ),
    "provenance without run_id": (
        "provenance.json",
        lambda p: _edit_json(p, _without("run_id")),
        "missing the key 'run_id'",
    ),
    "provenance truncated": ("provenance.json", _truncate, "not valid JSON ("),
    "pairs.csv not UTF-8": ("pairs.csv", _not_utf8, "not a readable CSV table"),
    "report.html not UTF-8": ("report.html", _not_utf8, "not UTF-8 text"),
}


@pytest.mark.parametrize("case", list(AUDIT_CASES))
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_a_damaged_audit_report_names_the_file_and_the_problem(saved, tmp_path, case):
    folder = _copy(saved, "audit", tmp_path)
    name, damage, fragment = AUDIT_CASES[case]
    damage(folder / name)
    with pytest.raises(ReportFileError) as excinfo:
        AuditReport.load(folder)
    message = str(excinfo.value)
    assert isinstance(excinfo.value, ValueError)
    assert "\n" not in message
    assert message.startswith(f"{folder / name}: "), message
    assert fragment in message, message


@pytest.mark.parametrize("name", ["provenance.json", "report.html"])
def test_a_file_of_another_run_is_refused(saved, tmp_path, name):
    folder = _copy(saved, "audit", tmp_path)
    shutil.copy(saved / "audit_other" / name, folder / name)
    run = json.loads((folder / "summary.json").read_text())["run_id"]
    other = json.loads((saved / "audit_other" / "summary.json").read_text())["run_id"]
    assert run != other
    with pytest.raises(ReportFileError) as excinfo:
        AuditReport.load(folder)
    assert str(excinfo.value) == (
        f"{folder / name} is from run {other}, but {folder / 'summary.json'} from "
        f"run {run}: the folder mixes files of two runs"
    )


def test_an_intact_report_loads(saved):
    report = AuditReport.load(saved / "audit")
    summary = json.loads((saved / "audit" / "summary.json").read_text())
    assert report.run_id == summary["run_id"]
    conditions = ConditionsReport.load(saved / "conditions")
    assert list(conditions.reports) == ["a", "b"]


def _condition_summary(index, change):
    def edit(data):
        data["conditions"][index]["summary"] = change(
            data["conditions"][index]["summary"]
        )
        return data

    return edit


CONDITIONS_CASES = {
    "truncated": ("conditions.json", _truncate, "not valid JSON ("),
    "not UTF-8": ("conditions.json", _not_utf8, "not UTF-8 text"),
    "no conditions": (
        "conditions.json",
        lambda p: _edit_json(p, _without("conditions")),
        "missing the key 'conditions'",
    ),
    "a condition's results: 5": (
        "conditions.json",
        lambda p: _edit_json(p, _condition_summary(1, _with("results", 5))),
        "conditions[1].summary.results: expected an object, found a number (5)",
    ),
    "a condition of another run": (
        "conditions.json",
        lambda p: _edit_json(p, _condition_summary(0, _with("run_id", "0" * 32))),
        f"(condition 'a') is from run {'0' * 32}",
    ),
    "table_i.csv not UTF-8": ("table_i.csv", _not_utf8, "not a readable CSV table"),
}


@pytest.mark.parametrize("case", list(CONDITIONS_CASES))
def test_a_damaged_conditions_report_names_the_file(saved, tmp_path, case):
    folder = _copy(saved, "conditions", tmp_path)
    name, damage, fragment = CONDITIONS_CASES[case]
    damage(folder / name)
    with pytest.raises(ReportFileError) as excinfo:
        ConditionsReport.load(folder)
    message = str(excinfo.value)
    assert "\n" not in message
    assert message.startswith(f"{folder / name}"), message
    assert fragment in message, message


def test_a_conditions_report_html_of_another_run_is_refused(saved, tmp_path):
    folder = _copy(saved, "conditions", tmp_path)
    shutil.copy(saved / "conditions_other" / "report.html", folder / "report.html")
    with pytest.raises(ReportFileError, match="the folder mixes files of two runs"):
        ConditionsReport.load(folder)


# -- the schema check agrees with jsonschema ------------------------------------------
def _schema_positions(schema):
    """Yield every dict of ``schema`` in a schema position (not property names)."""
    yield schema
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            for sub in value.values():
                yield from _schema_positions(sub)
        elif key in ("items", "if", "then", "additionalProperties") and isinstance(
            value, dict
        ):
            yield from _schema_positions(value)
        elif key == "allOf":
            for sub in value:
                yield from _schema_positions(sub)


def test_the_schema_uses_only_the_checked_keywords():
    used = {key for sub in _schema_positions(summary_schema()) for key in sub}
    assert used <= SCHEMA_KEYWORDS, used - SCHEMA_KEYWORDS


def test_schema_check_agrees_with_jsonschema(saved, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = summary_schema()
    instances = []
    for case, (name, damage, _) in AUDIT_CASES.items():
        if name != "summary.json" or case in ("truncated summary", "summary not UTF-8"):
            continue
        folder = _copy(saved, "audit", tmp_path / case)
        damage(folder / name)
        instances.append(json.loads((folder / name).read_text()))
    good = json.loads((saved / "audit" / "summary.json").read_text())
    instances.append(good)
    # A skipped result without a reason, and a certificate without a ceiling.
    entry = {**next(iter(good["results"].values())), "skipped": True}
    entry.pop("reason", None)
    instances.append({**good, "results": {"x": entry}})
    entry = {**next(iter(good["results"].values())), "kind": "certificate"}
    entry.pop("ceiling", None)
    instances.append({**good, "results": {"x": entry}})
    for instance in instances:
        try:
            jsonschema.validate(instance, schema)
            valid = True
        except jsonschema.ValidationError:
            valid = False
        assert (schema_problem(instance, schema) is None) == valid, instance
    assert schema_problem(good, schema) is None
