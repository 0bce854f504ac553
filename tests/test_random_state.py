"""``random_state`` everywhere: int, RandomState, Generator or None, and one helper.

Every public estimator and function that takes ``random_state`` (found by
walking the public ``__all__`` lists, so a new one cannot be forgotten) is run
with each kind of value; an int, and a Generator seeded with that int, give the
same numbers when repeated.
"""

import dataclasses
import importlib
import inspect
import pkgutil
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils import check_random_state

import skprivacy
from skprivacy.datasets import make_identity_embeddings, make_membership_embeddings
from skprivacy.utils import (
    check_generator,
    check_legacy_rng,
    seed_from,
    sklearn_random_state,
    spawn_generator,
)

X, IDS = make_identity_embeddings(6, 8, 12, random_state=0)
XM, IDM, MEMBER = make_membership_embeddings(
    n_members=6, n_nonmembers=6, n_samples_per_identity=5, n_features=16, random_state=0
)


def _fitted(est):
    """The fitted attributes of an estimator (its numbers)."""
    return {
        k: v
        for k, v in vars(est).items()
        if k.endswith("_")
        and not k.startswith("_")
        and not isinstance(v, BaseEstimator)
    }


def _fit(est, *args, then=None, **kwargs):
    def run(random_state):
        fitted = clone(est).set_params(random_state=random_state)
        fitted.fit(*args, **kwargs)
        return _fitted(fitted) if then is None else then(fitted)

    return run


def _call(func, *args, **kwargs):
    return lambda random_state: func(*args, random_state=random_state, **kwargs)


def _recipes():
    from skprivacy import (
        INLP,
        GaussMechAuditor,
        GraphAttacker,
        KDELRAuditor,
        MembershipGeometry,
        MLPAttacker,
        MMDTVAuditor,
        OpenSetVerificationAuditor,
        PrototypeAttacker,
        ReidentificationAuditor,
        RenyiPressure,
        RetrievalAttacker,
        ROCHTAuditor,
        ROCHTCertifier,
        audit,
    )
    from skprivacy.auditors import (
        classifier_sensitivity,
        kde_lr_alpha_sweep,
        mmd_bandwidth_sweep,
        residual_gaussianity,
        split_half_controls,
    )
    from skprivacy.membership import prototype_ce
    from skprivacy.pressure import attacker_ladder
    from skprivacy.sanitize import ISP, attribute_probe_accuracy, select_rank
    from skprivacy.stats import compare_conditions, identity_rate_interval, mmd_test
    from skprivacy.utils import identity_pair_table, identity_pairs

    def proba(est):
        return est.predict_proba(X)

    return {
        "GaussMechAuditor": _fit(GaussMechAuditor(n_pairs=5), X, IDS),
        "KDELRAuditor": _fit(KDELRAuditor(n_pairs=3, grid_size=21), X, IDS),
        "MMDTVAuditor": _fit(MMDTVAuditor(n_pairs=5, n_permutations=19), X, IDS),
        "ROCHTAuditor": _fit(ROCHTAuditor(n_pairs=2), X, IDS),
        "ROCHTCertifier": _fit(ROCHTCertifier(n_pairs=2), X, IDS),
        "INLP": _fit(INLP(n_components=2, max_iter=2), X, IDS),
        "OpenSetVerificationAuditor": _fit(OpenSetVerificationAuditor(), X, IDS),
        "RetrievalAttacker": _fit(RetrievalAttacker(), X, IDS, then=proba),
        "ReidentificationAuditor": _fit(
            ReidentificationAuditor(n_bootstrap=50), X, IDS
        ),
        "PrototypeAttacker": _fit(PrototypeAttacker(), X, IDS, then=proba),
        "GraphAttacker": _fit(GraphAttacker(), X, IDS, then=proba),
        "MLPAttacker": _fit(MLPAttacker(hidden_layer_sizes=4), X, IDS, then=proba),
        "RenyiPressure": _fit(
            RenyiPressure(attacker=RetrievalAttacker(), alphas=(2,)), X, IDS
        ),
        "MembershipGeometry": _fit(
            MembershipGeometry(n_permutations=19, cv=2), XM, IDM, member=MEMBER
        ),
        "audit": lambda rs: (
            audit(X, IDS, methods=["gaussmech", "mmdtv"], random_state=rs).results
        ),
        "kde_lr_alpha_sweep": _call(kde_lr_alpha_sweep, X, IDS, n_pairs=2),
        "mmd_bandwidth_sweep": _call(mmd_bandwidth_sweep, X, IDS, n_pairs=4),
        "residual_gaussianity": _call(residual_gaussianity, X, IDS, max_samples=20),
        "split_half_controls": _call(split_half_controls, MMDTVAuditor(), X, IDS),
        "classifier_sensitivity": lambda rs: (
            classifier_sensitivity(
                X,
                IDS,
                RandomForestClassifier(n_estimators=2),
                n_pairs=2,
                random_state=rs,
            ).results
        ),
        "make_identity_embeddings": _call(make_identity_embeddings, 3, 4, 8),
        "make_membership_embeddings": _call(
            make_membership_embeddings,
            n_members=2,
            n_nonmembers=2,
            n_samples_per_identity=3,
            n_features=8,
        ),
        "prototype_ce": _call(prototype_ce, XM, IDM, n_negatives=3),
        "attacker_ladder": lambda rs: {
            k: v.fit(X, IDS).predict_proba(X)
            for k, v in attacker_ladder(random_state=rs).items()
            if k in ("A0 retrieval", "A2 prototype")
        },
        "attribute_probe_accuracy": _call(attribute_probe_accuracy, X, IDS % 2, cv=2),
        "select_rank": lambda rs: (
            select_rank(
                ISP(), X, IDS, target=0.3, cv=2, ranks=[1, 2], random_state=rs
            ).table_
        ),
        "mmd_test": _call(mmd_test, X[:8], X[8:16], n_permutations=49),
        "compare_conditions": _call(
            compare_conditions,
            {
                "a": pd.DataFrame(
                    {"id_a": [0, 0, 1, 2], "id_b": [1, 2, 2, 3], "eps": [1.0, 2, 3, 4]}
                ),
                "b": pd.DataFrame(
                    {"id_a": [0, 0, 1, 2], "id_b": [1, 2, 2, 3], "eps": [2.0, 1, 4, 3]}
                ),
            },
            n_resamples=50,
        ),
        "identity_rate_interval": _call(
            identity_rate_interval, IDS % 3 == 0, IDS, n_resamples=50
        ),
        "identity_pairs": _call(identity_pairs, 30, 10),
        "identity_pair_table": _call(identity_pair_table, np.arange(30) * 7, 10),
        "check_generator": lambda rs: check_generator(rs).random(3),
        "check_legacy_rng": lambda rs: check_legacy_rng(rs).random_sample(3),
        "seed_from": seed_from,
        "sklearn_random_state": lambda rs: check_random_state(
            sklearn_random_state(rs)
        ).random_sample(2),
    }


RECIPES = _recipes()
KINDS = {
    "int": lambda: 7,
    "RandomState": lambda: np.random.RandomState(7),
    "Generator": lambda: np.random.default_rng(7),
    "None": lambda: None,
}


def _public_callables_with_random_state():
    found = set()
    modules = [skprivacy] + [
        importlib.import_module(f"skprivacy.{m.name}")
        for m in pkgutil.iter_modules(skprivacy.__path__)
        if not m.name.startswith("_")
    ]
    for module in modules:
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            if "random_state" in params:
                found.add(name)
    return found


def _same(a, b):
    if isinstance(a, BaseEstimator):
        return _same(_fitted(a), _fitted(b)) and repr(a) == repr(b)
    if dataclasses.is_dataclass(a):
        return _same(dataclasses.asdict(a), dataclasses.asdict(b))
    if isinstance(a, pd.Series):
        return _same(a.to_frame(), b.to_frame())
    if isinstance(a, pd.DataFrame):
        return _same(a.to_dict("list"), b.to_dict("list")) and a.index.equals(b.index)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray | float | np.floating):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind in "fc":
            return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
        return np.array_equal(a, b)
    return a == b


def test_every_public_callable_with_random_state_has_a_recipe():
    assert _public_callables_with_random_state() == set(RECIPES)


def _run(name, random_state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RECIPES[name](random_state)


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_random_state_accepts_every_kind(name, kind):
    _run(name, KINDS[kind]())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_same_seed_same_numbers(name):
    assert _same(_run(name, 7), _run(name, 7))
    assert _same(
        _run(name, np.random.default_rng(7)), _run(name, np.random.default_rng(7))
    )


@pytest.mark.parametrize(
    "name", ["GaussMechAuditor", "MMDTVAuditor", "identity_pairs", "mmd_test"]
)
def test_fast_lane_generator_and_int(name):
    # The fast lane's share of the sweeps above.
    assert _same(_run(name, 7), _run(name, 7))
    assert _same(
        _run(name, np.random.default_rng(7)), _run(name, np.random.default_rng(7))
    )


def test_estimators_validate_generators_and_reject_bad_values():
    from sklearn.utils._param_validation import InvalidParameterError

    from skprivacy import MMDTVAuditor

    est = MMDTVAuditor(n_pairs=3, random_state=np.random.default_rng(0))
    est.fit(X, IDS)
    with pytest.raises(InvalidParameterError, match="random_state"):
        MMDTVAuditor(random_state="seven").fit(X, IDS)


def test_helpers_keep_the_int_streams():
    # The legacy stream of an int is scikit-learn's and numpy's.
    assert np.array_equal(
        check_legacy_rng(3).random_sample(5), check_random_state(3).random_sample(5)
    )
    assert np.array_equal(
        check_generator(3).random(5), np.random.Generator(np.random.PCG64(3)).random(5)
    )
    ss = np.random.SeedSequence(4, spawn_key=(1, 2))
    assert np.array_equal(
        spawn_generator(4, 1, 2).random(5),
        np.random.Generator(np.random.PCG64(ss)).random(5),
    )
    assert sklearn_random_state(5) == 5
    assert seed_from(np.random.default_rng(0)) < 2**31
    assert isinstance(sklearn_random_state(np.random.default_rng(0)), int)


def test_one_helper_module_per_idiom():
    # Random generators are made in utils/_random.py and thread pools limited
    # in utils/_threads.py only; user-facing examples (doctest lines) may
    # construct generators the way users do.
    root = Path(skprivacy.__file__).parent
    pattern = re.compile(
        r"check_random_state|default_rng|threadpool_limits|threadpoolctl"
    )
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel in ("utils/_random.py", "utils/_threads.py"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if pattern.search(code) and ">>>" not in line and "``" not in line:
                offenders.append(f"{rel}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
