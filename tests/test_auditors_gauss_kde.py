"""GaussMech and KDE-LR against independent per-pair computations."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import norm

from skprivacy.auditors import GaussMechAuditor, KDELRAuditor, kde_lr_alpha_sweep
from skprivacy.datasets import load_yale_faces, make_identity_embeddings
from skprivacy.stats import silverman_bandwidth


def _unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def yale():
    b = load_yale_faces()
    return np.asarray(b.data, dtype=float), np.asarray(b.identity)


@pytest.fixture(scope="module")
def synthetic():
    return make_identity_embeddings(12, 15, 24, random_state=3)


# ---------------------------------------------------------------- GaussMech
def naive_gauss(A, B, delta):
    mu_a, mu_b = A.mean(axis=0), B.mean(axis=0)
    d = A.shape[1]
    s_a = np.sqrt(sum(np.sum((a - mu_a) ** 2) for a in A) / (len(A) * d))
    s_b = np.sqrt(sum(np.sum((b - mu_b) ** 2) for b in B) / (len(B) * d))
    dist = np.sqrt(np.sum((mu_a - mu_b) ** 2))
    return dist * np.sqrt(2 * np.log(1.25 / delta)) / max(s_a, s_b)


@pytest.mark.parametrize("data", ["yale", "synthetic"])
def test_gaussmech_matches_naive_every_pair(data, request):
    X, ids = request.getfixturevalue(data)
    auditor = GaussMechAuditor(n_pairs=None, delta=1e-4).fit(X, ids)
    Z = _unit(X)
    expected = [
        naive_gauss(Z[ids == a], Z[ids == b], 1e-4)
        for a, b in zip(auditor.results_["id_a"], auditor.results_["id_b"])
    ]
    n = len(np.unique(ids))
    assert len(auditor.results_) == n * (n - 1) // 2
    assert_allclose(auditor.results_["epsilon"], expected, rtol=1e-9)
    assert auditor.score() == pytest.approx(np.median(expected), rel=1e-9)
    assert auditor.summary_kind_ == "median"
    assert auditor.guarantee_ == "point estimate"


@pytest.mark.parametrize("auditor", ["gauss", "kde"])
def test_few_pairs_of_many_shuffled_identities_match_naive(auditor):
    # 3,000 identities in shuffled row order, 12 pairs: only the pairs'
    # identities are gathered, and each pair equals the naive computation.
    rng = np.random.default_rng(5)
    n_ids, per, d = 3000, 4, 6
    ids = rng.permutation(np.repeat(np.arange(n_ids) * 7, per))
    X = rng.normal(size=(len(ids), d)) + (ids[:, None] % 5)
    est = (
        GaussMechAuditor(n_pairs=12)
        if auditor == "gauss"
        else KDELRAuditor(n_pairs=12, grid_size=31)
    ).fit(X, ids)
    Z = _unit(X)
    for t, (a, b) in enumerate(zip(est.results_["id_a"], est.results_["id_b"])):
        A, B = Z[ids == a], Z[ids == b]
        if auditor == "gauss":
            expected = naive_gauss(A, B, 1e-5)
        else:
            expected = naive_kde_lr(A, B, 0.0, grid_size=31)[0]
        assert est.results_["epsilon"].iloc[t] == pytest.approx(expected, rel=1e-6)


def test_gaussmech_hand_case():
    # A at angles +-45 deg around e1, B around e2: means differ by sqrt(2) cos 45 = 1,
    # residual RMS per coordinate sin(45)/sqrt(2) = 1/2, so eps = 2 sqrt(2 ln 1.25e5).
    c = np.sqrt(0.5)
    X = np.array([[c, c], [c, -c], [c, c], [-c, c]])
    ids = ["A", "A", "B", "B"]
    auditor = GaussMechAuditor(delta=1e-5).fit(X, ids)
    row = auditor.results_.iloc[0]
    assert row["delta_mean"] == pytest.approx(1.0, rel=1e-12)
    assert row["sigma"] == pytest.approx(0.5, rel=1e-12)
    assert row["epsilon"] == pytest.approx(2 * np.sqrt(2 * np.log(1.25e5)), rel=1e-12)


def test_gaussmech_monotone_in_planted_separation():
    scores = [
        GaussMechAuditor(n_pairs=None)
        .fit(*make_identity_embeddings(8, 20, 16, separation=s, random_state=0))
        .score()
        for s in (0.2, 0.5, 1.0, 2.0)
    ]
    assert np.all(np.diff(scores) > 0)


# ------------------------------------------------------------------- KDE-LR
def naive_silverman(x):
    n = len(x)
    s = np.std(x, ddof=1)
    q75, q25 = np.percentile(x, [75, 25])
    iqr = (q75 - q25) / 1.349
    spread = min(s, iqr) if iqr > 0 else s
    return 0.9 * spread * n ** (-0.2)


def naive_kde_lr(A, B, alpha, grid_size=201, margin=3.0, floor=1e-12):
    total, per_dim = 0.0, []
    for j in range(A.shape[1]):
        xa, xb = A[:, j], B[:, j]
        ha, hb = naive_silverman(xa), naive_silverman(xb)
        hm = max(ha, hb)
        lo = min(xa.min(), xb.min()) - margin * hm
        hi = max(xa.max(), xb.max()) + margin * hm
        g = np.linspace(lo, hi, grid_size)[:, None]
        # scipy's normal pdf, one grid point per row (no recurrence).
        pa = norm.pdf((g - xa) / ha).mean(axis=1) / ha
        pb = norm.pdf((g - xb) / hb).mean(axis=1) / hb
        u = 1.0 / (hi - lo)
        qa = np.maximum((1 - alpha) * pa + alpha * u, floor)
        qb = np.maximum((1 - alpha) * pb + alpha * u, floor)
        eps_d = np.max(np.abs(np.log(qa) - np.log(qb)))
        per_dim.append(eps_d)
        total += eps_d
    return total, np.array(per_dim)


@pytest.mark.parametrize("alpha", [0.0, 1e-2])
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_kdelr_matches_naive_on_yale(yale, alpha):
    X, ids = yale
    auditor = KDELRAuditor(alpha=alpha, n_pairs=8).fit(X, ids)
    Z = _unit(X)
    for t, (a, b) in enumerate(zip(auditor.results_["id_a"], auditor.results_["id_b"])):
        total, per_dim = naive_kde_lr(Z[ids == a], Z[ids == b], alpha)
        assert_allclose(auditor.epsilon_per_dimension_[t], per_dim, rtol=1e-6)
        assert auditor.results_["epsilon"].iloc[t] == pytest.approx(total, rel=1e-6)
    assert auditor.epsilon_per_dimension_.shape == (8, X.shape[1])
    assert_allclose(
        auditor.results_["epsilon"], auditor.epsilon_per_dimension_.sum(axis=1)
    )


def test_kdelr_matches_naive_on_synthetic(synthetic):
    X, ids = synthetic
    auditor = KDELRAuditor(alpha=0.0, n_pairs=10, grid_size=51, margin=2.0).fit(X, ids)
    Z = _unit(X)
    expected = [
        naive_kde_lr(Z[ids == a], Z[ids == b], 0.0, grid_size=51, margin=2.0)[0]
        for a, b in zip(auditor.results_["id_a"], auditor.results_["id_b"])
    ]
    assert_allclose(auditor.results_["epsilon"], expected, rtol=1e-6)


def test_kde_recurrence_handles_tiny_bandwidths():
    # Far-apart tight clusters: the grid spacing is many bandwidths, so the
    # engine must fall back to direct evaluation and still match.
    rng = np.random.default_rng(0)
    A = np.column_stack([0.01 * rng.standard_normal(30) + 0.2, np.ones(30)])
    B = np.column_stack([1e-4 * rng.standard_normal(30) + 0.9, np.ones(30)])
    X = np.vstack([A, B])
    ids = np.repeat(["a", "b"], 30)
    auditor = KDELRAuditor().fit(X, ids)
    Z = _unit(X)
    expected, _ = naive_kde_lr(Z[:30], Z[30:], 0.0)
    assert auditor.results_["epsilon"].iloc[0] == pytest.approx(expected, rel=1e-6)


def test_silverman_hand_case():
    # std = 1.2910, IQR / 1.349 = 1.5 / 1.349 = 1.1119 -> h = 0.9 * 1.1119 * 4^-0.2
    h = silverman_bandwidth(np.array([[0.0], [1.0], [2.0], [3.0]]))
    assert h[0] == pytest.approx(0.9 * (1.5 / 1.349) * 4**-0.2, rel=1e-12)
    # IQR of 0 falls back to the standard deviation.
    x = np.array([[0.0], [0.0], [0.0], [0.0], [1.0]])
    assert silverman_bandwidth(x)[0] == pytest.approx(
        0.9 * np.std(x, ddof=1) * 5**-0.2, rel=1e-12
    )


def test_kdelr_identical_samples_give_zero():
    X, _ = make_identity_embeddings(1, 10, 6, random_state=0)
    auditor = KDELRAuditor(alpha=0.01).fit(np.vstack([X, X]), np.repeat([0, 1], 10))
    assert auditor.results_["epsilon"].iloc[0] == 0.0


def test_alpha_sweep_equals_separate_fits(synthetic):
    X, ids = synthetic
    sweep = kde_lr_alpha_sweep(X, ids, alphas=(0.0, 0.01, 0.1), n_pairs=4)
    for alpha in (0.0, 0.01, 0.1):
        single = KDELRAuditor(alpha=alpha, n_pairs=4).fit(X, ids)
        assert_allclose(sweep[f"epsilon_alpha={alpha:g}"], single.results_["epsilon"])
    # Smoothing pulls the log-ratio out of the tails.
    assert (sweep["epsilon_alpha=0.01"] <= sweep["epsilon_alpha=0"]).all()
