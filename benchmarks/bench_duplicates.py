# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: duplicate detection, against the audit it runs in and a Gram floor.

1. Cropped Yale B (1,703 rows x 128): ``duplicate_groups(X, y)`` against
   ``skprivacy.audit(X, y)`` (quick protocol) in the same run; prints the
   fraction of the audit's time the duplicate search costs.
2. ``make_identity_embeddings`` (``--n-identities`` x 100 x 512, with every
   tenth row copied as float32, x3, rounded to 6 decimals): ``duplicate_groups``
   against one blocked float64 product of all rows with themselves (the cost
   of comparing every pair), same run.

Usage::

    python benchmarks/bench_duplicates.py [--repeats 5] [--n-identities 200]
"""

import argparse
import os
import time
import warnings

import numpy as np

import skprivacy
from skprivacy.datasets import load_cropped_yale_b, make_identity_embeddings
from skprivacy.utils import duplicate_groups


def _median_time(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _gram_floor(Z, block=2048):
    for start in range(0, Z.shape[0], block):
        Z[start : start + block] @ Z.T


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-identities", type=int, default=200)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")

    faces = load_cropped_yale_b()
    X, y = faces.data, faces.identity
    duplicate_groups(X, y)  # warm-up
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = _median_time(lambda: skprivacy.audit(X, y), max(1, args.repeats // 2))
    dups = _median_time(lambda: duplicate_groups(X, y), args.repeats)
    print(
        f"cropped Yale B {X.shape}: quick audit {audit:.2f} s, duplicate_groups "
        f"{dups * 1e3:.1f} ms, fraction {dups / audit:.4f}"
    )

    X, y = make_identity_embeddings(
        n_identities=args.n_identities,
        n_samples_per_identity=100,
        n_features=512,
        random_state=0,
    )
    X = np.asarray(X, dtype=np.float64)
    copies = X[::10].astype(np.float32).astype(np.float64) * 3.0
    X = np.vstack([X, np.round(copies / np.linalg.norm(copies, axis=1)[:, None], 6)])
    y = np.concatenate([np.asarray(y), np.asarray(y)[::10]])
    _, counts = duplicate_groups(X, y)
    Z = X / np.linalg.norm(X, axis=1)[:, None]
    dups = _median_time(lambda: duplicate_groups(X, y), args.repeats)
    floor = _median_time(lambda: _gram_floor(Z), max(1, args.repeats // 2))
    print(
        f"synthetic {X.shape}: duplicate_groups {dups:.3f} s ({counts}), "
        f"full float64 Gram {floor:.3f} s, ratio {dups / floor:.3f}"
    )
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
