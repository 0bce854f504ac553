# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: ISP.fit at paper scale and ISP.transform throughput.

Targets (issues 7 and 14): ``ISP.fit`` on 40,000 x 512 (400 identities x 100
rows) in <= 1 s; ``transform`` float32 r = 32 on 200,000 x 512 at >= 0.55x the
throughput of ``np.copy`` of the same array in the same run (>= 1 M rows/s on a
quiet 2-core machine), float64 >= 0.5 M rows/s.

Each row times the skprivacy path and, in the same process on the same data,
a straightforward baseline:

* fit baseline: a Python loop over identities for the means, ``numpy.linalg.svd``
  of the centred mean matrix, and the dense ``d x d`` projector;
* transform baselines: the dense projector ``X @ P`` then row normalisation (what
  a user would write with the exported matrix), and the unblocked low-rank
  update ``X - (X @ U.T) @ U`` with multi-threaded BLAS.

Outputs are checked to agree. Times are medians over ``--repeats`` runs; the
machine load (``os.getloadavg``) is printed beside them because the machine is
shared.

Usage::

    python benchmarks/bench_isp.py [--rows 200000] [--repeats 5] [--quick]

The floor is ``np.copy`` of the input (allocating and writing an array of the
output's size is the least any transform returning a new array must do),
timed alternately with ``transform`` in one loop so both see the same load.
"""

import argparse
import os
import time

import numpy as np

from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import ISP

CPU_TIMES = {}
FLOORS = {}


def median_time(fn, repeats, key=None):
    """Median wall time; also records the median process CPU time under ``key``."""
    fast, _, out = paired_median_times(fn, lambda: None, repeats, key)
    return fast, out


def paired_median_times(fast, floor, repeats, key):
    """Medians of ``fast`` and ``floor`` timed alternately in one loop.

    On a shared machine the load changes within seconds: timing the two in
    turn gives each the same conditions, where two separate loops could catch
    one of them in a busy stretch. CPU time of ``fast`` is recorded under
    ``key`` (if not None).
    """
    fast_t, floor_t, cpu = [], [], []
    out = None
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fast()
        fast_t.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        t0 = time.perf_counter()
        floor()
        floor_t.append(time.perf_counter() - t0)
    if key is not None:
        CPU_TIMES[key] = float(np.median(cpu))
    return float(np.median(fast_t)), float(np.median(floor_t)), out


def naive_fit(X, ids, r):
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    means = np.array([Z[ids == i].mean(axis=0) for i in np.unique(ids)])
    M = (means - means.mean(axis=0)).T
    U, _, _ = np.linalg.svd(M, full_matrices=False)
    U = U[:, :r]
    return np.eye(X.shape[1]) - U @ U.T


def dense_transform(X, P):
    Y = X @ P
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return Y


def unblocked_transform(X, U):
    Y = X - (X @ U.T) @ U
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return Y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = 20_000 if args.quick else args.rows
    repeats = 2 if args.quick else args.repeats

    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()}")
    X, ids = make_identity_embeddings(400, 100, 512, n_identity_dims=64, random_state=0)
    print(f"fit data: {X.shape[0]} x {X.shape[1]}, {len(np.unique(ids))} identities")

    table = []
    ISP(32).fit(X, ids)  # warm-up (imports, BLAS threads)
    t_fit, isp = median_time(lambda: ISP(32).fit(X, ids), repeats)
    t_naive_fit, P = median_time(lambda: naive_fit(X, ids, 32), max(1, repeats // 2))
    assert np.allclose(isp.get_projector(), P, atol=1e-8)
    table.append(("ISP.fit 40,000 x 512, r=32", t_fit, t_naive_fit, "s", None))
    t_fit_full, _ = median_time(lambda: ISP().fit(X, ids), repeats)
    table.append(("ISP.fit 40,000 x 512, r=None (399)", t_fit_full, None, "s", None))

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        Xt = X[rng.integers(0, X.shape[0], rows)].astype(dtype)
        P_d = P.astype(dtype)
        U = isp.components_.astype(dtype)
        isp.transform(Xt[:10_000])  # warm-up
        t_isp, t_copy, Z = paired_median_times(
            lambda Xt=Xt: isp.transform(Xt),
            lambda Xt=Xt: np.copy(Xt),
            repeats,
            key=np.dtype(dtype).name,
        )
        t_dense, Zd = median_time(
            lambda Xt=Xt, P_d=P_d: dense_transform(Xt, P_d), repeats
        )
        t_unbl, Zu = median_time(lambda Xt=Xt, U=U: unblocked_transform(Xt, U), repeats)
        FLOORS[np.dtype(dtype).name] = (t_isp, t_copy)
        tol = 1e-4 if dtype == np.float32 else 1e-10
        assert np.abs(Z - Zd).max() < tol and np.abs(Z - Zu).max() < tol
        name = np.dtype(dtype).name
        table.append(
            (f"transform {rows:,} x 512 r=32 {name}", t_isp, t_dense, "rows/s", rows)
        )
        table.append(
            (
                f"  vs unblocked X-(XU^T)U {name}",
                t_isp,
                t_unbl,
                "rows/s",
                rows,
            )
        )
        del Xt, Z, Zd, Zu

    print()
    print(f"{'case':44s} {'skprivacy':>14s} {'baseline':>14s} {'speed-up':>9s}")
    for name, fast, base, unit, n in table:
        if unit == "rows/s":
            f = f"{n / fast / 1e6:.2f} Mrows/s"
            b = f"{n / base / 1e6:.2f} Mrows/s"
        else:
            f = f"{fast:.3f} s"
            b = "-" if base is None else f"{base:.3f} s"
        ratio = "-" if base is None else f"{base / fast:.1f}x"
        print(f"{name:44s} {f:>14s} {b:>14s} {ratio:>9s}")
    targets = {
        # (share of the np.copy throughput, absolute rows/s on a quiet machine)
        "float32": (0.55, 1.0e6),
        "float64": (None, 0.5e6),
    }
    for name, (t_isp, t_copy) in FLOORS.items():
        print(
            f"floor np.copy {name}: {rows / t_copy / 1e6:.2f} Mrows/s; fast path "
            f"{rows / t_isp / 1e6:.2f} Mrows/s = {t_copy / t_isp:.2f}x the copy "
            "throughput"
        )
        share, absolute = targets[name]
        checks = []
        if share is not None:
            met = t_copy / t_isp >= share
            checks.append(f">= {share}x copy: {'met' if met else 'NOT met'}")
        met = rows / t_isp >= absolute
        checks.append(
            f">= {absolute / 1e6:g} Mrows/s (quiet machine): "
            f"{'met' if met else 'not met in this run'}"
        )
        print(f"  target {name}: " + "; ".join(checks))
    print(f"\nload average at end: {os.getloadavg()}")
    for name, cpu in CPU_TIMES.items():
        # On an oversubscribed machine wall time mostly measures waiting; CPU
        # seconds spread over 2 cores give the throughput 2 idle cores would see.
        print(
            f"transform {name}: {cpu:.3f} CPU-s for {rows:,} rows -> "
            f"{rows / (cpu / 2) / 1e6:.2f} Mrows/s per 2 cores of CPU time"
        )
    print(
        "baselines: fit = per-identity Python loop + numpy SVD + dense projector; "
        "transform = dense X @ P (first line) and unblocked threaded BLAS "
        "X - (X U^T) U (second line), both with row normalisation."
    )


if __name__ == "__main__":
    main()
