# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Soundness simulation of ROC-HT certificates on mechanisms with a known ε.

Used by ``tests/test_certificates.py`` (a fast subset) and
``benchmarks/soundness.py`` (the full battery). Each mechanism maps an identity
to a random embedding in ``n_features >= 16`` dimensions: one coordinate
carries the mechanism's output, the others are standard Gaussian noise that is
identically distributed for every identity. The pipeline's L2 normalisation is
a post-processing of the whole vector, so it cannot increase ε: the true ε of
each pair is known exactly.

The false-certificate trials (``duplicated_rows_trials``,
``per_pair_scoring_trials``, ``larger_of_two_trials``) draw every identity
from one distribution (true ε = 0) and certify with a 1-nearest-neighbour
classifier, which memorises its training rows: any certificate > 0 is false,
and a sound procedure issues them at a rate of at most ``1 - confidence``
(:func:`binomial_margin` gives the allowance for a finite number of runs).
Used by ``tests/test_certificate_simulations.py`` and
``benchmarks/soundness.py --honesty``.
"""

import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import binom
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import Bunch

from skprivacy.auditors._certify import ROCHTCertifier
from skprivacy.auditors._mmd import MMDTVAuditor
from skprivacy.auditors._roc_core import family_confidence
from skprivacy.utils import check_generator, check_legacy_rng, limit_blas_threads

__all__ = [
    "MECHANISMS",
    "OneNearestNeighbour",
    "binomial_margin",
    "duplicated_rows_trials",
    "larger_of_two_trials",
    "make_mechanism_data",
    "per_pair_scoring_trials",
    "run_soundness",
    "true_pair_epsilon",
]

#: Mechanisms of the battery.
MECHANISMS = ("laplace", "randomized_response", "identical")


def true_pair_epsilon(mechanism, epsilon, a, b):
    """Exact ε of the pair of identities ``(a, b)`` (integer codes).

    ``laplace``: identity ``i`` outputs ``i + Laplace(1 / epsilon)`` on the
    signal axis, so a pair is ``|a - b| * epsilon``-DP and no better.
    ``randomized_response``: even identities report bit 1 with probability
    ``e^ε / (1 + e^ε)``, odd ones with ``1 / (1 + e^ε)``; pairs of different
    parity have ε, pairs of equal parity 0. ``identical``: always 0.
    """
    a, b = np.asarray(a), np.asarray(b)
    if mechanism == "laplace":
        return np.abs(a - b) * float(epsilon)
    if mechanism == "randomized_response":
        return np.where((a % 2) != (b % 2), float(epsilon), 0.0)
    if mechanism == "identical":
        return np.zeros(np.broadcast(a, b).shape)
    raise ValueError(f"Unknown mechanism {mechanism!r}; expected one of {MECHANISMS}.")


def make_mechanism_data(
    mechanism,
    epsilon,
    *,
    n_identities=2,
    n_samples=100,
    n_features=16,
    random_state=None,
):
    """Sample ``n_samples`` outputs per identity of a mechanism with known ε.

    Parameters
    ----------
    mechanism : {"laplace", "randomized_response", "identical"}
        See :func:`true_pair_epsilon`.
    epsilon : float
        ε of the mechanism (ignored for ``"identical"``); must be > 0 otherwise.
    n_identities : int, default=2
        Identities (codes ``0 .. n_identities - 1``).
    n_samples : int, default=100
        Rows per identity.
    n_features : int, default=16
        Embedding dimension; coordinate 0 carries the signal.
    random_state : int, RandomState instance, Generator or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_identities * n_samples, n_features)
    ids : ndarray of shape (n_identities * n_samples,)
    """
    if mechanism not in MECHANISMS:
        raise ValueError(
            f"Unknown mechanism {mechanism!r}; expected one of {MECHANISMS}."
        )
    if mechanism != "identical" and not epsilon > 0:
        raise ValueError(f"epsilon must be > 0 for {mechanism!r}; got {epsilon}.")
    rng = check_legacy_rng(random_state)
    ids = np.repeat(np.arange(n_identities), n_samples)
    X = rng.standard_normal((ids.shape[0], n_features))
    if mechanism == "laplace":
        X[:, 0] = ids + rng.laplace(scale=1.0 / epsilon, size=ids.shape[0])
    elif mechanism == "randomized_response":
        p_one = np.where(ids % 2 == 0, 1.0, np.exp(-epsilon))
        p_one = p_one / (1.0 + np.exp(-epsilon))  # e^ε/(1+e^ε) or 1/(1+e^ε)
        bit = rng.random_sample(ids.shape[0]) < p_one
        X[:, 0] = np.where(bit, 3.0, -3.0)
    return X, ids


def _one_trial(mechanism, epsilon, seed, certifier, n_identities, n_samples, d):
    X, ids = make_mechanism_data(
        mechanism,
        epsilon,
        n_identities=n_identities,
        n_samples=n_samples,
        n_features=d,
        random_state=seed,
    )
    est = clone(certifier).set_params(random_state=seed, n_jobs=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, ids)
    r = est.results_
    a, b = r["id_a"].to_numpy(), r["id_b"].to_numpy()
    return pd.DataFrame(
        {
            "trial": seed,
            "id_a": a,
            "id_b": b,
            "true_epsilon": true_pair_epsilon(mechanism, epsilon, a, b),
            "epsilon_lb": r["epsilon"].to_numpy(),
            "ceiling": r["ceiling"].to_numpy(),
        }
    )


def run_soundness(
    mechanism,
    epsilon,
    n_certifications,
    *,
    certifier=None,
    n_identities=2,
    n_samples=100,
    n_features=16,
    random_state=0,
    n_jobs=None,
):
    """Run independent certifications and measure violations and tightness.

    Every certification draws fresh data (seed ``random_state + t``), fits a
    :class:`~skprivacy.auditors.ROCHTCertifier` with its reserved test and
    certifies all pairs simultaneously. A certification *violates* when any
    pair's ε_LB exceeds that pair's true ε.

    Returns
    -------
    report : :class:`~sklearn.utils.Bunch`
        ``results`` (one row per certified pair and trial), ``n_certifications``,
        ``n_violations``, ``violation_rate``, ``allowed_rate`` (``1 -
        confidence``), ``allowed_rate_99`` (99% quantile of
        ``Binomial(n, 1 - confidence) / n``: a sound procedure exceeds it with
        probability <= 1%), ``tightness`` (median ε_LB / true ε over pairs with
        true ε > 0; NaN if none), ``mean_epsilon_lb``, ``median_ceiling``,
        ``certified_fraction`` (pairs with ε_LB > 0).
    """
    certifier = ROCHTCertifier() if certifier is None else certifier
    tables = Parallel(n_jobs=n_jobs)(
        delayed(_one_trial)(
            mechanism,
            epsilon,
            random_state + t,
            certifier,
            n_identities,
            n_samples,
            n_features,
        )
        for t in range(n_certifications)
    )
    results = pd.concat(tables, ignore_index=True)
    # Tiny tolerance: a certificate equal to the truth up to rounding is no violation.
    over = results["epsilon_lb"] > results["true_epsilon"] + 1e-12
    violations = over.groupby(results["trial"]).any()
    n = int(violations.shape[0])
    alpha = 1.0 - certifier.confidence
    positive = results["true_epsilon"] > 0
    ratio = results.loc[positive, "epsilon_lb"] / results.loc[positive, "true_epsilon"]
    return Bunch(
        results=results,
        n_certifications=n,
        n_violations=int(violations.sum()),
        violation_rate=float(violations.mean()),
        allowed_rate=alpha,
        allowed_rate_99=float(binom.ppf(0.99, n, alpha) / n),
        tightness=float(ratio.median()) if len(ratio) else float("nan"),
        mean_epsilon_lb=float(results["epsilon_lb"].mean()),
        median_ceiling=float(results["ceiling"].median()),
        certified_fraction=float((results["epsilon_lb"] > 0).mean()),
    )


# ------------------------------------------------ false certificates at ε = 0
def binomial_margin(alpha, n_runs):
    """Largest false-certificate rate a sound procedure shows over ``n_runs``.

    ``alpha + 3 sqrt(alpha (1 - alpha) / n_runs)``: the one-sided upper bound
    three standard errors above ``alpha`` (a sound procedure exceeds it with
    probability of about 0.1% by the normal approximation).
    """
    return alpha + 3.0 * np.sqrt(alpha * (1.0 - alpha) / n_runs)


class OneNearestNeighbour(ClassifierMixin, BaseEstimator):
    """1-NN in plain numpy: the label of the closest training row.

    The labels of ``KNeighborsClassifier(n_neighbors=1)`` (tested), without
    its input checks and thread pool, whose cost dominates thousands of tiny
    fits. The classifier of the false-certificate simulations: it memorises
    its training rows, so any copy of a training row in the test is found.
    """

    _parameter_constraints: dict = {}

    def fit(self, X, y):
        """Store the training rows and their labels."""
        self.X_ = np.asarray(X, dtype=np.float64)
        self.classes_, self.codes_ = np.unique(y, return_inverse=True)
        return self

    def predict_proba(self, X):
        """One-hot label of the nearest training row (Euclidean)."""
        X = np.asarray(X, dtype=np.float64)
        d2 = (X**2).sum(1)[:, None] - 2.0 * X @ self.X_.T + (self.X_**2).sum(1)[None]
        return np.eye(len(self.classes_))[self.codes_[np.argmin(d2, axis=1)]]


def _one_nn():
    return OneNearestNeighbour()


def _null_rows(rng, n_identities, n_rows, n_features):
    X = rng.standard_normal((n_identities * n_rows, n_features))
    return X, np.repeat(np.arange(n_identities), n_rows)


def _runs(trial, n_runs, random_state):
    # Thousands of tiny fits: one thread per pool (no thread start-up or
    # spinning per fit), warnings about tiny samples silenced.
    with limit_blas_threads(1, user_api=None), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            trial(check_generator(np.random.SeedSequence([random_state, t])))
            for t in range(n_runs)
        ]


def duplicated_rows_trials(
    n_runs, *, classifier=None, n_rows=30, n_features=4, test_size=0.3, random_state=0
):
    """Certify two identities of one distribution with every row present twice.

    Returns the boolean array "a certificate > 0 was issued" (false, as the
    true ε is 0), one entry per run, for a 1-NN classifier by default.
    """
    classifier = _one_nn() if classifier is None else classifier

    def trial(rng):
        X, y = _null_rows(rng, 2, n_rows, n_features)
        cert = ROCHTCertifier(
            clone(classifier),
            test_size=test_size,
            random_state=int(rng.integers(2**31)),
        )
        return cert.fit(np.vstack([X, X]), np.r_[y, y]).score() > 0

    return np.array(_runs(trial, n_runs, random_state))


def per_pair_scoring_trials(
    n_runs,
    *,
    classifier=None,
    n_identities=4,
    n_rows=20,
    n_features=4,
    random_state=0,
):
    """Certify a fitted family one pair's held-out rows at a time; report the max.

    Identities of one distribution (true ε = 0). Returns, per run, whether
    the largest of the per-pair certificates is > 0.
    """
    classifier = _one_nn() if classifier is None else classifier

    def trial(rng):
        X, y = _null_rows(rng, n_identities, n_rows, n_features)
        X_test, y_test = _null_rows(rng, n_identities, n_rows, n_features)
        cert = ROCHTCertifier(
            clone(classifier),
            test_size=None,
            n_pairs=None,
            random_state=int(rng.integers(2**31)),
        ).fit(X, y)
        largest = 0.0
        for a, b in cert.identities_[cert.pairs_].tolist():
            rows = (y_test == a) | (y_test == b)
            largest = max(largest, cert.score(X_test[rows], y_test[rows]))
        return largest > 0

    return np.array(_runs(trial, n_runs, random_state))


def larger_of_two_trials(
    n_runs,
    *,
    confidence=0.95,
    classifier=None,
    n_rows=40,
    n_features=4,
    make=None,
    random_state=0,
):
    """Take the larger of the ROC-HT and MMD-TV certificates, each at the corrected level.

    Both certificates are issued at ``family_confidence(confidence, 2)`` on
    two identities of one distribution. ``make(X, y, seed)``, when given,
    builds the two unfitted certificates instead (e.g. as an audit builds
    them, at its own level); ``classifier`` replaces the ROC-HT one either
    way. Returns a dict of boolean arrays (one entry per run): ``"rocht"``,
    ``"mmd"`` and ``"max"`` (the larger is > 0, a false headline).
    """
    classifier = _one_nn() if classifier is None else classifier
    level = family_confidence(confidence, 2)

    def trial(rng):
        X, y = _null_rows(rng, 2, n_rows, n_features)
        seed = int(rng.integers(2**31))
        if make is None:
            roc = ROCHTCertifier(confidence=level, random_state=seed)
            mmd = MMDTVAuditor(confidence=level, n_pairs=None, random_state=seed)
        else:
            roc, mmd = make(X, y, seed)
        roc.set_params(classifier=clone(classifier))
        return roc.fit(X, y).score() > 0, mmd.fit(X, y).score() > 0

    out = np.array(_runs(trial, n_runs, random_state)).reshape(-1, 2)
    return {"rocht": out[:, 0], "mmd": out[:, 1], "max": out.any(axis=1)}
