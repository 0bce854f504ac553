# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Speed of the four membership statistics: float32 fast path, float64 path, GEMM floor.

Target (issue 14.3): all four statistics, exact ProtoCE included, for 10,000
identities x 10 probes x 512 float32 dimensions in <= 2.5 times the time of
the single float32 100,000 x 10,000 x 512 product measured in the same run
(and <= 5 s on a quiet 2-core machine).

* **fast**: ``membership_statistics`` on the float32 embeddings (all four).
  Float32 input stays float32: ProtoCE's Gram blocks, exponentials and row
  sums run in float32, the per-identity sums and every per-row result in
  float64.
* **baseline**: the same call on the same embeddings converted to float64
  (the float64 path, which float32 input took before).
* **floor**: the one product exact ProtoCE cannot avoid, every probe against
  every prototype, ``Z (100,000 x 512) @ W.T (512 x 10,000)`` in float32 as a
  single call (4 GB output), and the same product in the fast path's row
  blocks (2,048 rows, no large output).

The script also prints the largest relative difference of each statistic
between the float32 and float64 paths. ``--loop`` adds the per-identity loop
written from the formulas (ProtoCE's loop timed on a subset of query
identities and scaled linearly), the baseline of issue 5.

Usage::

    python benchmarks/bench_membership.py            # full size (minutes on a busy machine)
    python benchmarks/bench_membership.py --quick    # 2,000 identities
"""

import argparse
import os
import statistics
import time

import numpy as np

from skprivacy.membership import membership_statistics


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
    parser.add_argument("--loop", action="store_true", help="add the loop baseline")
    parser.add_argument("--proto-queries", type=int, default=200)
    args = parser.parse_args()
    n_ids = 2_000 if args.quick else args.n_identities
    X, ids = make_data(n_ids, args.probes, args.dims)
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)  # the float64 path on the very same values
    n = X.shape[0]
    print(
        f"{n_ids} identities x {args.probes} probes x {args.dims} dims ({n} rows); "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    # The floor's operands: unit probes and scaled unit prototypes, float32.
    Z = X32 / np.linalg.norm(X32, axis=1, keepdims=True)
    W = scaled_prototypes(X32, ids, n_ids)

    def single_product():
        return Z @ W.T

    def blocked_product(block=2048):
        out = np.empty((block, n_ids), dtype=np.float32)
        for start in range(0, n, block):
            zb = Z[start : start + block]
            np.matmul(zb, W.T, out=out[: zb.shape[0]])

    t_single, t_blocked, t_fast = [], [], []
    fast = None
    for _ in range(args.repeat):  # interleaved, so load drift hits all alike
        t, _ = timed(single_product, 1)
        t_single.append(t)
        t, _ = timed(blocked_product, 1)
        t_blocked.append(t)
        t, fast = timed(lambda: membership_statistics(X32, ids), 1)
        t_fast.append(t)
    t_single = statistics.median(t_single)
    t_blocked = statistics.median(t_blocked)
    t_fast = statistics.median(t_fast)
    t_base, base = timed(lambda: membership_statistics(X64, ids), 1)

    print(f"{'':44s} {'time [s]':>9s} {'/ floor':>8s}")
    rows = [
        ("fast: all four, exact, float32 input", t_fast),
        ("baseline: all four, exact, float64 path", t_base),
        ("floor: float32 product, single call", t_single),
        ("floor: float32 product, 2,048-row blocks", t_blocked),
    ]
    for name, t in rows:
        print(f"{name:44s} {t:9.3f} {t / t_single:8.2f}")
    print(
        f"fast / single-product floor = {t_fast / t_single:.2f} (target <= 2.5); "
        f"fast / blocked floor = {t_fast / t_blocked:.2f}; "
        f"float64 path / fast = {t_base / t_fast:.2f}"
    )
    for c in STATS:
        b = base[c].to_numpy()
        rel = np.max(np.abs(fast[c].to_numpy() - b) / np.abs(b))
        print(f"max relative difference float32 vs float64, {c:16s} {rel:.1e}")
    gflop = 2.0 * n * n_ids * args.dims / 1e9
    print(
        f"the product: {gflop:.0f} GFLOP, {gflop / t_single:.1f} GFLOP/s single call; "
        f"{n * n_ids:.1e} exponentials in ProtoCE"
    )

    if args.loop:
        cheap = ["pair_cos", "vmf_kappa", "penalised_logit"]
        X64 = X64 / np.linalg.norm(X64, axis=1, keepdims=True)  # the loop's input
        t_base_cheap, loop = timed(lambda: baseline_cheap(X64, ids), 1)
        q = np.arange(min(args.proto_queries, n_ids))
        t_base_w, Wb = timed(lambda: baseline_prototypes(X64, ids), 1)
        t_base_q, loop_proto = timed(lambda: baseline_proto(X64, ids, Wb, q), 1)
        t_loop = t_base_cheap + t_base_w + t_base_q * n_ids / len(q)
        loop = np.array(loop)
        err = max(
            np.max(np.abs(base[c].to_numpy() - loop[:, i]) / np.abs(loop[:, i]))
            for i, c in enumerate(cheap)
        )
        err_p = np.max(
            np.abs(base["prototype_ce"].to_numpy()[q] - loop_proto) / np.abs(loop_proto)
        )
        print(
            f"loop baseline (float64, ProtoCE scaled from {len(q)} identities): "
            f"{t_loop:.1f} s = {t_loop / t_fast:.0f} x fast; max relative "
            f"difference float64 path vs loop: {err:.1e}, ProtoCE {err_p:.1e}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


STATS = ["pair_cos", "vmf_kappa", "penalised_logit", "prototype_ce"]


def scaled_prototypes(X32, ids, n_ids, scale=64.0):
    W = np.zeros((n_ids, X32.shape[1]))
    np.add.at(W, ids, X32 / np.linalg.norm(X32, axis=1, keepdims=True))
    W *= scale / np.linalg.norm(W, axis=1, keepdims=True)
    return W.astype(np.float32)


if __name__ == "__main__":
    main()
