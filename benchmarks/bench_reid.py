# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: leave-one-out re-identification against its blocked Gram floor.

Data: make_identity_embeddings(N identities x 100 x 512, seed 0), cast to
``--dtype`` (default float32), so 1,000 identities give 100,000 rows. The
full leave-one-out search of 100,000 queries is a 10-TFLOP product (minutes
on two cores), so the queries are a seeded sample of ``--queries`` rows
(``max_queries``) searched against *every* row. Prints, from the same run,
interleaved, ``--repeats`` times each:

* the floor: the products the search cannot avoid, the sampled query rows
  against all rows in ``--dtype`` (blocks of 256 queries), timed two ways
  (one threaded BLAS product per block into a reused buffer, and blocks
  spread over the BLAS threads with one BLAS thread each), keeping the
  faster;
* the fast path: ``ReidentificationAuditor(max_queries=Q,
  random_state=0).fit(X, ids)`` with everything it does (input validation
  and normalisation, duplicate detection, the search, chance levels,
  intervals, the identity bootstrap);
* their ratio (of the medians, and per repeat against the faster floor of
  the same repeat), the load average before and after, and peak memory:
  the process's peak RSS and the auditor's own peak allocation above the
  data (``tracemalloc``, one extra run).

Run: ``python benchmarks/bench_reid.py [--identities 1000] [--queries 10000]
[--repeats 3] [--dtype float32]``
"""

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np

from skprivacy import ReidentificationAuditor
from skprivacy.datasets import make_identity_embeddings
from skprivacy.utils import limit_blas_threads, map_blas_threads


def floor_threaded(X, Q, block=256):
    buf = np.empty((block, X.shape[0]), dtype=X.dtype)
    Xt = X.T
    for s in range(0, Q.shape[0], block):
        qb = Q[s : s + block]
        np.matmul(qb, Xt, out=buf[: qb.shape[0]])


def floor_blocks(X, Q, block=256, chunk=8192):
    def one(s):
        qt = Q[s : s + block].T
        buf = np.empty((chunk, qt.shape[1]), dtype=X.dtype)
        for c in range(0, X.shape[0], chunk):
            e = min(c + chunk, X.shape[0])
            np.matmul(X[c:e], qt, out=buf[: e - c])

    with limit_blas_threads(1):
        map_blas_threads(one, range(0, Q.shape[0], block))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(args.identities, 100, 512, random_state=0)
    X = np.ascontiguousarray(X.astype(args.dtype))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    n = X.shape[0]
    est = ReidentificationAuditor(max_queries=args.queries, random_state=0)
    est.fit(X, ids)  # warm-up; also gives the query sample
    Q = np.ascontiguousarray(X[est.query_indices_])
    print(
        f"data {X.shape} {X.dtype}, {est.n_queries_:,} queries "
        f"(sampled: {est.queries_sampled_}) against all {n:,} rows; "
        f"rate {est.rate_:.4f}, chance {est.chance_:.5f}"
    )
    fast, floor_t, floor_b = [], [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        floor_threaded(X, Q)
        floor_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        floor_blocks(X, Q)
        floor_b.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ReidentificationAuditor(max_queries=args.queries, random_state=0).fit(X, ids)
        fast.append(time.perf_counter() - t0)
    med_t, med_b, med_f = (float(np.median(v)) for v in (floor_t, floor_b, fast))
    floor = min(med_t, med_b)
    # Each repeat's fast path against the faster floor of the same repeat
    # (adjacent in time, so a change of load between repeats cancels).
    paired = [f / min(t, b) for f, t, b in zip(fast, floor_t, floor_b)]
    gflop = 2 * est.n_queries_ * n * X.shape[1] / 1e9
    print(f"floor, one threaded product per block: {np.round(floor_t, 2)} s")
    print(f"floor, blocks over threads (1 BLAS thread each): {np.round(floor_b, 2)} s")
    print(f"fast path: {np.round(fast, 2)} s")
    print(
        f"medians: fast {med_f:.2f} s, floor {floor:.2f} s ({gflop / floor:.0f} "
        f"GFLOP/s), ratio {med_f / floor:.2f}; per repeat "
        f"{np.round(paired, 2)} (median {np.median(paired):.2f})"
    )
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    ReidentificationAuditor(max_queries=args.queries, random_state=0).fit(X, ids)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"memory: data {X.nbytes / 2**20:.0f} MB; auditor peak allocation above "
        f"the data {peak / 2**20:.0f} MB; process peak RSS {rss:.2f} GB"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
