# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: the seeded identity-pair ordering (DESIGN.md "Pair protocol").

Times :func:`skprivacy.utils.identity_pairs` against two straightforward
baselines measured in the same run: a Python ``itertools.combinations`` list
shuffled with ``random.shuffle``, and ``numpy.triu_indices`` gathered through
a permutation. Prints medians over repeats and the ratios.

A second table times a short prefix of a huge ordering (``identity_pairs(100_000,
500)``, about 5e9 pairs) with its peak traced memory (``tracemalloc``), against
the floor of the same run: unranking 500 random pair indices
(:func:`~skprivacy.utils.pair_unrank`) drawn with ``Generator.integers``. The
0.1 engine shuffled every pair first (``MemoryError`` at 37 GiB here).

A third line times ``GaussMechAuditor(n_pairs=500)`` on 20,000 identities x 5
rows x 128 dims (issue 14: cost must follow the pairs asked for, not the
identities), against the floor of reading the input once (``np.copy``).

Run: ``python benchmarks/bench_pairs.py [--identities 5000] [--repeats 5]``
"""

import argparse
import functools
import itertools
import os
import random
import time
import tracemalloc

import numpy as np

from skprivacy.utils import identity_pairs, n_identity_pairs, pair_unrank


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
    parser.add_argument("--prefix-identities", type=int, default=100_000)
    parser.add_argument("--prefix-pairs", type=int, default=500)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
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

    n, m = args.prefix_identities, args.prefix_pairs
    fast = _median_time(
        functools.partial(identity_pairs, n, m, random_state=0), args.repeats
    )
    total = n_identity_pairs(n)

    def floor():
        k = np.random.default_rng(0).integers(0, total, size=m)
        return pair_unrank(k, n)

    floor_s = _median_time(floor, args.repeats)
    tracemalloc.start()
    identity_pairs(n, m, random_state=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"\nprefix of {m:,} pairs of {n:,} identities ({total:,} pairs): "
        f"{fast * 1e3:.2f} ms (median), peak traced memory {peak / 2**20:.2f} MB; "
        f"floor (unrank {m} random indices) {floor_s * 1e3:.2f} ms, "
        f"ratio {fast / floor_s:.1f}x"
    )

    from skprivacy.auditors import GaussMechAuditor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 128))
    ids = np.repeat(np.arange(20_000), 5)
    gauss = _median_time(
        lambda: GaussMechAuditor(n_pairs=500).fit(X, ids), args.repeats
    )
    copy = _median_time(lambda: np.copy(X), args.repeats)
    print(
        f"GaussMechAuditor(n_pairs=500) on 20,000 identities x 5 x 128: "
        f"{gauss:.3f} s (median); floor np.copy(X) {copy:.3f} s, "
        f"ratio {gauss / copy:.1f}x"
    )


if __name__ == "__main__":
    main()
