"""MMD-TV: per-pair values, permutation test and certificate, checked independently."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.spatial.distance import cdist, pdist
from scipy.stats import binom
from sklearn.base import clone

from skprivacy._kernels._mmd import permutation_test, relabellings
from skprivacy.auditors import MMDTVAuditor, mmd_bandwidth_sweep, split_half_controls
from skprivacy.auditors._mmd import MMD_TV_CEILING
from skprivacy.datasets import load_yale_faces, make_identity_embeddings


def _unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def naive_mmd(A, B, scale=1.0, sigma=None):
    """Straight from the formula, one pair at a time (exact differences)."""
    if sigma is None:
        sigma = np.median(pdist(np.vstack([A, B]))) * scale
    na, nb = len(A), len(B)

    def k(U, V):
        return np.exp(-cdist(U, V, "sqeuclidean") / (2 * sigma**2))

    Kaa, Kbb, Kab = k(A, A), k(B, B), k(A, B)
    mmd2 = (
        (Kaa.sum() - np.trace(Kaa)) / (na * (na - 1))
        + (Kbb.sum() - np.trace(Kbb)) / (nb * (nb - 1))
        - 2 * Kab.mean()
    )
    return mmd2, sigma


@pytest.fixture(scope="module")
def yale():
    b = load_yale_faces()
    return np.asarray(b.data, dtype=float), np.asarray(b.identity)


def _check_against_naive(auditor, X, ids, scale=1.0, bound="tv"):
    Z = _unit(X)
    res = auditor.results_
    mmd2, sig = zip(
        *(
            naive_mmd(Z[ids == a], Z[ids == b], scale)
            for a, b in zip(res["id_a"], res["id_b"])
        )
    )
    mmd2, sig = np.array(mmd2), np.array(sig)
    mmd = np.sqrt(np.maximum(mmd2, 0))
    denom = 2.0 if bound == "tv" else np.sqrt(2.0)
    assert_allclose(res["bandwidth"], sig, rtol=1e-9)
    assert_allclose(res["mmd2_unbiased"], mmd2, rtol=1e-9, atol=1e-15)
    assert_allclose(res["mmd"], mmd, rtol=1e-9, atol=1e-12)
    assert_allclose(res["epsilon"], 2 * np.arctanh(mmd / denom), rtol=1e-9, atol=1e-12)


def test_exhaustive_matches_naive_on_yale(yale):
    X, ids = yale
    auditor = MMDTVAuditor(n_pairs=None).fit(X, ids)
    assert len(auditor.results_) == 15 * 14 // 2
    _check_against_naive(auditor, X, ids)
    assert auditor.score() == auditor.results_["epsilon"].max()
    assert auditor.summary_kind_ == "max"
    assert auditor.guarantee_ == "point estimate"


@pytest.mark.parametrize(
    "params",
    [
        {"n_pairs": None},  # block engine (dense groups)
        {"n_pairs": 20},  # per-pair engine
        {"n_pairs": 20, "bandwidth_scale": 0.5, "bound": "gonzalez"},
    ],
)
def test_matches_naive_on_synthetic(params, monkeypatch):
    # Small identity blocks: the exhaustive engine spans many block pairs.
    monkeypatch.setattr("skprivacy._kernels._mmd.BLOCK_ROWS", 60)
    # Unequal identity sizes exercise the ragged bookkeeping.
    X, ids = make_identity_embeddings(40, 12, 16, random_state=1)
    keep = np.ones(len(ids), bool)
    keep[np.flatnonzero(ids == ids[0])[:5]] = False
    X, ids = X[keep], ids[keep]
    auditor = MMDTVAuditor(**params).fit(X, ids)
    _check_against_naive(
        auditor,
        X,
        ids,
        scale=params.get("bandwidth_scale", 1.0),
        bound=params.get("bound", "tv"),
    )


def test_hand_case():
    # A = {e1, e2}, B = {-e1, -e2}: pooled distances sqrt2 (x4) and 2 (x2), median
    # sqrt2, so k = exp(-d^2/4) and MMD^2_u = e^-1/2 - e^-1.
    X = np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]])
    auditor = MMDTVAuditor().fit(X, ["A", "A", "B", "B"])
    row = auditor.results_.iloc[0]
    mmd2 = np.exp(-0.5) - np.exp(-1.0)
    assert row["bandwidth"] == pytest.approx(np.sqrt(2), rel=1e-12)
    assert row["mmd2_unbiased"] == pytest.approx(mmd2, rel=1e-12)
    assert row["epsilon"] == pytest.approx(
        np.log((2 + np.sqrt(mmd2)) / (2 - np.sqrt(mmd2))), rel=1e-12
    )


def test_fixed_bandwidth_and_ceiling():
    X, ids = make_identity_embeddings(6, 20, 8, separation=50.0, random_state=0)
    auditor = MMDTVAuditor(bandwidth=0.05, n_pairs=None).fit(X, ids)
    Z = _unit(X)
    for _, row in auditor.results_.iterrows():
        mmd2, _ = naive_mmd(Z[ids == row.id_a], Z[ids == row.id_b], sigma=0.05)
        assert row.mmd2_unbiased == pytest.approx(mmd2, rel=1e-9)
    # Separated identities approach, but never exceed, 2 artanh(sqrt2 / 2).
    assert MMD_TV_CEILING == pytest.approx(1.7627471740390859)
    assert auditor.results_["epsilon"].max() <= MMD_TV_CEILING
    assert auditor.results_["median_distance"].isna().all()


def test_bandwidth_sweep_matches_single_fits():
    X, ids = make_identity_embeddings(10, 15, 16, random_state=2)
    sweep = mmd_bandwidth_sweep(X, ids, scales=(0.5, 1.0, 2.0), n_pairs=12)
    for scale, row in zip((0.5, 1.0, 2.0), sweep.itertuples()):
        single = MMDTVAuditor(bandwidth_scale=scale, n_pairs=12).fit(X, ids)
        assert row.max_epsilon == pytest.approx(single.score(), rel=1e-12)
        assert row.median_mmd == pytest.approx(single.results_["mmd"].median())


# ------------------------------------------------------------ permutation test
def test_batched_permutation_statistics_equal_naive_loop():
    rng = np.random.default_rng(0)
    Z = _unit(rng.standard_normal((17, 5)))
    n_a, sigma, m = 8, 0.9, 300
    ind = relabellings(17, n_a, m, np.random.default_rng(1))
    assert (ind.sum(axis=1) == n_a).all()
    p, observed = permutation_test(Z, n_a, sigma, m, indicators=ind)
    naive_obs, _ = naive_mmd(Z[:n_a], Z[n_a:], sigma=sigma)
    assert observed == pytest.approx(naive_obs, rel=1e-10)
    b = 0
    for row in ind:  # one relabelling at a time, from the formula
        stat, _ = naive_mmd(Z[row == 1], Z[row == 0], sigma=sigma)
        b += stat >= naive_obs - 1e-12
    assert p == (b + 1) / (m + 1)


def test_separated_identities_reach_minimum_p_value():
    X, ids = make_identity_embeddings(5, 15, 16, separation=5.0, random_state=0)
    auditor = MMDTVAuditor(n_pairs=None, n_permutations=199).fit(X, ids)
    assert_allclose(auditor.results_["p_value"], 1 / 200)


def test_split_half_calibration_within_binomial_band():
    # Same-identity halves are exchangeable: a valid test rejects at ~5%.
    X, ids = make_identity_embeddings(300, 16, 8, noise=1.0, random_state=5)
    ctl = split_half_controls(MMDTVAuditor(n_permutations=99), X, ids, random_state=1)
    n = ctl.n_controls
    lo, hi = binom.ppf(0.005, n, 0.05), binom.ppf(0.995, n, 0.05)
    assert n == 300
    assert lo <= ctl.n_rejected <= hi
    assert ctl.results["p_value"].between(1 / 100, 1).all()


def test_permutations_reproducible_and_seeded():
    X, ids = make_identity_embeddings(6, 10, 8, separation=0.1, random_state=0)
    a = MMDTVAuditor(n_permutations=99, random_state=3).fit(X, ids).results_
    b = MMDTVAuditor(n_permutations=99, random_state=3).fit(X, ids).results_
    assert a.equals(b)


# ------------------------------------------------------------------ certificate
def test_certificate_is_zero_without_leakage():
    # epsilon = 0: every identity has the same distribution.
    zeros = []
    for seed in range(40):
        X, ids = make_identity_embeddings(6, 40, 8, separation=0.0, random_state=seed)
        auditor = MMDTVAuditor(confidence=0.95, n_pairs=10, random_state=seed)
        zeros.append(auditor.fit(X, ids).score() == 0.0)
    assert np.mean(zeros) >= 0.95
    assert auditor.guarantee_ == "certificate"


def _laplace_pair(eps, n, rng):
    # Pure eps-DP Laplace mechanism on a sensitivity-1 query (A: 0, B: 1); the
    # 2-D embedding and its L2 normalisation are post-processing.
    a = rng.laplace(0.0, 1.0 / eps, n)
    b = 1.0 + rng.laplace(0.0, 1.0 / eps, n)
    X = np.column_stack([np.r_[a, b], np.ones(2 * n)])
    return X, np.repeat(["A", "B"], n)


@pytest.mark.slow
@pytest.mark.parametrize("bandwidth", ["median", 0.5])
def test_certificate_never_exceeds_true_epsilon(bandwidth):
    rng = np.random.default_rng(0)
    alpha = 0.05
    results = {}
    for eps in (0.5, 1.5, 8.0):
        certs = []
        for _ in range(25):
            X, ids = _laplace_pair(eps, 400, rng)
            auditor = MMDTVAuditor(bandwidth=bandwidth, confidence=1 - alpha)
            certs.append(auditor.fit(X, ids).score())
        results[eps] = np.array(certs)
    for eps, certs in results.items():
        # Violations must stay within the error rate (binomial 99% slack).
        assert np.sum(certs > eps) <= binom.ppf(0.99, len(certs), alpha)
    # Power: an obvious mechanism gets a positive certificate.
    assert np.mean(results[8.0] > 0) >= 0.9


def test_certificate_lower_than_point_estimate():
    X, ids = make_identity_embeddings(8, 60, 16, separation=3.0, random_state=0)
    auditor = MMDTVAuditor(confidence=0.9, n_pairs=None).fit(X, ids)
    res = auditor.results_
    assert (res["epsilon_lower"] <= res["epsilon"] + 1e-12).all()
    assert auditor.score() == res["epsilon_lower"].max()
    # Hoeffding margin: t = sqrt(8 ln(G K / alpha) / min(n_a//2, n_b//2)).
    t = np.sqrt(8 * np.log(37 * len(res) / 0.1) / 30)
    assert_allclose(res["mmd2_margin"], t)


def test_within_moment_series_equals_direct_sum():
    from skprivacy._kernels._mmd import _within_moments, within_kernel_sums

    rng = np.random.default_rng(0)
    w = np.sort(rng.uniform(0.2, 1.2, 300))  # half range 0.5: x = gamma / 2
    tri = np.array([0, 300])
    centre, half, moments = _within_moments(w, tri)
    state = {
        "within": w,
        "tri": tri,
        "centre": centre,
        "half_range": half,
        "moments": moments,
    }
    # Series (x <= 3) and direct sums (x > 3) in one call.
    gamma = np.array([0.01, 0.3, 2.0, 5.9, 6.1, 50.0])
    got = within_kernel_sums(state, np.zeros(len(gamma), dtype=np.intp), gamma)
    want = [sum(np.exp(-g * v) for v in w) for g in gamma]
    assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("separation", [None, 3.0])
@pytest.mark.parametrize("n_pairs", [None, 40])
def test_float32_path_within_stated_tolerance_of_float64(separation, n_pairs):
    # Documented tolerance of float32 Gram blocks (same float32 rows, upcast
    # for the reference): |d MMD^2_u| <= 1e-6, hence |d MMD| <= 1e-3 and
    # |d eps| <= 2e-3 (sqrt near 0); away from 0 both agree to ~1e-6.
    kw = {} if separation is None else {"separation": separation}
    X, ids = make_identity_embeddings(25, 30, 48, random_state=2, **kw)
    X32 = X.astype(np.float32)
    est = MMDTVAuditor(n_pairs=n_pairs, confidence=0.95)
    ref = clone(est).fit(X32.astype(np.float64), ids).results_
    got = clone(est).fit(X32, ids)
    assert got._validate(X32, ids, reset=False).X.dtype == np.float32
    res = got.results_
    assert res["epsilon"].dtype == np.float64
    assert_allclose(res["mmd2_unbiased"], ref["mmd2_unbiased"], rtol=0, atol=1e-6)
    assert_allclose(res["mmd"], ref["mmd"], rtol=0, atol=1e-3)
    assert_allclose(res["epsilon"], ref["epsilon"], rtol=0, atol=2e-3)
    assert_allclose(res["bandwidth"], ref["bandwidth"], rtol=1e-6)
    big = ref["mmd"] > 0.1
    assert_allclose(res["epsilon"][big], ref["epsilon"][big], rtol=1e-5)
    assert_allclose(res["epsilon_lower"], ref["epsilon_lower"], rtol=0, atol=2e-3)


# ------------------------------------------------------------- (eps, delta) map
def _gauss_delta(eps, s, sens=1.0):
    # Analytic Gaussian mechanism (Balle & Wang 2018): the smallest delta for
    # which N(0, s^2) vs N(sens, s^2) is (eps, delta)-DP.
    from scipy.stats import norm

    a = sens / (2 * s)
    return norm.cdf(-eps * s / sens + a) - np.exp(eps) * norm.cdf(-eps * s / sens - a)


def test_eps_delta_map_hand_computation():
    from skprivacy.stats import mmd_to_epsilon

    # t = MMD / 2 = 0.4, delta = 0.05: log((1 + 0.4 - 0.1) / (1 - 0.4)) = log(13/6).
    assert float(mmd_to_epsilon(0.8, delta=0.05)) == pytest.approx(
        0.773189888233482, rel=1e-14
    )
    # gonzalez: t = 0.8 / sqrt(2) = 0.565685..., delta = 0.1.
    t = 0.8 / np.sqrt(2)
    assert float(mmd_to_epsilon(0.8, "gonzalez", 0.1)) == pytest.approx(
        np.log((1 + t - 0.2) / (1 - t)), rel=1e-14
    )
    # delta = 0 is the pure-DP map; t <= delta certifies nothing.
    assert float(mmd_to_epsilon(0.8, delta=0.0)) == pytest.approx(2 * np.arctanh(0.4))
    assert float(mmd_to_epsilon(0.1, delta=0.05)) == 0.0
    assert float(mmd_to_epsilon(0.1, delta=0.2)) == 0.0


@pytest.mark.parametrize("s", [0.2, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_eps_delta_map_is_sound_for_the_gaussian_mechanism(s, eps):
    # Population check: the Gaussian mechanism is exactly (eps, delta(eps))-DP
    # and its TV is 2 Phi(1/(2s)) - 1; the map at t = TV gives at most eps.
    from scipy.stats import norm

    from skprivacy.stats import mmd_to_epsilon

    delta = _gauss_delta(eps, s)
    tv = 2 * norm.cdf(1 / (2 * s)) - 1
    assert float(mmd_to_epsilon(2 * tv, delta=delta)) <= eps + 1e-12


@pytest.mark.slow
def test_certified_eps_delta_holds_on_a_gaussian_mechanism():
    # Simulated soundness: A = N(0, s^2), B = N(1, s^2) (embedded in 2-D and
    # L2-normalised: post-processing) is (eps, delta(eps))-DP. The certified
    # epsilon_lower with that delta exceeds eps in at most 1 - confidence of
    # the audits (here: never; the certificate is conservative), and is
    # informative (positive) at this sample size.
    s, eps, n, audits = 0.5, 4.0, 600, 30
    delta = _gauss_delta(eps, s)
    assert 0.08 < delta < 0.09
    rng = np.random.default_rng(0)
    lowers = []
    for _ in range(audits):
        u = np.r_[rng.normal(0.0, s, n), rng.normal(1.0, s, n)]
        X = np.column_stack([np.ones_like(u), u])
        ids = np.repeat([0, 1], n)
        est = MMDTVAuditor(n_pairs=None, confidence=0.8, delta=delta).fit(X, ids)
        lowers.append(est.score())
    lowers = np.array(lowers)
    violations = int((lowers > eps).sum())
    assert violations <= binom.ppf(0.999, audits, 0.2)
    assert violations == 0
    assert np.mean(lowers > 0) > 0.5


def test_delta_zero_leaves_results_unchanged(data=None):
    X, ids = make_identity_embeddings(6, 20, 16, random_state=0)
    a = MMDTVAuditor(n_pairs=None, confidence=0.9).fit(X, ids).results_
    b = MMDTVAuditor(n_pairs=None, confidence=0.9, delta=0.0).fit(X, ids).results_
    assert a.equals(b)
    c = MMDTVAuditor(n_pairs=None, confidence=0.9, delta=0.01).fit(X, ids).results_
    assert (c["epsilon"] <= a["epsilon"]).all()
    assert (c["epsilon"] < a["epsilon"])[a["mmd"] > 0.05].all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_medians_equal_numpy_median_of_pooled_distances(dtype):
    # Pairs of a dense group with unequal identity sizes (cross rows padded
    # with +inf), including ties and tiny identities: the batched exact
    # median equals np.median of each pair's pooled distances.
    from skprivacy._kernels._mmd import dense_medians

    rng = np.random.default_rng(3)
    sizes = rng.integers(2, 40, size=9)
    sizes[0] = 2
    within_parts = [
        np.sort(rng.random(n * (n - 1) // 2).astype(dtype)).astype(np.float64)
        for n in sizes
    ]
    within_parts[1][:] = within_parts[1][0]  # all ties
    within = np.concatenate(within_parts)
    tri = np.concatenate([[0], np.cumsum([w.size for w in within_parts])])
    a = np.array([0, 0, 1, 2, 3, 4, 5, 6, 7])
    b = np.array([1, 8, 8, 3, 8, 5, 6, 7, 8])
    width = int((sizes[a] * sizes[b]).max())
    cross = np.full((len(a), width), np.inf, dtype=dtype)
    for t in range(len(a)):
        n_cross = sizes[a[t]] * sizes[b[t]]
        cross[t, :n_cross] = rng.random(n_cross) * 1.5
    cross[3, :5] = within_parts[2][0]  # ties across parts
    # A subsample that misleads the bracket (every 8th value large, the rest
    # tiny): the exact counts reject it and the full selection is used.
    n4 = sizes[a[4]] * sizes[b[4]]
    cross[4, :n4] = 1e-3
    cross[4, :n4:8] = 1.4
    got = dense_medians(cross, sizes[a] * sizes[b], within, tri, a, b)
    for t in range(len(a)):
        pooled = np.concatenate(
            (
                within_parts[a[t]],
                within_parts[b[t]],
                cross[t][: sizes[a[t]] * sizes[b[t]]].astype(np.float64),
            )
        )
        assert got[t] == pytest.approx(np.median(np.sqrt(pooled)), rel=1e-15)


def test_split_half_controls_of_a_seeded_subset_of_identities():
    # n_identities draws that many eligible identities (>= 4 rows) from the
    # seed; the controls equal those of the drawn identities' rows alone.
    X, ids = make_identity_embeddings(8, 6, 8, random_state=0)
    ids = np.asarray(ids)
    keep = ~np.isin(np.arange(len(ids)), np.flatnonzero(ids == 3)[:3])  # id 3: 3 rows
    X, ids = X[keep], ids[keep]
    auditor = MMDTVAuditor(n_permutations=49)
    got = split_half_controls(auditor, X, ids, n_identities=4, random_state=5)
    eligible = np.array([i for i in range(8) if i != 3])
    drawn = np.random.default_rng(5).choice(eligible, 4, replace=False)
    mask = np.isin(ids, drawn)
    alone = split_half_controls(auditor, X[mask], ids[mask], random_state=5)
    assert sorted(got.results["identity"]) == sorted(drawn.tolist())
    assert got.results.equals(alone.results)
    every = split_half_controls(auditor, X, ids, n_identities=50, random_state=5)
    assert sorted(every.results["identity"]) == eligible.tolist()
