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
