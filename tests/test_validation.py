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
    check_embeddings,
    encode_identities,
    l2_normalize,
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
        (np.ones((4, 3)), np.arange(3), "inconsistent numbers of samples"),
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


def test_identity_labels_of_any_hashable_type():
    identities, codes = encode_identities(np.array([3, "a", 3, "a", 2.5], dtype=object))
    assert len(identities) == 3
    assert identities[codes].tolist() == [3, "a", 3, "a", 2.5]
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
