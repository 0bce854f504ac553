# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from skprivacy.utils import identity_pairs, n_identity_pairs, pair_rank, pair_unrank


@given(st.integers(2, 300))
def test_unrank_matches_itertools(n):
    expected = np.array(list(itertools.combinations(range(n), 2)))
    assert_array_equal(pair_unrank(np.arange(n * (n - 1) // 2), n), expected)
    assert_array_equal(pair_rank(expected, n), np.arange(len(expected)))


def test_unrank_in_small_chunks_is_the_same():
    n = 57
    k = np.arange(n_identity_pairs(n))[::-1]
    assert_array_equal(pair_unrank(k, n, chunk_size=7), pair_unrank(k, n))


def test_unrank_large_indices_exact():
    n = 5000
    k = np.array([0, 4998, 4999, n * (n - 1) // 2 - 1])
    assert pair_unrank(k, n).tolist() == [[0, 1], [0, 4999], [1, 2], [4998, 4999]]


def test_ordering_is_deterministic_and_covers_every_pair_once():
    n = 40
    pairs = identity_pairs(n, random_state=3)
    assert_array_equal(pairs, identity_pairs(n, random_state=3))
    assert len(pairs) == n_identity_pairs(n) == 780
    assert {tuple(p) for p in pairs.tolist()} == set(
        itertools.combinations(range(n), 2)
    )
    assert not np.array_equal(pairs, identity_pairs(n, random_state=4))


@pytest.mark.parametrize("n_pairs", [1, 10, 500, 779, 780, 10_000])
def test_prefix_stability(n_pairs):
    full = identity_pairs(40, random_state=0)
    prefix = identity_pairs(40, n_pairs, random_state=0)
    assert_array_equal(prefix, full[: min(n_pairs, 780)])


def test_pair_count_for_paper_scale():
    assert n_identity_pairs(400) == 79_800
    assert identity_pairs(400, 500, random_state=0).shape == (500, 2)


@pytest.mark.parametrize("bad", [0, -3])
def test_invalid_prefix(bad):
    with pytest.raises(ValueError, match="n_pairs"):
        identity_pairs(5, bad)


def test_needs_two_identities():
    with pytest.raises(ValueError, match="at least 2 identities"):
        identity_pairs(1)


def test_generator_and_randomstate_seeds():
    a = identity_pairs(10, random_state=np.random.default_rng(1))
    b = identity_pairs(10, random_state=np.random.default_rng(1))
    assert_array_equal(a, b)
    c = identity_pairs(10, random_state=np.random.RandomState(1))
    assert c.shape == (45, 2)


def test_bucketed_shuffle_is_uniform(monkeypatch):
    # Force the large-n path on 4 elements: every element must be equally likely
    # at every position (chi-square over the 4 x 4 position counts).
    from scipy.stats import chi2

    import skprivacy.utils._pairs as pairs_module

    monkeypatch.setattr(pairs_module, "_LARGE", 1)
    counts = np.zeros((4, 4))
    draws = 1500
    for seed in range(draws):
        order = pairs_module._random_permutation(4, np.random.default_rng(seed))
        assert sorted(order.tolist()) == [0, 1, 2, 3]
        counts[np.arange(4), order] += 1
    expected = draws / 4
    statistic = ((counts - expected) ** 2 / expected).sum()
    # Positions are dependent within a draw: (4-1)^2 = 9 degrees of freedom.
    assert statistic < chi2.ppf(0.999, 9)


def test_large_orderings_are_permutations():
    n = 1500  # 1,124,250 pairs: above the bucketed-shuffle threshold
    pairs = identity_pairs(n, random_state=7)
    ranks = pair_rank(pairs, n)
    assert_array_equal(np.sort(ranks), np.arange(n_identity_pairs(n)))
    assert_array_equal(identity_pairs(n, 1000, random_state=7), pairs[:1000])
