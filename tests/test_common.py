# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's own estimator checks over every public skprivacy estimator."""

import inspect

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import skprivacy

# Checks that cannot apply to an estimator, each with the reason. Keyed by class
# name; passed to ``parametrize_with_checks(expected_failed_checks=...)`` with
# ``xfail_strict=True``, so a check that starts passing is noticed.
EXPECTED_FAILED_CHECKS = {
    "MembershipGeometry": {
        "check_fit_score_takes_y": (
            "MembershipGeometry.score is the held-out membership AUC and needs "
            "membership labels, which this check does not supply (it fits and "
            "scores with identity labels only)."
        ),
        "check_pipeline_consistency": (
            "The check compares score(X, y) of the estimator and of a pipeline, "
            "and MembershipGeometry.score needs membership labels that the check "
            "does not supply."
        ),
    },
}

# Constructor arguments that keep sklearn's checks fast (defaults are sized for
# real audits). Every estimator is also built with no arguments in
# ``test_default_construction``.
CHECK_PARAMS = {
    "ROCHTAuditor": {"n_pairs": 3},
    "ROCHTCertifier": {"n_pairs": 3},
}


def public_estimators():
    """Return the public estimator classes exported by ``skprivacy``."""
    found = []
    for name in skprivacy.__all__:
        obj = getattr(skprivacy, name)
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
            found.append(obj)
    return sorted(found, key=lambda cls: cls.__name__)


def _instances():
    return [cls(**CHECK_PARAMS.get(cls.__name__, {})) for cls in public_estimators()]


def _expected_failed(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(
    _instances(), expected_failed_checks=_expected_failed, xfail_strict=True
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls", public_estimators(), ids=lambda c: c.__name__)
def test_default_construction(cls):
    estimator = cls()
    # Constructors only store parameters: get_params round-trips them unchanged.
    assert cls(**estimator.get_params(deep=False)).get_params(deep=False).keys() == (
        estimator.get_params(deep=False).keys()
    )


def test_expected_failures_name_real_estimators_with_reasons():
    names = {cls.__name__ for cls in public_estimators()}
    for cls_name, checks in EXPECTED_FAILED_CHECKS.items():
        assert cls_name in names, f"{cls_name} is not a public estimator"
        for check_name, reason in checks.items():
            assert check_name.startswith("check_")
            assert len(reason.split()) >= 5 and reason.rstrip().endswith("."), (
                f"{cls_name}.{check_name}: give a full-sentence reason"
            )


def test_all_is_sorted_and_importable():
    names = [n for n in skprivacy.__all__ if n != "__version__"]
    assert names == sorted(names)
    for name in skprivacy.__all__:
        assert hasattr(skprivacy, name)


def _public_objects():
    """Public classes and functions of skprivacy and its public subpackages."""
    import importlib

    seen = {}
    for package in [
        "skprivacy",
        "skprivacy.datasets",
        "skprivacy.utils",
        "skprivacy.auditors",
        "skprivacy.membership",
        "skprivacy.pressure",
        "skprivacy.sanitize",
        "skprivacy.metrics",
        "skprivacy.plotting",
        "skprivacy.report",
        "skprivacy.stats",
        "skprivacy.cli",
    ]:
        try:
            module = importlib.import_module(package)
        except ImportError:
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(seen.items())


# numpydoc codes every public object must satisfy: a docstring (GL08), every
# parameter documented (PR01) and no phantom parameter (PR02), and a runnable
# Examples section (EX01) on classes and functions.
_OBJECT_CODES = {"GL08", "PR01", "PR02", "EX01"}
_METHOD_CODES = {"GL08", "PR01", "PR02"}


@pytest.mark.parametrize(
    "qualname, obj", _public_objects(), ids=[q for q, _ in _public_objects()]
)
def test_numpydoc_docstrings(qualname, obj):
    from numpydoc.validate import validate

    # Exception and warning classes are raised, not called: no Examples needed.
    is_exception = inspect.isclass(obj) and issubclass(obj, BaseException)
    codes = _OBJECT_CODES - {"EX01"} if is_exception else _OBJECT_CODES
    problems = [
        f"{qualname}: {code} {msg}"
        for code, msg in validate(qualname)["errors"]
        if code in codes
    ]
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if name.startswith("_") or not callable(member):
                continue
            method = f"{qualname}.{name}"
            problems += [
                f"{method}: {code} {msg}"
                for code, msg in validate(method)["errors"]
                if code in _METHOD_CODES
            ]
    assert not problems, "\n".join(problems)
