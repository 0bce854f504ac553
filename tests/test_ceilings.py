# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Certificate ceilings, their inverses and the permutation p-value floor."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.stats import beta

from skprivacy import MMDTVAuditor, ROCHTCertifier
from skprivacy.auditors import (
    mmd_certificate_ceiling,
    mmd_certificate_margin,
    mmd_margin_ceiling,
    mmd_rows_needed,
    permutation_p_value_floor,
    reserved_test_rows,
    rocht_certificate_ceiling,
    rocht_rows_needed,
)
from skprivacy.datasets import make_identity_embeddings


def _rocht_by_hand(n_a, n_b, confidence, n_comparisons):
    """Clopper–Pearson bounds of a perfect test (tp = n_b, fp = 0) via scipy."""
    a = (1 - confidence) / (2 * n_comparisons)
    tpr_lo = beta.ppf(a, n_b, 1)  # lower bound, n_b successes of n_b
    fpr_hi = beta.ppf(1 - a, 1, n_a)  # upper bound, 0 successes of n_a
    return max(0.0, math.log(tpr_lo / fpr_hi), math.log((1 - fpr_hi) / (1 - tpr_lo)))


@pytest.mark.parametrize("n_a, n_b", [(1, 1), (6, 6), (10, 30), (30, 10), (100, 100)])
@pytest.mark.parametrize("confidence, n_comparisons", [(0.95, 1), (0.9, 40), (0.99, 7)])
def test_rocht_ceiling_equals_clopper_pearson_with_zero_errors(
    n_a, n_b, confidence, n_comparisons
):
    got = rocht_certificate_ceiling(
        n_a, n_b, confidence=confidence, n_comparisons=n_comparisons
    )
    want = _rocht_by_hand(n_a, n_b, confidence, n_comparisons)
    assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    # Closed form of the equal-size case: logit(a^(1/n)).
    a = (1 - confidence) / (2 * n_comparisons)
    t = a ** (1 / n_a)
    equal = rocht_certificate_ceiling(
        n_a, n_a, confidence=confidence, n_comparisons=n_comparisons
    )
    assert_allclose(equal, max(0.0, math.log(t / (1 - t))), rtol=1e-12, atol=1e-14)


def test_rocht_ceiling_is_vectorised_and_symmetric():
    got = rocht_certificate_ceiling([10, 40, 100], [40, 10, 100], n_comparisons=3)
    want = [_rocht_by_hand(a, b, 0.95, 3) for a, b in [(10, 40), (40, 10), (100, 100)]]
    assert_allclose(got, want, rtol=1e-12)
    assert_allclose(got[0], got[1], rtol=1e-12)


def test_rocht_ceiling_matches_the_certifier():
    X, ids = make_identity_embeddings(5, 23, 8, random_state=0)
    cert = ROCHTCertifier(n_pairs=None, test_size=0.3, random_state=0).fit(X, ids)
    res = cert.results_
    got = rocht_certificate_ceiling(
        res["n_neg"], res["n_pos"], n_comparisons=cert.n_comparisons_
    )
    assert_allclose(got, res["ceiling"], rtol=1e-12)
    # Its reserved rows follow reserved_test_rows.
    assert set(res["n_pos"]) | set(res["n_neg"]) == {reserved_test_rows(23, 0.3)}


@pytest.mark.parametrize("test_size", [0.1, 0.25, 0.3, 0.5, 0.9])
def test_reserved_test_rows_by_hand(test_size):
    counts = np.arange(1, 60)
    want = [min(max(math.ceil(test_size * n), 1), n - 1) for n in counts]
    assert reserved_test_rows(counts, test_size).tolist() == want
    assert reserved_test_rows(17, test_size) == want[16]


@given(
    epsilon=st.floats(0, 6),
    confidence=st.sampled_from([0.9, 0.95, 0.99]),
    n_comparisons=st.integers(1, 5000),
    test_size=st.sampled_from([None, 0.2, 0.3, 0.5]),
)
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_rocht_rows_needed_is_the_smallest_count(
    epsilon, confidence, n_comparisons, test_size
):
    kw = {"confidence": confidence, "n_comparisons": n_comparisons}
    n = rocht_rows_needed(epsilon, test_size=test_size, **kw)

    def ceiling(rows):
        n_test = rows if test_size is None else reserved_test_rows(rows, test_size)
        return _rocht_by_hand(n_test, n_test, confidence, n_comparisons)

    assert ceiling(n) > epsilon
    if n > (1 if test_size is None else 2):
        assert ceiling(n - 1) <= epsilon + 1e-12


def test_rocht_rows_needed_closed_form():
    # n > ln(a) / ln(sigmoid(eps)), a = 0.05 / 2.
    for eps in [0.5, 1.0, 2.0, 3.0]:
        bound = math.log(0.025) / math.log(1 / (1 + math.exp(-eps)))
        assert rocht_rows_needed(eps) == math.floor(bound) + 1


def _margin_by_hand(n_a, n_b, confidence, k_pairs, g):
    k = min(n_a // 2, n_b // 2)
    return math.sqrt(8 * math.log(g * k_pairs / (1 - confidence)) / k)


@pytest.mark.parametrize("n_a, n_b", [(2, 2), (9, 30), (100, 100), (400, 51)])
@pytest.mark.parametrize("confidence, k_pairs, g", [(0.95, 1, 1), (0.9, 45, 37)])
def test_mmd_margin_and_ceiling_by_hand(n_a, n_b, confidence, k_pairs, g):
    kw = {"confidence": confidence, "n_comparisons": k_pairs, "n_bandwidths": g}
    t = _margin_by_hand(n_a, n_b, confidence, k_pairs, g)
    assert_allclose(mmd_certificate_margin(n_a, n_b, **kw), t, rtol=1e-14)
    want = 2 * math.atanh(math.sqrt(2 - t) / 2) if t < 2 else 0.0
    assert_allclose(mmd_certificate_ceiling(n_a, n_b, **kw), want, rtol=1e-12)
    # González map: 2 artanh(MMD / sqrt 2).
    want_g = 2 * math.atanh(math.sqrt(2 - t) / math.sqrt(2)) if t < 2 else 0.0
    got_g = mmd_certificate_ceiling(n_a, n_b, bound="gonzalez", **kw)
    assert_allclose(got_g, want_g, rtol=1e-12)


def test_mmd_margin_matches_the_auditor():
    X, ids = make_identity_embeddings(6, 30, 8, random_state=1)
    est = MMDTVAuditor(n_pairs=None, confidence=0.9, random_state=0).fit(X, ids)
    res = est.results_
    got = mmd_certificate_margin(
        30, 30, confidence=0.9, n_comparisons=len(res), n_bandwidths=37
    )
    assert_allclose(res["mmd2_margin"], got, rtol=0)
    assert_allclose(
        mmd_margin_ceiling(res["mmd2_margin"]),
        mmd_certificate_ceiling(
            30, 30, confidence=0.9, n_comparisons=len(res), n_bandwidths=37
        ),
        rtol=0,
    )
    assert (res["epsilon_lower"] <= mmd_margin_ceiling(res["mmd2_margin"])).all()


@given(
    epsilon=st.floats(0, 1.7),
    n_comparisons=st.integers(1, 80000),
    n_bandwidths=st.sampled_from([1, 37]),
)
def test_mmd_rows_needed_is_the_smallest_even_count(
    epsilon, n_comparisons, n_bandwidths
):
    n = mmd_rows_needed(epsilon, n_comparisons=n_comparisons, n_bandwidths=n_bandwidths)
    assert n % 2 == 0

    def ceiling(rows):
        t = _margin_by_hand(rows, rows, 0.95, n_comparisons, n_bandwidths)
        return 2 * math.atanh(math.sqrt(2 - t) / 2) if t < 2 else 0.0

    assert ceiling(n) > epsilon
    assert ceiling(n - 1) <= epsilon + 1e-12  # odd n - 1 has the k of n - 2


def test_mmd_rows_needed_refuses_the_unreachable():
    with pytest.raises(ValueError, match="never reaches 1.763"):
        mmd_rows_needed(1.8)


def _exact_floor(n_a, n_b):
    """Share of all splits whose |mean difference| reaches the separated one."""
    pooled = np.r_[np.zeros(n_a), np.ones(n_b)]  # perfectly separated samples
    observed = abs(pooled[:n_a].mean() - pooled[n_a:].mean())
    hits = total = 0
    for idx in itertools.combinations(range(n_a + n_b), n_a):
        mask = np.zeros(n_a + n_b, bool)
        mask[list(idx)] = True
        stat = abs(pooled[mask].mean() - pooled[~mask].mean())
        hits += stat >= observed - 1e-12
        total += 1
    return hits / total


@pytest.mark.parametrize("n_a, n_b", [(1, 1), (2, 2), (2, 3), (3, 3), (3, 5), (4, 4)])
def test_permutation_floor_equals_exact_enumeration(n_a, n_b):
    assert_allclose(permutation_p_value_floor(n_a, n_b), _exact_floor(n_a, n_b))


def test_permutation_floor_by_comb():
    a = np.array([5, 10, 50, 100, 600])
    b = np.array([5, 12, 50, 101, 600])
    want = [(2 if x == y else 1) / math.comb(x + y, x) for x, y in zip(a, b)]
    got = permutation_p_value_floor(a, b)
    assert got.dtype == np.float64
    assert got.tolist() == want  # the last is 0.0 (underflow), never an overflow
    assert got[-1] == 0.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: reserved_test_rows([3, 0], 0.3), "n_rows must hold whole row counts"),
        (lambda: rocht_certificate_ceiling(0, 5), "n_test_a must hold whole"),
        (lambda: mmd_certificate_margin(5, [4, 1.5]), "n_rows_b must hold whole"),
        (lambda: permutation_p_value_floor(3, -1), "n_b must hold whole"),
        (lambda: rocht_rows_needed(-1.0), "epsilon"),
        (lambda: mmd_certificate_ceiling(5, 5, confidence=1.0), "confidence"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("n_rows", [2, 3, 4, 6, 10, 20, 40])
def test_why_no_readings_agree_with_the_ceilings(n_rows):
    """A reason is given exactly when the best pair's ceiling (or floor) rules it out."""
    from skprivacy.auditors._readings import (
        why_no_mmd_certificate,
        why_no_permutation_rejection,
        why_no_rocht_certificate,
        why_no_split_half_control,
    )

    counts = np.array([2, n_rows, n_rows - 1, n_rows])
    reserved = min(max(math.ceil(0.3 * n_rows), 1), n_rows - 1)  # by hand, as above
    rocht = _rocht_by_hand(reserved, reserved, 0.95, 6)
    rocht_reason = why_no_rocht_certificate(
        counts, test_size=0.3, confidence=0.95, n_pairs=6
    )
    assert (rocht_reason is None) == (rocht > 0)
    # The certificate's median-heuristic grid: 37 bandwidths, 2^(-7) to 2^2.
    family = {"confidence": 0.9, "n_comparisons": 6, "n_bandwidths": 37}
    mmd = mmd_certificate_ceiling(n_rows, n_rows, **family)
    mmd_reason = why_no_mmd_certificate(counts, confidence=0.9, n_pairs=6)
    assert (mmd_reason is None) == (mmd > 0)
    floor = 1 / math.comb(2 * n_rows, n_rows)  # two extreme splits, mirrored
    perm_reason = why_no_permutation_rejection(counts)
    assert (perm_reason is None) == (2 * floor < 0.05)
    assert (why_no_split_half_control(counts) is None) == (n_rows >= 4)
