# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from scipy.stats import chi2

from skprivacy.utils import identity_pairs, n_identity_pairs, pair_rank, pair_unrank


@pytest.mark.slow
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


@given(st.integers(2, 70), st.integers(0, 2**32))
def test_every_pair_exactly_once_for_any_size_and_seed(n, seed):
    pairs = identity_pairs(n, random_state=seed)
    assert np.all(pairs[:, 0] < pairs[:, 1])
    assert_array_equal(np.sort(pair_rank(pairs, n)), np.arange(n_identity_pairs(n)))


@pytest.mark.slow
def test_every_pair_equally_likely_at_every_position():
    # Over seeds, position t holds each of the 10 pairs of 5 identities with
    # probability 1/10: chi-square over the 10 x 10 (position, pair) counts.
    # The positions of one draw are dependent, so the statistic has
    # (10 - 1)^2 degrees of freedom.
    n, draws = 5, 3000
    counts = np.zeros((10, 10))
    joint = np.zeros((10, 10))
    for seed in range(draws):
        ranks = pair_rank(identity_pairs(n, random_state=seed), n)
        counts[np.arange(10), ranks] += 1
        joint[ranks[0], ranks[1]] += 1
    expected = draws / 10
    statistic = ((counts - expected) ** 2 / expected).sum()
    assert statistic < chi2.ppf(0.999, 81)
    # The first two positions jointly: each of the 90 ordered pairs of
    # distinct pairs equally likely (89 degrees of freedom).
    off = ~np.eye(10, dtype=bool)
    expected = draws / 90
    statistic = ((joint[off] - expected) ** 2 / expected).sum()
    assert statistic < chi2.ppf(0.999, 89)


def test_prefix_of_a_large_ordering_is_spread_uniformly():
    # The first 20,000 positions of 3,000 identities (4.5 million pairs):
    # their lexicographic ranks are uniform on [0, C(n, 2)) (chi-square over
    # 40 equal bins) and the identities appear about equally often.
    n, m = 3000, 20_000
    ranks = pair_rank(identity_pairs(n, m, random_state=11), n)
    assert len(np.unique(ranks)) == m
    bins = np.bincount(ranks * 40 // n_identity_pairs(n), minlength=40)
    statistic = ((bins - m / 40) ** 2 / (m / 40)).sum()
    assert statistic < chi2.ppf(0.999, 39)


def test_many_identities_few_pairs():
    # Time and memory follow n_pairs, not C(n, 2) (about 5e9 pairs here).
    n = 100_000
    pairs = identity_pairs(n, 500, random_state=0)
    assert pairs.shape == (500, 2)
    assert np.all((0 <= pairs[:, 0]) & (pairs[:, 0] < pairs[:, 1]) & (pairs[:, 1] < n))
    assert len(np.unique(pair_rank(pairs, n))) == 500
    assert_array_equal(identity_pairs(n, 20, random_state=0), pairs[:20])


def test_large_orderings_are_permutations():
    n = 1500  # 1,124,250 pairs: several chunks of the permutation
    pairs = identity_pairs(n, random_state=7)
    ranks = pair_rank(pairs, n)
    assert_array_equal(np.sort(ranks), np.arange(n_identity_pairs(n)))
    assert_array_equal(identity_pairs(n, 1000, random_state=7), pairs[:1000])
