# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: ROC-HT and its certificates over every pair.

Data: ``make_identity_embeddings(N identities x 100 x 512, seed 0)`` (the
paper-scale condition at N = 400: 79,800 pairs). Prints, from the same run:

* the shared engine: ``ROCHTAuditor(CentroidClassifier(), n_pairs=None)`` plus
  ``ROCHTCertifier(CentroidClassifier(), n_pairs=None)`` (30% reserved test),
  input validation included, median of ``--repeats`` runs, ms per pair;
* the baseline: the same classifier through the per-pair engine
  (``solver="per_pair"``, ``cross_val_predict``-style) on a ``--prefix``-pair
  prefix of the same audits, ms per pair, and the per-pair speed ratio; also
  the default logistic regression on the same prefix (what the fast
  classifier replaces);
* the floor: the shared products any exact fast path needs (every row against
  every identity's fold means in both roles: two ``N*100 x 512 @ 512 x N``
  products per fold), timed as one float64 GEMM of that size;
* peak RSS of this process and its worker processes (psutil samples every
  0.1 s, summed over the process tree; psutil comes with dask's distributed).

Run: ``python benchmarks/bench_rocht_exhaustive.py [--identities 400] [--n-jobs 2]``
"""

import argparse
import os
import threading
import time

import numpy as np

try:  # distributed's dependency; optional here
    import psutil
except ImportError:  # pragma: no cover
    psutil = None

from skprivacy import (
    CentroidClassifier,
    PooledLDAClassifier,
    ROCHTAuditor,
    ROCHTCertifier,
)
from skprivacy.datasets import make_identity_embeddings


class PeakRSS:
    """Sample the summed RSS of this process and its descendants."""

    def __init__(self, interval=0.1):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()

    def _sample(self):
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for p in [me, *me.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(self.interval)

    def __enter__(self):
        if psutil is None:
            print("psutil missing: peak RSS not measured")
            self._stop.set()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def both(clf, X, ids, n_pairs, n_jobs, solver="auto"):
    params = {"n_pairs": n_pairs, "n_jobs": n_jobs, "solver": solver}
    audit = ROCHTAuditor(clf, **params).fit(X, ids)
    cert = ROCHTCertifier(clf, **params).fit(X, ids)
    return audit, cert


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=400)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--prefix", type=int, default=100)
    parser.add_argument("--lda", action="store_true", help="also PooledLDA")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(args.identities, 100, 512, random_state=0)
    n_pairs = args.identities * (args.identities - 1) // 2
    clfs = [CentroidClassifier()] + ([PooledLDAClassifier()] if args.lda else [])

    # Floor: the shared products, one GEMM of the same size (all threads).
    k = 5
    M = np.random.default_rng(0).normal(size=(args.identities * k, 512))
    t_floor, _ = timed(lambda: X @ M.T, args.repeats)
    # Two roles x k folds x (rows x N) -- the same flops as X @ M.T.
    print(
        f"floor: shared products {X.shape} @ (512 x {args.identities * k}) "
        f"float64 GEMM: {t_floor:.2f} s"
    )

    for clf in clfs:
        name = type(clf).__name__
        with PeakRSS() as rss:
            t_fast, (audit, cert) = timed(
                lambda clf=clf: both(clf, X, ids, None, args.n_jobs), args.repeats
            )
        per_fast = t_fast / n_pairs
        print(
            f"fast: {name} ROC-HT + reserved-test certificates, all {n_pairs:,} "
            f"pairs, n_jobs={args.n_jobs}: median {t_fast:.2f} s over "
            f"{args.repeats} runs ({per_fast * 1e3:.4f} ms/pair), peak RSS "
            f"(process tree) {rss.peak / 2**30:.2f} GB; median eps "
            f"{audit.score():.3f}, max certificate {cert.score():.3f}, "
            f"{int((cert.results_['epsilon'] > 0).sum()):,} pairs certified > 0"
        )
        t_gen, (ga, gc) = timed(
            lambda clf=clf: both(clf, X, ids, args.prefix, args.n_jobs, "per_pair"),
            1,
        )
        per_gen = t_gen / args.prefix
        same_eps = np.array_equal(
            ga.results_["epsilon"].to_numpy(),
            audit.results_.set_index(["id_a", "id_b"])
            .loc[list(zip(ga.results_["id_a"], ga.results_["id_b"])), "epsilon"]
            .to_numpy(),
        )
        print(
            f"baseline: {name} per-pair engine, {args.prefix}-pair prefix: "
            f"{t_gen:.2f} s ({per_gen * 1e3:.2f} ms/pair); per-pair speed-up "
            f"{per_gen / per_fast:.0f}x; prefix eps identical to the fast run: "
            f"{same_eps}"
        )
    t_lr, _ = timed(lambda: both(None, X, ids, args.prefix, args.n_jobs), 1)
    print(
        f"baseline: default LogisticRegression, {args.prefix}-pair prefix: "
        f"{t_lr:.2f} s ({t_lr / args.prefix * 1e3:.2f} ms/pair)"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
