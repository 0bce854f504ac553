# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: the shared ROC-HT engine at unequal identity sizes, and certify().

Data: ``make_identity_embeddings(200 identities x 150 x 128, seed 0)``. Prints,
from the same run (medians of ``--repeats``):

1. ``ROCHTAuditor(CentroidClassifier(), n_pairs=None)`` (all 19,900 pairs) on
   100 rows per identity (equal sizes, the baseline) and on 50-150 rows per
   identity (sizes drawn uniformly, seeded: unequal), and their ratio.
2. ``ROCHTCertifier(CentroidClassifier(), n_pairs=None, test_size=None)``
   fitted on the unequal rows, then ``certify(X_test, y_test)`` of 30 further
   rows per identity through the shared engine, the ratio certify / fit, and
   (unless ``--skip-per-pair``) the same ``certify`` through the per-pair
   engine (``solver="per_pair"``), with a check that the two certificate
   tables are identical.

Usage::

    python benchmarks/bench_roc_unequal.py [--repeats 3] [--skip-per-pair]
"""

import argparse
import os
import time
import warnings

import numpy as np

from skprivacy import CentroidClassifier, ROCHTAuditor, ROCHTCertifier
from skprivacy.datasets import make_identity_embeddings

N_IDENTITIES = 200


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-per-pair", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(N_IDENTITIES, 180, 128, random_state=0)
    rng = np.random.default_rng(0)
    sizes = rng.integers(50, 151, N_IDENTITIES)
    rank = np.zeros(len(ids), dtype=int)
    for i in np.unique(ids):
        rank[ids == i] = np.arange((ids == i).sum())
    equal = rank < 100
    unequal = rank < sizes[ids]
    test = rank >= 150  # 30 held-out rows per identity, disjoint from both

    def audit(mask):
        return ROCHTAuditor(CentroidClassifier(), n_pairs=None).fit(X[mask], ids[mask])

    t_equal, a_equal = timed(lambda: audit(equal), args.repeats)
    t_unequal, a_unequal = timed(lambda: audit(unequal), args.repeats)
    print(
        f"ROC-HT shared engine, {len(a_equal.results_):,} pairs, 128 dims: equal "
        f"sizes (100 rows) {t_equal:.2f} s, unequal sizes (50-150 rows, "
        f"{int(unequal.sum()):,} rows) {t_unequal:.2f} s, ratio "
        f"{t_unequal / t_equal:.2f}"
    )

    def fit(solver="auto"):
        return ROCHTCertifier(
            CentroidClassifier(), n_pairs=None, test_size=None, solver=solver
        ).fit(X[unequal], ids[unequal])

    t_fit, cert = timed(fit, args.repeats)
    t_certify, table = timed(lambda: cert.certify(X[test], ids[test]), args.repeats)
    print(
        f"ROCHTCertifier shared engine: fit {t_fit:.2f} s, certify of "
        f"{len(table):,} held-out pairs ({int(test.sum()):,} rows) {t_certify:.2f} s, "
        f"ratio {t_certify / t_fit:.2f}"
    )
    if not args.skip_per_pair:
        slow = fit("per_pair")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_slow, slow_table = timed(lambda: slow.certify(X[test], ids[test]), 1)
        columns = ["epsilon", "tp", "fp", "n_pos", "n_neg", "ceiling"]
        same = all(
            np.array_equal(table[c].to_numpy(), slow_table[c].to_numpy())
            for c in columns
        )
        print(
            f"baseline: certify through the per-pair engine {t_slow:.2f} s "
            f"({t_slow / t_certify:.0f}x the shared engine); certificates "
            f"identical ({', '.join(columns)}): {same}"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
