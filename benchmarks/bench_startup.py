# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: start-up of ``skprivacy --help`` and ``skprivacy audit --help``.

Target: each at most 0.25x the time of
``python -c "import sklearn.base, pandas, scipy.stats"`` (importing the
scientific stack), medians of ``--repeats`` fresh processes, measured in the
same run with the three commands interleaved so they see the same load. The
command line builds its parser from plain data; the first real command pays
the scientific stack's import.

Usage::

    python benchmarks/bench_startup.py [--repeats 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "stack import": [sys.executable, "-c", "import sklearn.base, pandas, scipy.stats"],
    "skprivacy --help": [sys.executable, "-m", "skprivacy", "--help"],
    "skprivacy audit --help": [sys.executable, "-m", "skprivacy", "audit", "--help"],
}


def _seconds(command):
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for command in COMMANDS.values():  # warm the file cache
        _seconds(command)
    times = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            times[name].append(_seconds(command))
    medians = {name: statistics.median(t) for name, t in times.items()}
    floor = medians["stack import"]
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average: {load}; medians of {args.repeats} fresh processes")
    for name, seconds in medians.items():
        print(f"{name:>24}: {seconds:6.3f} s  ({seconds / floor:.3f}x the stack)")


if __name__ == "__main__":
    main()
