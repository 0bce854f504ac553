# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: default-size audits against a per-pair loop, with floors (issue 14).

Data: make_identity_embeddings(400 x 100 x 512, seed 0). For GaussMech (500
pairs), MMD-TV (500 pairs) and KDE-LR (100 pairs, both paper alphas) at
their default ``n_pairs``, prints in one run the median wall time of

* the fast path, ``fit(X, ids)`` from raw rows (input validation and L2
  normalisation included), with ``n_jobs=None`` and ``n_jobs=2``;
* the per-pair loop of ``bench_auditors.py`` on the same pairs (one BLAS
  thread), timed two ways: on rows already L2-normalised ("loop", the
  normalisation not timed) and end to end from the same raw ``X`` as the
  fast path ("loop+norm": the loop plus the ``X / ||x||`` pass and the
  grouping it needs). The fast path's figure always includes its input
  layer (finiteness, norms, normalisation where needed), so the fair
  comparison is loop+norm / fast; loop / fast is printed too;
* a floor: a copy of X (GaussMech: every row must be read), the 500 cross
  Gram products ``A @ B.T`` of the pairs plus one ``R @ R.T`` per identity
  (MMD-TV), and the loop's KDE evaluation cost is not floored (no GEMM).

and the ratios. Wall-clock medians, and CPU-time medians of the calling
process (``time.process_time``; comparable across load, meaningful for
``n_jobs=None`` and the loop, which run in this process). The machine is
shared: quote the load.

Run: ``python benchmarks/bench_default_audits.py [--repeats 5] [--quick]``
"""

import argparse
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_auditors import loop_gauss, loop_kde, loop_mmd, rows_by_identity  # noqa: E402

from skprivacy.auditors import GaussMechAuditor, KDELRAuditor, MMDTVAuditor  # noqa: E402
from skprivacy.datasets import make_identity_embeddings  # noqa: E402
from skprivacy.utils import identity_pairs  # noqa: E402


def median_time(fn, repeats, cpu=None):
    """Median wall time (and CPU time into ``cpu`` if given) of ``fn()``."""
    times, cpus, out = [], [], None
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    if cpu is not None:
        cpu.append(float(np.median(cpus)))
    return float(np.median(times)), out


def normalise_and_group(X, ids):
    """What a per-pair loop must do first: L2-normalise and group the rows."""
    return rows_by_identity(X / np.linalg.norm(X, axis=1, keepdims=True), ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="KDE loop on 5 pairs")
    args = parser.parse_args()
    r = args.repeats
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(400, 100, 512, random_state=0)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    groups = rows_by_identity(Z, ids)
    labels = np.unique(ids)
    cases = [
        ("GaussMech", GaussMechAuditor(), 500, loop_gauss),
        ("MMD-TV", MMDTVAuditor(), 500, loop_mmd),
        ("KDE-LR", KDELRAuditor(), 100, loop_kde),
    ]
    print(
        f"{'audit':<10} {'pairs':>5} {'fast None':>10} {'fast 2':>9} {'loop':>9} "
        f"{'loop+norm':>10} {'floor':>8} {'e2e/None':>9} {'e2e/2':>6} "
        f"{'loop/None':>10} {'None/floor':>11} | {'cpu None':>9} {'cpu e2e':>8}"
    )
    with threadpool_limits(1, "blas"):
        cpu_norm = []
        t_norm, _ = median_time(lambda: normalise_and_group(X, ids), r, cpu_norm)
    for name, est, n_pairs, loop in cases:
        pair_labels = labels[identity_pairs(400, n_pairs, random_state=0)]
        # Warm-up (imports, first allocation of the worker pool for n_jobs=2).
        est.set_params(n_jobs=2).fit(X, ids)
        cpu_fast, cpu_loop = [], []
        t_none, fitted = median_time(
            lambda est=est: est.set_params(n_jobs=None).fit(X, ids), r, cpu_fast
        )
        t_two, _ = median_time(lambda est=est: est.set_params(n_jobs=2).fit(X, ids), r)
        n_loop = n_pairs
        if name == "KDE-LR":
            n_loop = 5 if args.quick else 20
        with threadpool_limits(1, "blas"):
            t_loop, base = median_time(
                lambda loop=loop, sel=pair_labels[:n_loop]: loop(groups, sel),
                max(1, r // 2),
                cpu_loop,
            )
            if name == "MMD-TV":

                def floor(pair_labels=pair_labels):
                    for a, b in pair_labels:
                        groups[a] @ groups[b].T
                    for g in groups.values():
                        g @ g.T

                t_floor, _ = median_time(floor, r)
            elif name == "GaussMech":
                t_floor, _ = median_time(lambda: np.copy(X), r)
            else:
                t_floor = float("nan")
        eps = fitted.results_["epsilon"].to_numpy()[:n_loop]
        ref = base[:, 0] if base.ndim == 2 else base
        np.testing.assert_allclose(eps, ref, rtol=1e-6)
        scale = n_pairs / n_loop  # extrapolation, for KDE-LR only
        t_loop *= scale
        t_e2e = t_loop + t_norm
        cpu_e2e = cpu_loop[0] * scale + cpu_norm[0]
        print(
            f"{name:<10} {n_pairs:>5} {t_none:>9.3f}s {t_two:>8.3f}s "
            f"{t_loop:>8.3f}s {t_e2e:>9.3f}s {t_floor:>7.3f}s {t_e2e / t_none:>8.1f}x "
            f"{t_e2e / t_two:>5.1f}x {t_loop / t_none:>9.1f}x "
            f"{t_none / t_floor:>10.1f}x | {cpu_fast[0]:>8.3f}s {cpu_e2e:>7.3f}s",
            flush=True,
        )
    print(
        f"(loop+norm = loop + {t_norm:.3f} s to normalise and group the raw rows; "
        f"CPU ratio e2e/None is load-independent)"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
