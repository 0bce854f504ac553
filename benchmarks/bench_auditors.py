# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: GaussMech, MMD-TV (+ permutations) and KDE-LR at paper scale.

Data: make_identity_embeddings(400 identities x 100 samples x 512 dims, seed 0),
79,800 identity pairs. Each row times the skprivacy fast path and, in the same
process, a straightforward per-pair loop (sklearn ``euclidean_distances`` + numpy,
scipy's normal pdf per dimension, one permutation at a time) on a prefix of the
same pair ordering; per-pair values of both are checked to agree. Loops that
would take minutes are timed on a short prefix and extrapolated (marked "extrap.").
The baseline loops run with one BLAS thread, their fastest setting for these
small matrices on a shared 2-core machine; the fast path is timed with
``n_jobs`` 1 and 2. The fast path includes input validation of all 40,000 rows
(the loops get pre-normalised rows), so short audits are dominated by it.
On a shared machine wall times follow the load: compare the CPU time of
``MMDTVAuditor(n_pairs=None)`` with one job (``time.process_time``) as well.

Usage::

    python benchmarks/bench_auditors.py [--quick] [--n-jobs 1 2] [--skip-exhaustive]

Peak memory: ``/usr/bin/time -v python benchmarks/bench_auditors.py``.
"""

import argparse
import os
import time

import numpy as np
from scipy.stats import norm
from sklearn.metrics.pairwise import euclidean_distances
from threadpoolctl import threadpool_limits

from skprivacy.auditors import GaussMechAuditor, MMDTVAuditor, kde_lr_alpha_sweep
from skprivacy.datasets import make_identity_embeddings
from skprivacy.utils import identity_pairs


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def rows_by_identity(Z, ids):
    order = np.argsort(ids, kind="stable")
    labels, starts = np.unique(ids[order], return_index=True)
    ends = np.r_[starts[1:], len(ids)]
    return {lab: Z[order[s:e]] for lab, s, e in zip(labels, starts, ends)}


# ----------------------------------------------------------------- baselines
def loop_gauss(groups, labels, delta=1e-5):
    out = []
    for a, b in labels:
        A, B = groups[a], groups[b]
        mu_a, mu_b = A.mean(0), B.mean(0)
        s_a = np.sqrt(((A - mu_a) ** 2).sum() / A.size)
        s_b = np.sqrt(((B - mu_b) ** 2).sum() / B.size)
        out.append(
            np.linalg.norm(mu_a - mu_b)
            * np.sqrt(2 * np.log(1.25 / delta))
            / max(s_a, s_b)
        )
    return np.array(out)


def loop_mmd(groups, labels):
    out = []
    for a, b in labels:
        A, B = groups[a], groups[b]
        P = np.vstack([A, B])
        D = euclidean_distances(P, P)
        na, nb = len(A), len(B)
        sigma = np.median(D[np.triu_indices(len(P), 1)])
        K = np.exp(-(D**2) / (2 * sigma**2))
        np.fill_diagonal(K, 0.0)
        mmd2 = (
            K[:na, :na].sum() / (na * (na - 1))
            + K[na:, na:].sum() / (nb * (nb - 1))
            - 2 * K[:na, na:].mean()
        )
        out.append(2 * np.arctanh(np.sqrt(max(mmd2, 0.0)) / 2))
    return np.array(out)


def loop_permutations(groups, labels, m, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for a, b in labels:
        A, B = groups[a], groups[b]
        P = np.vstack([A, B])
        D = euclidean_distances(P, P)
        na, n = len(A), len(P)
        sigma = np.median(D[np.triu_indices(n, 1)])
        K = np.exp(-(D**2) / (2 * sigma**2))
        np.fill_diagonal(K, 0.0)

        def stat(idx_a, idx_b, K=K, na=na, n=n):
            return (
                K[np.ix_(idx_a, idx_a)].sum() / (na * (na - 1))
                + K[np.ix_(idx_b, idx_b)].sum() / ((n - na) * (n - na - 1))
                - 2 * K[np.ix_(idx_a, idx_b)].mean()
            )

        obs = stat(np.arange(na), np.arange(na, n))
        b_count = 0
        for _ in range(m):
            perm = rng.permutation(n)
            b_count += stat(perm[:na], perm[na:]) >= obs
        out.append((b_count + 1) / (m + 1))
    return np.array(out)


def loop_kde(groups, labels, alphas=(0.0, 1e-2), grid_size=201):
    out = []
    for a, b in labels:
        A, B = groups[a], groups[b]
        eps = np.zeros(len(alphas))
        for j in range(A.shape[1]):  # one dimension at a time
            xa, xb = A[:, j], B[:, j]
            h = []
            for x in (xa, xb):
                q75, q25 = np.percentile(x, [75, 25])
                iqr = (q75 - q25) / 1.349
                s = np.std(x, ddof=1)
                h.append(0.9 * (min(s, iqr) if iqr > 0 else s) * len(x) ** -0.2)
            hm = max(h)
            lo = min(xa.min(), xb.min()) - 3 * hm
            hi = max(xa.max(), xb.max()) + 3 * hm
            g = np.linspace(lo, hi, grid_size)[:, None]
            pa = norm.pdf((g - xa) / h[0]).mean(1) / h[0]
            pb = norm.pdf((g - xb) / h[1]).mean(1) / h[1]
            for s, alpha in enumerate(alphas):
                qa = np.maximum((1 - alpha) * pa + alpha / (hi - lo), 1e-12)
                qb = np.maximum((1 - alpha) * pb + alpha / (hi - lo), 1e-12)
                eps[s] += np.abs(np.log(qa) - np.log(qb)).max()
        out.append(eps)
    return np.array(out)


# ---------------------------------------------------------------------- main
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 identities")
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--skip-exhaustive", action="store_true")
    args = parser.parse_args()
    n_ids = 100 if args.quick else 400
    print(f"load average before: {os.getloadavg()}")
    t_gen, (X, ids) = timed(
        lambda: make_identity_embeddings(n_ids, 100, 512, random_state=0)
    )
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    groups = rows_by_identity(Z, ids)
    labels_all = np.unique(ids)
    prefix = identity_pairs(n_ids, 500, random_state=0)
    lab500 = labels_all[prefix]
    n_all = n_ids * (n_ids - 1) // 2
    print(f"data: {X.shape}, {n_all} pairs (generated in {t_gen:.1f} s)\n")
    rows = []

    def row(name, fast_s, fast_pairs, base_s, base_pairs, note=""):
        per_fast = fast_s / fast_pairs
        per_base = base_s / base_pairs
        rows.append(
            (name, fast_s, fast_pairs, base_s, base_pairs, per_base / per_fast, note)
        )
        print(
            f"{name:<34} fast {fast_s:8.2f} s / {fast_pairs:>6} pairs | "
            f"loop {base_s:8.2f} s / {base_pairs:>4} pairs | "
            f"per-pair speed-up {per_base / per_fast:7.1f}x {note}",
            flush=True,
        )

    with threadpool_limits(1, "blas"):
        t_base_g, base_g = timed(lambda: loop_gauss(groups, lab500))
        t_base_m, base_m = timed(lambda: loop_mmd(groups, lab500))
        t_base_p, _ = timed(lambda: loop_permutations(groups, lab500[:1], 10_000))
        t_base_k, base_k = timed(lambda: loop_kde(groups, lab500[:2]))

    for n_jobs in args.n_jobs:
        if n_jobs != 1:
            # Start the worker pool and memory-map the embeddings once: a
            # one-off cost per session, not part of an audit.
            t_warm, _ = timed(
                lambda n_jobs=n_jobs: GaussMechAuditor(n_pairs=10, n_jobs=n_jobs).fit(
                    X, ids
                )
            )
            print(
                f"(worker start-up and memory-mapping, n_jobs={n_jobs}: {t_warm:.1f} s)"
            )
        tag = f"n_jobs={n_jobs}"
        t, g = timed(
            lambda n_jobs=n_jobs: GaussMechAuditor(n_pairs=500, n_jobs=n_jobs).fit(
                X, ids
            )
        )
        np.testing.assert_allclose(g.results_["epsilon"], base_g, rtol=1e-9)
        row(f"GaussMech 500 pairs [{tag}]", t, 500, t_base_g, 500)
        if not args.skip_exhaustive:
            t, g = timed(
                lambda n_jobs=n_jobs: GaussMechAuditor(n_pairs=None, n_jobs=n_jobs).fit(
                    X, ids
                )
            )
            row(f"GaussMech exhaustive [{tag}]", t, n_all, t_base_g, 500)

        t, m = timed(
            lambda n_jobs=n_jobs: MMDTVAuditor(n_pairs=500, n_jobs=n_jobs).fit(X, ids)
        )
        np.testing.assert_allclose(m.results_["epsilon"], base_m, rtol=1e-9)
        row(f"MMD-TV 500 pairs [{tag}]", t, 500, t_base_m, 500)
        if not args.skip_exhaustive:
            t, m = timed(
                lambda n_jobs=n_jobs: MMDTVAuditor(n_pairs=None, n_jobs=n_jobs).fit(
                    X, ids
                )
            )
            first = m.results_.iloc[:500]["epsilon"].to_numpy()
            np.testing.assert_allclose(first, base_m, rtol=1e-9)
            row(f"MMD-TV exhaustive [{tag}]", t, n_all, t_base_m, 500)
            print(
                f"    exhaustive max eps {m.score():.4f} vs 500-pair max "
                f"{base_m.max():.4f}"
            )

        t, _ = timed(
            lambda n_jobs=n_jobs: MMDTVAuditor(
                n_pairs=100, n_permutations=10_000, n_jobs=n_jobs
            ).fit(X, ids)
        )
        row(f"MMD perm 100 x 1e4 [{tag}]", t, 100, t_base_p, 1, "(loop extrap.)")

        t, k = timed(
            lambda n_jobs=n_jobs: kde_lr_alpha_sweep(X, ids, n_pairs=100, n_jobs=n_jobs)
        )
        np.testing.assert_allclose(
            k[["epsilon_alpha=0", "epsilon_alpha=0.01"]].to_numpy()[:2],
            base_k,
            rtol=1e-6,
        )
        row(
            f"KDE-LR 100 pairs both alpha [{tag}]",
            t,
            100,
            t_base_k,
            2,
            "(loop extrap.)",
        )

    print(f"\nload average after: {os.getloadavg()}")
    print("\n| case | fast (s) | pairs | loop (s) | loop pairs | per-pair speed-up |")
    print("|---|---|---|---|---|---|")
    for name, fs, fp, bs, bp, ratio, note in rows:
        print(f"| {name} | {fs:.2f} | {fp} | {bs:.2f} | {bp} | {ratio:.1f}x {note} |")


if __name__ == "__main__":
    main()
