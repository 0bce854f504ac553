# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cross-fitted erasure equals fitting on the other identities, fold by fold."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut
from sklearn.pipeline import Pipeline

from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import INLP, ISP, LEACE, cross_fit_transform


@pytest.fixture(scope="module")
def data():
    X, ids = make_identity_embeddings(18, 6, 12, n_identity_dims=4, random_state=0)
    perm = np.random.default_rng(0).permutation(ids.size)  # ungrouped rows
    return X[perm], ids[perm]


def _loop(eraser, X, ids, splits):
    """Fit on the other folds, transform this fold: the plain loop."""
    out = np.full(X.shape, np.nan)
    for train, test in splits:
        out[test] = clone(eraser).fit(X[train], ids[train]).transform(X[test])
    return out


ERASERS = [
    ISP(n_components=3),
    LEACE(n_components=3),
    INLP(n_components=3, random_state=0),
    Pipeline([("isp", ISP(n_components=2)), ("leace", LEACE(n_components=2))]),
]


@pytest.mark.parametrize("eraser", ERASERS, ids=lambda e: type(e).__name__)
def test_equals_an_independent_loop(eraser, data):
    X, ids = data
    got = cross_fit_transform(eraser, X, ids, cv=3)
    splits = list(GroupKFold(n_splits=3).split(X, ids, groups=ids))
    np.testing.assert_array_equal(got, _loop(eraser, X, ids, splits))


def test_no_identity_is_transformed_by_an_eraser_that_saw_it(data):
    X, ids = data

    class Recorder(ISP):
        seen = []

        def fit(self, X, y=None, ids=None):
            super().fit(X, y)
            self.fitted_on_ = set(np.unique(y).tolist())
            return self

        def transform(self, X):
            Recorder.seen.append((self.fitted_on_, X.shape[0]))
            return super().transform(X)

    splits = list(GroupKFold(n_splits=4).split(X, ids, groups=ids))
    cross_fit_transform(Recorder(n_components=2), X, ids, cv=4)
    for (fitted_on, n_rows), (_, test) in zip(Recorder.seen, splits):
        assert fitted_on.isdisjoint(set(ids[test].tolist()))
        assert n_rows == test.size


def test_splitter_that_splits_an_identity_raises(data):
    X, ids = data
    splitter = KFold(3, shuffle=True, random_state=0)
    with pytest.raises(ValueError, match="identity-disjoint"):
        cross_fit_transform(ISP(2), X, ids, cv=list(splitter.split(X)))


def test_splitter_and_iterable_of_folds(data):
    X, ids = data
    logo = cross_fit_transform(ISP(2), X, ids, cv=LeaveOneGroupOut())
    splits = list(LeaveOneGroupOut().split(X, ids, groups=ids))
    np.testing.assert_array_equal(logo, _loop(ISP(2), X, ids, splits))
    again = cross_fit_transform(ISP(2), X, ids, cv=splits)
    np.testing.assert_array_equal(again, logo)
    with pytest.raises(ValueError, match="partition the rows"):
        cross_fit_transform(ISP(2), X, ids, cv=splits[:-1])


def test_groups_keep_coarser_units_together(data):
    X, ids = data
    person = ids // 2  # two labels per person
    got = cross_fit_transform(ISP(2), X, ids, cv=3, groups=person)
    splits = list(GroupKFold(n_splits=3).split(X, ids, groups=person))
    for _, test in splits:
        train_people = set(person[np.setdiff1d(np.arange(ids.size), test)])
        assert train_people.isdisjoint(person[test])
    np.testing.assert_array_equal(got, _loop(ISP(2), X, ids, splits))


def test_two_row_identities():
    X, ids = make_identity_embeddings(10, 2, 8, random_state=1)
    got = cross_fit_transform(ISP(n_components=2), X, ids, cv=5)
    splits = list(GroupKFold(n_splits=5).split(X, ids, groups=ids))
    np.testing.assert_array_equal(got, _loop(ISP(2), X, ids, splits))


def test_output_container_and_dtype(data):
    X, ids = data
    X32 = X.astype(np.float32)
    out = cross_fit_transform(ISP(2), X32, ids, cv=3)
    assert out.dtype == np.float32
    frame = pd.DataFrame(X, columns=[f"e{i}" for i in range(X.shape[1])])
    frame.index = np.arange(frame.shape[0]) * 10
    pandas_isp = ISP(2).set_output(transform="pandas")
    got = cross_fit_transform(pandas_isp, frame, ids, cv=3)
    assert isinstance(got, pd.DataFrame)
    assert list(got.columns) == list(frame.columns)
    pd.testing.assert_index_equal(got.index, frame.index)
    expected = np.empty(X.shape)
    for train, test in GroupKFold(n_splits=3).split(X, ids, groups=ids):
        fitted = clone(pandas_isp).fit(frame.iloc[train], ids[train])
        expected[test] = fitted.transform(frame.iloc[test]).to_numpy()
    np.testing.assert_array_equal(got.to_numpy(), expected)


def test_fold_errors_name_the_fold(data):
    X, ids = data
    with pytest.raises(ValueError, match=r"fold 1 of 3 \(12 training identities\)"):
        cross_fit_transform(ISP(n_components=14), X, ids, cv=3)
    with pytest.raises(ValueError, match="at least 30 identities"):
        cross_fit_transform(ISP(2), X, ids, cv=30)


def test_n_jobs_gives_identical_results(data):
    X, ids = data
    one = cross_fit_transform(LEACE(2), X, ids, cv=3)
    two = cross_fit_transform(LEACE(2), X, ids, cv=3, n_jobs=2)
    np.testing.assert_array_equal(one, two)
