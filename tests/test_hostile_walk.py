# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Walk every public callable with hostile inputs, by the names of its parameters.

Every name of ``skprivacy.__all__`` and of each subpackage's ``__all__`` is
called (estimators: ``fit``) with valid inputs for the parameters it names
(``X``; identity labels ``y``/``ids``/``groups``; binary ``member``/``y_true``;
``score``/``scores``/``y_score``/``hits``), then once per hostile variant of one
of them: labels with None, NaN or mixed types; NaN or text scores; NaN/inf
rows, rows at 1e+-200 and empty ``X``; ``random_state`` as a numpy Generator.
A finding is a traceback that is not a ``ValueError``/``TypeError`` in the
library's own words (an exception raised inside numpy, pandas or scipy, or a
message about ufuncs, broadcasting, axes...), a hostile label or score accepted
without a word, or NaN in a result whose clean input gave none.

Run as a script to list the findings (``python tests/test_hostile_walk.py``);
the test asserts there are none. The hostile-input table
(``test_hostile_inputs.py``) asserts values case by case.
"""

import importlib
import inspect
import pkgutil
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

import skprivacy
from skprivacy.datasets import make_identity_embeddings

MODULES = ["skprivacy"] + [
    f"skprivacy.{m.name}"
    for m in pkgutil.iter_modules(skprivacy.__path__)
    if not m.name.startswith("_") and m.ispkg
]
INTERNALS = (
    "ufunc",
    "broadcast",
    "axis ",
    "unhashable",
    "ambiguous",
    "bincount",
    "'list' argument",
)
FOREIGN = ("/numpy/", "/pandas/", "/scipy/")

X0, Y0 = make_identity_embeddings(6, 8, 12, random_state=0)
Y0 = np.asarray(Y0)
B8 = np.array([0, 1, 0, 1, 1, 0, 1, 0])
S8 = np.array([0.1, 0.9, 0.3, 0.7, 0.8, 0.2, 0.6, 0.4])

#: Parameter names by role, with the valid value of each role.
ROLES = {
    "X": (("X",), X0),
    "labels": (("y", "ids", "groups", "labels", "identities"), Y0),
    "binary": (("member", "y_true"), B8),
    "scores": (("score", "scores", "y_score", "hits"), S8),
}
#: Settings that keep every walked estimator and function under a second.
FAST = {
    "ROCHTAuditor": {"n_pairs": 3},
    "ROCHTCertifier": {"n_pairs": 3},
    "GaussMechAuditor": {"n_pairs": 3},
    "KDELRAuditor": {"n_pairs": 3},
    "MMDTVAuditor": {"n_pairs": 3, "n_permutations": 9},
    "ISP": {"n_components": 2},
    "LEACE": {"n_components": 2},
    "INLP": {"max_iter": 2},
    "MLPAttacker": {"hidden_layer_sizes": (8,), "max_iter": 20},
    "ReidentificationAuditor": {"n_bootstrap": 20},
    "MembershipGeometry": {"n_permutations": 9, "cv": 2},
    "audit": {"methods": ["gaussmech", "mmdtv"]},
    "kde_lr_alpha_sweep": {"n_pairs": 3},
    "mmd_bandwidth_sweep": {"n_pairs": 3},
    "compare_conditions": {"n_resamples": 50},
    "identity_rate_interval": {"n_resamples": 50},
    "cross_fit_transform": {"cv": 2},
}
#: Hostile inputs accepted on purpose (documented), by (name, variant).
DOCUMENTED = {
    ("l2_normalize", "NaN/inf rows"): "rows as given: NaN rows stay NaN",
    ("row_norms", "NaN/inf rows"): "the norm of a NaN row is NaN, of an inf row inf",
    ("select_features", "NaN/inf rows"): "chooses columns, returns the rows as given",
}


def _hostile(role, value):
    """The hostile variants of one role's valid value."""
    if role == "labels":
        none, nan, mixed = (
            value.astype(object),
            value.astype(float),
            value.astype(object),
        )
        none[3], nan[3], mixed[:8] = None, np.nan, "a"
        return {"None label": none, "NaN label": nan, "mixed labels": mixed}
    if role == "binary":
        none, nan = value.astype(object), value.astype(float)
        none[3], nan[3] = None, np.nan
        return {"None label": none, "NaN label": nan}
    if role == "scores":
        nan = value.astype(float)
        nan[1] = np.nan
        return {"NaN score": nan, "text scores": value.astype(str)}
    bad = value.copy()
    bad[1, 3], bad[20] = np.nan, np.inf
    return {
        "NaN/inf rows": bad,
        "rows x 1e200": value * 1e200,
        "rows x 1e-200": value * 1e-200,
        "empty X": value[:0],
    }


def _public():
    out = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            out.setdefault(name, getattr(module, name))
    return out


def _target(name, obj):
    """``(callable, signature)`` to walk, or None for constants and Displays."""
    if inspect.isclass(obj):
        if not issubclass(obj, BaseEstimator) or not hasattr(obj, "fit"):
            return None
        if inspect.isabstract(obj) or name.startswith("Base"):
            return None

        def fit(*args, **kwargs):
            return obj(**FAST.get(name, {})).fit(*args, **kwargs)

        return fit, inspect.signature(obj.fit)
    if not callable(obj):
        return None
    try:
        return obj, inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def _roles(signature):
    """Role of each parameter the walk can fill; None if a required one is unknown."""
    roles = {}
    for param in signature.parameters.values():
        if param.name in ("self",) or param.kind in (
            param.VAR_POSITIONAL,
            param.VAR_KEYWORD,
        ):
            continue
        role = next((r for r, (names, _) in ROLES.items() if param.name in names), None)
        required = param.default is param.empty
        # One parameter per role (the first, or a required one): an optional
        # second one (``ids`` beside ``y``) would take over from the first.
        if role is not None and (required or role not in roles.values()):
            roles[param.name] = role
        elif param.default is param.empty:
            return None
    return roles or None


def _numbers(value):
    if isinstance(value, pd.DataFrame):
        return value.select_dtypes("number").to_numpy(dtype=float).ravel()
    if isinstance(value, pd.Series):
        return (
            value.to_numpy(dtype=float)
            if pd.api.types.is_numeric_dtype(value)
            else np.empty(0)
        )
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value.astype(float).ravel()
    if isinstance(value, (float, np.floating)):
        return np.array([float(value)])
    if isinstance(value, (list, tuple)):
        parts = [_numbers(v) for v in value]
        return np.concatenate([np.empty(0), *parts])
    if isinstance(value, BaseEstimator):
        attrs = [
            v
            for k, v in vars(value).items()
            if k.endswith("_") and not k.startswith("_")
        ]
        return _numbers(attrs)
    return np.empty(0)


def _call(func, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(**kwargs)


def _foreign(exc):
    """True when the exception was raised inside numpy, pandas or scipy."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and any(part in frames[-1].filename for part in FOREIGN)


def _judge(name, variant, func, kwargs, clean_nan):
    try:
        value = _call(func, kwargs)
    except (ValueError, TypeError) as exc:
        if variant == "Generator":  # accepted wherever an int is
            return f"{name} [Generator]: {type(exc).__name__}: {exc}"
        msg = str(exc).lower()
        if any(word in msg for word in INTERNALS) or _foreign(exc):
            return f"{name} [{variant}]: {type(exc).__name__} from internals: {exc}"
        return None
    except Exception as exc:  # noqa: BLE001 - every other exception is a finding
        return f"{name} [{variant}]: {type(exc).__name__}: {exc}"
    if variant == "Generator" or (name, variant) in DOCUMENTED:
        return None
    if variant in (
        "None label",
        "NaN label",
        "mixed labels",
        "NaN score",
        "text scores",
    ):
        return f"{name} [{variant}]: accepted without a word"
    if not clean_nan and np.isnan(_numbers(value)).any():
        return f"{name} [{variant}]: NaN in the result (none on clean input)"
    return None


def walk():
    """Return ``(findings, walked, skipped)`` over every public callable."""
    findings, walked, skipped = [], [], []
    for name, obj in sorted(_public().items()):
        target = _target(name, obj)
        if target is None:
            continue
        func, signature = target
        roles = _roles(signature)
        if roles is None:
            skipped.append(f"{name}: needs inputs the walk does not make")
            continue
        values = {r: ROLES[r][1] for r in ROLES}
        if {"X", "labels"} & set(roles.values()):  # one entry per row of X
            values["binary"] = (Y0 < 3).astype(int)  # whole identities
            values["scores"] = (Y0 % 2).astype(float)
        base = {p: values[r] for p, r in roles.items()}
        if name in FAST and not inspect.isclass(obj):
            base.update(FAST[name])
        if "random_state" in signature.parameters:
            base["random_state"] = 0
        try:
            clean = _call(func, base)
        except Exception as exc:  # noqa: BLE001 - not walkable with these inputs
            skipped.append(f"{name}: clean inputs raise {type(exc).__name__}: {exc}")
            continue
        walked.append(name)
        clean_nan = bool(np.isnan(_numbers(clean)).any())
        variants = [
            (variant, {**base, param: bad})
            for param, role in roles.items()
            for variant, bad in _hostile(role, values[role]).items()
        ]
        if "random_state" in signature.parameters or (
            inspect.isclass(obj) and "random_state" in obj().get_params()
        ):
            if "random_state" in signature.parameters:
                variants.append(
                    ("Generator", {**base, "random_state": np.random.default_rng(0)})
                )
            else:

                def fit_with_generator(*args, _obj=obj, _name=name, **kwargs):
                    est = _obj(**FAST.get(_name, {}))
                    est.set_params(random_state=np.random.default_rng(0))
                    return est.fit(*args, **kwargs)

                variants.append(("Generator", base, fit_with_generator))
        for entry in variants:
            variant, kwargs = entry[0], entry[1]
            call = entry[2] if len(entry) == 3 else func
            finding = _judge(name, variant, call, kwargs, clean_nan)
            if finding is not None:
                findings.append(finding)
    return findings, walked, skipped


@pytest.mark.slow  # every public callable, about ten calls each
def test_no_public_callable_fails_a_hostile_input():
    findings, walked, _ = walk()
    assert len(walked) > 40
    assert findings == []


if __name__ == "__main__":
    found, done, passed_over = walk()
    print(f"walked {len(done)} callables; {len(found)} finding(s)")
    for line in found:
        print("  FINDING", line)
    for line in passed_over:
        print("  not walked:", line)
