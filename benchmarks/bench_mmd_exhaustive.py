# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: exhaustive MMD-TV against its Gram floor (issue 14, item 6).

Data: make_identity_embeddings(N identities x 100 x 512, seed 0), cast to
``--dtype`` (default float32) and L2-normalised. Prints, from the same run:

* the floor: the upper-triangle Gram ``X X^T`` of all N * 100 rows in
  ``--dtype`` (4,096-row blocks, every BLAS thread), the products any exact
  exhaustive MMD needs;
* the fast path: ``MMDTVAuditor(n_pairs=None, n_jobs=2).fit(X, ids)`` (input
  validation included), its ratio to the floor, and the process's peak RSS
  (``ru_maxrss``; run one size per process for a clean figure).

Run: ``python benchmarks/bench_mmd_exhaustive.py [--identities 400] [--dtype float32]``
"""

import argparse
import os
import resource
import time

import numpy as np

from skprivacy.auditors import MMDTVAuditor
from skprivacy.datasets import make_identity_embeddings


def triangle_gram(X, block=4096):
    n = X.shape[0]
    for i in range(0, n, block):
        X[i : i + block] @ X[i:].T


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=400)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--skip-floor", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(args.identities, 100, 512, random_state=0)
    X = X.astype(args.dtype)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    n_pairs = args.identities * (args.identities - 1) // 2
    if not args.skip_floor:
        t0 = time.perf_counter()
        triangle_gram(X)
        floor = time.perf_counter() - t0
        print(f"floor: upper-triangle Gram of {X.shape} {X.dtype}: {floor:.2f} s")
    t0 = time.perf_counter()
    est = MMDTVAuditor(n_pairs=None, n_jobs=args.n_jobs).fit(X, ids)
    fast = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"fast: exhaustive MMD-TV, {n_pairs:,} pairs, n_jobs={args.n_jobs}: "
        f"{fast:.2f} s ({fast / n_pairs * 1e3:.3f} ms/pair), "
        f"max eps {est.score():.4f}, peak RSS (this process) {rss:.2f} GB"
    )
    if not args.skip_floor:
        print(f"fast / floor: {fast / floor:.2f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
