"""Every audit, certificate, transform and report number stays what it was.

The recorded values in ``tests/golden/*.json.gz`` were computed before the
package was restructured (``python tests/golden/cases.py`` writes them); each
case is recomputed here and compared to the last bit. A number that changes on
purpose is re-recorded in the same commit that says why.
"""

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "golden"
_spec = importlib.util.spec_from_file_location("golden_cases", HERE / "cases.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

CASES = [
    pytest.param(name, marks=[pytest.mark.slow] if slow else [])
    for name, (slow, _) in golden.cases().items()
]


def _compare(path, expected, actual, mismatches):
    if isinstance(expected, dict):
        missing = sorted(set(expected) - set(actual))
        mismatches += [f"{path}.{k}: missing" for k in missing]
        for k in expected:
            if k in actual:
                _compare(f"{path}.{k}", expected[k], actual[k], mismatches)
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            mismatches.append(f"{path}: length {len(actual)} != {len(expected)}")
            return
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare(f"{path}[{i}]", e, a, mismatches)
    elif expected != actual:
        mismatches.append(f"{path}: {actual!r} != recorded {expected!r}")


@pytest.mark.parametrize("name", CASES)
def test_numbers_unchanged(name):
    expected = json.loads(gzip.decompress((HERE / f"{name}.json.gz").read_bytes()))
    # Through JSON, as recorded: floats round-trip exactly.
    actual = json.loads(json.dumps(golden.compute(name)))
    mismatches = []
    _compare(name, expected, actual, mismatches)
    assert not mismatches, "\n".join(mismatches[:40])
