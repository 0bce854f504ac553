# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Speed of the re-identification pressure engine (paper 002 scale).

Condition of the acceptance target: N = 751 identities, 20 gallery + 10 query
rows each, 2,048 dimensions. Timed: fitting the A0 (retrieval) and A2
(prototype) attackers, including their temperature calibration, their query
posteriors, and every measure (vRPI, Arimoto entropy, guessing probability and
bound, Sibson) at alpha in {1.5, 2, 5, 10, inf}. Target: <= 10 s on 2 cores.

The baseline in the same run is the straightforward implementation: float64
similarities, a Python loop over identities with ``scipy.special.logsumexp``,
temperature by a 30-point grid search, measures by a loop over query rows.

Usage::

    python benchmarks/bench_pressure.py            # full scale
    python benchmarks/bench_pressure.py --quick    # N = 100, for a smoke run
"""

import argparse
import os
import time

import numpy as np
from scipy.special import logsumexp

from skprivacy.pressure import (
    PrototypeAttacker,
    RetrievalAttacker,
    arimoto_entropy,
    guessing_bound,
    guessing_probability,
    pressure_profile,
    sibson_information,
    vrpi,
)

ALPHAS = (1.5, 2.0, 5.0, 10.0, np.inf)


def make_data(n_identities, n_gallery, n_query, d, noise, seed=0):
    """Unit-norm Gaussian identity clusters (fast to generate at full scale)."""
    rng = np.random.default_rng(seed)
    means = rng.standard_normal((n_identities, d)).astype(np.float32)
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    n_per = n_gallery + n_query
    ids = np.repeat(np.arange(n_identities), n_per)
    # float32 end to end, as face encoders emit: a numpy float64 scalar factor
    # would silently promote the whole matrix to float64 (NEP 50).
    scale = np.float32(noise / np.sqrt(d))
    X = means[ids] + scale * rng.standard_normal((ids.size, d), dtype=np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    is_query = np.tile(
        np.r_[np.zeros(n_gallery, bool), np.ones(n_query, bool)], n_identities
    )
    assert X.dtype == np.float32
    return X[~is_query], ids[~is_query], X[is_query], ids[is_query]


def all_measures(P):
    out = {"p_guess": guessing_probability(P)}
    for a in ALPHAS:
        out[f"H_{a}"] = arimoto_entropy(P, a)
        out[f"vrpi_{a}"] = vrpi(P, a)
        out[f"bound_{a}"] = guessing_bound(P, a)
        out[f"sibson_{a}"] = sibson_information(P, a)
    return out


def profile_measures(P):
    prof = pressure_profile(P, ALPHAS)
    out = {"p_guess": float(prof["p_guess"].iloc[0])}
    for a in ALPHAS:
        out[f"H_{a}"] = prof.loc[a, "arimoto_entropy"]
        out[f"vrpi_{a}"] = prof.loc[a, "vrpi"]
        out[f"bound_{a}"] = prof.loc[a, "guessing_bound"]
        out[f"sibson_{a}"] = prof.loc[a, "sibson_information"]
    return out


STAGES = {}


def _stage(name, fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    STAGES.setdefault(name, []).append(time.perf_counter() - t0)
    return out


def fast_pipeline(Xg, yg, Xq):
    a0 = _stage(
        "A0 fit (gallery + temperature)", RetrievalAttacker(random_state=0).fit, Xg, yg
    )
    P0 = _stage("A0 query posteriors", a0.predict_proba, Xq)
    a2 = _stage(
        "A2 fit (prototypes + temperature)",
        PrototypeAttacker(random_state=0).fit,
        Xg,
        yg,
    )
    P2 = _stage("A2 query posteriors", a2.predict_proba, Xq)
    m0 = _stage("all measures, A0", profile_measures, P0)
    m2 = _stage("all measures, A2", profile_measures, P2)
    return P0, P2, m0, m2, a0.temperature_


def sgemm_best_rate(n=2048, tries=10):
    """Best observed float32 GEMM rate (GFLOP/s): what BLAS does when it gets
    the cores, as a yardstick on a shared machine."""
    rng = np.random.default_rng(0)
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    best = min(timed(np.matmul, A, B)[0] for _ in range(tries))
    return 2 * n**3 / best / 1e9


def matmul_floor(Xg, Xq):
    """The unavoidable products alone: queries x gallery, calibration x gallery."""
    n_cal = min(512, int(0.2 * Xg.shape[0]))
    Xg[: Xg.shape[0] - n_cal] @ Xg[-n_cal:].T
    for start in range(0, Xq.shape[0], 2048):
        Xg @ Xq[start : start + 2048].T


# --------------------------------------------------------------------------
# Straightforward baseline
# --------------------------------------------------------------------------
def naive_lme_posterior(S, g_codes, n_id, T):
    logits = np.empty((S.shape[0], n_id))
    for u in range(n_id):
        cols = S[:, g_codes == u] / T
        logits[:, u] = logsumexp(cols, axis=1) - np.log(cols.shape[1])
    return logits - logsumexp(logits, axis=1, keepdims=True)


def naive_calibrate(G, g_codes, Q, q_codes, n_id, proto=False):
    grid = np.geomspace(1e-4, 1e2, 30)
    if proto:
        protos = np.stack([G[g_codes == u].mean(0) for u in range(n_id)])
        protos /= np.linalg.norm(protos, axis=1, keepdims=True)
        S = Q @ protos.T
    else:
        S = Q @ G.T
    nll = []
    for T in grid:
        if proto:
            logp = S / T - logsumexp(S / T, axis=1, keepdims=True)
        else:
            logp = naive_lme_posterior(S, g_codes, n_id, T)
        nll.append(-np.mean(logp[np.arange(len(q_codes)), q_codes]))
    return grid[int(np.argmin(nll))]


def naive_measures(P):
    out = {"p_guess": np.mean([max(row) for row in P])}
    N = P.shape[1]
    for a in ALPHAS:
        if np.isinf(a):
            norms = [max(row) for row in P]
            h = -np.log(np.mean(norms))
        else:
            norms = [np.sum(row**a) ** (1 / a) for row in P]
            h = a / (1 - a) * np.log(np.mean(norms))
        out[f"H_{a}"] = h
        out[f"vrpi_{a}"] = np.log(N) - h
        out[f"bound_{a}"] = np.mean(norms)
        out[f"sibson_{a}"] = np.log(N) - h
    return out


def naive_pipeline(Xg, yg, Xq):
    Xg = Xg.astype(np.float64)
    Xq = Xq.astype(np.float64)
    n_id = int(yg.max()) + 1
    rng = np.random.RandomState(0)
    cal = np.zeros(len(yg), bool)
    for u in range(n_id):
        rows = np.flatnonzero(yg == u)
        cal[rng.choice(rows, max(1, round(0.2 * rows.size)), replace=False)] = True
    cal_rows = np.flatnonzero(cal)
    if cal_rows.size > 512:
        cal_rows = np.sort(rng.choice(cal_rows, 512, replace=False))
    T0 = naive_calibrate(Xg[~cal], yg[~cal], Xg[cal_rows], yg[cal_rows], n_id)
    P0 = np.exp(naive_lme_posterior(Xq @ Xg.T, yg, n_id, T0))
    T2 = naive_calibrate(Xg[~cal], yg[~cal], Xg[cal_rows], yg[cal_rows], n_id, True)
    protos = np.stack([Xg[yg == u].mean(0) for u in range(n_id)])
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    S2 = Xq @ protos.T / T2
    P2 = np.exp(S2 - logsumexp(S2, axis=1, keepdims=True))
    return P0, P2, naive_measures(P0), naive_measures(P2), T0


CPU = {}


def timed(fn, *args, repeats=1):
    """Median wall time over ``repeats``; CPU time (all threads) is kept too.

    On a shared, overloaded machine the wall time mostly measures waiting; the
    process CPU time divided by the number of cores is an estimate of the wall
    time on an idle machine (optimistic if threads do not scale perfectly).
    """
    times, cpus, out = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    CPU[fn.__name__] = float(np.median(cpus))
    return float(np.median(times)), times, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N=100 smoke run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n_id = 100 if args.quick else 751
    Xg, yg, Xq, yq = make_data(n_id, 20, 10, 2048, noise=6.0)
    print(
        f"N={n_id} identities, {Xg.shape[0]} gallery + {Xq.shape[0]} query rows, "
        f"d={Xg.shape[1]}; cores={os.cpu_count()}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    t_fast, runs, (P0, P2, m0, m2, T0) = timed(
        fast_pipeline, Xg, yg, Xq, repeats=args.repeats
    )
    t_floor, _, _ = timed(matmul_floor, Xg, Xq, repeats=args.repeats)
    t_naive, _, (Q0, Q2, n0, n2, U0) = timed(naive_pipeline, Xg, yg, Xq)
    acc0 = np.mean(np.argmax(P0, 1) == yq)
    acc2 = np.mean(np.argmax(P2, 1) == yq)
    print(
        f"A0: T={T0:.4g}, top-1={acc0:.3f}, vRPI_2={m0['vrpi_2.0']:.4f}, "
        f"P_guess={m0['p_guess']:.4f}"
    )
    print(
        f"A2: top-1={acc2:.3f}, vRPI_2={m2['vrpi_2.0']:.4f}, "
        f"P_guess={m2['p_guess']:.4f}"
    )
    print(f"baseline A0: T={U0:.4g} (30-point grid), vRPI_2={n0['vrpi_2.0']:.4f}")
    # Same inputs, same formulas: the measures of the fast path on the fast
    # posteriors must agree with the loop formulas on the same posteriors.
    check = naive_measures(P0)
    err = max(abs(check[k] - m0[k]) for k in check)
    err_fn = max(abs(v - m0[k]) for k, v in all_measures(P0).items())
    print(
        f"max |fast - loop| of the measures on the A0 posterior: {err:.2e}; "
        f"|profile - single-measure functions|: {err_fn:.2e}"
    )
    print()
    cores = os.cpu_count()
    cpu_fast, cpu_naive = CPU["fast_pipeline"], CPU["naive_pipeline"]
    cpu_floor = CPU["matmul_floor"]
    print("| task | fast wall (median s) | runs | baseline wall (s) | ratio |")
    print("|---|---|---|---|---|")
    print(
        f"| A0+A2 fit, calibrate, posteriors, all measures | {t_fast:.2f} | "
        f"{', '.join(f'{t:.2f}' for t in runs)} | {t_naive:.2f} | "
        f"{t_naive / t_fast:.1f}x |"
    )
    print(
        f"| float32 similarity products alone (the floor) | {t_floor:.2f} | | | "
        f"fast = {t_fast / t_floor:.2f}x floor |"
    )
    print()
    print(
        f"CPU time (all threads): fast {cpu_fast:.1f} s, baseline {cpu_naive:.1f} s, "
        f"floor {cpu_floor:.1f} s; CPU/{cores} cores = idle-machine estimate: "
        f"fast {cpu_fast / cores:.1f} s, baseline {cpu_naive / cores:.1f} s"
    )
    n_g, d = Xg.shape
    n_cal = min(512, int(0.2 * n_g))
    flops = 2 * d * (Xq.shape[0] * n_g + n_cal * (n_g - n_cal))
    rate = sgemm_best_rate()
    print(
        f"similarity products: {flops / 1e9:.0f} GFLOP; best float32 GEMM rate seen "
        f"in this run {rate:.0f} GFLOP/s -> floor at that rate "
        f"{flops / rate / 1e9:.2f} s, fast path projected at the measured "
        f"fast/floor ratio: {t_fast / t_floor * flops / rate / 1e9:.1f} s"
    )
    print()
    print("| fast-path stage | median s |")
    print("|---|---|")
    for name, times in STAGES.items():
        print(f"| {name} | {np.median(times):.2f} |")
    print()
    print(
        f"target <= 10 s: {'met' if t_fast <= 10 else 'NOT met'} "
        f"(load average now {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
