# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Erasers at scale: safe default ranks, the transform kernel, partial_fit, dask."""

import threading
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.linalg import subspace_angles
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from skprivacy._kernels import _low_rank
from skprivacy.datasets import make_identity_embeddings
from skprivacy.exceptions import FewDimensionsLeftWarning
from skprivacy.sanitize import INLP, ISP, LEACE
from skprivacy.utils import _threads


@pytest.fixture(scope="module")
def faces():
    # The reproduction: 1,000 identities x 5 rows in 128 dimensions,
    # where n_identities - 1 >= n_features made every default eraser destroy
    # the data. A weak attribute, independent of identity, is planted in a
    # subspace orthogonal to the 64-dimensional identity subspace.
    bunch = make_identity_embeddings(
        1000,
        5,
        128,
        n_attribute_classes=4,
        attribute_strength=0.3,
        return_X_y=False,
        random_state=0,
    )
    return bunch


def _probe(Z, attribute):
    clf = LogisticRegression(max_iter=2000)
    return cross_val_score(clf, Z, attribute, cv=3).mean()


@pytest.mark.slow
@pytest.mark.parametrize("Eraser", [ISP, LEACE, INLP])
def test_default_eraser_keeps_half_the_dimensions_and_the_attribute(faces, Eraser):
    X, ids, attribute = faces.data, faces.identity, faces.attribute
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewDimensionsLeftWarning)
        eraser = Eraser().fit(X, ids)
    Z = eraser.transform(X)
    d = X.shape[1]
    # Documented: at least ceil(d / 2) dimensions survive.
    assert eraser.n_components_ <= d // 2
    assert np.linalg.matrix_rank(Z - Z.mean(axis=0), tol=1e-8) >= d - d // 2
    before, after = _probe(X, attribute), _probe(Z, attribute)
    assert before > 0.9
    assert after >= before - 0.05
    if Eraser is not LEACE:
        # The removed directions are the planted identity subspace (64 dims).
        B = eraser.components_
        assert B.shape[0] == 64
        angles = subspace_angles(B.T, faces.identity_basis)
        assert angles.max() < 0.5
        # ... and the attribute subspace is left alone.
        assert np.abs(B @ faces.attribute_basis).max() < 0.1


@pytest.mark.slow
def test_full_erasure_only_when_asked_and_warned(faces):
    X, ids, attribute = faces.data, faces.identity, faces.attribute
    with pytest.warns(FewDimensionsLeftWarning, match="only 0 dimension"):
        Z = ISP("full").fit(X, ids).transform(X)
    assert np.ptp(Z, axis=0).max() == 0.0  # the destroyed output of the issue
    assert _probe(Z, attribute) < 0.35  # 4 classes: chance level
    with pytest.warns(FewDimensionsLeftWarning):
        ISP(100).fit(X, ids)


def test_auto_rank_ignores_chance_spread_of_means():
    # Identity signal in 16 directions; an attribute independent of identity
    # spreads the 5-row identity means by chance in 2 more, one of them with
    # more energy than any identity direction. Plain energy ranking would remove
    # the attribute first; the default rule does not remove it at all.
    bunch = make_identity_embeddings(
        400,
        5,
        64,
        n_identity_dims=16,
        n_attribute_classes=2,
        attribute_strength=1.0,
        return_X_y=False,
        random_state=1,
    )
    X, ids = bunch.data, bunch.identity
    means = np.array([X[ids == i].mean(axis=0) for i in range(400)])
    _, _, vt = np.linalg.svd(means - means.mean(axis=0), full_matrices=False)
    assert np.linalg.norm(vt[0] @ bunch.attribute_basis) > 0.9  # energy's top pick
    isp = ISP().fit(X, ids)
    assert isp.n_components_ == 16
    assert subspace_angles(isp.components_.T, bunch.identity_basis).max() < 0.3
    assert np.abs(isp.components_ @ bunch.attribute_basis).max() < 0.15


def test_auto_rank_one_row_per_identity_falls_back_to_energy():
    X, ids = make_identity_embeddings(40, 1, 32, n_identity_dims=4, random_state=0)
    isp = ISP().fit(X, ids)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    s = np.linalg.svd(Z - Z.mean(axis=0), compute_uv=False)
    share = np.cumsum(s**2) / np.sum(s**2)
    expected = min(int(np.searchsorted(share, 0.9)) + 1, 16)
    assert isp.n_components_ == expected


def _naive_projection(X, U, renormalize=True):
    X64 = X.astype(np.float64)
    big = np.abs(X64).max(axis=1, keepdims=True)
    X64 = X64 / np.where(big > 0, big, 1)  # the direction is scale-free
    Y = X64 - (X64 @ U.T) @ U
    if renormalize:
        norms = np.linalg.norm(Y, axis=1, keepdims=True)
        Y = np.divide(Y, norms, out=np.zeros_like(Y), where=norms > 0)
    return Y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 5000])
def test_transform_kernel_matches_naive_projection(dtype, n):
    rng = np.random.default_rng(0)
    d, r = 48, 6
    U = np.linalg.qr(rng.standard_normal((d, r)))[0].T
    isp = ISP.from_components(U)
    X = rng.standard_normal((n, d)).astype(dtype)
    X[0] = 0.0  # zero row -> zero
    X[1] = (U.T @ rng.standard_normal(r)).astype(dtype)  # inside the subspace -> 0
    X[2] = X[3] * 1e30 if dtype == np.float32 else X[3] * 1e200  # squares overflow
    X[4, 3] = np.nan  # NaN row -> NaN
    X[5] = 0.9 * X[1] + 0.1 * X[6]  # mostly inside: the cancelling norm identity
    Z = isp.transform(X)
    assert Z.dtype == dtype
    expected = _naive_projection(np.nan_to_num(X), U)
    expected[1] = 0.0
    tol = 1e-5 if dtype == np.float32 else 1e-12
    ok = np.ones(n, dtype=bool)
    ok[4] = False
    assert_allclose(Z[ok], expected[ok], atol=tol)
    assert np.isnan(Z[4]).all()
    assert not Z[1].any() and not Z[0].any()
    # Preallocated output: written in place, same numbers.
    out = np.empty_like(X)
    assert isp._transform_array(X, out=out) is out
    assert_allclose(out[ok], Z[ok], atol=0)
    X[6, 0] = np.inf
    # A clear error, raised before the product where inf * 0 would emit
    # numpy's "invalid value encountered in matmul".
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"infinity \(row 6\)"):
            isp.transform(X)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 40 rows, sub-blocks of 16, three threads on any machine."""
    monkeypatch.setattr(_low_rank, "_BLOCK_ROWS", 40)
    monkeypatch.setattr(_low_rank, "_SUB_ROWS", 16)
    monkeypatch.setattr(_low_rank, "blas_threads", lambda: 3)
    monkeypatch.setattr(_threads, "blas_threads", lambda: 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transform_kernel_small_blocks_and_sub_blocks(small_blocks, dtype):
    # Many small blocks (each a stack of sub-block products plus a remainder)
    # spread over more threads than cores: every row written once, by the
    # right block, and equal to the direct projection.
    rng = np.random.default_rng(1)
    d, r = 24, 5
    U = np.linalg.qr(rng.standard_normal((d, r)))[0].T
    # Blocks of 32 rows (2 sub-blocks of 16); the last has 25 = 16 + 9 rows.
    X = rng.standard_normal((31 * 32 + 25, d)).astype(dtype)
    X[500, 2] = np.nan
    Z = ISP.from_components(U).transform(X)
    ok = np.ones(len(X), dtype=bool)
    ok[500] = False
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_allclose(Z[ok], _naive_projection(X[ok], U), atol=tol)
    assert np.isnan(Z[500]).all()
    X[777, 0] = -np.inf
    with pytest.raises(ValueError, match=r"infinity \(row 777\)"):
        ISP.from_components(U).transform(X)


@pytest.mark.parametrize("renormalize", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_general_low_rank_update_small_blocks(small_blocks, dtype, renormalize):
    # The affine, non-orthogonal path (LEACE's): row scaling, a shift and
    # distinct left/right factors, over many stacked blocks and threads.
    rng = np.random.default_rng(2)
    d, r = 24, 5
    left, right = rng.standard_normal((2, r, d)) / np.sqrt(d)
    shift = rng.standard_normal(d) * 0.1
    X = rng.standard_normal((31 * 32 + 25, d)).astype(dtype)
    Z = _low_rank.low_rank_update(
        X, left, right, shift=shift, scale_rows=True, renormalize=renormalize
    )
    X64 = X.astype(np.float64)
    X64 /= np.linalg.norm(X64, axis=1, keepdims=True)
    expected = X64 - ((X64 - shift) @ right.T) @ left
    if renormalize:
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert Z.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_allclose(Z, expected, atol=tol)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 5])
@pytest.mark.parametrize("n_blocks", [1, 2, 7, 40])
def test_run_blocks_runs_every_block_once(monkeypatch, n_threads, n_blocks):
    monkeypatch.setattr(_low_rank, "blas_threads", lambda: n_threads)
    monkeypatch.setattr(_threads, "blas_threads", lambda: n_threads)
    seen = []
    lock = threading.Lock()

    def kernel(i):
        with lock:
            seen.append(i)

    _low_rank._run_blocks(kernel, n_blocks)
    assert sorted(seen) == list(range(n_blocks))

    def failing(i):
        if i == n_blocks - 1:
            raise RuntimeError("block failed")

    with pytest.raises(RuntimeError, match="block failed"):
        _low_rank._run_blocks(failing, n_blocks)


@pytest.mark.parametrize("n_components", [5, 0.5, "auto", "full"])
def test_isp_partial_fit_equals_fit_on_concatenation(n_components):
    X, ids = make_identity_embeddings(60, 8, 24, n_identity_dims=6, random_state=3)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(X))  # identities spread over several chunks
    X, ids = X[order], ids[order]
    full = ISP(n_components).fit(X, ids)
    chunked = ISP(n_components)
    for rows in np.array_split(np.arange(len(X)), 10):
        chunked.partial_fit(X[rows], ids[rows])
    assert chunked.n_components_ == full.n_components_ > 0
    assert subspace_angles(chunked.components_.T, full.components_.T).max() <= 1e-10
    assert_allclose(chunked.singular_values_, full.singular_values_, rtol=1e-10)
    assert_allclose(chunked.mean_, full.mean_, atol=1e-14)
    assert_allclose(chunked.transform(X), full.transform(X), atol=1e-12)
    assert list(chunked.identities_) == list(full.identities_)
    # fit resets what partial_fit accumulated.
    refit = chunked.fit(X[:100], ids[:100])
    assert_allclose(refit.mean_, ISP(n_components).fit(X[:100], ids[:100]).mean_)


def test_partial_fit_counts_dropped_rows_and_checks_features():
    X, ids = make_identity_embeddings(10, 6, 8, random_state=0)
    X = X.copy()
    X[0] = np.nan
    X[30] = 0.0
    isp = ISP(2)
    with pytest.warns(UserWarning):
        isp.partial_fit(X[:30], ids[:30])
    with pytest.warns(UserWarning):
        isp.partial_fit(X[30:], ids[30:])
    assert isp.drop_report_["non_finite"] == 1
    assert isp.drop_report_["low_norm"] == 1
    assert isp.drop_report_["n_input_rows"] == 60
    with pytest.raises(ValueError, match="features"):
        isp.partial_fit(X[:5, :4], ids[:5])


def test_leace_partial_fit_equals_fit():
    X, ids = make_identity_embeddings(30, 8, 16, n_identity_dims=4, random_state=4)
    full = LEACE(3).fit(X, ids)
    chunked = LEACE(3)
    for rows in np.array_split(np.arange(len(X)), 10):
        chunked.partial_fit(X[rows], ids[rows])
    assert_allclose(
        chunked.proj_left_ @ chunked.proj_right_,
        full.proj_left_ @ full.proj_right_,
        atol=1e-10,
    )
    assert_allclose(chunked.transform(X), full.transform(X), atol=1e-10)


@pytest.mark.slow
def test_dask_fit_and_lazy_transform_on_local_cluster():
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    X, ids = make_identity_embeddings(50, 8, 32, n_identity_dims=6, random_state=5)
    X = X.astype(np.float32)
    X[3] = np.nan  # dropped and counted block-wise, as in memory
    order = np.random.default_rng(1).permutation(len(X))
    X, ids = X[order], ids[order]
    with pytest.warns(UserWarning):
        local = ISP(6).fit(X, ids)
        local_auto = ISP().fit(X, ids)
    Xd = da.from_array(X, chunks=(37, 16))
    ids_d = da.from_array(ids, chunks=50)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        remote = ISP(6).fit(Xd, ids_d)
        remote_auto = ISP().fit(Xd, ids)
        Zd = remote.transform(Xd)
        assert isinstance(Zd, da.Array)  # lazy
        Z = Zd.compute()
    assert remote.drop_report_["non_finite"] == 1
    assert remote.n_features_in_ == 32
    for a, b in [(remote, local), (remote_auto, local_auto)]:
        assert a.n_components_ == b.n_components_
        assert subspace_angles(a.components_.T, b.components_.T).max() <= 1e-10
    assert Z.dtype == np.float32
    expected = local.transform(X)
    finite = ~np.isnan(X).any(axis=1)
    assert_allclose(Z[finite], expected[finite], atol=1e-5)
    assert np.isnan(Z[~finite]).all()
