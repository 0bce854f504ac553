# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's own estimator checks over every public skprivacy estimator."""

import ast
import inspect
import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import skprivacy

# Checks that cannot apply to an estimator, each with the reason. Keyed by class
# name; passed to ``parametrize_with_checks(expected_failed_checks=...)`` with
# ``xfail_strict=True``, so a check that starts passing is noticed.
_SEEN_ROWS = (
    "The check scores the rows it fitted on, and ROCHTCertifier refuses to "
    "certify rows its per-pair tests were trained on (a certificate from "
    "training rows is no certificate); allow_seen_rows=True is tested in "
    "tests/test_certificates.py."
)

EXPECTED_FAILED_CHECKS = {
    "ROCHTCertifier": {
        "check_fit_score_takes_y": _SEEN_ROWS,
        "check_pipeline_consistency": _SEEN_ROWS,
        "check_dataframe_column_names_consistency": _SEEN_ROWS,
    },
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
        "check_dataframe_column_names_consistency": (
            "The check calls score(X, y) with identity labels only, and "
            "MembershipGeometry.score needs membership labels that the check "
            "does not supply; test_membership_geometry_checks_column_names "
            "covers the same contract with membership labels."
        ),
    },
}

# Constructor arguments that keep sklearn's checks fast (defaults are sized for
# real audits). Every estimator is also built with no arguments in
# ``test_default_construction``.
CHECK_PARAMS = {
    "ROCHTAuditor": {"n_pairs": 3},
    "ROCHTCertifier": {"n_pairs": 3},
    "ReidentificationAuditor": {"n_bootstrap": 100},
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


# Checks scikit-learn ships but ``parametrize_with_checks`` does not yield (its
# own test suite runs them separately): parameter validation, column-name
# bookkeeping, and the transformer output API.
EXTRA_CHECKS = [
    "check_param_validation",
    "check_dataframe_column_names_consistency",
    "check_inplace_ensure_writeable",
]
TRANSFORMER_CHECKS = [
    "check_get_feature_names_out_error",
    "check_transformer_get_feature_names_out",
    "check_transformer_get_feature_names_out_pandas",
    "check_set_output_transform",
    "check_set_output_transform_pandas",
    "check_global_output_transform_pandas",
]


def _extra_cases():
    cases = []
    for estimator in _instances():
        names = EXTRA_CHECKS + (
            TRANSFORMER_CHECKS if hasattr(estimator, "transform") else []
        )
        for name in names:
            marks = []
            reason = _expected_failed(estimator).get(name)
            if reason is not None:
                marks = [pytest.mark.xfail(reason=reason, strict=True)]
            cases.append(
                pytest.param(
                    estimator,
                    name,
                    marks=marks,
                    id=f"{type(estimator).__name__}-{name}",
                )
            )
    return cases


@pytest.mark.parametrize("estimator, check_name", _extra_cases())
def test_sklearn_checks_not_yielded_by_parametrize(estimator, check_name):
    from sklearn.base import clone
    from sklearn.utils import estimator_checks

    getattr(estimator_checks, check_name)(type(estimator).__name__, clone(estimator))


def test_every_sklearn_check_is_run():
    """Every check_* of sklearn.utils.estimator_checks is yielded or listed here."""
    from sklearn.utils import estimator_checks
    from sklearn.utils.estimator_checks import _yield_all_checks

    yielded = {
        getattr(check, "func", check).__name__
        for estimator in _instances()
        for check in _yield_all_checks(estimator, legacy=True)
    }
    # Checks that cannot apply: skprivacy has no classifier/regressor/outlier/
    # clusterer API beyond what is yielded, no sample_weight in fit, no array-API
    # or polars support, and check_estimator is the driver, not a check.
    not_applicable = (
        "check_all_zero_sample_weights_error",
        "check_array_api_",
        "check_class_weight_",
        "check_classifier_",
        "check_classifiers_",
        "check_clusterer_",
        "check_clustering",
        "check_estimator",
        "check_estimators_data_not_an_array",
        "check_estimators_nan_inf",
        "check_fit_non_negative",
        "check_is_fitted",
        "check_nonsquare_error",
        "check_outlier",
        "check_regressor",
        "check_regressors_",
        "check_sample_weight",
        "check_sparsify_coefficients",
        "check_transformers_unfitted_stateless",
        "check_global_set_output_transform_polars",
        "check_set_output_transform_polars",
    )
    missing = [
        name
        for name in dir(estimator_checks)
        if name.startswith("check_")
        and name not in yielded
        and name not in EXTRA_CHECKS + TRANSFORMER_CHECKS + ["check_estimator"]
        and not any(
            name.startswith(p) for p in not_applicable if p != "check_estimator"
        )
    ]
    # check_estimator_cloneable is run first by parametrize_with_checks itself.
    assert missing in ([], ["check_estimator_cloneable"]), missing


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


def _scoring_estimators():
    return [cls for cls in public_estimators() if hasattr(cls, "score")]


def _side_effect_cases():
    cases = []
    for cls in _scoring_estimators():
        cases.append(pytest.param(cls, id=cls.__name__))
    return cases


@pytest.mark.parametrize("cls", _side_effect_cases())
def test_score_has_no_side_effects(cls):
    """score(X, y) returns a number and leaves every attribute as fit set it."""
    import warnings

    from joblib import hash as joblib_hash

    from skprivacy.datasets import make_identity_embeddings

    X, ids = make_identity_embeddings(12, 8, 12, random_state=0)
    estimator = cls(**CHECK_PARAMS.get(cls.__name__, {}))
    kwargs = {}
    if cls.__name__ == "MembershipGeometry":
        member = (ids % 2).astype(int)
        kwargs = {"member": member}
    Xtr, idtr, Xte, idte = X[ids < 6], ids[ids < 6], X[ids >= 6], ids[ids >= 6]
    if cls.__name__ == "ROCHTCertifier":
        # A certifier refuses rows it was trained on: score fresh rows of the
        # same identities.
        half = np.arange(len(ids)) % 2 == 0
        Xtr, idtr, Xte, idte = X[half], ids[half], X[~half], ids[~half]
    elif cls.__name__ != "OpenSetVerificationAuditor":
        Xtr, idtr, Xte, idte = X, ids, X, ids
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(Xtr, idtr, **kwargs)
        before = {k: joblib_hash(v) for k, v in vars(estimator).items()}
        value = estimator.score(Xte, idte, **kwargs)
    assert not np.isnan(value)  # inf is a valid epsilon, NaN never is
    after = {k: joblib_hash(v) for k, v in vars(estimator).items()}
    assert after.keys() == before.keys(), set(after) ^ set(before)
    changed = [k for k in before if before[k] != after[k]]
    assert not changed, changed


def test_sweep_helpers_use_public_parameters_only():
    """Each sweep column equals a plain fit with that public parameter set."""
    from sklearn.base import clone

    from skprivacy.auditors import (
        KDELRAuditor,
        MMDTVAuditor,
        kde_lr_alpha_sweep,
        mmd_bandwidth_sweep,
    )
    from skprivacy.datasets import make_identity_embeddings

    X, ids = make_identity_embeddings(6, 10, 8, random_state=0)
    sweep = mmd_bandwidth_sweep(X, ids, scales=[0.5, 2.0], random_state=3)
    for row in sweep.itertuples():
        auditor = MMDTVAuditor(n_permutations=0, random_state=3)
        eps = clone(auditor).set_params(bandwidth_scale=row.bandwidth_scale)
        assert eps.fit(X, ids).results_["epsilon"].max() == row.max_epsilon
    table = kde_lr_alpha_sweep(X, ids, alphas=[0.0, 0.5], random_state=3)
    for alpha in (0.0, 0.5):
        fitted = KDELRAuditor(alpha=alpha, random_state=3).fit(X, ids).results_
        np.testing.assert_array_equal(
            table[f"epsilon_alpha={alpha:g}"], fitted["epsilon"].to_numpy()
        )


# Maths in a docstring that renders wrongly: two backslashes before a command
# (a raw docstring written as if it were not raw: ``r"\\dots"`` is LaTeX's line
# break followed by the word "dots"), or a control character left by a non-raw
# docstring (``"\frac"`` is a form feed followed by "rac").
_BAD_MATHS = re.compile(r"\\\\(?=[A-Za-z])|[\a\b\f\v]")


def _docstring_problems(source, filename):
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            continue
        doc = ast.get_docstring(node, clean=False)
        if doc and _BAD_MATHS.search(doc):
            name = getattr(node, "name", "<module>")
            found = _BAD_MATHS.search(doc).group(0)
            problems.append(f"{filename}: {name}: renders {found!r} wrongly")
    return problems


def test_docs_check_catches_maths_that_renders_wrongly():
    bad_raw = 'def f():\n    r"""Sum :math:`x_1, \\\\dots, x_n`."""\n'
    bad_plain = 'def g():\n    """Ratio :math:`\\frac{a}{b}`."""\n'
    good = 'def h():\n    r"""Sum :math:`x_1, \\dots, x_n`."""\n'
    assert _docstring_problems(bad_raw, "x.py")
    assert _docstring_problems(bad_plain, "x.py")
    assert not _docstring_problems(good, "x.py")


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_docstring_maths_renders():
    import pathlib

    root = pathlib.Path(skprivacy.__file__).parent
    problems = []
    for path in sorted(root.rglob("*.py")):
        problems += _docstring_problems(path.read_text(), str(path.relative_to(root)))
    assert not problems, "\n".join(problems)


def test_membership_geometry_checks_column_names():
    # The contract check_dataframe_column_names_consistency tests, with the
    # membership labels MembershipGeometry needs: names recorded at fit,
    # renamed columns refused, a bare array after a DataFrame warned about.
    import warnings

    import pandas as pd

    from skprivacy import MembershipGeometry
    from skprivacy.datasets import make_identity_embeddings

    X, y = make_identity_embeddings(20, 5, 8, random_state=0)
    member = np.isin(y, np.unique(y)[:10])
    names = [f"e{i}" for i in range(8)]
    df = pd.DataFrame(X, columns=names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MembershipGeometry().fit(df, y, member=member)
    assert list(est.feature_names_in_) == names
    with pytest.raises(ValueError, match="feature names should match"):
        est.decision_function(df.rename(columns={"e0": "zz"}), y)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.decision_function(X, y)
