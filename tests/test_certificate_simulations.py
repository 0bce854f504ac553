# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""False-certificate rates by simulation, where the true ε is 0.

Every identity is drawn from one distribution, so every pair's true ε is 0 and
any certified ε_LB > 0 is a false certificate. The classifier is 1-NN, which
memorises its training rows: the attack a certificate must survive when rows
repeat. A procedure is sound when its false-certificate rate is at most
``α = 1 - confidence``; over ``n`` runs the observed rate of a sound
procedure exceeds the one-sided binomial margin ``α + 3 sqrt(α (1 - α) / n)``
(:func:`binomial_margin`) with probability of about 0.1%.
"""

import numpy as np
import pytest

from skprivacy import ROCHTCertifier
from skprivacy.auditors import family_confidence
from skprivacy.auditors._certify_sim import (
    OneNearestNeighbour,
    binomial_margin,
    duplicated_rows_trials,
    larger_of_two_trials,
    per_pair_scoring_trials,
)

ALPHA = 0.05


def test_binomial_margin_by_hand():
    assert binomial_margin(0.05, 100) == pytest.approx(0.05 + 3 * (0.0475 / 100) ** 0.5)


def test_one_nearest_neighbour_equals_scikit_learn():
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 2, 40)
    Q = rng.normal(size=(25, 4))
    ours = OneNearestNeighbour().fit(X, y).predict_proba(Q)
    theirs = KNeighborsClassifier(n_neighbors=1).fit(X, y).predict_proba(Q)
    np.testing.assert_array_equal(ours, theirs)


def test_every_row_duplicated_gives_no_false_certificates():
    # (a) Each row present twice: the reserved test holds no copy of a
    # training row, and a copy inside the test counts once.
    false = duplicated_rows_trials(60, random_state=0)
    assert false.mean() <= binomial_margin(ALPHA, len(false)), false.sum()


def test_held_out_copies_of_training_rows_are_refused():
    # (b) A float32 cast, a rescaling, 1e-9 noise and rounding to 6 decimals
    # do not make training rows held-out rows.
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((90, 8)), np.repeat([0, 1, 2], 30)
    fresh = rng.standard_normal((90, 8))
    cert = ROCHTCertifier(KNeighborsClassifier(1), test_size=None).fit(X, y)
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    copies = {
        "float32": X.astype(np.float32),
        "x3": 3.0 * X,
        "noise": X + 1e-9 * rng.standard_normal(X.shape),
        "rounded": np.round(unit, 6),
        "all": np.round(
            3.0 * X.astype(np.float32) + 1e-9 * rng.standard_normal(X.shape), 6
        ),
    }
    for name, copy in copies.items():
        with pytest.raises(ValueError, match="^90 of the 90 rows passed"):
            cert.score(copy, y)
        # Mixed with fresh rows: the count names the copies only.
        with pytest.raises(ValueError, match="^30 of the 120 rows passed"):
            cert.certify(np.vstack([copy[::3], fresh]), np.r_[y[::3], y])
        assert cert.n_seen_rows_dropped_ == 0, name
    with pytest.warns(UserWarning, match="Dropped 90 of 180"):
        table = cert.certify(
            np.vstack([copies["all"], fresh]), np.r_[y, y], allow_seen_rows=True
        )
    assert cert.n_seen_rows_dropped_ == 90
    assert (table["n_pos"] + table["n_neg"] == 60).all()
    assert table.attrs["n_seen_rows_dropped"] == 90


@pytest.mark.slow
def test_pair_by_pair_scoring_keeps_the_family_size():
    # (c) Certifying a fitted family one pair's rows at a time, and reporting
    # the largest, is certified at the family size fixed in fit.
    false = per_pair_scoring_trials(200, random_state=1)
    assert false.mean() <= binomial_margin(ALPHA, len(false)), false.sum()


@pytest.mark.slow
def test_larger_of_two_certificates_holds_jointly():
    # (d) The headline takes the larger of the ROC-HT and MMD-TV certificates;
    # each is issued at family_confidence(0.95, 2) = 0.975, so the larger
    # holds at 0.95 by the union bound.
    assert family_confidence(1.0 - ALPHA, 2) == pytest.approx(0.975)
    false = larger_of_two_trials(200, confidence=1.0 - ALPHA, random_state=2)
    n = len(false["max"])
    assert false["max"].mean() <= binomial_margin(ALPHA, n), false["max"].sum()
    for key in ("rocht", "mmd"):
        assert false[key].mean() <= binomial_margin(ALPHA / 2, n), false[key].sum()


def _as_the_audit_builds(X, y, seed):
    # The registry's factories on the audit's context for a plan of the two
    # certificate methods: each certificate at the audit's own level.
    from skprivacy.report._registry import METHODS, PROTOCOLS, AuditContext
    from skprivacy.utils._validation import validate_audit_data

    data, _, _ = validate_audit_data(X, y)
    ctx = AuditContext(data, dict(PROTOCOLS["quick"]), seed, n_certificates=2)
    return tuple(
        METHODS[name].estimators(ctx)[name][0]
        for name in ("rocht_certificate", "mmdtv_certificate")
    )


@pytest.mark.slow
def test_audit_headline_holds_at_the_joint_level():
    # The audit's headline is the larger of its ROC-HT and MMD-TV
    # certificates; built as the audit builds them (quick protocol, 2
    # certificate methods planned) and certified with a memorising 1-NN on
    # identities of one distribution, a positive headline is false and must
    # appear in at most 1 - 0.95 of the runs (plus the binomial margin).
    from skprivacy import audit
    from skprivacy.datasets import make_identity_embeddings

    X, y = make_identity_embeddings(3, 60, 8, random_state=0)
    planned = audit(
        X, y, methods=["rocht_certificate", "mmdtv_certificate"], suggest_rank=False
    )
    levels = [e["confidence"] for e in planned.results.values()]
    assert levels == [1 - ALPHA / 2] * 2
    roc, mmd = _as_the_audit_builds(X, y, 0)
    assert roc.confidence == mmd.confidence == pytest.approx(1 - ALPHA / 2)

    false = larger_of_two_trials(
        200, make=_as_the_audit_builds, classifier=OneNearestNeighbour(), random_state=3
    )
    n = len(false["max"])
    assert false["max"].mean() <= binomial_margin(ALPHA, n), false["max"].sum()
