# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: the seeded identity-pair ordering (DESIGN.md "Pair protocol").

Times :func:`skprivacy.utils.identity_pairs` against two straightforward
baselines measured in the same run: a Python ``itertools.combinations`` list
shuffled with ``random.shuffle``, and ``numpy.triu_indices`` gathered through
a permutation. Prints medians over repeats and the ratios.

Run: ``python benchmarks/bench_pairs.py [--identities 5000] [--repeats 5]``
"""

import argparse
import functools
import itertools
import random
import time

import numpy as np

from skprivacy.utils import identity_pairs, n_identity_pairs


def _median_time(func, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _python_baseline(n, seed):
    pairs = list(itertools.combinations(range(n), 2))
    random.Random(seed).shuffle(pairs)
    return pairs


def _triu_baseline(n, seed):
    i, j = np.triu_indices(n, 1)
    order = np.random.default_rng(seed).permutation(i.shape[0])
    return np.stack([i[order], j[order]], axis=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, nargs="+", default=[400, 5000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'identities':>10} {'pairs':>12} {'skprivacy s':>12} "
        f"{'triu+perm s':>12} {'python s':>10} {'python/fast':>12}"
    )
    for n in args.identities:
        fast = _median_time(
            functools.partial(identity_pairs, n, random_state=0), args.repeats
        )
        triu = _median_time(functools.partial(_triu_baseline, n, 0), args.repeats)
        slow = _median_time(
            functools.partial(_python_baseline, n, 0), max(1, args.repeats // 2)
        )
        print(
            f"{n:>10} {n_identity_pairs(n):>12,} {fast:>12.3f} {triu:>12.3f} "
            f"{slow:>10.3f} {slow / fast:>11.1f}x"
        )


if __name__ == "__main__":
    main()
