# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: ``skprivacy sanitize`` streaming a Parquet file larger than its chunks.

Targets: streaming sanitisation of a generated 400,000 x 128 float32 Parquet
file (1,000 identities and an ``image`` string column) with a peak RSS <= 0.8
GB, 1,000,000 x 128 with <= 1.5 GB (``--rss-limit-gb``); the output has the input's rows in the input's
order, the ``image`` column unchanged, and equals the in-memory transform row
for row. Its throughput is reported against the in-memory path on the same
machine in the same run.

Three runs on the same file, each in its own process so that its peak RSS is
its own (``/usr/bin/time -v``, or ``getrusage`` of the child if that is
missing):

* **fast path**: ``skprivacy sanitize FILE --out DIR --format parquet`` (two
  streaming passes: ``ISP.partial_fit`` per chunk, then transform and append);
* **baseline**: the in-memory path a user would write: ``pandas.read_parquet``
  of the whole file, ``ISP().fit`` on the rows with an identity,
  ``ISP.transform`` of every row, ``DataFrame.to_parquet``;
* **floor**: the I/O alone: pyarrow reads the file batch by batch and writes
  every batch unchanged to a new Parquet file (one pass; the fast path makes
  two reads and one write).

The in-memory ``ISP.transform`` throughput (rows/s, transform only) and
``np.copy`` of the same array are printed beside them. Afterwards the two
outputs are compared batch by batch (bounded memory). Wall times are single
runs (each takes tens of seconds; ``--repeats`` gives medians); the machine
load is printed because the machine may be shared.

Usage::

    python benchmarks/bench_sanitize_stream.py [--rows 1000000] [--dim 128]
        [--identities 1000] [--chunk-rows 100000] [--repeats 1] [--quick]
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: Default peak-RSS limit of the streaming run (GB = 1e9 bytes) per row count.
RSS_LIMITS_GB = {400_000: 0.8, 1_000_000: 1.5}
#: Share of rows written without an identity (sanitised, not used to fit).
MISSING_IDENTITY_SHARE = 0.001


def generate(path, rows, dim, n_identities, chunk_rows, seed=0):
    """Write a Parquet file: identity, image, e0..e{dim-1} (float32), shuffled."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_id_dims = min(32, dim // 2)
    basis = np.linalg.qr(rng.standard_normal((dim, n_id_dims)))[0].T
    centres = rng.standard_normal((n_identities, n_id_dims)) @ basis
    names = np.array([f"person_{i:04d}" for i in range(n_identities)], dtype=object)
    writer = None
    for start in range(0, rows, chunk_rows):
        n = min(chunk_rows, rows - start)
        codes = rng.integers(0, n_identities, n)  # identities interleaved
        X = (1.5 * centres[codes] + rng.standard_normal((n, dim))).astype(np.float32)
        identity = names[codes].copy()
        identity[rng.random(n) < MISSING_IDENTITY_SHARE] = None
        columns = {
            "identity": pa.array(identity, type=pa.string()),
            "image": pa.array(
                [f"images/{i:07d}.jpg" for i in range(start, start + n)],
                type=pa.string(),
            ),
        }
        for j in range(dim):
            columns[f"e{j}"] = pa.array(X[:, j])
        table = pa.table(columns)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def run_measured(argv):
    """Run a command; return (wall seconds, peak RSS in bytes, stdout)."""
    gnu_time = shutil.which("time") or "/usr/bin/time"
    use_time = os.path.exists(gnu_time)
    cmd = [gnu_time, "-v", *argv] if use_time else list(argv)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(argv)}")
    if use_time:
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        rss = int(match.group(1)) * 1024
    else:
        # ru_maxrss of children is the largest child so far (kB on Linux).
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        rss = max(after, before) * 1024
    return wall, rss, proc.stdout


def in_memory_worker(source, out_dir):
    """The in-memory baseline (run in a child process); prints its timings."""
    import pandas as pd

    from skprivacy.sanitize import ISP

    timings = {}
    t0 = time.perf_counter()
    frame = pd.read_parquet(source)
    timings["read"] = time.perf_counter() - t0
    features = [c for c in frame.columns if c.startswith("e")]
    X = np.ascontiguousarray(frame[features].to_numpy(dtype=np.float32))
    has = frame["identity"].notna().to_numpy()
    t0 = time.perf_counter()
    isp = ISP().fit(X[has], frame["identity"][has].to_numpy(dtype=object).astype(str))
    timings["fit"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    Z = isp.transform(X)
    timings["transform"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    np.copy(X)
    timings["copy"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = frame.copy(deep=False)
    out[features] = Z
    out.insert(0, "source_row", np.arange(len(out)))
    out.to_parquet(Path(out_dir) / "sanitized.parquet", index=False)
    timings["write"] = time.perf_counter() - t0
    timings["rank"] = int(isp.n_components_)
    print(json.dumps(timings))


def io_floor_worker(source, out_dir):
    """One streaming pass of pyarrow read + write, no transform (child process)."""
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    with pq.ParquetFile(source, pre_buffer=False) as handle:  # as the CLI reads
        writer = None
        for batch in handle.iter_batches(batch_size=100_000):
            if writer is None:
                writer = pq.ParquetWriter(Path(out_dir) / "copy.parquet", batch.schema)
            writer.write_batch(batch)
        writer.close()
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def compare(stream_path, memory_path, source_path, dim):
    """Compare the two outputs and the input batch by batch; return findings."""
    import pyarrow.parquet as pq

    features = [f"e{j}" for j in range(dim)]
    handles = [pq.ParquetFile(p) for p in (stream_path, memory_path, source_path)]
    n_rows = [h.metadata.num_rows for h in handles]
    max_diff, image_equal, order_ok, identity_equal = 0.0, True, True, True
    columns_stream = handles[0].schema_arrow.names
    columns_source = handles[2].schema_arrow.names
    iterators = [h.iter_batches(batch_size=100_000) for h in handles]
    position = 0
    for stream, memory, source in zip(*iterators):
        stream, memory, source = (b.to_pandas() for b in (stream, memory, source))
        n = len(stream)
        order_ok &= bool(
            (stream["source_row"].to_numpy() == np.arange(position, position + n)).all()
        )
        image_equal &= bool((stream["image"] == source["image"]).all())
        identity_equal &= bool(stream["identity"].equals(source["identity"]))
        a = stream[features].to_numpy(dtype=np.float64)
        b = memory[features].to_numpy(dtype=np.float64)
        max_diff = max(max_diff, float(np.nanmax(np.abs(a - b))))
        position += n
    return {
        "rows_input": n_rows[2],
        "rows_stream": n_rows[0],
        "rows_memory": n_rows[1],
        "columns_kept": columns_stream == ["source_row", *columns_source],
        "order_ok": order_ok,
        "image_equal": image_equal,
        "identity_equal": identity_equal,
        "max_abs_diff_vs_in_memory": max_diff,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--identities", type=int, default=1000)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--rss-limit-gb",
        type=float,
        default=None,
        help="peak RSS limit of the streaming run (default: 0.8 for 400,000 rows, "
        "1.5 otherwise)",
    )
    parser.add_argument("--quick", action="store_true", help="100,000 rows")
    parser.add_argument("--workdir", help="where to write (default: a temp dir)")
    parser.add_argument("--in-memory-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--io-floor-worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_memory_worker:
        return in_memory_worker(*args.in_memory_worker)
    if args.io_floor_worker:
        return io_floor_worker(*args.io_floor_worker)
    rows = 100_000 if args.quick else args.rows

    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()}")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_sanitize_"))
    work.mkdir(parents=True, exist_ok=True)
    source = work / "embeddings.parquet"
    t0 = time.perf_counter()
    generate(source, rows, args.dim, args.identities, args.chunk_rows)
    size = source.stat().st_size
    print(
        f"input: {rows:,} x {args.dim} float32, {args.identities} identities, "
        f"'image' string column, {MISSING_IDENTITY_SHARE:.1%} rows without identity; "
        f"{size / 1e6:.0f} MB Parquet (generated in {time.perf_counter() - t0:.1f} s)"
    )

    stream_times, stream_rss, memory_runs, memory_rss, floor_times = [], [], [], [], []
    for _ in range(args.repeats):
        out = work / "stream"
        shutil.rmtree(out, ignore_errors=True)
        wall, rss, _ = run_measured(
            [
                sys.executable,
                "-m",
                "skprivacy",
                "sanitize",
                str(source),
                "--out",
                str(out),
                "--format",
                "parquet",
                "--chunk-rows",
                str(args.chunk_rows),
                "--quiet",
            ]
        )
        stream_times.append(wall)
        stream_rss.append(rss)
        mem_out = work / "memory"
        shutil.rmtree(mem_out, ignore_errors=True)
        mem_out.mkdir()
        wall, rss, stdout = run_measured(
            [sys.executable, __file__, "--in-memory-worker", str(source), str(mem_out)]
        )
        memory_runs.append((wall, json.loads(stdout.strip().splitlines()[-1])))
        memory_rss.append(rss)
        floor_out = work / "floor"
        shutil.rmtree(floor_out, ignore_errors=True)
        floor_out.mkdir()
        wall, _, stdout = run_measured(
            [sys.executable, __file__, "--io-floor-worker", str(source), str(floor_out)]
        )
        floor_times.append(json.loads(stdout.strip().splitlines()[-1])["seconds"])

    record = json.loads((work / "stream" / "sanitize.json").read_text())
    t_stream = float(np.median(stream_times))
    t_memory = float(np.median([w for w, _ in memory_runs]))
    parts = {
        key: float(np.median([p[key] for _, p in memory_runs]))
        for key in ("read", "fit", "transform", "copy", "write")
    }
    t_floor = float(np.median(floor_times))
    peak_stream, peak_memory = max(stream_rss), max(memory_rss)
    limit = args.rss_limit_gb or RSS_LIMITS_GB.get(rows, 1.5)
    data_bytes = rows * args.dim * 4
    rank_memory = memory_runs[-1][1]["rank"]

    print()
    print(
        f"{'run (own process, wall incl. start-up)':50s} {'time':>9s} {'rows/s':>10s}"
    )
    lines = [
        ("fast path: skprivacy sanitize (stream, 2 passes)", t_stream),
        ("baseline: in memory (read, fit, transform, write)", t_memory),
        ("floor: pyarrow read + write, 1 pass, no transform", t_floor),
    ]
    for name, t in lines:
        print(f"{name:50s} {t:8.1f}s {rows / t / 1e3:9.1f}k")
    print(
        f"  stream phases (sanitize.json): fit pass {record['seconds']['fit']:.1f} s, "
        f"transform+write pass {record['seconds']['transform_and_write']:.1f} s"
    )
    print(
        "  in-memory phases: "
        + ", ".join(f"{k} {v:.2f} s" for k, v in parts.items() if k != "copy")
    )
    print(
        f"  in-memory ISP.transform alone: {rows / parts['transform'] / 1e6:.2f} M "
        f"rows/s; np.copy of the same array: {rows / parts['copy'] / 1e6:.2f} M rows/s"
    )
    print(
        f"stream / in-memory wall time: {t_stream / t_memory:.2f}x; "
        f"stream / I/O floor: {t_stream / t_floor:.2f}x"
    )
    print(
        f"peak RSS: stream {peak_stream / 1e9:.3f} GB (limit {limit} GB) for "
        f"{data_bytes / 1e9:.3f} GB of float32 embeddings (overhead "
        f"{(peak_stream - data_bytes) / 1e9:.3f} GB); in memory "
        f"{peak_memory / 1e9:.3f} GB"
    )

    found = compare(
        work / "stream" / "sanitized.parquet",
        work / "memory" / "sanitized.parquet",
        source,
        args.dim,
    )
    print(f"\nrank: stream {record['rank']}, in memory {rank_memory}")
    print(f"rows: {json.dumps(record['rows'])}")
    print(f"checks: {json.dumps(found)}")
    ok = {
        f"peak RSS <= {limit} GB": peak_stream <= limit * 1e9,
        "row count and order": found["rows_stream"] == found["rows_input"]
        and found["order_ok"],
        "every input column kept, image unchanged": found["columns_kept"]
        and found["image_equal"]
        and found["identity_equal"],
        "equal to in-memory transform (float32, atol 1e-5)": record["rank"]
        == rank_memory
        and found["max_abs_diff_vs_in_memory"] <= 1e-5,
    }
    for name, passed in ok.items():
        print(f"  {'PASS' if passed else 'FAIL'}  {name}")
    leak = record.get("leakage") or {}
    if "tar_before" in leak:
        print(
            f"held-out TAR@FAR={leak['far']:g}: {leak['tar_before']:.3f} -> "
            f"{leak['tar_after']:.3f}"
        )
    print(f"load average at end: {os.getloadavg()}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(ok.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
