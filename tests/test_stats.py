"""Public two-sample functions against independent computations and the auditors."""

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.stats import binom
from sklearn.neighbors import KernelDensity
from sklearn.preprocessing import normalize
from sklearn.utils._param_validation import InvalidParameterError

from skprivacy import GaussMechAuditor, KDELRAuditor, MMDTVAuditor
from skprivacy.auditors import mmd_certificate_margin
from skprivacy.datasets import make_identity_embeddings
from skprivacy.stats import (
    GaussMechResult,
    KDELRResult,
    MMDTestResult,
    gauss_mech_epsilon,
    gauss_mech_epsilon_from_moments,
    kde_lr_epsilon,
    kde_lr_per_dimension,
    mmd2_unbiased,
    mmd_test,
    mmd_to_epsilon,
    silverman_bandwidth,
)


# ------------------------------------------------------------ naive references
def loop_kernel_sums(X, Y, sigma):
    """Off-diagonal within sums and the cross sum of the RBF kernel, by loops."""

    def k(u, v):
        return math.exp(-sum((a - b) ** 2 for a, b in zip(u, v)) / (2 * sigma**2))

    n, m = len(X), len(Y)
    xx = sum(k(X[i], X[j]) for i in range(n) for j in range(n) if i != j)
    yy = sum(k(Y[i], Y[j]) for i in range(m) for j in range(m) if i != j)
    xy = sum(k(X[i], Y[j]) for i in range(n) for j in range(m))
    return xx, yy, xy


def loop_mmd2(X, Y, sigma):
    """Unbiased MMD^2 by a plain double loop over the formula."""
    n, m = len(X), len(Y)
    xx, yy, xy = loop_kernel_sums(X, Y, sigma)
    return xx / (n * (n - 1)) + yy / (m * (m - 1)) - 2 * xy / (n * m)


def loop_median_distance(Z):
    d = [math.dist(Z[i], Z[j]) for i, j in itertools.combinations(range(len(Z)), 2)]
    return float(np.median(d))


def replayed_relabellings(n_x, n_y, m, seed):
    """The relabelling stream documented in mmd_test's Notes."""
    z = np.r_[np.ones(n_x), np.zeros(n_y)]
    rng = np.random.default_rng(seed)
    return rng.permuted(np.broadcast_to(z, (m, n_x + n_y)), axis=1)


def naive_permutation_pvalue(X, Y, sigma, m, seed):
    Z = np.vstack([X, Y])
    observed = loop_mmd2(X, Y, sigma)
    b = 0
    for row in replayed_relabellings(len(X), len(Y), m, seed):
        stat = loop_mmd2(Z[row == 1], Z[row == 0], sigma)
        # Ties count (the relabelling that reproduces the split gives the
        # observed value up to summation order).
        b += stat >= observed - 1e-12 * (1 + abs(observed))
    return (b + 1) / (m + 1)


def by_hand_silverman(x):
    iqr = (np.percentile(x, 75) - np.percentile(x, 25)) / 1.349
    sd = np.std(x, ddof=1)
    spread = min(sd, iqr) if iqr > 0 else sd
    return 0.9 * spread * len(x) ** -0.2


def kde_eps_with_sklearn(X, Y, alpha, grid_size=201, margin=3.0, floor=1e-12):
    """Per-dimension KDE log-ratio from sklearn's KernelDensity."""
    out = []
    for j in range(X.shape[1]):
        x, y = X[:, j], Y[:, j]
        hx, hy = by_hand_silverman(x), by_hand_silverman(y)
        lo = min(x.min(), y.min()) - margin * max(hx, hy)
        hi = max(x.max(), y.max()) + margin * max(hx, hy)
        grid = np.linspace(lo, hi, grid_size)[:, None]
        px = np.exp(KernelDensity(bandwidth=hx).fit(x[:, None]).score_samples(grid))
        py = np.exp(KernelDensity(bandwidth=hy).fit(y[:, None]).score_samples(grid))
        u = 1.0 / (hi - lo)
        qx = np.maximum((1 - alpha) * px + alpha * u, floor)
        qy = np.maximum((1 - alpha) * py + alpha * u, floor)
        out.append(np.max(np.abs(np.log(qx) - np.log(qy))))
    return np.array(out)


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(7)
    return rng.normal(size=(9, 3)), rng.normal(0.4, 1.2, size=(7, 3))


# --------------------------------------------------------------------- mmd_test
def test_mmd_statistic_equals_double_loop(pair):
    X, Y = pair
    result = mmd_test(X, Y, bandwidth=1.3, n_permutations=0)
    assert_allclose(result.statistic, loop_mmd2(X, Y, 1.3), rtol=1e-10, atol=1e-14)
    assert result.bandwidth == 1.3
    assert math.isnan(result.pvalue)


def test_mmd_median_bandwidth_and_epsilon_formula(pair):
    X, Y = pair
    result = mmd_test(X, Y, n_permutations=0)
    sigma = loop_median_distance(np.vstack([X, Y]))
    assert_allclose(result.bandwidth, sigma, rtol=1e-12)
    stat = loop_mmd2(X, Y, sigma)
    assert_allclose(result.statistic, stat, rtol=1e-10, atol=1e-14)
    mmd = math.sqrt(max(stat, 0.0))
    assert_allclose(result.mmd, mmd, rtol=1e-9)
    assert_allclose(result.epsilon, math.log((2 + mmd) / (2 - mmd)), rtol=1e-9)
    gonzalez = mmd_test(X, Y, n_permutations=0, bound="gonzalez")
    assert_allclose(gonzalez.epsilon, 2 * math.atanh(mmd / math.sqrt(2)), rtol=1e-9)
    assert result.epsilon <= 2 * math.atanh(math.sqrt(2) / 2)


@pytest.mark.parametrize(
    "n_x, n_y, shift, m, seed",
    [
        (4, 4, 0.0, 300, 0),  # 70 distinct splits: many exact ties
        (9, 7, 0.4, 200, 1),
        (12, 10, 1.5, 150, 2),  # separated: p at its minimum 1/(m+1)
    ],
)
def test_mmd_pvalue_equals_naive_loop_with_same_relabellings(n_x, n_y, shift, m, seed):
    rng = np.random.default_rng(100 + seed)
    X = rng.normal(size=(n_x, 2))
    Y = rng.normal(shift, size=(n_y, 2))
    result = mmd_test(X, Y, n_permutations=m, random_state=seed)
    expected = naive_permutation_pvalue(X, Y, result.bandwidth, m, seed)
    assert result.pvalue == pytest.approx(expected, abs=1e-15)
    assert result.n_permutations == m
    if shift > 1:
        assert result.pvalue == 1 / (m + 1)


def test_mmd_agrees_with_auditor_on_a_pair():
    X, ids = make_identity_embeddings(4, 15, 8, noise=1.5, random_state=3)
    m = 499
    auditor = MMDTVAuditor(n_pairs=None, n_permutations=m).fit(X, ids)
    Z = normalize(X)
    for row in auditor.results_.itertuples():
        A, B = Z[ids == row.id_a], Z[ids == row.id_b]
        # MMDTVAuditor shares one relabelling stream between pairs of equal
        # sizes, seeded by (random_state, n_a, n_b); replaying it here gives
        # the auditor's exact p-value.
        ss = np.random.SeedSequence(0, spawn_key=(len(A), len(B), 0, 1))
        rng = np.random.Generator(np.random.PCG64(ss))
        result = mmd_test(A, B, n_permutations=m, random_state=rng)
        assert_allclose(result.statistic, row.mmd2_unbiased, rtol=1e-12, atol=1e-15)
        assert_allclose(result.bandwidth, row.bandwidth, rtol=1e-12)
        assert_allclose(result.epsilon, row.epsilon, rtol=1e-12, atol=1e-15)
        assert result.pvalue == row.p_value


@pytest.mark.slow
def test_mmd_pvalues_calibrated_under_the_null():
    # 200 null pairs, m = 99: rejections at 0.05 inside a 99.9% binomial band.
    rng = np.random.default_rng(0)
    pvalues = [
        mmd_test(
            rng.normal(size=(10, 2)),
            rng.normal(size=(10, 2)),
            n_permutations=99,
            random_state=s,
        ).pvalue
        for s in range(200)
    ]
    lo, hi = binom.ppf([0.0005, 0.9995], 200, 0.05)
    assert lo <= np.sum(np.array(pvalues) <= 0.05) <= hi
    assert min(pvalues) >= 1 / 100


def test_mmd_result_unpacks_and_is_frozen(pair):
    result = mmd_test(*pair, n_permutations=99)
    statistic, pvalue = result
    assert (statistic, pvalue) == (result.statistic, result.pvalue)
    assert isinstance(result, MMDTestResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.pvalue = 0.0


def test_mmd_seeding(pair):
    X, Y = pair
    a = mmd_test(X, Y, n_permutations=199, random_state=5)
    b = mmd_test(X, Y, n_permutations=199, random_state=5)
    c = mmd_test(X, Y, n_permutations=199, random_state=np.random.default_rng(5))
    assert a == b
    assert a.pvalue == c.pvalue


def test_one_dimensional_samples_are_one_feature():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=20), rng.normal(1.0, size=25)
    assert mmd_test(x, y, n_permutations=0) == mmd_test(
        x[:, None], y[:, None], n_permutations=0
    )
    assert (
        kde_lr_epsilon(x, y).epsilon == kde_lr_epsilon(x[:, None], y[:, None]).epsilon
    )


def test_tiny_samples_and_text_columns():
    # 2 + 2 rows: the observed split and its mirror image are 2 of the 6
    # splits, so even perfectly separated samples give p near 1/3.
    result = mmd_test([[0, 1], [1, 0]], [[5, 5], [6, 6]], n_permutations=999)
    assert 0.28 < result.pvalue < 0.39
    frame = pd.DataFrame({"path": ["a.jpg", "b.jpg"], "e0": [0.1, 0.2]})
    with pytest.raises(
        ValueError, match="Y: Embedding columns must be numeric.*'path'"
    ):
        mmd_test(frame[["e0"]], frame)


@pytest.mark.parametrize(
    "X, Y, err, match",
    [
        (
            [[1.0, np.nan], [0.0, 1.0]],
            [[0.0, 1.0], [1.0, 0.0]],
            ValueError,
            "X contains NaN",
        ),
        (
            [[1.0, 0.0], [0.0, 1.0]],
            [[0.0, np.inf], [1.0, 0.0]],
            ValueError,
            "Y contains inf",
        ),
        (
            [[1.0, 0.0], [0.0, 1.0]],
            [[0.0, 1.0, 2.0]] * 2,
            ValueError,
            "same number of features",
        ),
        ([[1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]], ValueError, "minimum of 2"),
        ([["a", "b"], ["c", "d"]], [[0.0, 1.0], [1.0, 0.0]], ValueError, "convert"),
    ],
)
@pytest.mark.parametrize("func", [mmd_test, kde_lr_epsilon, gauss_mech_epsilon])
def test_bad_samples_raise_naming_the_problem(func, X, Y, err, match):
    with pytest.raises(err, match=match):
        func(X, Y)


def test_bad_parameters_raise(pair):
    X, Y = pair
    with pytest.raises(InvalidParameterError, match="bandwidth"):
        mmd_test(X, Y, bandwidth=0.0)
    with pytest.raises(InvalidParameterError, match="n_permutations"):
        mmd_test(X, Y, n_permutations=-1)
    with pytest.raises(InvalidParameterError, match="bound"):
        mmd_test(X, Y, bound="hellinger")
    with pytest.raises(InvalidParameterError, match="alpha"):
        kde_lr_epsilon(X, Y, alpha=2.0)
    with pytest.raises(InvalidParameterError, match="delta"):
        gauss_mech_epsilon(X, Y, delta=0.0)


# ----------------------------------------------------------------------- KDE-LR
@pytest.mark.parametrize("alpha", [0.0, 1e-2])
def test_kde_lr_matches_sklearn_kernel_density(alpha):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 3))
    Y = rng.standard_t(3, size=(30, 3)) * 0.7 + 0.3
    result = kde_lr_epsilon(X, Y, alpha=alpha)
    expected = kde_eps_with_sklearn(X, Y, alpha)
    assert_allclose(result.epsilon_per_dimension, expected, rtol=1e-8)
    assert_allclose(result.epsilon, expected.sum(), rtol=1e-8)
    assert result.statistic == result.epsilon
    assert result.argmax_dimension == int(np.argmax(expected))
    assert_allclose(
        result.bandwidth_x, [by_hand_silverman(X[:, j]) for j in range(3)], rtol=1e-12
    )
    assert isinstance(result, KDELRResult)


def test_kde_lr_agrees_with_auditor_on_a_pair():
    X, ids = make_identity_embeddings(3, 12, 6, random_state=0)
    auditor = KDELRAuditor(alpha=0.01, n_pairs=None).fit(X, ids)
    Z = normalize(X)
    for t, row in enumerate(auditor.results_.itertuples()):
        result = kde_lr_epsilon(Z[ids == row.id_a], Z[ids == row.id_b], alpha=0.01)
        assert_allclose(result.epsilon, row.epsilon, rtol=1e-12)
        assert_allclose(
            result.epsilon_per_dimension, auditor.epsilon_per_dimension_[t], rtol=1e-12
        )


# -------------------------------------------------------------------- GaussMech
def test_gauss_mech_by_hand():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(20, 5)), rng.normal(0.3, 2.0, size=(15, 5))
    result = gauss_mech_epsilon(X, Y, delta=1e-4)
    s_x = math.sqrt(((X - X.mean(0)) ** 2).sum() / X.size)
    s_y = math.sqrt(((Y - Y.mean(0)) ** 2).sum() / Y.size)
    gap = math.dist(X.mean(0), Y.mean(0))
    assert_allclose([result.sigma_x, result.sigma_y], [s_x, s_y], rtol=1e-12)
    assert_allclose(result.delta_mean, gap, rtol=1e-12)
    assert_allclose(result.statistic, gap / max(s_x, s_y), rtol=1e-12)
    assert_allclose(
        result.epsilon,
        gap * math.sqrt(2 * math.log(1.25e4)) / max(s_x, s_y),
        rtol=1e-12,
    )
    assert isinstance(result, GaussMechResult)


def test_gauss_mech_agrees_with_auditor_and_degenerate_cases():
    X, ids = make_identity_embeddings(3, 10, 6, random_state=1)
    auditor = GaussMechAuditor(n_pairs=None).fit(X, ids)
    Z = normalize(X)
    for row in auditor.results_.itertuples():
        result = gauss_mech_epsilon(Z[ids == row.id_a], Z[ids == row.id_b])
        assert_allclose(result.epsilon, row.epsilon, rtol=1e-12)
    same = [[1.0, 0.0], [1.0, 0.0]]
    assert gauss_mech_epsilon(same, same).epsilon == 0.0
    assert gauss_mech_epsilon(same, [[0.0, 1.0], [0.0, 1.0]]).epsilon == math.inf


# ------------------------------------------------------------ pure per-pair maths
def test_mmd2_unbiased_equals_double_loop(pair):
    X, Y = pair
    xx, yy, xy = loop_kernel_sums(X, Y, 0.8)
    got = mmd2_unbiased(xx, yy, xy, len(X), len(Y))
    assert_allclose(got, loop_mmd2(X, Y, 0.8), rtol=1e-13)
    # Vectorised over pairs.
    vec = mmd2_unbiased([xx, 2.0], [yy, 2.0], [xy, 0.0], [len(X), 2], [len(Y), 2])
    assert_allclose(vec, [loop_mmd2(X, Y, 0.8), 2.0], rtol=1e-13)
    with pytest.raises(ValueError, match="at least 2 rows"):
        mmd2_unbiased(0.0, 0.0, 0.0, 1, 3)


@pytest.mark.parametrize("bound, denom", [("tv", 2.0), ("gonzalez", math.sqrt(2))])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.05])
def test_mmd_to_epsilon_is_the_tv_formula(bound, denom, delta):
    mmd = np.array([0.0, 0.01, 0.3, 0.8, 1.2, math.sqrt(2)])
    got = mmd_to_epsilon(mmd, bound, delta)
    for value, eps in zip(mmd, got):
        t = min(value / denom, 1.0)
        if t >= 1:
            want = math.inf
        elif delta == 0:
            want = 2 * math.atanh(t)
        elif t <= delta:
            want = 0.0
        else:
            want = max(math.log((1 + t - 2 * delta) / (1 - t)), 0.0)
        assert eps == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_mmd_certificate_margin_is_hoeffding():
    got = mmd_certificate_margin(
        [100, 7, 40], [30, 50, 41], confidence=0.9, n_bandwidths=37
    )
    want = [
        math.sqrt(8 * math.log(37 / 0.1) / min(n_x // 2, n_y // 2))
        for n_x, n_y in [(100, 30), (7, 50), (40, 41)]
    ]
    assert_allclose(got, want, rtol=1e-14)


def test_gauss_mech_from_moments_equals_loop_over_rows():
    rng = np.random.default_rng(11)
    samples = [rng.normal(size=(12, 4)), rng.normal(0.3, 2.0, size=(9, 4))]
    moments = []
    for S in samples:
        mean = [sum(S[i, j] for i in range(len(S))) / len(S) for j in range(4)]
        ss = sum((S[i, j] - mean[j]) ** 2 for i in range(len(S)) for j in range(4))
        moments.append((mean, math.sqrt(ss / (len(S) * 4))))
    (mx, sx), (my, sy) = moments
    gap = math.dist(mx, my)
    got = gauss_mech_epsilon_from_moments(gap, sx, sy, delta=1e-3)
    assert_allclose(got, gap * math.sqrt(2 * math.log(1250)) / max(sx, sy), rtol=1e-14)
    edge = gauss_mech_epsilon_from_moments([0.0, 1.0, 1.0], [0.0, 0.0, 0.5], 0.0)
    assert edge.tolist() == [
        0.0,
        math.inf,
        pytest.approx(2 * math.sqrt(2 * math.log(1.25e5))),
    ]


@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_kde_lr_per_dimension_with_given_bandwidths_matches_sklearn(alpha):
    rng = np.random.default_rng(12)
    X, Y = rng.normal(size=(20, 2)), rng.normal(0.5, 0.7, size=(25, 2))
    hx, hy = np.array([0.4, 0.2]), np.array([0.3, 0.5])
    got = kde_lr_per_dimension(X, Y, bandwidth_x=hx, bandwidth_y=hy, alpha=alpha)
    for j in range(2):
        x, y = X[:, j], Y[:, j]
        h = max(hx[j], hy[j])
        lo, hi = min(x.min(), y.min()) - 3 * h, max(x.max(), y.max()) + 3 * h
        grid = np.linspace(lo, hi, 201)[:, None]
        px = np.exp(KernelDensity(bandwidth=hx[j]).fit(x[:, None]).score_samples(grid))
        py = np.exp(KernelDensity(bandwidth=hy[j]).fit(y[:, None]).score_samples(grid))
        qx = np.maximum((1 - alpha) * px + alpha / (hi - lo), 1e-12)
        qy = np.maximum((1 - alpha) * py + alpha / (hi - lo), 1e-12)
        assert got[j] == pytest.approx(np.abs(np.log(qx) - np.log(qy)).max(), rel=1e-8)
    # Default bandwidths: Silverman's rule of each sample.
    assert_allclose(
        kde_lr_per_dimension(X, Y),
        kde_lr_per_dimension(
            X,
            Y,
            bandwidth_x=[by_hand_silverman(X[:, j]) for j in range(2)],
            bandwidth_y=[by_hand_silverman(Y[:, j]) for j in range(2)],
        ),
        rtol=1e-12,
    )
    assert_allclose(
        silverman_bandwidth(X), [by_hand_silverman(X[:, j]) for j in range(2)]
    )


def test_auditors_call_the_same_per_pair_maths():
    # Every per-pair column of the auditors is the public function of the
    # auditor's own per-pair inputs, to the last bit.
    X, ids = make_identity_embeddings(8, 12, 10, random_state=4)
    g = GaussMechAuditor(n_pairs=None, delta=1e-4).fit(X, ids).results_
    assert np.array_equal(
        g["epsilon"],
        gauss_mech_epsilon_from_moments(
            g["delta_mean"], g["sigma_a"], g["sigma_b"], delta=1e-4
        ),
    )
    m = MMDTVAuditor(n_pairs=None, confidence=0.9, delta=0.01).fit(X, ids).results_
    assert np.array_equal(m["epsilon"], mmd_to_epsilon(m["mmd"], "tv", 0.01))
    assert np.array_equal(m["mmd"], np.sqrt(np.maximum(m["mmd2_unbiased"], 0)))
    margin = mmd_certificate_margin(
        12, 12, confidence=0.9, n_comparisons=len(m), n_bandwidths=37
    )
    assert (m["mmd2_margin"] == margin).all()
    k = KDELRAuditor(n_pairs=5, alpha=0.01).fit(X, ids)
    Z = normalize(X)
    for t, row in enumerate(k.results_.itertuples()):
        A, B = Z[ids == row.id_a], Z[ids == row.id_b]
        assert np.array_equal(
            k.epsilon_per_dimension_[t], kde_lr_per_dimension(A, B, alpha=0.01)
        )


def test_stats_does_not_import_the_estimators():
    # The functions are the maths; the estimators call them, not the reverse.
    import ast
    from pathlib import Path

    import skprivacy.stats

    for path in Path(skprivacy.stats.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("skprivacy.auditors"), path
            if isinstance(node, ast.Import):
                assert not any(
                    a.name.startswith("skprivacy.auditors") for a in node.names
                )
