# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: exhaustive MMD-TV against its float32 Gram floor, one BLAS thread.

Data: make_identity_embeddings(N identities x 100 x 512, seed 0), cast to
``--dtype`` (default float32) and L2-normalised. Prints, from the same run and
in the same process, with the BLAS limited to one thread for both (so the
ratio measures the algorithm, not how the two use the threads):

* the floor: the upper-triangle Gram ``X X^T`` of all N * 100 rows in
  ``--dtype`` (4,096-row blocks), the products any exact exhaustive MMD needs;
* the fast path: ``MMDTVAuditor(n_pairs=None, n_jobs=1).fit(X, ids)`` (input
  validation included);
* their ratio, in wall time and in process CPU time (on a shared machine the
  CPU-time ratio is the steadier one), and the process's peak RSS.

The floor and the fast path alternate ``--repeats`` times and the medians are
reported, with the load average before and after.

Run: ``python benchmarks/bench_mmd_exhaustive.py [--identities 400] [--repeats 3]``
"""

import argparse
import os
import resource
import time

import numpy as np

from skprivacy.auditors import MMDTVAuditor
from skprivacy.datasets import make_identity_embeddings
from skprivacy.utils import limit_blas_threads


def triangle_gram(X, block=4096):
    n = X.shape[0]
    for i in range(0, n, block):
        X[i : i + block] @ X[i:].T


def timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=400)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(args.identities, 100, 512, random_state=0)
    X = X.astype(args.dtype)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    n_pairs = args.identities * (args.identities - 1) // 2
    floor, fast = [], []
    with limit_blas_threads(1):
        for _ in range(args.repeats):
            floor.append(timed(lambda: triangle_gram(X))[:2])
            wall, cpu, est = timed(
                lambda: MMDTVAuditor(n_pairs=None, n_jobs=1).fit(X, ids)
            )
            fast.append((wall, cpu))
    floor, fast = np.median(floor, axis=0), np.median(fast, axis=0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"floor: upper-triangle Gram of {X.shape} {X.dtype}, one BLAS thread: "
        f"{floor[0]:.2f} s wall, {floor[1]:.2f} s CPU"
    )
    print(
        f"fast: exhaustive MMD-TV, {n_pairs:,} pairs, one BLAS thread: "
        f"{fast[0]:.2f} s wall, {fast[1]:.2f} s CPU "
        f"({fast[0] / n_pairs * 1e3:.3f} ms/pair), max eps {est.score():.4f}"
    )
    print(
        f"fast / floor (medians of {args.repeats}): {fast[0] / floor[0]:.2f}x wall, "
        f"{fast[1] / floor[1]:.2f}x CPU; peak RSS {rss:.2f} GB"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
