# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cost of the default attacker ladder (issue 14, item 5).

Condition of the acceptance target: :func:`~skprivacy.pressure_ladder` with the
default ladder (A0 retrieval, A1 linear probe, A2 prototype + kNN graph, A3
MLP probe) on 400 rows x 2 releases, 1 repeat, <= 20 s. The rows are a seeded
random subset of the Cropped Extended Yale B faces (38 people), release Z1 the
dlib ResNet descriptors and Z2 the HOG/PCA features of the same images.

Printed from the same run (medians over ``--runs``, wall and CPU seconds):

- fast path: the whole default ladder, and its A3 rung (:class:`MLPAttacker`);
- floor: the A1 linear-probe rung alone (the cheapest trained rung; the MLP
  target is "a small multiple" of it);
- baseline (``--baseline``, slow): the former A3 rung,
  ``MLPClassifier(hidden_layer_sizes=(256,), alpha=1e-3, max_iter=300)``
  without early stopping and without the one-thread limit (115 s for one
  repeat when the issue was filed).

Usage::

    python benchmarks/bench_pressure_ladder.py
    python benchmarks/bench_pressure_ladder.py --runs 3 --baseline
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.neural_network import MLPClassifier

from skprivacy.datasets import load_cropped_yale_b
from skprivacy.pressure import RenyiPressure, attacker_ladder, pressure_ladder

RELEASES = {"dlib": slice(0, 128), "hog": slice(128, 256)}


def load(n_rows, seed=0):
    dlib = load_cropped_yale_b()
    hog = load_cropped_yale_b(encoder="hog_pca128")
    rows = np.sort(
        np.random.default_rng(seed).choice(dlib.data.shape[0], n_rows, replace=False)
    )
    X = np.hstack([dlib.data[rows], hog.data[rows]])
    return X, np.asarray(dlib.identity)[rows]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def rung(X, y, attacker):
    est = RenyiPressure(
        attacker=attacker, releases=RELEASES, n_repeats=1, random_state=0
    ).fit(X, y)
    return est.score()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    X, y = load(args.rows)
    print(
        f"{X.shape[0]} rows, {len(set(y))} identities, releases "
        f"{ {k: v.stop - v.start for k, v in RELEASES.items()} }, 1 repeat"
    )
    ladder = attacker_ladder(random_state=0)
    results = {"ladder": [], "A1 linear probe": [], "A3 MLP probe": []}
    scores = {}
    warnings.simplefilter("ignore")
    for _ in range(args.runs):
        wall, cpu, table = timed(
            lambda: pressure_ladder(X, y, releases=RELEASES, random_state=0)
        )
        results["ladder"].append((wall, cpu))
        for name in ("A1 linear probe", "A3 MLP probe"):
            wall, cpu, score = timed(lambda n=name: rung(X, y, ladder[n]))
            results[name].append((wall, cpu))
            scores[name] = score
    final = table.query("kind == 'cumulative' and t == 2 and alpha == 2")
    print("vRPI_2 of the cumulative state per rung (default ladder):")
    for _, row in final.iterrows():
        print(f"  {row['attacker']:<16} {row['vrpi']:.3f}")

    def med(name, i):
        return statistics.median(r[i] for r in results[name])

    floor_wall, floor_cpu = med("A1 linear probe", 0), med("A1 linear probe", 1)
    print(
        f"\nmedians over {args.runs} run(s)        wall s   CPU s   x floor (wall, CPU)"
    )
    for label, name in [
        ("default ladder (4 rungs)", "ladder"),
        ("A3 MLP rung alone", "A3 MLP probe"),
        ("floor: A1 linear probe rung", "A1 linear probe"),
    ]:
        w, c = med(name, 0), med(name, 1)
        print(
            f"  {label:<30} {w:7.2f} {c:7.2f} {w / floor_wall:8.1f} "
            f"{c / floor_cpu:5.1f}"
        )
    print(
        f"  target: default ladder <= 20 s: "
        f"{'met' if med('ladder', 0) <= 20 else 'NOT met'}"
    )
    if args.baseline:
        old = MLPClassifier(
            hidden_layer_sizes=(256,), alpha=1e-3, max_iter=300, random_state=0
        )
        wall, cpu, score = timed(lambda: rung(X, y, old))
        print(
            f"  baseline: former A3 rung (no early stopping) {wall:7.2f} {cpu:7.2f} "
            f"{wall / floor_wall:8.1f} {cpu / floor_cpu:5.1f}   vRPI_2 {score:.3f} "
            f"(MLPAttacker {scores['A3 MLP probe']:.3f})"
        )


if __name__ == "__main__":
    main()
