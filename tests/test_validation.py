# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator

from skprivacy.exceptions import DroppedRowsWarning, ExcludedIdentitiesWarning
from skprivacy.utils import (
    MMD_TV_CEILING,
    blas_threads,
    check_embeddings,
    check_generator,
    check_identity_labels,
    check_scores,
    encode_identities,
    group_by_identity,
    identity_sums,
    l2_normalize,
    limit_blas_threads,
    map_blas_threads,
    row_norms,
    seed_from,
    validate_identity_data,
)


class _Probe(BaseEstimator):
    """Minimal estimator to carry validate_data's bookkeeping."""


def _dirty_matrix():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 5))
    X[1] = np.nan
    X[4, 2] = np.inf
    X[5] = 0.0
    X[7] = 1e-7 / np.sqrt(5)  # norm 1e-7 <= 1e-6
    X[9, 0] = -np.inf
    return X


def test_cleaning_keeps_exactly_valid_rows_unit_norm():
    X = _dirty_matrix()
    expected_kept = [i for i in range(12) if i not in (1, 4, 5, 7, 9)]
    with pytest.warns(DroppedRowsWarning, match="Dropped 5 of 12"):
        Z, kept, counts = check_embeddings(X)
    assert_array_equal(np.flatnonzero(kept), expected_kept)
    assert counts == {"non_finite": 3, "low_norm": 2}
    # Independent computation: each kept row divided by its own norm, one by one.
    for z, i in zip(Z, expected_kept):
        assert_allclose(z, X[i] / np.sqrt(np.sum(X[i] ** 2)), rtol=1e-12)
    assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-12)


def test_norm_threshold_is_inclusive():
    X = np.array([[1e-6, 0.0], [1.1e-6, 0.0], [1.0, 1.0]])
    with pytest.warns(DroppedRowsWarning):
        _, kept, counts = check_embeddings(X)
    assert_array_equal(kept, [False, True, True])
    assert counts["low_norm"] == 1


def test_all_rows_dropped_raises():
    with pytest.raises(ValueError, match="Every row was dropped: 1 non-finite"):
        check_embeddings(np.array([[np.nan, 1.0], [0.0, 0.0]]))


def test_validate_identity_data_reports_drops_and_small_identities():
    X = _dirty_matrix()
    y = np.array(["a"] * 4 + ["b"] * 4 + ["c"] * 3 + ["d"])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        data = validate_identity_data(_Probe(), X, y)
    categories = {w.category for w in record}
    assert categories == {DroppedRowsWarning, ExcludedIdentitiesWarning}
    # Rows kept after cleaning: 0,2,3 (a) 6 (b) 8,10 (c) 11 (d); b and d have 1 row.
    assert_array_equal(np.flatnonzero(data.kept), [0, 2, 3, 8, 10])
    assert data.identities.tolist() == ["a", "c"]
    assert_array_equal(data.counts, [3, 2])
    report = data.drop_report
    assert report["non_finite"] == 3 and report["low_norm"] == 2
    assert report["small_identity"] == 2
    assert report["excluded_identities"] == ["b", "d"]
    assert report["n_input_rows"] == 12 and report["n_kept_rows"] == 5
    assert_allclose(np.linalg.norm(data.X, axis=1), 1.0)


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.ones((4, 3)), np.arange(3), "y has 3 label.* but X has 4 row"),
        (np.eye(4) + 0.1, np.zeros(4), "at least 2 identities"),
        (np.eye(4) + 0.1, [0, 1, 2, 3], "got 0 identity"),
        (np.arange(4.0), [0, 0, 1, 1], "Expected 2D array"),
        (np.ones((4, 2, 2)), [0, 0, 1, 1], "dim 3"),
        (np.full((4, 3), np.nan), [0, 0, 1, 1], "Every row was dropped"),
    ],
)
def test_error_cases_name_the_problem(X, y, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=match):
            validate_identity_data(_Probe(), X, y)


def test_non_numeric_columns_are_named():
    frame = pd.DataFrame({"e0": [1.0, 2.0, 3.0, 4.0], "note": list("wxyz")})
    with pytest.raises(ValueError, match="non-numeric column.*'note'"):
        validate_identity_data(_Probe(), frame, [0, 0, 1, 1])


def test_missing_y_is_an_error():
    with pytest.raises(ValueError, match="requires y to be passed.*identity label"):
        validate_identity_data(_Probe(), np.eye(4), None)


def test_dataframe_feature_names_are_recorded():
    frame = pd.DataFrame(np.eye(4) + 0.1, columns=list("abcd"))
    probe = _Probe()
    validate_identity_data(probe, frame, [0, 0, 1, 1])
    assert probe.feature_names_in_.tolist() == list("abcd")
    assert probe.n_features_in_ == 4


def test_identity_labels_of_one_kind():
    identities, codes = encode_identities(np.array([3, 1.5, 3, True], dtype=object))
    assert identities[codes].tolist() == [3, 1.5, 3, True]
    # Mixed numbers and strings: one documented rule, a clear error (1 and "1"
    # would otherwise silently become one identity, or crash a sort).
    with pytest.raises(ValueError, match=r"y mixes label types \(number, str"):
        encode_identities(np.array([3, "a", 3, "a", 2.5], dtype=object))
    identities, codes = encode_identities(["z", "y", "z"])
    assert identities.tolist() == ["y", "z"]
    assert_array_equal(codes, [1, 0, 1])


@settings(max_examples=50, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 20), st.integers(1, 8)),
        elements=st.one_of(
            st.floats(-1e6, 1e6),
            st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e-7]),
        ),
    )
)
def test_cleaning_invariants(X):
    finite = np.isfinite(X).all(axis=1)
    norms = np.array([np.sqrt(np.sum(r**2)) if f else 0.0 for r, f in zip(X, finite)])
    expected = finite & (norms > 1e-6)
    if not expected.any():
        with pytest.raises(ValueError):
            check_embeddings(X, warn=False)
        return
    Z, kept, counts = check_embeddings(X, warn=False)
    assert_array_equal(kept, expected)
    assert counts["non_finite"] == int((~finite).sum())
    assert counts["non_finite"] + counts["low_norm"] + int(kept.sum()) == X.shape[0]
    assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-9)


def test_l2_normalize_leaves_zero_rows():
    out = l2_normalize(np.array([[0.0, 0.0], [0.0, 2.0]]))
    assert_array_equal(out, [[0.0, 0.0], [0.0, 1.0]])


def test_huge_finite_rows_are_normalised_not_zeroed():
    X = np.array([[3e200, 4e200], [1.0, 0.0]])
    Z, kept, _ = check_embeddings(X, warn=False)
    assert kept.all()
    assert_allclose(Z, [[0.6, 0.8], [1.0, 0.0]])


def test_clean_input_is_not_modified():
    X = np.array([[3.0, 4.0], [0.0, 2.0]])
    Z, _, _ = check_embeddings(X)
    assert_allclose(X, [[3.0, 4.0], [0.0, 2.0]])
    assert_allclose(Z, [[0.6, 0.8], [0.0, 1.0]])


# ---------------------------------------------------------------- labels
@pytest.mark.parametrize(
    "y, rows",
    [
        (np.array([None, "a", "a", "b"], dtype=object), "0"),
        (np.array([0.0, np.nan, 1.0, np.nan]), "1, 3"),
        (pd.array(["a", "b", pd.NA, "b"], dtype="string"), "2"),
        (pd.array([1, 2, None, 2], dtype="Int64"), "2"),
        (pd.Series(["a", None, "b", "b"]), "1"),
        (pd.Categorical(["a", "b", None, "a"]), "2"),
    ],
)
def test_missing_labels_raise_naming_the_rows(y, rows):
    with pytest.raises(ValueError, match=rf"y has \d missing label.* row\(s\) {rows};"):
        check_identity_labels(y)
    with pytest.raises(ValueError, match=rf"row\(s\) {rows};"):
        encode_identities(y)
    with pytest.raises(ValueError, match=rf"y has \d missing label.* row\(s\) {rows};"):
        validate_identity_data(_Probe(), np.eye(4) + 1, y)


def test_encode_identities_round_trip_or_error():
    # The reported case: a None label used to get code -1.
    with pytest.raises(ValueError, match="missing label"):
        encode_identities([None, "a", "a"])
    y = pd.array(["b", "a", "b"], dtype="string")
    identities, codes = encode_identities(y)
    assert identities[codes].tolist() == ["b", "a", "b"]


def test_labels_shape_length_and_infinity():
    with pytest.raises(ValueError, match="y has 2 label.* X has 3 row"):
        check_identity_labels([0, 1], n_samples=3)
    with pytest.raises(ValueError, match=r"y must be 1-D .* shape \(2, 2\)"):
        check_identity_labels(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"ids is None"):
        check_identity_labels(None, name="ids")
    with pytest.raises(ValueError, match=r"infinite label.* row\(s\) 1"):
        check_identity_labels([0.0, np.inf])
    from sklearn.exceptions import DataConversionWarning

    with pytest.warns(DataConversionWarning):
        assert check_identity_labels(np.array([[1], [2]])).tolist() == [1, 2]


# ---------------------------------------------------------------- scores
def test_check_scores():
    assert_array_equal(check_scores([1, 2]), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"s has 1 non-finite.* row\(s\) 1"):
        check_scores([0.1, np.nan], name="s")
    with pytest.raises(ValueError, match="s has 2 value.* but 3 were expected"):
        check_scores([0.1, 0.2], name="s", n_samples=3)
    with pytest.raises(TypeError, match="s must be numeric"):
        check_scores(["a"], name="s")
    with pytest.raises(ValueError, match="s is empty"):
        check_scores([], name="s")


# ---------------------------------------------------------------- norms
@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1.0, 1e160, 1e200, 1e300])
def test_row_norms_and_normalisation_do_not_overflow(scale):
    X = np.array([[3.0, 4.0], [1.0, 0.0], [-2.0, 0.0]]) * scale
    assert_allclose(row_norms(X), np.array([5.0, 1.0, 2.0]) * scale, rtol=1e-14)
    assert_allclose(l2_normalize(X), [[0.6, 0.8], [1.0, 0.0], [-1.0, 0.0]])
    if scale > 1e-6:
        Z, kept, _ = check_embeddings(X)
        assert kept.all()
        assert_allclose(Z, [[0.6, 0.8], [1.0, 0.0], [-1.0, 0.0]])


def test_row_norms_non_finite():
    norms = row_norms(np.array([[np.nan, 1e200], [np.inf, 1.0], [0.0, 0.0]]))
    assert np.isnan(norms[0]) and norms[1] == np.inf and norms[2] == 0.0


@settings(max_examples=60)
@given(
    arrays(np.float64, (5, 4), elements=st.floats(-10, 10)).filter(
        lambda X: (np.abs(X).max(axis=1) > 1e-3).all()
    ),
    st.integers(-250, 250),
)
def test_normalisation_is_scale_invariant(X, exponent):
    # Rows scaled by 10^k for |k| <= 250 normalise to the same unit rows, and
    # their norms scale exactly with them (no overflow, no underflow).
    scale = 10.0**exponent
    assert_allclose(l2_normalize(X * scale), l2_normalize(X), rtol=1e-12, atol=1e-15)
    assert_allclose(row_norms(X * scale), row_norms(X) * scale, rtol=1e-12)


def test_ordinary_rows_take_the_one_pass_path_bit_for_bit():
    # Rows of ordinary scale: exactly sqrt(sum of squares) and X / norm.
    X = np.random.default_rng(0).normal(size=(50, 7))
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    assert np.array_equal(row_norms(X), norms)
    assert np.array_equal(l2_normalize(X), X / norms[:, None])
    X32 = X.astype(np.float32)
    norms32 = row_norms(X32).astype(np.float32)
    assert np.array_equal(l2_normalize(X32), X32 / norms32[:, None])


def test_float32_rows_of_norm_beyond_float32_are_not_zeroed():
    X = np.full((2, 4), 3e38, dtype=np.float32)
    X[1] = [1.0, 0.0, 0.0, 0.0]
    Z = l2_normalize(X)
    assert Z.dtype == np.float32
    assert_allclose(Z, [[0.5] * 4, [1.0, 0.0, 0.0, 0.0]])


def test_labels_in_python_lists_keep_their_kinds():
    # numpy would turn ["a", 1] into ["a", "1"] and NaN into "nan".
    with pytest.raises(ValueError, match="y mixes label types"):
        check_identity_labels(["a", 1, "b"])
    with pytest.raises(ValueError, match=r"missing label.*row\(s\) 1"):
        check_identity_labels(["a", float("nan"), "b"])
    assert check_identity_labels(["a", "b"]).tolist() == ["a", "b"]


@given(
    st.lists(st.sampled_from([0, 1, True, False, 0.0, 1.0]), min_size=2).filter(
        lambda v: 0 < sum(map(bool, v)) < len(v)
    )
)
def test_binary_labels_are_their_truth_values(values):
    from skprivacy.utils import check_binary_labels

    expected = np.array([bool(v) for v in values])
    assert_array_equal(check_binary_labels(values), expected)
    with pytest.raises(ValueError, match="must contain both"):
        check_binary_labels([v for v in values if bool(v)])


def test_float32_rows_beyond_float32_range_of_squares():
    X = np.array([[3e30, 4e30]], dtype=np.float32)
    Z, _, _ = check_embeddings(X)
    assert Z.dtype == np.float32
    assert_allclose(Z, [[0.6, 0.8]], rtol=1e-6)


@pytest.mark.parametrize(
    "X, exc, match",
    [
        (np.ones(3), ValueError, "X must be 2-D"),
        (np.array([["a", "b"]]), TypeError, "X must be a numeric matrix"),
        (np.empty((0, 3)), ValueError, "at least one row"),
        (pd.DataFrame({"a": [1.0], "b": ["x"]}), ValueError, "non-numeric column"),
    ],
)
def test_check_embeddings_rejects_bad_shapes(X, exc, match):
    with pytest.raises(exc, match=match):
        check_embeddings(X)


# ---------------------------------------------------------------- identity sums
@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(1, 4), st.integers(0, 99))
def test_identity_sums_and_grouping_match_loops(n, k, d, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, k, size=n)
    X = rng.normal(size=(n, d))
    sums = identity_sums(X, codes, k)
    order, starts, counts = group_by_identity(codes, k)
    for i in range(k):
        rows = [r for r in range(n) if codes[r] == i]
        assert_allclose(sums[i], X[rows].sum(axis=0) if rows else 0.0, atol=1e-12)
        assert order[starts[i] : starts[i + 1]].tolist() == rows
        assert counts[i] == len(rows)
    assert_allclose(identity_sums(X[:, 0], codes, k), sums[:, 0], atol=1e-12)


def test_identity_sums_bad_codes():
    with pytest.raises(ValueError, match=r"codes must lie in \[0, n_identities=2\)"):
        identity_sums(np.ones((2, 1)), [0, 2], 2)
    with pytest.raises(ValueError, match="X has 2 row.* codes has 3"):
        identity_sums(np.ones((2, 1)), [0, 1, 1])


# ---------------------------------------------------------------- seeding, threads
def test_check_generator():
    assert check_generator(3).random() == np.random.default_rng(3).random()
    g = np.random.default_rng(1)
    assert check_generator(g) is g
    a = check_generator(np.random.RandomState(5)).random()
    assert a == check_generator(np.random.RandomState(5)).random()
    np.random.seed(4)
    b = check_generator(None).random()
    np.random.seed(4)
    assert check_generator(None).random() == b
    assert seed_from(11) == 11
    with pytest.raises(ValueError, match="random_state must be a non-negative"):
        check_generator(-1)


def test_blas_limiter_is_usable_and_estimators_stay_picklable():
    import pickle

    from threadpoolctl import threadpool_info

    before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    with limit_blas_threads():
        inside = [
            i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"
        ]
        assert all(n == 1 for n in inside)
    after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert after == before
    assert blas_threads() >= 1
    # The limiter holds no state on the caller: the function pickles by reference.
    assert pickle.loads(pickle.dumps(limit_blas_threads)) is limit_blas_threads


def test_map_blas_threads_is_a_single_threaded_blas_map():
    from threadpoolctl import threadpool_info

    def blas_counts():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_counts()
    rng = np.random.default_rng(0)
    blocks = [rng.standard_normal((60, 40)) for _ in range(7)]

    def gram(block):
        # Every call sees a single-threaded BLAS, whichever thread runs it.
        assert all(n == 1 for n in blas_counts())
        return block @ block.T

    got = map_blas_threads(gram, blocks)
    with limit_blas_threads():
        want = [b @ b.T for b in blocks]
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert blas_counts() == before
    with pytest.raises(ZeroDivisionError):
        map_blas_threads(lambda k: 1 // k, [1, 0, 2])
    assert blas_counts() == before


def test_one_home_for_constants():
    import skprivacy.auditors._mmd as mmd

    assert MMD_TV_CEILING == pytest.approx(2 * np.arctanh(np.sqrt(2) / 2))
    assert mmd.MMD_TV_CEILING is MMD_TV_CEILING


def test_deferred_normalisation_keeps_rows_and_norms():
    # normalize="defer": X kept as given (no copy when nothing is dropped),
    # norms from an independent computation, and normalized_rows equal to
    # what normalize=True returns, bit for bit.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 6)) * rng.uniform(0.5, 3.0, size=(20, 1))
    y = np.repeat(np.arange(5), 4)
    lazy = validate_identity_data(_Probe(), X, y, normalize="defer")
    eager = validate_identity_data(_Probe(), X, y)
    assert np.shares_memory(lazy.X, X)
    assert_allclose(lazy.norms, [np.sqrt(np.sum(r**2)) for r in X], rtol=1e-14)
    assert_array_equal(lazy.normalized_rows(), eager.X)
    rows = np.array([7, 2, 19])
    assert_array_equal(lazy.normalized_rows(rows), eager.X[rows])
    assert lazy.normalized_rows(rows, np.float32).dtype == np.float32
    assert eager.norms is None


def test_deferred_normalisation_with_dropped_rows_and_identities():
    X = _dirty_matrix()
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = validate_identity_data(_Probe(), X, y, normalize="defer")
        eager = validate_identity_data(_Probe(), X, y)
    assert_array_equal(lazy.kept, eager.kept)
    assert lazy.drop_report == eager.drop_report
    assert_array_equal(lazy.X, X[lazy.kept])
    assert_array_equal(lazy.normalized_rows(), eager.X)
    assert_array_equal(lazy.codes, eager.codes)


def test_finiteness_comes_from_the_norms():
    # Rows whose squares overflow are finite (kept); inf/NaN anywhere drops.
    X = np.array(
        [[1e200, 1e200], [np.inf, 0.0], [np.nan, 1.0], [-np.inf, np.nan], [3, 4]]
    )
    with pytest.warns(DroppedRowsWarning):
        Z, kept, counts = check_embeddings(X)
    assert_array_equal(kept, [True, False, False, False, True])
    assert counts["non_finite"] == 3
    assert_allclose(Z, [[2**-0.5, 2**-0.5], [0.6, 0.8]], rtol=1e-15)


def test_identity_sums_weights_match_a_loop():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    codes = rng.integers(0, 5, size=30)
    w = rng.uniform(0.1, 2.0, size=30)
    expected = np.zeros((5, 4))
    for row, code, weight in zip(X, codes, w):
        expected[code] += weight * row
    assert_allclose(identity_sums(X, codes, 5, weights=w), expected, rtol=1e-13)
    with pytest.raises(ValueError, match="weights has 3 entries"):
        identity_sums(X, codes, 5, weights=w[:3])
