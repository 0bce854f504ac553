# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the identity erasers: ISP, LEACE and INLP."""

import io

import numpy as np
import pandas as pd
import pytest
import sklearn
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.linalg import subspace_angles
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline, make_pipeline

from skprivacy.datasets import make_identity_embeddings
from skprivacy.exceptions import FewDimensionsLeftWarning
from skprivacy.sanitize import INLP, ISP, LEACE


def _naive_identity_subspace(X, ids):
    """Left singular vectors of the centred identity-mean matrix, by a plain loop."""
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    labels = sorted(set(ids.tolist()))
    means = np.array([Z[ids == lab].mean(axis=0) for lab in labels])
    M = (means - means.mean(axis=0)).T  # d x m
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    return U, s, means


@pytest.fixture(scope="module")
def data():
    return make_identity_embeddings(
        30, 12, 24, n_identity_dims=6, noise=0.4, random_state=0
    )


@pytest.mark.parametrize("r", [1, 3, 6])
def test_components_span_independent_svd(data, r):
    X, ids = data
    isp = ISP(n_components=r).fit(X, ids)
    U, s, _ = _naive_identity_subspace(X, ids)
    angles = subspace_angles(isp.components_.T, U[:, :r])
    assert angles.max() < 1e-8
    assert_allclose(isp.singular_values_, s[:r], rtol=1e-10)
    assert_allclose(isp.explained_energy_ratio_, s[:r] ** 2 / np.sum(s**2), rtol=1e-10)
    assert_allclose(isp.components_ @ isp.components_.T, np.eye(r), atol=1e-12)


def test_float_n_components_is_energy_share(data):
    X, ids = data
    _, s, _ = _naive_identity_subspace(X, ids)
    share = np.cumsum(s**2) / np.sum(s**2)
    for frac in [0.3, 0.5, 0.8, 0.95]:
        # Fewest components whose cumulative share exceeds frac, by a loop.
        expected = next(i + 1 for i, c in enumerate(share) if c > frac)
        assert ISP(n_components=frac).fit(X, ids).n_components_ == expected


def test_projector_is_symmetric_idempotent_and_rows_orthogonal(data):
    X, ids = data
    isp = ISP(n_components=5).fit(X, ids)
    P = isp.get_projector()
    assert_allclose(P, P.T, atol=1e-14)
    assert_allclose(P @ P, P, atol=1e-12)
    assert np.isclose(np.trace(P), X.shape[1] - 5)
    Z = isp.transform(X)
    assert_allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-12)
    assert np.abs(Z @ isp.components_.T).max() < 1e-12
    # transform (low-rank update) agrees with the dense projector.
    PX = X @ P
    assert_allclose(Z, PX / np.linalg.norm(PX, axis=1, keepdims=True), atol=1e-12)


def test_full_rank_collapses_identity_means():
    m = 10
    X, ids = make_identity_embeddings(
        m, 12, 24, n_identity_dims=6, noise=0.4, random_state=0
    )
    _, s, means = _naive_identity_subspace(X, ids)
    rank = int(np.sum(s > s[0] * 1e-10))
    isp = ISP(n_components=None, renormalize=False).fit(X, ids)
    # Sampling noise in the means makes M full rank: m - 1 (< d) directions.
    assert isp.n_components_ == rank == m - 1
    Z = isp.transform(X / np.linalg.norm(X, axis=1, keepdims=True))
    new_means = np.array([Z[ids == i].mean(axis=0) for i in range(m)])
    spread_before = np.ptp(means, axis=0).max()
    assert spread_before > 0.1
    # P mu_i = P mu_C for every identity: exact up to floating point.
    assert np.ptp(new_means, axis=0).max() < 1e-12
    # With re-normalisation the means coincide up to the within-identity noise.
    Zr = ISP("full").fit(X, ids).transform(X)
    renorm_means = np.array([Zr[ids == i].mean(axis=0) for i in range(m)])
    assert np.ptp(renorm_means, axis=0).max() < 0.2 * spread_before


@settings(max_examples=15, deadline=None)
@example(n_ids=7, per_id=2, d=7, r=6, dtype=np.float64, seed=461)
@given(
    n_ids=st.integers(2, 8),
    per_id=st.integers(1, 4),
    d=st.integers(2, 12),
    r=st.integers(0, 6),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 1000),
)
def test_projector_invariants_property(n_ids, per_id, d, r, dtype, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_ids * per_id, d)).astype(dtype)
    ids = np.repeat(np.arange(n_ids), per_id)
    r = min(r, d, n_ids - 1)
    isp = ISP(n_components=r).fit(X, ids)
    Z = isp.transform(X)
    assert Z.dtype == dtype
    # Error budget: rows with ||P x|| > ||x|| / 4 take the fast path, whose
    # rounding error is about (d + r) eps / (||P x|| / ||x||) <= 4 (12 + 6) eps
    # (1e-5 in float32); rows closer to the removed subspace are recomputed
    # from float64 directions, so no 1 / ||P x|| amplification of a float32
    # copy of U remains (it gave 1.3e-4 here before). 1e-4 keeps a 10x margin;
    # 3,000 random cases reach 2.6e-6.
    U = isp.components_
    # In float64 no row is recomputed: a row whose residual (I - U^T U) x is a
    # small fraction rho of ||x|| is divided by rho when renormalised, so its
    # rounding error is about (d + r) eps / rho (rho = 2.8e-7 gives 1.9e-9 at
    # n_ids=7, per_id=2, d=7, r=6, seed=461).
    X64 = X.astype(np.float64)
    X64 /= np.linalg.norm(X64, axis=1, keepdims=True)
    rho = np.linalg.norm(X64 - (X64 @ U.T) @ U, axis=1)
    rho_min = max(rho[rho > 1e-12].min(initial=1.0), 1e-12)
    tol64 = max(1e-10, 10 * (d + r) * np.finfo(np.float64).eps / rho_min)
    tol = 1e-4 if dtype == np.float32 else tol64
    assert_allclose(U @ U.T, np.eye(isp.n_components_), atol=1e-10)
    P = isp.get_projector()
    assert_allclose(P @ P, P, atol=1e-10)
    norms = np.linalg.norm(Z, axis=1)
    # Unit rows, except rows projected to zero up to rounding (returned as 0).
    assert np.all((np.abs(norms - 1) < tol) | (norms < tol))
    if isp.n_components_:
        assert np.abs(Z.astype(np.float64) @ U.T).max() < tol
    # Idempotent as a map: sanitising twice changes nothing.
    assert_allclose(isp.transform(Z), Z, atol=10 * tol)


def test_float32_matches_float64(data):
    X, ids = data
    isp = ISP(4).fit(X, ids)
    Z64 = isp.transform(X)
    Z32 = isp.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    assert_allclose(Z32, Z64, atol=1e-5)


def test_dimension_mismatch_is_a_clear_error(data):
    X, ids = data
    isp = ISP(2).fit(X, ids)
    with pytest.raises(ValueError, match="X has 5 features, but ISP is expecting 24"):
        isp.transform(X[:, :5])


def test_too_many_components_is_a_clear_error(data):
    X, ids = data
    with pytest.raises(ValueError, match="n_components=30 exceeds"):
        ISP(30).fit(X, ids)


def test_nan_rows_dropped_in_fit_and_kept_in_transform(data):
    X, ids = data
    Xn = X.copy()
    Xn[0, 0] = np.nan
    from skprivacy.exceptions import DroppedRowsWarning

    with pytest.warns(DroppedRowsWarning):
        isp = ISP(2).fit(Xn, ids)
    assert isp.drop_report_["non_finite"] == 1
    Z = isp.transform(Xn)
    assert np.isnan(Z[0]).all() and np.isfinite(Z[1:]).all()


def test_set_output_pandas_keeps_column_names(data):
    X, ids = data
    cols = [f"e{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    isp = ISP(3).set_output(transform="pandas").fit(df, ids)
    out = isp.transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == cols
    assert_allclose(out.to_numpy(), ISP(3).fit(X, ids).transform(X))


def test_npz_round_trip_and_plain_projector(data, tmp_path):
    X, ids = data
    cols = [f"e{j}" for j in range(X.shape[1])]
    isp = ISP(5).fit(pd.DataFrame(X, columns=cols), ids)
    path = tmp_path / "isp.npz"
    isp.to_npz(path)
    with np.load(path, allow_pickle=False) as archive:
        U = archive["components"]
        P = archive["projector"]
        names = archive["feature_names_in"]
    assert_allclose(P, np.eye(X.shape[1]) - U.T @ U, atol=1e-14)
    assert list(names) == cols
    rebuilt = ISP.from_npz(path)
    assert rebuilt.n_components_ == 5
    assert list(rebuilt.feature_names_in_) == cols
    df = pd.DataFrame(X, columns=cols)
    assert_allclose(rebuilt.transform(df), isp.transform(df), atol=1e-14)
    # A projector applied outside the library gives the same rows.
    PX = X @ P
    assert_allclose(
        rebuilt.transform(df), PX / np.linalg.norm(PX, axis=1, keepdims=True)
    )
    buf = io.BytesIO()
    isp.to_npz(buf)
    buf.seek(0)
    assert_allclose(ISP.from_npz(buf).components_, isp.components_)


def test_from_components_validates():
    with pytest.raises(ValueError, match="orthonormal"):
        ISP.from_components([[1.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="2-D"):
        ISP.from_components([1.0, 0.0])
    isp = ISP.from_components(np.eye(4)[:2], renormalize=False)
    assert_allclose(isp.transform([[1.0, 2.0, 3.0, 4.0]]), [[0.0, 0.0, 3.0, 4.0]])


def _attr_data(seed=0):
    return make_identity_embeddings(
        24,
        10,
        20,
        n_identity_dims=4,
        n_attribute_classes=2,
        attribute_strength=0.3,
        noise=0.5,
        random_state=seed,
    )


def test_ids_as_y_when_fitted_alone_and_routed_in_pipeline():
    X, ids, attr = _attr_data()
    alone = ISP(3).fit(X, ids)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline(
            [("isp", ISP(3).set_fit_request(ids=True)), ("clf", LogisticRegression())]
        )
        pipe.fit(X, attr, ids=ids)
    # The routed identities, not the pipeline's y (the attribute), were used.
    assert subspace_angles(pipe["isp"].components_.T, alone.components_.T).max() < 1e-8
    wrong = ISP(1).fit(X, attr)
    assert subspace_angles(wrong.components_.T, alone.components_.T).min() > 1e-3
    # Without routing, the step-prefixed parameter does the same.
    pipe2 = make_pipeline(ISP(3), LogisticRegression()).fit(X, attr, isp__ids=ids)
    assert_allclose(pipe2[0].components_, alone.components_)


def test_grid_search_with_routed_identities():
    X, ids, attr = _attr_data()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline(
            [("isp", ISP().set_fit_request(ids=True)), ("clf", LogisticRegression())]
        )
        search = GridSearchCV(
            pipe, {"isp__n_components": [0, 2, 4]}, cv=GroupKFold(n_splits=3)
        )
        search.fit(X, attr, ids=ids, groups=ids)
    assert len(search.cv_results_["params"]) == 3
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # Removing the identity subspace keeps the (orthogonal) attribute.
    assert search.cv_results_["mean_test_score"].min() > 0.8


def test_leace_equalises_identity_means():
    X, ids = make_identity_embeddings(12, 15, 16, n_identity_dims=4, random_state=1)
    with pytest.warns(FewDimensionsLeftWarning, match="5 dimension"):
        leace = LEACE("full").fit(X, ids)
    Z = leace.transform(X)
    means = np.array([Z[ids == i].mean(axis=0) for i in range(12)])
    assert np.ptp(means, axis=0).max() < 1e-10
    # Independent check of the defining property: the cross-covariance of the
    # output with the identity one-hot is zero.
    onehot = np.eye(12)[ids]
    cross = (Z - Z.mean(0)).T @ (onehot - onehot.mean(0)) / len(Z)
    assert np.abs(cross).max() < 1e-12
    # Noisy identity means span min(d, m - 1) directions.
    assert leace.n_components_ == 11
    truncated = LEACE(n_components=2).fit(X, ids)
    assert truncated.n_components_ == 2


def test_inlp_removes_orthonormal_directions():
    X, ids = make_identity_embeddings(12, 15, 16, n_identity_dims=4, random_state=1)
    inlp = INLP(n_components=6).fit(X, ids)
    B = inlp.components_
    assert B.shape == (6, 16)
    assert_allclose(B @ B.T, np.eye(6), atol=1e-10)
    Z = inlp.transform(X)
    assert np.abs(Z @ B.T).max() < 1e-10
    assert inlp.n_iter_ >= 1
    assert len(inlp.train_accuracies_) == inlp.n_iter_


@pytest.mark.parametrize("Eraser", [ISP, LEACE, INLP])
def test_erasers_remove_linear_identity_information(Eraser):
    X, ids = make_identity_embeddings(
        10, 20, 16, n_identity_dims=3, separation=2.0, random_state=2
    )
    before = LogisticRegression(max_iter=1000).fit(X, ids).score(X, ids)
    Z = Eraser(n_components=3).fit(X, ids).transform(X)
    after = LogisticRegression(max_iter=1000).fit(Z, ids).score(Z, ids)
    assert before > 0.9
    assert after < before - 0.3
