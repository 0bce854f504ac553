# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Duplicate rows: the band join against a naive loop over every pair."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import skprivacy.utils._duplicates as dup_module
from skprivacy.datasets import load_cropped_yale_b, load_yale_faces
from skprivacy.utils import DUPLICATE_TOL, duplicate_groups, near_duplicates_of


def _naive_unit(X):
    X = np.asarray(X, dtype=np.float64)
    norms = np.array([np.sqrt(sum(v * v for v in row)) for row in X])
    ok = np.isfinite(norms) & (norms > 1e-6)
    return X, norms, ok


def _naive_cosine_distance(a, b, na, nb):
    # 1 - cos(a, b), written as half the squared distance of the unit rows
    # (exact for rows of equal direction, where 1 - dot rounds to ~1e-16).
    return 0.5 * sum(v * v for v in a / na - b / nb)


def _naive_groups(X, tol):
    """Union-find over every pair, groups numbered by first row."""
    X, norms, ok = _naive_unit(X)
    n = X.shape[0]
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if ok[i] and ok[j]:
                if _naive_cosine_distance(X[i], X[j], norms[i], norms[j]) <= tol:
                    parent[find(j)] = find(i)
    roots = [find(i) for i in range(n)]
    sizes = {r: roots.count(r) for r in set(roots)}
    labels, out = {}, np.full(n, -1)
    for i, r in enumerate(roots):
        if sizes[r] > 1:
            out[i] = labels.setdefault(r, len(labels))
    return out


def _naive_near(Xq, Xr, tol):
    Xq, nq, okq = _naive_unit(Xq)
    Xr, nr, okr = _naive_unit(Xr)
    return np.array(
        [
            okq[i]
            and any(
                okr[j] and _naive_cosine_distance(Xq[i], Xr[j], nq[i], nr[j]) <= tol
                for j in range(Xr.shape[0])
            )
            for i in range(Xq.shape[0])
        ]
    )


def _copies(rows, rng):
    """The copies that must be caught: recast, rescaled, perturbed, rounded."""
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return [
        rows.astype(np.float32),
        3.0 * rows,
        rows + 1e-9 * rng.standard_normal(rows.shape),
        np.round(unit, 6),
        np.round((3.0 * rows.astype(np.float32)).astype(np.float64) + 1e-9, 6),
    ]


@pytest.fixture
def small_blocks(monkeypatch):
    # Several row blocks and column chunks even on small inputs.
    monkeypatch.setattr(dup_module, "_BLOCK", 7)
    monkeypatch.setattr(dup_module, "_COLUMNS", 5)


@pytest.mark.parametrize("tiny", [False, True])
def test_groups_match_naive_loop(tiny, request):
    if tiny:
        request.getfixturevalue("small_blocks")
    rng = np.random.default_rng(0)
    base = rng.standard_normal((40, 16))
    X = np.vstack([base] + [c[:3] for c in _copies(base[:3], rng)] + [base[5:6]])
    X = X[rng.permutation(X.shape[0])]
    groups, counts = duplicate_groups(X)
    expected = _naive_groups(X, DUPLICATE_TOL)
    np.testing.assert_array_equal(groups, expected)
    assert counts["n_groups"] == 4
    assert counts["n_rows"] == 3 * 6 + 2
    assert counts["n_cross_identity_groups"] is None


@pytest.mark.parametrize("tol", [0.0, 0.02, 0.3])
def test_chains_at_large_tolerance_match_naive_loop(tol, small_blocks):
    # In 3 dimensions a tolerance of 0.02 links many rows into chains.
    X = np.random.default_rng(1).standard_normal((60, 3))
    X[10] = X[3] * 2.0  # an exact direction copy, found at tol = 0 too
    groups, _ = duplicate_groups(X, tol=tol)
    np.testing.assert_array_equal(groups, _naive_groups(X, tol))


def test_cross_identity_groups_count_label_noise():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((12, 5))
    X[6] = X[0].astype(np.float32)  # same identity copy
    X[7] = 3 * X[1]  # copy under another identity
    X[8] = X[2] + 1e-9  # copy under another identity
    y = np.array(["a"] * 7 + ["b", "c"] + ["d"] * 3)
    groups, counts = duplicate_groups(X, y)
    np.testing.assert_array_equal(groups, _naive_groups(X, DUPLICATE_TOL))
    assert counts == {"n_rows": 6, "n_groups": 3, "n_cross_identity_groups": 2}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int64, bool])
def test_any_dtype(dtype):
    X = np.array([[1, 0, 1], [0, 1, 0], [2, 0, 2], [1, 1, 0]], dtype=np.float64)
    groups, counts = duplicate_groups(X.astype(dtype))
    np.testing.assert_array_equal(groups, [0, -1, 0, -1])
    assert counts["n_groups"] == 1


def test_rows_without_direction_belong_to_no_group():
    X = np.array([[1.0, 0.0], [np.nan, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 0.0]])
    groups, counts = duplicate_groups(X)
    np.testing.assert_array_equal(groups, [0, -1, -1, 0, -1])
    assert counts["n_rows"] == 2
    mask = near_duplicates_of(X, X[:1])
    np.testing.assert_array_equal(mask, [True, False, False, True, False])


def test_distinct_rows_are_not_duplicates():
    # Random directions in 64 dimensions lie at cosine distances near 1.
    X = np.random.default_rng(3).standard_normal((300, 64))
    groups, counts = duplicate_groups(X)
    assert counts == {"n_rows": 0, "n_groups": 0, "n_cross_identity_groups": None}
    assert (groups == -1).all()


@pytest.mark.parametrize("tiny", [False, True])
def test_near_duplicates_of_matches_naive_loop(tiny, request):
    if tiny:
        request.getfixturevalue("small_blocks")
    rng = np.random.default_rng(4)
    X_ref = rng.standard_normal((50, 12))
    fresh = rng.standard_normal((20, 12))
    X_query = np.vstack([fresh] + _copies(X_ref[10:14], rng))
    X_query = X_query[rng.permutation(X_query.shape[0])]
    mask = near_duplicates_of(X_query, X_ref)
    np.testing.assert_array_equal(mask, _naive_near(X_query, X_ref, DUPLICATE_TOL))
    assert mask.sum() == 5 * 4


def test_copies_of_unit_rows_in_high_dimension_are_caught():
    # Rounding a unit row to 6 decimals moves it most in high dimension.
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 4096))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    for copy in _copies(X, rng):
        assert near_duplicates_of(copy, X).all()
    assert not near_duplicates_of(rng.standard_normal((30, 4096)), X).any()


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 30),
    n_copies=st.integers(0, 10),
)
def test_groups_are_a_function_of_the_rows_not_their_order(seed, n, n_copies):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    X = np.vstack([X, X[rng.integers(0, n, n_copies)] * 2.0])
    perm = rng.permutation(X.shape[0])
    groups, counts = duplicate_groups(X)
    groups_perm, counts_perm = duplicate_groups(X[perm])
    assert counts == counts_perm
    # Same partition: two rows share a group in one order iff in the other.
    same = (groups[:, None] == groups[None, :]) & (groups[:, None] >= 0)
    same_perm = (groups_perm[:, None] == groups_perm[None, :]) & (
        groups_perm[:, None] >= 0
    )
    inverse = np.argsort(perm)
    np.testing.assert_array_equal(same, same_perm[np.ix_(inverse, inverse)])


def test_bundled_yale_faces_byte_identical_pairs():
    faces = load_yale_faces()
    groups, counts = duplicate_groups(faces.data, faces.identity)
    # The nine pairs of byte-identical rows, found independently of the band join.
    _, inverse, sizes = np.unique(
        faces.data, axis=0, return_inverse=True, return_counts=True
    )
    byte_groups = sizes[inverse.ravel()] > 1
    assert int(byte_groups.sum()) == 18
    np.testing.assert_array_equal(groups >= 0, byte_groups)
    assert counts == {"n_rows": 18, "n_groups": 9, "n_cross_identity_groups": 0}


def test_bundled_cropped_yale_b_has_no_duplicates():
    faces = load_cropped_yale_b()
    _, counts = duplicate_groups(faces.data, faces.identity)
    assert counts == {"n_rows": 0, "n_groups": 0, "n_cross_identity_groups": 0}


@pytest.mark.parametrize("tol", [-1e-3, 2.0, float("nan"), "small", True])
def test_bad_tolerance_is_refused(tol):
    with pytest.raises(ValueError, match="tol must be a real number in"):
        duplicate_groups(np.eye(3), tol=tol)
    with pytest.raises(ValueError, match="tol must be a real number in"):
        near_duplicates_of(np.eye(3), np.eye(3), tol=tol)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="X_query has 3 feature"):
        near_duplicates_of(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="label"):
        duplicate_groups(np.eye(3), y=[0, 1])
    with pytest.raises(TypeError, match="numeric"):
        duplicate_groups(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="2-D"):
        duplicate_groups(np.ones(3))
