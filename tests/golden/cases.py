# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The fixed audits whose numbers must not change when code moves.

``python tests/golden/cases.py`` records them into ``tests/golden/*.json.gz``
(run it only on a commit whose numbers are known to be right);
``tests/test_golden.py`` recomputes every case and compares.
"""

import gzip
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def _numbers(value, path, out):
    """Flatten the numeric leaves (numbers and booleans) of a nested result."""
    if isinstance(value, dict):
        for k, v in value.items():
            _numbers(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _numbers(v, f"{path}[{i}]", out)
    elif isinstance(value, bool | np.bool_):
        out[path] = bool(value)
    elif isinstance(value, int | float | np.integer | np.floating):
        v = float(value)
        out[path] = "inf" if math.isinf(v) else ("nan" if math.isnan(v) else v)
    return out


def _frame(df):
    """A DataFrame as {column: list}, floats exact, inf/nan as strings."""
    out = {}
    for col in df.columns:
        vals = []
        for v in df[col].tolist():
            if isinstance(v, float | np.floating):
                v = float(v)
                v = "inf" if math.isinf(v) else ("nan" if math.isnan(v) else v)
            elif isinstance(v, np.integer | np.bool_):
                v = v.item()
            elif v is not None and not isinstance(v, bool | int | float | str):
                v = str(v)
            vals.append(v)
        out[str(col)] = vals
    return out


def _audit_case(loader, protocol):
    import skprivacy

    data = loader()
    report = skprivacy.audit(data.data, data.identity, protocol=protocol)
    return {
        "results": _numbers(report.to_dict()["results"], "", {}),
        "pairs": _frame(report.pairs),
    }


def _conditions_case():
    import skprivacy
    from skprivacy.datasets import load_yale_faces

    conditions = {
        enc: (d.data, d.identity)
        for enc in ("dlib_resnet128", "hog_pca128")
        for d in [load_yale_faces(encoder=enc)]
    }
    report = skprivacy.audit_conditions(conditions, protocol="quick", table_pairs=50)
    return {"table_i": _frame(report.table_i.reset_index())}


def _isp_case():
    from skprivacy import ISP
    from skprivacy.datasets import load_yale_faces

    data = load_yale_faces()
    Z = ISP(n_components=14).fit(data.data, data.identity).transform(data.data)
    return {"transform": np.asarray(Z, dtype=float).ravel().tolist()}


def cases():
    """Case name -> (is it slow, a function computing its numbers)."""
    from skprivacy.datasets import load_cropped_yale_b, load_yale_faces

    return {
        "yale_faces_quick": (False, lambda: _audit_case(load_yale_faces, "quick")),
        "cropped_yale_b_quick": (
            True,
            lambda: _audit_case(load_cropped_yale_b, "quick"),
        ),
        "yale_faces_paper": (True, lambda: _audit_case(load_yale_faces, "paper")),
        "yale_faces_exhaustive": (
            True,
            lambda: _audit_case(load_yale_faces, "exhaustive"),
        ),
        "yale_faces_conditions": (True, _conditions_case),
        "yale_faces_isp_transform": (False, _isp_case),
    }


def compute(name):
    """Recompute one case's numbers (warnings silenced: they are not numbers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cases()[name][1]()


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    names = sys.argv[1:] or list(cases())
    for name in names:
        path = HERE / f"{name}.json.gz"
        text = json.dumps(compute(name), sort_keys=True) + "\n"
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
        print("wrote", path)
