# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: the figures behind the tuning constants of ``skprivacy._kernels``.

Each section times one choice the kernels make, against its alternatives, in
the same run (process CPU time, medians of ``--repeats``, so a shared machine
disturbs the comparison less than wall time would):

* ``rates``: the single-core rates behind the auditors' cost model
  (``FLOP_RATE``, ``ELEMENT_RATE``, ``STREAM_RATE`` in ``auditors/_base.py``,
  set at about half of these): float64 products of 100 x 512 blocks,
  float64 exponentials, and a streaming elementwise add;
* ``lowrank-block``: rows per block of the low-rank update (ISP transform,
  float32, d = 512, r = 32), in M rows per CPU-second;
* ``lowrank-sub``: rows per stacked sub-block product (0 = one flat product of
  the block), in GFLOP per CPU-second, and the same products on a threaded
  BLAS (every thread of the BLAS on one small product);
* ``median-stride``: the subsample stride of the exact MMD median selection,
  in microseconds per pair (100 x 100 rows per pair);
* ``workers``: starting joblib's process workers against running in process
  (the ``_IN_PROCESS_SECONDS`` threshold), in wall seconds.

Run: ``python benchmarks/bench_kernels.py [--sections rates lowrank-block ...]``
"""

import argparse
import os
import time

import numpy as np
from joblib import Parallel, delayed

from skprivacy._kernels import _low_rank
from skprivacy._kernels import _mmd as mmd_kernels
from skprivacy.utils import limit_blas_threads

SECTIONS = ["rates", "lowrank-block", "lowrank-sub", "median-stride", "workers"]


def cpu_median(fn, repeats, inner=1):
    times = []
    for _ in range(repeats):
        c0 = time.process_time()
        for _ in range(inner):
            fn()
        times.append((time.process_time() - c0) / inner)
    return float(np.median(times))


def rates(repeats):
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 100, 512))
    x = rng.standard_normal(1 << 20)
    y = np.empty_like(x)
    with limit_blas_threads(1):
        t = cpu_median(lambda: A @ B.T, repeats, 200)
    print(
        f"  float64 product 100x512 @ 512x100: {2 * 100 * 100 * 512 / t / 1e9:.1f} GFLOP/s"
    )
    t = cpu_median(lambda: np.exp(x, out=y), repeats, 5)
    print(f"  float64 exp: {x.size / t / 1e6:.0f} M elements/s")
    t = cpu_median(lambda: np.add(x, x, out=y), repeats, 20)
    print(f"  float64 add (streaming): {x.size / t / 1e6:.0f} M elements/s")


def _lowrank_data(n):
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((512, 32)))[0].T
    X = rng.standard_normal((n, 512)).astype(np.float32)
    return U, X, np.empty_like(X)


def lowrank_block(repeats):
    U, X, out = _lowrank_data(100_000)
    default = _low_rank._BLOCK_ROWS
    try:
        for rows in (256, 512, 1024, 2048):
            _low_rank._BLOCK_ROWS = rows
            t = cpu_median(
                lambda: _low_rank.low_rank_update(
                    X, U, U, renormalize=True, orthogonal=True, out=out
                ),
                repeats,
            )
            mark = " (default)" if rows == default else ""
            print(
                f"  {rows:5d} rows per block: {len(X) / t / 1e6:.2f} M rows/CPU-s{mark}"
            )
    finally:
        _low_rank._BLOCK_ROWS = default


def lowrank_sub(repeats):
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((512, 32)))[0].T.astype(np.float32)
    UT = np.ascontiguousarray(U.T)
    xb = rng.standard_normal((1024, 512)).astype(np.float32)
    t_buf = np.empty((1024, 32), np.float32)
    ob = np.empty_like(xb)
    flops = 2 * 2 * 1024 * 512 * 32

    def both(sub):
        _low_rank._skinny_matmul(xb, UT, t_buf, sub)
        _low_rank._skinny_matmul(t_buf, U, ob, sub)

    with limit_blas_threads(1):
        for sub in (0, 16, 32, 64):
            t = cpu_median(lambda sub=sub: both(sub), repeats, 200)
            label = "flat" if sub == 0 else f"{sub}-row sub-blocks"
            print(f"  one BLAS thread, {label}: {flops / t / 1e9:.1f} GFLOP/CPU-s")
    w0 = time.perf_counter()
    for _ in range(200):
        both(0)
    wall = (time.perf_counter() - w0) / 200
    with limit_blas_threads(1):
        w0 = time.perf_counter()
        for _ in range(200):
            both(32)
        wall1 = (time.perf_counter() - w0) / 200
    print(
        f"  threaded BLAS, flat: {wall * 1e6:.0f} us wall per 1,024-row block "
        f"against {wall1 * 1e6:.0f} us single-threaded (32-row sub-blocks)"
    )


def median_stride(repeats):
    rng = np.random.default_rng(0)
    n_id, m = 53, 100
    X = rng.standard_normal((n_id * m, 512)).astype(np.float32)
    X += np.repeat(rng.standard_normal((n_id, 512)).astype(np.float32) * 0.5, m, 0)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    starts = np.arange(n_id + 1) * m
    pairs = np.column_stack([np.zeros(n_id - 1, int), np.arange(1, n_id)])
    with limit_blas_threads(1):
        state = mmd_kernels.identity_state(X, starts, np.full(n_id, 99))
        block, rows = next(mmd_kernels.cross_blocks(state, pairs))
        block = block.copy()
    a, b = pairs[rows, 0], pairs[rows, 1]
    n_cross = np.full(len(a), m * m)
    for stride in (8, 16, 32):
        sub = mmd_kernels.within_subsample(state["within"], state["tri"], stride)
        t = cpu_median(
            lambda stride=stride, sub=sub: mmd_kernels.dense_medians(
                block, n_cross, state["within"], state["tri"], a, b, stride, sub
            ),
            repeats,
            20,
        )
        mark = " (default)" if stride == mmd_kernels.MEDIAN_STRIDE else ""
        print(f"  stride {stride:2d}: {t / len(a) * 1e6:.1f} us per pair{mark}")


def _chunk_sum(X, i):
    return float(X[i].sum())


def workers(repeats):
    X = np.random.default_rng(0).standard_normal((40_000, 512))
    walls = {"in process": [], "2 loky workers": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        [_chunk_sum(X, i) for i in range(8)]
        walls["in process"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        Parallel(n_jobs=2)(delayed(_chunk_sum)(X, i) for i in range(8))
        walls["2 loky workers"].append(time.perf_counter() - t0)
    for name, v in walls.items():
        print(
            f"  8 trivial tasks on a 40,000 x 512 array, {name}: {np.median(v):.3f} s"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", nargs="*", default=SECTIONS, choices=SECTIONS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()}")
    for name in args.sections:
        print(f"{name}:")
        globals()[name.replace("-", "_")](args.repeats)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
