"""Each tuned kernel of ``skprivacy._kernels`` against the plain reference beside it."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.spatial.distance import cdist, pdist

from skprivacy._kernels._kde import kde_on_grid, kde_on_grid_reference
from skprivacy._kernels._low_rank import low_rank_update, low_rank_update_reference
from skprivacy._kernels._mmd import (
    cross_blocks,
    dense_medians,
    identity_state,
    median_sq_reference,
    pair_bandwidths,
    permutation_test,
    permutation_test_reference,
    relabellings,
    within_kernel_sums,
    within_kernel_sums_reference,
)
from skprivacy._kernels._moments import grouped_moments, grouped_moments_reference


def _grouped(sizes, d, rng, dtype=np.float64):
    X = rng.standard_normal((int(sum(sizes)), d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return X.astype(dtype), starts


# ----------------------------------------------------------------------- MMD
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("equal", [True, False])
@pytest.mark.parametrize("dense", [True, False])
def test_cross_blocks_and_within_distances_equal_cdist(dtype, equal, dense):
    rng = np.random.default_rng(0)
    sizes = [7] * 9 if equal else rng.integers(2, 12, size=9).tolist()
    X, starts = _grouped(sizes, 5, rng, dtype)
    uses = np.full(len(sizes), 9)
    state = identity_state(X, starts, uses)
    iu = np.triu_indices(len(sizes), 1)
    pairs = np.column_stack(iu)
    if not dense:
        pairs = pairs[rng.permutation(len(pairs))[:5]]
    tol = 1e-12 if dtype == np.float64 else 2e-6
    seen = np.zeros(len(pairs), dtype=int)
    for block, rows in cross_blocks(state, pairs):
        for i, t in enumerate(rows):
            a, b = pairs[t]
            A, B = X[starts[a] : starts[a + 1]], X[starts[b] : starts[b + 1]]
            want = cdist(A.astype(np.float64), B.astype(np.float64), "sqeuclidean")
            # Any layout, +inf padding for unequal identity sizes.
            got = block[i][np.isfinite(block[i])].astype(np.float64)
            assert got.size == want.size
            assert_allclose(np.sort(got), np.sort(want.ravel()), atol=tol)
            seen[t] += 1
    assert (seen == 1).all()
    for i in range(len(sizes)):
        w = state["within"][state["tri"][i] : state["tri"][i + 1]]
        ref = np.sort(pdist(X[starts[i] : starts[i + 1]].astype(np.float64)) ** 2)
        assert_allclose(w, ref, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pair_bandwidths_equal_reference_median(dtype):
    rng = np.random.default_rng(1)
    sizes = rng.integers(2, 30, size=8)
    X, starts = _grouped(sizes, 4, rng, dtype)
    X[starts[3] : starts[4]] = X[starts[3]]  # identity 3: coincident rows
    X[starts[4] : starts[5]] = X[starts[3]]  # identity 4 on the same point
    state = identity_state(X, starts, np.ones(len(sizes), np.intp))
    pairs = np.column_stack(np.triu_indices(len(sizes), 1))
    for block, rows in cross_blocks(state, pairs):
        a, b = pairs[rows, 0], pairs[rows, 1]
        median, sigma = pair_bandwidths(state, block, a, b)
        for i in range(len(rows)):
            w = state["within"]
            tri = state["tri"]
            pooled = np.concatenate(
                (
                    w[tri[a[i]] : tri[a[i] + 1]],
                    w[tri[b[i]] : tri[b[i] + 1]],
                    block[i][block[i] < np.inf].astype(np.float64),
                )
            )
            assert median[i] == median_sq_reference(pooled)
            if median[i] > 0:
                assert sigma[i] == median[i]
            else:  # the RMS distance, or 1 when every point coincides
                rms = np.sqrt(pooled.mean())
                assert sigma[i] == pytest.approx(rms if rms > 0 else 1.0, rel=1e-12)


def test_dense_medians_equal_reference_on_ties_and_misleading_subsamples():
    rng = np.random.default_rng(3)
    sizes = np.array([2, 40, 17, 33, 5])
    within_parts = [np.sort(rng.random(n * (n - 1) // 2)) for n in sizes]
    within_parts[1][:] = 0.25  # all ties
    within = np.concatenate(within_parts)
    tri = np.concatenate([[0], np.cumsum([w.size for w in within_parts])])
    a, b = np.array([0, 1, 2, 1]), np.array([1, 3, 4, 2])
    width = int((sizes[a] * sizes[b]).max())
    cross = np.full((len(a), width), np.inf)
    for t in range(len(a)):
        cross[t, : sizes[a[t]] * sizes[b[t]]] = rng.random(sizes[a[t]] * sizes[b[t]])
    n3 = sizes[a[3]] * sizes[b[3]]
    cross[3, :n3] = 1e-3
    cross[3, :n3:8] = 1.4  # a subsample that misleads the bracket
    got = dense_medians(cross, sizes[a] * sizes[b], within, tri, a, b)
    for t in range(len(a)):
        pooled = np.concatenate(
            (
                within_parts[a[t]],
                within_parts[b[t]],
                cross[t][: sizes[a[t]] * sizes[b[t]]],
            )
        )
        assert got[t] == median_sq_reference(pooled)


def test_within_kernel_sums_series_equal_reference():
    rng = np.random.default_rng(4)
    sizes = [30, 12, 45, 2]
    X, starts = _grouped(sizes, 6, rng)
    # Identities 0 and 2 use the moment series, 1 and 3 direct sums.
    state = identity_state(X, starts, np.array([50, 1, 8, 7]))
    ids = np.repeat(np.arange(4), 6)
    gamma = np.tile([0.01, 0.3, 1.0, 2.5, 6.0, 40.0], 4)
    assert_allclose(
        within_kernel_sums(state, ids, gamma),
        within_kernel_sums_reference(state, ids, gamma),
        rtol=1e-12,
    )


@pytest.mark.parametrize("n_a, n_b, shift", [(4, 4, 0.0), (9, 6, 0.5), (12, 15, 2.0)])
def test_permutation_test_equals_reference(n_a, n_b, shift):
    rng = np.random.default_rng(n_a)
    Z = np.vstack([rng.normal(size=(n_a, 3)), rng.normal(shift, 1.0, size=(n_b, 3))])
    indicators = relabellings(n_a + n_b, n_a, 300, np.random.default_rng(1))
    p, stat = permutation_test(Z, n_a, 0.9, 300, indicators=indicators)
    p_ref, stat_ref = permutation_test_reference(Z, n_a, 0.9, indicators)
    assert p == p_ref
    assert stat == pytest.approx(stat_ref, rel=1e-12, abs=1e-15)
    # Drawn in batches from a generator: the same relabellings.
    p_rng, _ = permutation_test(Z, n_a, 0.9, 300, np.random.default_rng(1))
    assert p_rng == p


# ----------------------------------------------------------------------- KDE
@pytest.mark.parametrize("grid_size", [2, 31, 201, 500])
def test_kde_on_grid_equals_direct_evaluation(grid_size):
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(size=40), rng.standard_t(2, size=40), np.zeros(40)])
    h = np.array([0.3, 0.05, 1e-6])  # a narrow kernel: direct evaluation
    lo = X.min(axis=0) - 3 * h
    step = (X.max(axis=0) + 3 * h - lo) / (grid_size - 1)
    got = kde_on_grid(X, h, lo, step, grid_size)
    want = kde_on_grid_reference(X, h, lo, step, grid_size)
    # ~L ulps relative where the density is not negligible (segments of at
    # most 32 grid points), and no spurious mass where it is.
    assert_allclose(got, want, rtol=1e-12, atol=1e-250)


# ------------------------------------------------------------------- moments
@pytest.mark.parametrize("deferred", [False, True])
def test_grouped_moments_equal_reference(deferred, monkeypatch):
    from skprivacy._kernels import _moments

    monkeypatch.setattr(_moments, "BLOCK_ROWS", 40)  # several blocks
    rng = np.random.default_rng(6)
    sizes = rng.integers(1, 25, size=12)
    X, starts = _grouped(sizes, 7, rng)
    X[starts[4] : starts[5]] = X[starts[4]]  # identical rows: sigma exactly 0
    X[starts[6] : starts[7]] += 1e3  # nearly constant: the direct residuals
    norms = None
    if deferred:
        norms = rng.uniform(0.5, 3.0, size=len(X))
        norms[starts[4] : starts[5]] = 2.0  # still identical rows once divided
        X = X * norms[:, None]
    means, sigmas = grouped_moments(X, starts, norms)
    ref_means, ref_sigmas = grouped_moments_reference(X, starts, norms)
    assert_allclose(means, ref_means, rtol=1e-12, atol=1e-15)
    assert_allclose(sigmas, ref_sigmas, rtol=1e-9, atol=1e-15)
    assert sigmas[4] == 0.0


# ----------------------------------------------------------------- low rank
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["orthogonal", "orthogonal_raw", "affine"])
def test_low_rank_update_equals_reference(dtype, case):
    rng = np.random.default_rng(7)
    n, d, r = 3000, 40, 6
    X = rng.standard_normal((n, d))
    U = np.linalg.qr(rng.standard_normal((d, r)))[0].T
    # Rows almost inside the removed subspace: the cancellation path.
    X[:20] = rng.standard_normal((20, r)) @ U + 1e-4 * rng.standard_normal((20, d))
    X = X.astype(dtype)
    if case == "affine":
        left, right = rng.standard_normal((2, r, d)) / np.sqrt(d)
        kw = {"shift": rng.standard_normal(d) * 0.1, "scale_rows": True}
        kw_ref = dict(kw)
        renormalize = True
    else:
        left = right = U
        kw = {"orthogonal": True}
        kw_ref = {}
        renormalize = case == "orthogonal"
    got = low_rank_update(X, left, right, renormalize=renormalize, **kw)
    want = low_rank_update_reference(X, left, right, renormalize=renormalize, **kw_ref)
    assert got.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 2e-5
    if dtype == np.float32 and renormalize:
        # The float32 input rows near the subspace keep ~1e-3 relative error
        # after re-normalisation (eps32 amplified by 1 / ||P x||).
        assert_allclose(got[20:], want[20:], atol=tol)
        assert_allclose(got[:20], want[:20], atol=2e-2)
    else:
        assert_allclose(got, want, atol=tol)


def test_segment_searchsorted_equals_numpy_searchsorted():
    from skprivacy._kernels._mmd import _segment_searchsorted

    rng = np.random.default_rng(8)
    lengths = rng.integers(0, 40, size=30)
    lengths[3] = 1
    tri = np.concatenate([[0], np.cumsum(lengths)])
    values = np.concatenate([np.sort(rng.integers(0, 10, n)) for n in lengths])
    values = values.astype(np.float64)
    ids = rng.integers(0, 30, size=200)
    x = rng.integers(-1, 12, size=200).astype(np.float64)  # ties with values
    got = _segment_searchsorted(values, tri[ids], tri[ids + 1], x)
    want = [np.searchsorted(values[tri[i] : tri[i + 1]], v) for i, v in zip(ids, x)]
    assert got.tolist() == want
    # side="right" is side="left" at the next float up.
    got = _segment_searchsorted(values, tri[ids], tri[ids + 1], np.nextafter(x, 99))
    want = [
        np.searchsorted(values[tri[i] : tri[i + 1]], v, "right") for i, v in zip(ids, x)
    ]
    assert got.tolist() == want


def test_within_subsample_rows():
    from skprivacy._kernels._mmd import within_subsample

    tri = np.array([0, 5, 5 + 40, 5 + 40 + 1])
    within = np.arange(46, dtype=np.float64)
    sub = within_subsample(within, tri, stride=16)
    assert sub.shape == (3, 3)
    assert sub[0].tolist() == [0.0, np.inf, np.inf]
    assert sub[1].tolist() == [5.0, 21.0, 37.0]
    assert sub[2].tolist() == [45.0, np.inf, np.inf]
