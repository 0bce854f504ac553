# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Speed of the four membership statistics against a straightforward baseline.

Target (issue 5): all four statistics for 10,000 identities x 10 probes x 512
dimensions in <= 5 s on 2 cores.

The fast path computes every statistic from segment sums (one sparse indicator
product for all identities) and ProtoCE from blocked Gram products. The
baseline is what one writes from the formulas: a Python loop over identities
that forms each identity's Gram matrix (PairCos), mean (vMF-kappa), leave-one-
out prototypes (PenLogit), and its queries' logits against all prototypes
(ProtoCE). Both run in the same process on the same data. The ProtoCE baseline
query loop is timed on a subset of query identities (against all prototypes)
and scaled linearly (every identity costs the same); the prototypes are built
once and added unscaled.

Exact ProtoCE needs one n_samples x n_identities x d Gram product: at the
target size 5.1e11 multiply-adds, i.e. at least ~13 s on 2 cores even at the
fp64 FMA peak of a 2.5 GHz AVX2 core pair (~80 GFLOP/s), plus 1e9
exponentials. The <= 5 s target is therefore reachable for PairCos, vMF-kappa
and PenLogit (linear in the data), not for exact ProtoCE on this hardware;
the table also times the sampled-negatives approximation.

Usage::

    python benchmarks/bench_membership.py            # full size (ProtoCE ~minutes)
    python benchmarks/bench_membership.py --quick    # 2,000 identities
"""

import argparse
import os
import statistics
import time

import numpy as np

from skprivacy.membership import membership_statistics, prototype_ce


def make_data(n_ids, k, d, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.standard_normal((n_ids, d)).astype(np.float64)
    X = np.repeat(means, k, axis=0)
    X += rng.standard_normal(X.shape)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.repeat(np.arange(n_ids), k)


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


# -- baseline: loops over identities, written from the formulas ---------------
def baseline_cheap(X, ids, s=64.0, m=0.5):
    d = X.shape[1]
    order = np.argsort(ids, kind="stable")
    bounds = np.flatnonzero(np.diff(ids[order])) + 1
    out = []
    for rows in np.split(order, bounds):
        E = X[rows]
        k = len(E)
        G = E @ E.T
        pc = (G.sum() - np.trace(G)) / (k * (k - 1))
        R = np.linalg.norm(E.mean(axis=0))
        kappa = R * (d - R * R) / (1 - R * R)
        ells = []
        for i in range(k):
            w = np.delete(E, i, axis=0).mean(axis=0)
            c = E[i] @ w / np.linalg.norm(w)
            ells.append(s * np.cos(np.arccos(np.clip(c, -1, 1)) + m))
        out.append((pc, kappa, np.mean(ells)))
    return out


def baseline_prototypes(X, ids):
    labels = np.unique(ids)
    W = np.vstack([X[ids == lab].mean(axis=0) for lab in labels])
    return W / np.linalg.norm(W, axis=1, keepdims=True)


def baseline_proto(X, ids, W, query_ids, s=64.0, m=0.5):
    out = []
    for j in query_ids:
        E = X[ids == j]
        logits = s * (E @ W.T)
        own = s * np.cos(np.arccos(np.clip(E @ W[j], -1, 1)) + m)
        logits[:, j] = -np.inf
        mx = logits.max(axis=1)
        lse = mx + np.log(np.exp(logits - mx[:, None]).sum(axis=1))
        out.append(np.mean(-np.logaddexp(0, lse - own)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-identities", type=int, default=10_000)
    parser.add_argument("--probes", type=int, default=10)
    parser.add_argument("--dims", type=int, default=512)
    parser.add_argument("--quick", action="store_true", help="2,000 identities")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--proto-queries", type=int, default=200)
    parser.add_argument("--n-negatives", type=int, default=1000)
    args = parser.parse_args()
    n_ids = 2_000 if args.quick else args.n_identities
    X, ids = make_data(n_ids, args.probes, args.dims)
    print(
        f"{n_ids} identities x {args.probes} probes x {args.dims} dims "
        f"({X.shape[0]} rows); load average {os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} cores"
    )
    cheap = ["pair_cos", "vmf_kappa", "penalised_logit"]

    t_cheap, table = timed(
        lambda: membership_statistics(X, ids, statistics=cheap), args.repeat
    )
    t_proto, proto = timed(lambda: prototype_ce(X, ids, n_jobs=2), 1)
    t_proto_neg, _ = timed(
        lambda: prototype_ce(X, ids, n_negatives=args.n_negatives, random_state=0),
        args.repeat,
    )
    t_base_cheap, base = timed(lambda: baseline_cheap(X, ids), 1)
    q = np.arange(min(args.proto_queries, n_ids))
    t_base_w, W = timed(lambda: baseline_prototypes(X, ids), 1)
    t_base_q, base_proto = timed(lambda: baseline_proto(X, ids, W, q), 1)
    t_base_proto = t_base_w + t_base_q * n_ids / len(q)

    # the two paths agree (the baseline is a loop, the fast path segment sums)
    base = np.array(base)
    err = max(
        np.max(np.abs(table[c].to_numpy() - base[:, i]) / np.abs(base[:, i]))
        for i, c in enumerate(cheap)
    )
    err_p = np.max(np.abs(proto.to_numpy()[q] - base_proto) / np.abs(base_proto))

    rows = [
        ("PairCos + vMF-kappa + PenLogit", t_cheap, t_base_cheap, ""),
        ("ProtoCE (exact, all negatives)", t_proto, t_base_proto, "baseline scaled"),
        (
            f"ProtoCE (n_negatives={args.n_negatives}, approx.)",
            t_proto_neg,
            float("nan"),
            "",
        ),
        (
            "all four (exact)",
            t_cheap + t_proto,
            t_base_cheap + t_base_proto,
            "target <= 5 s",
        ),
    ]
    print(f"{'statistic(s)':42s} {'fast [s]':>9s} {'baseline [s]':>13s} {'ratio':>7s}")
    for name, fast, slow, note in rows:
        ratio = slow / fast if np.isfinite(slow) else float("nan")
        print(f"{name:42s} {fast:9.3f} {slow:13.3f} {ratio:7.1f}  {note}")
    print(
        f"max relative difference fast vs baseline: cheap {err:.1e}, ProtoCE {err_p:.1e}"
    )
    gflop = 2.0 * X.shape[0] * n_ids * args.dims / 1e9
    print(
        f"ProtoCE needs one {X.shape[0]} x {n_ids} x {args.dims} Gram product "
        f"({gflop:.0f} GFLOP) and {X.shape[0] * n_ids:.1e} exponentials; "
        f"achieved {gflop / t_proto:.1f} GFLOP/s."
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
