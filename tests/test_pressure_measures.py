# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Rényi measures: hand-worked cases, loop formulas, closed forms, properties."""

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import integrate
from scipy.special import logsumexp
from scipy.stats import norm

from skprivacy.pressure import (
    arimoto_entropy,
    check_posterior,
    guessing_bound,
    guessing_probability,
    renyi_entropy,
    sibson_information,
    vrpi,
)

ALPHAS = [1.5, 2.0, 5.0, 10.0, math.inf]


# ---------------------------------------------------------------------------
# Independent loop implementations, straight from the formulas of DESIGN.md.
# ---------------------------------------------------------------------------
def loop_norm(row, alpha):
    if math.isinf(alpha):
        return max(row)
    return sum(p**alpha for p in row) ** (1.0 / alpha)


def loop_arimoto(P, alpha, w=None):
    n = len(P)
    w = [1.0 / n] * n if w is None else [x / sum(w) for x in w]
    m = sum(wi * loop_norm(row, alpha) for wi, row in zip(w, P))
    if math.isinf(alpha):
        return -math.log(m)
    return alpha / (1 - alpha) * math.log(m)


def loop_renyi(prior, alpha):
    if math.isinf(alpha):
        return -math.log(max(prior))
    return 1.0 / (1 - alpha) * math.log(sum(p**alpha for p in prior))


def loop_sibson_from_channel(W, prior, alpha):
    """Sibson's definition on a discrete channel W[x][y] = P(Y=y | X=x)."""
    n_x, n_y = len(W), len(W[0])
    total = 0.0
    for y in range(n_y):
        if math.isinf(alpha):
            total += max(W[x][y] for x in range(n_x) if prior[x] > 0)
        else:
            total += sum(prior[x] * W[x][y] ** alpha for x in range(n_x)) ** (1 / alpha)
    if math.isinf(alpha):
        return math.log(total)
    return alpha / (alpha - 1) * math.log(total)


def random_posteriors(rng, n, N, concentration=0.5):
    return rng.dirichlet(np.full(N, concentration), size=n)


posterior_strategy = st.integers(1, 6).flatmap(
    lambda n: st.integers(2, 7).flatmap(
        lambda N: arrays(
            np.float64,
            (n, N),
            elements=st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False),
        )
    )
)


def _normalise(A):
    A = A + 1e-3  # keep every row a proper distribution
    return A / A.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------
# Hand-worked cases
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", ALPHAS)
def test_uniform_posterior_has_full_entropy_and_zero_pressure(alpha):
    N = 7
    P = np.full((5, N), 1.0 / N)
    assert arimoto_entropy(P, alpha) == pytest.approx(math.log(N), abs=1e-12)
    assert vrpi(P, alpha) == pytest.approx(0.0, abs=1e-12)
    assert sibson_information(P, alpha) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_one_hot_posterior_is_full_pressure(alpha):
    N = 6
    P = np.eye(N)[[0, 3, 5, 5, 1]]
    assert vrpi(P, alpha) == pytest.approx(math.log(N), abs=1e-12)
    assert arimoto_entropy(P, alpha) == pytest.approx(0.0, abs=1e-12)
    assert guessing_probability(P) == 1.0
    assert guessing_bound(P, alpha) == pytest.approx(1.0, abs=1e-12)


def test_hand_worked_two_queries():
    # rows (0.5, 0.5) and (1, 0): ||.||_2 = sqrt(.5) and 1, mean (1 + sqrt(.5))/2
    P = [[0.5, 0.5], [1.0, 0.0]]
    m = (1 + math.sqrt(0.5)) / 2
    assert arimoto_entropy(P, 2) == pytest.approx(-2 * math.log(m), abs=1e-15)
    assert vrpi(P, 2) == pytest.approx(math.log(2) + 2 * math.log(m), abs=1e-15)
    assert guessing_probability(P) == pytest.approx(0.75, abs=1e-15)
    assert guessing_bound(P, 2) == pytest.approx(m, abs=1e-15)
    assert vrpi(P, math.inf) == pytest.approx(math.log(2) + math.log(0.75))


# ---------------------------------------------------------------------------
# Agreement with the loop formulas to 1e-12
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", ALPHAS + [1.01, 3.3, 50.0])
def test_measures_match_loop_formulas(alpha):
    rng = np.random.default_rng(0)
    P = random_posteriors(rng, 40, 9)
    w = rng.uniform(0.1, 2.0, size=40)
    prior = rng.dirichlet(np.ones(9))
    rows, wl = P.tolist(), w.tolist()
    N = 9
    h = loop_arimoto(rows, alpha)
    assert abs(arimoto_entropy(P, alpha) - h) < 1e-12
    assert abs(vrpi(P, alpha) - (math.log(N) - h)) < 1e-12
    assert (
        abs(arimoto_entropy(P, alpha, sample_weight=w) - loop_arimoto(rows, alpha, wl))
        < 1e-12
    )
    assert (
        abs(vrpi(P, alpha, prior=prior) - (loop_renyi(prior.tolist(), alpha) - h))
        < 1e-12
    )
    assert abs(renyi_entropy(prior, alpha) - loop_renyi(prior.tolist(), alpha)) < 1e-12
    assert abs(guessing_probability(P) - np.mean([max(r) for r in rows])) < 1e-12
    bound = math.exp((1 - alpha) / alpha * h) if not math.isinf(alpha) else math.exp(-h)
    assert abs(guessing_bound(P, alpha) - bound) < 1e-12
    # Sibson with a uniform prior equals vRPI (DESIGN.md).
    assert abs(sibson_information(P, alpha) - (math.log(N) - h)) < 1e-12


@pytest.mark.parametrize("alpha", ALPHAS + [1.2])
def test_sibson_matches_channel_definition(alpha):
    # A discrete channel with a non-uniform prior: build the posteriors and the
    # output marginal, and compare with Sibson's definition on the channel.
    rng = np.random.default_rng(1)
    n_x, n_y = 5, 8
    W = rng.dirichlet(np.ones(n_y), size=n_x)
    prior = rng.dirichlet(np.ones(n_x))
    joint = prior[:, None] * W
    p_y = joint.sum(axis=0)
    posterior = (joint / p_y).T  # rows: y, columns: x
    expected = loop_sibson_from_channel(W.tolist(), prior.tolist(), alpha)
    got = sibson_information(posterior, alpha, prior=prior, sample_weight=p_y)
    assert abs(got - expected) < 1e-12
    # Arimoto's identity: H_a(X) - H_a(X|Y) is Sibson's information of the
    # alpha-tilted prior (Fehr & Berens 2014), an independent check of the
    # prior-normalised vRPI.
    tilted = prior**alpha / np.sum(prior**alpha) if not math.isinf(alpha) else None
    if tilted is not None:
        expected_prior_vrpi = loop_sibson_from_channel(
            W.tolist(), tilted.tolist(), alpha
        )
        got_prior_vrpi = vrpi(posterior, alpha, prior=prior, sample_weight=p_y)
        assert abs(got_prior_vrpi - expected_prior_vrpi) < 1e-12


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(posterior_strategy)
def test_entropy_non_increasing_in_alpha(A):
    P = _normalise(A)
    values = [arimoto_entropy(P, a) for a in [1.1, 1.5, 2, 3, 5, 10, 30, math.inf]]
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:]))
    assert all(-1e-12 <= v <= math.log(P.shape[1]) + 1e-12 for v in values)


@settings(max_examples=40, deadline=None)
@given(posterior_strategy, st.sampled_from([1.05, 1.5, 2.0, 5.0, 10.0, math.inf]))
def test_theorem2_guessing_bound_holds(A, alpha):
    P = _normalise(A)
    p_guess = guessing_probability(P)
    h = arimoto_entropy(P, alpha)
    bound = math.exp((1 - alpha) / alpha * h) if not math.isinf(alpha) else math.exp(-h)
    assert p_guess <= bound + 1e-12
    assert p_guess <= guessing_bound(P, alpha) + 1e-12
    # -log P_guess >= (alpha - 1) / alpha * H_alpha
    factor = 1.0 if math.isinf(alpha) else (alpha - 1) / alpha
    assert -math.log(p_guess) >= factor * h - 1e-12


@settings(max_examples=40, deadline=None)
@given(posterior_strategy)
def test_min_entropy_pressure_is_log_n_plus_log_pguess(A):
    P = _normalise(A)
    N = P.shape[1]
    expected = math.log(N) + math.log(guessing_probability(P))
    assert abs(vrpi(P, math.inf) - expected) < 1e-12
    assert abs(sibson_information(P, math.inf) - expected) < 1e-12


@settings(max_examples=40, deadline=None)
@given(posterior_strategy, st.sampled_from([1.5, 2.0, 7.0]))
def test_sibson_uniform_prior_equals_vrpi(A, alpha):
    P = _normalise(A)
    N = P.shape[1]
    assert (
        abs(sibson_information(P, alpha, prior=np.full(N, 1 / N)) - vrpi(P, alpha))
        < 1e-12
    )


# ---------------------------------------------------------------------------
# Closed form: Gaussian release model with the true Bayes posterior
# ---------------------------------------------------------------------------
MU1 = np.array([-1.5, -0.5, 0.5, 1.5])  # release 1: z1 | u ~ N(MU1[u], 1)
MU2 = np.array([0.6, 1.8, -1.8, -0.6])  # release 2: z2 | u ~ N(MU2[u], 1)


def _norm_of_joint(dens, alpha):
    """||pi * f(z)||_alpha along the last axis (pi uniform)."""
    joint = dens / dens.shape[-1]
    if math.isinf(alpha):
        return joint.max(axis=-1)
    return np.power(np.power(joint, alpha).sum(axis=-1), 1 / alpha)


def _max_integral_over_z1(mu_a, log_g):
    """Integral over z1 of max_u exp(log_g[u]) * N(z1; mu_a[u], 1).

    Closed form: log N(z1; mu_u, 1) + log_g[u] = line_u(z1) - z1**2 / 2 + const
    with line_u(z1) = mu_u * z1 - mu_u**2 / 2 + log_g[u], so identity u wins
    on the interval where its line is above every other line (equal slopes
    never occur: the means are distinct); the integral is a sum of normal
    CDF differences over those intervals.
    """
    total = 0.0
    for u in range(len(mu_a)):
        lo, hi = -math.inf, math.inf
        for v in range(len(mu_a)):
            if v == u:
                continue
            # line_u >= line_v  <=>  (mu_u - mu_v) z1 >= c
            c = (mu_a[u] ** 2 - mu_a[v] ** 2) / 2 - (log_g[u] - log_g[v])
            if mu_a[u] > mu_a[v]:
                lo = max(lo, c / (mu_a[u] - mu_a[v]))
            else:
                hi = min(hi, c / (mu_a[u] - mu_a[v]))
        if lo < hi:
            total += math.exp(log_g[u]) * (
                norm.cdf(hi - mu_a[u]) - norm.cdf(lo - mu_a[u])
            )
    return total


@functools.cache
def exact_pressure(alpha, which):
    """Cached exact vRPI_alpha for releases ``which`` (a tuple of 1 and/or 2)."""
    mus = {1: MU1, 2: MU2}
    return math.log(4) - exact_arimoto(alpha, tuple(mus[w] for w in which))


def exact_arimoto(alpha, releases):
    """H_alpha(U | Z) by deterministic integration of E_z ||p(.|z)||_alpha.

    E_z ||p(.|z)||_alpha = integral of ||(pi_u f_u(z))_u||_alpha dz, so no
    sampling is involved. Finite alpha: the integrand is smooth, so quadrature
    (1-D) or the trapezoid rule on a fine grid (2-D) is accurate to ~1e-12.
    alpha = inf: the max has kinks, so the inner integral is done in closed
    form (``_max_integral_over_z1``) and the outer one by adaptive quadrature.
    """
    N = len(releases[0])
    if math.isinf(alpha):
        mu_a = releases[0]
        mu_b = releases[1] if len(releases) == 2 else np.zeros(N)

        def outer(z2):
            return _max_integral_over_z1(mu_a, norm.logpdf(z2, loc=mu_b) - math.log(N))

        pts = sorted(set(((mu_b[:, None] + mu_b[None, :]) / 2).ravel().tolist()))
        value, _ = integrate.quad(outer, -12, 12, points=pts, limit=200, epsabs=1e-12)
        return -math.log(value)
    if len(releases) == 1:
        (mu,) = releases

        def integrand(z):
            return _norm_of_joint(norm.pdf(z, loc=mu)[None, :], alpha)[0]

        value, _ = integrate.quad(integrand, -12, 12, limit=400, epsabs=1e-13)
    else:
        mu_a, mu_b = releases
        grid = np.linspace(-10, 10, 601)
        fa = norm.pdf(grid[:, None], loc=mu_a)  # (g, N)
        fb = norm.pdf(grid[:, None], loc=mu_b)
        dens = fa[:, None, :] * fb[None, :, :]  # (g, g, N)
        values = _norm_of_joint(dens, alpha)
        value = integrate.trapezoid(integrate.trapezoid(values, grid, axis=1), grid)
    return alpha / (1 - alpha) * math.log(value)


def test_exact_integrator_is_accurate():
    # The 2-D integrator agrees with 1-D quadrature when release 2 is
    # uninformative (all identities share the same mean), and the closed-form
    # min-entropy agrees with brute-force quadrature of the max in 1-D.
    flat = np.zeros(4)
    for alpha in (2.0, 10.0):
        assert exact_arimoto(alpha, (MU1, flat)) == pytest.approx(
            exact_arimoto(alpha, (MU1,)), abs=1e-10
        )
    brute, _ = integrate.quad(
        lambda z: np.max(norm.pdf(z, loc=MU1)) / 4,
        -12,
        12,
        points=[-1, 0, 1],
        limit=400,
        epsabs=1e-13,
    )
    assert exact_arimoto(math.inf, (MU1,)) == pytest.approx(-math.log(brute), abs=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", ALPHAS)
def test_theorem1_second_release_never_lowers_pressure(alpha):
    N = 4
    v1 = exact_pressure(alpha, (1,))
    v2 = exact_pressure(alpha, (2,))
    v12 = exact_pressure(alpha, (1, 2))
    assert 0 < v1 < math.log(N)
    assert v12 >= v1 - 1e-10
    assert v12 >= v2 - 1e-10
    assert v12 > max(v1, v2) + 0.01  # strictly more: release 2 is informative


def _sample_posteriors(n, rng):
    u = rng.integers(0, 4, size=n)
    z1 = rng.normal(MU1[u], 1.0)
    z2 = rng.normal(MU2[u], 1.0)
    logits = norm.logpdf(z1[:, None], loc=MU1) + norm.logpdf(z2[:, None], loc=MU2)
    return np.exp(logits - logsumexp(logits, axis=1, keepdims=True))


@pytest.mark.parametrize("alpha", [1.5, 2.0, 10.0, math.inf])
def test_plugin_converges_to_closed_form(alpha):
    exact = math.log(4) - exact_pressure(alpha, (1, 2))
    rng = np.random.default_rng(123)
    ses = []
    for n in (400, 40_000):
        P = _sample_posteriors(n, rng)
        norms = (
            P.max(axis=1) if math.isinf(alpha) else np.linalg.norm(P, ord=alpha, axis=1)
        )
        c = 1.0 if math.isinf(alpha) else abs(alpha / (1 - alpha))
        se = c * norms.std(ddof=1) / (norms.mean() * math.sqrt(n))
        err = abs(arimoto_entropy(P, alpha) - exact)
        assert err <= 4 * se, (n, err, se)
        ses.append(se)
    assert ses[1] < ses[0] / 5  # error scale shrinks like 1/sqrt(n)
    assert ses[1] < 0.01


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------
def test_rows_must_sum_to_one_and_errors_name_rows():
    P = np.full((4, 3), 1 / 3)
    P[2] = [0.5, 0.4, 0.2]
    with pytest.raises(ValueError, match=r"sum to 1.*rows 2"):
        vrpi(P, 2)
    P = np.full((3, 2), 0.5)
    P[1] = [1.1, -0.1]
    with pytest.raises(ValueError, match=r"negative entries.*rows 1"):
        arimoto_entropy(P, 2)
    P[1] = [np.nan, 0.5]
    with pytest.raises(ValueError, match=r"NaN.*rows 1"):
        guessing_probability(P)
    with pytest.raises(ValueError, match="2-D"):
        check_posterior([0.5, 0.5])


def test_rounding_within_tolerance_is_accepted():
    P = np.array([[0.5 + 4e-10, 0.5], [1.0 + 5e-10, -5e-10]])
    assert vrpi(P, 2) >= 0
    with pytest.raises(ValueError, match="sum to 1"):
        vrpi(np.array([[0.5 + 1e-8, 0.5]]), 2)


@pytest.mark.parametrize("alpha", [1.0, 0.5, -2, float("nan")])
def test_alpha_must_exceed_one(alpha):
    with pytest.raises(ValueError, match="alpha must be > 1"):
        vrpi(np.eye(2), alpha)


def test_bad_prior_and_weights():
    P = np.eye(3)
    with pytest.raises(ValueError, match="prior has 2 entries"):
        vrpi(P, 2, prior=[0.5, 0.5])
    with pytest.raises(ValueError, match="probability vector"):
        vrpi(P, 2, prior=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="sample_weight has 2"):
        vrpi(P, 2, sample_weight=[1, 1])
    with pytest.raises(ValueError, match="zero prior"):
        sibson_information(P, 2, prior=[0.5, 0.5, 0.0])


@pytest.mark.parametrize("alpha", [2.0, math.inf])
def test_exact_overlap_positive_for_conditionally_independent_releases(alpha):
    # Paper 002's Theorem 3 states Sibson information adds up over
    # conditionally independent releases. With the exact Bayes posterior of
    # two conditionally independent Gaussian releases it does not: the joint
    # pressure is well below the sum (pressure saturates at log N), so the
    # overlap diagnostic is positive without any correlation between releases.
    # The user guide documents this; the diagnostic is not a correlation test.
    v1 = exact_pressure(alpha, (1,))
    v2 = exact_pressure(alpha, (2,))
    v12 = exact_pressure(alpha, (1, 2))
    assert v1 + v2 - v12 > 0.2


def _channel_posterior(W):
    """Posterior rows p(u | z) and weights P(z) of channel W[u, z], uniform prior."""
    joint = W / W.shape[0]  # P(u, z)
    p_z = joint.sum(axis=0)
    keep = p_z > 0
    return (joint[:, keep] / p_z[keep]).T, p_z[keep]


def test_theorem3_upper_bound_fails_at_finite_alpha():
    # Paper 002, Theorem 3 claims vRPI_a(Z_1:T) <= sum_t I^S_a(U; Z_t) for
    # releases independent given U. Exact counterexample at alpha = 2:
    # 4 identities, uniform prior, two binary releases with
    # P(Z1 = 1 | u) = (0, 0, 1/2, 1/2) and P(Z2 = 1 | u) = (0, 1, 1/2, 1/2).
    a = np.array([0.0, 0.0, 0.5, 0.5])
    b = np.array([0.0, 1.0, 0.5, 0.5])
    W1 = np.column_stack([a, 1 - a])
    W2 = np.column_stack([b, 1 - b])
    # Independent given U: P(z1, z2 | u) = P(z1 | u) P(z2 | u).
    W12 = np.einsum("ui,uj->uij", W1, W2).reshape(4, 4)

    def by_hand(W):
        # Uniform prior, alpha = 2: vRPI_2 = log N + 2 log E_z ||p(.|z)||_2
        # and E_z ||p(.|z)||_2 = (1/N) sum_z ||W[:, z]||_2.
        s = 0.0
        for z in range(W.shape[1]):
            s += math.sqrt(sum(W[u, z] ** 2 for u in range(W.shape[0])))
        return math.log(4) + 2 * math.log(s / 4)

    closed = {
        # sum_z ||W1[:, z]|| = (1 + sqrt 5) / sqrt 2
        "Z1": math.log((3 + math.sqrt(5)) / 4),
        # sum_z ||W2[:, z]|| = 2 sqrt(3/2)
        "Z2": math.log(1.5),
        # sum_z ||W12[:, z]|| = 2 sqrt 2
        "Z1:2": math.log(2),
    }
    for name, W in {"Z1": W1, "Z2": W2, "Z1:2": W12}.items():
        P, w = _channel_posterior(W)
        lib_vrpi = vrpi(P, 2, sample_weight=w)
        lib_sibson = sibson_information(P, 2, sample_weight=w)
        assert lib_vrpi == pytest.approx(closed[name], abs=1e-12)
        assert lib_sibson == pytest.approx(closed[name], abs=1e-12)
        assert by_hand(W) == pytest.approx(closed[name], abs=1e-12)
    # The figures quoted in the user guide, to ~1e-5.
    assert closed["Z1"] == pytest.approx(0.26928, abs=1e-5)
    assert closed["Z2"] == pytest.approx(0.40547, abs=1e-5)
    assert closed["Z1:2"] == pytest.approx(0.69315, abs=1e-5)
    overlap = closed["Z1"] + closed["Z2"] - closed["Z1:2"]
    assert overlap == pytest.approx(-0.0184, abs=1e-4)
    # The joint exceeds the sum of the single-release informations.
    assert closed["Z1:2"] > closed["Z1"] + closed["Z2"]
