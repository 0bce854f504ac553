# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""RenyiPressure.vrpi_ci_: query-level bootstrap interval of the score."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import binom

from skprivacy.datasets import make_identity_embeddings
from skprivacy.pressure import RenyiPressure


def _identities(rng, n_ids, n_rows, d, noise=2.0):
    centres = rng.normal(size=(n_ids, d))
    y = np.repeat(np.arange(n_ids), n_rows)
    return centres, y, centres[y] + noise * rng.normal(size=(y.size, d))


def test_interval_is_seeded_and_brackets_the_score():
    X, ids = make_identity_embeddings(12, 15, 8, noise=2.0, random_state=0)
    a = RenyiPressure(random_state=0, n_resamples=300).fit(X, ids)
    b = RenyiPressure(random_state=0, n_resamples=300).fit(X, ids)
    assert a.vrpi_ci_ == b.vrpi_ci_
    low, high = a.vrpi_ci_
    assert low < a.score() < high
    none = RenyiPressure(random_state=0, n_resamples=0).fit(X, ids)
    assert all(math.isnan(v) for v in none.vrpi_ci_)
    assert none.score() == a.score()  # the interval leaves the audit unchanged


@pytest.mark.parametrize("params", [{"n_repeats": 3}, {"open_world": 0.3}])
def test_interval_with_repeats_and_open_world(params):
    X, ids = make_identity_embeddings(15, 12, 8, noise=2.0, random_state=1)
    est = RenyiPressure(random_state=0, n_resamples=200, **params).fit(X, ids)
    low, high = est.vrpi_ci_
    assert low < est.score() < high


def test_interval_parameters_are_validated():
    X, ids = make_identity_embeddings(5, 6, 4, random_state=0)
    with pytest.raises(ValueError, match="confidence"):
        RenyiPressure(confidence=1.5).fit(X, ids)
    with pytest.raises(ValueError, match="n_resamples"):
        RenyiPressure(n_resamples=-1).fit(X, ids)


@pytest.mark.slow
def test_interval_covers_the_attackers_pressure_on_fresh_queries():
    # The estimand: vRPI_2 of the fitted attacker over the population of
    # queries of these identities, measured on 200 fresh rows per identity.
    rng = np.random.default_rng(0)
    runs, covered = 80, 0
    for r in range(runs):
        centres, y, X = _identities(rng, 15, 12, 8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = RenyiPressure(random_state=r, n_resamples=400).fit(X, y)
        y_new = np.repeat(np.arange(15), 200)
        X_new = centres[y_new] + 2.0 * rng.normal(size=(y_new.size, 8))
        truth = est.score(X_new, y_new)
        covered += bool(est.vrpi_ci_[0] <= truth <= est.vrpi_ci_[1])
    assert covered / runs >= 1 - binom.ppf(0.99, runs, 0.05) / runs
