# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy sanitize``: fit ISP and apply it to a file, streaming.

Two passes over the input in chunks of rows, so memory is bounded by the chunk
size and not by the file: the first accumulates ISP's per-identity sums
(``ISP.partial_fit``), the second transforms each chunk and appends it to the
output. With ``--projector`` a saved projector is applied in one pass. The
output keeps every input row in order, every non-feature column unchanged,
and the source row number; the whole output directory is staged and swapped
into place only when complete.
"""

import hashlib
import json
import shlex
import sys
import warnings
import zlib
from pathlib import Path

from skprivacy.cli._errors import UserError, user_errors

__all__ = ["add_sanitize_parser", "run_sanitize"]

#: Files a previous ``skprivacy sanitize`` run writes (``--force`` replaces
#: a directory holding only these).
_FORMATS = {
    "csv": "sanitized.csv",
    "csv.gz": "sanitized.csv.gz",
    "parquet": "sanitized.parquet",
}
_OUTPUT_NAMES = {*_FORMATS.values(), "sanitize.json", "projector.npz"}
#: Name of the added column holding each row's 0-based position in the input.
SOURCE_ROW = "source_row"
#: Identities held out for the before/after leakage summary: at most this many
#: (the ones with the smallest label hash, so the choice does not depend on the
#: file's row order), and at most this many rows of each.
_AUDIT_MAX_IDENTITIES = 200
_AUDIT_ROWS_PER_IDENTITY = 10
_AUDIT_FARS = (1e-4, 1e-3, 1e-2, 1e-1)


def add_sanitize_parser(sub):
    """Add the ``sanitize`` subcommand to an argparse subparsers object."""
    san = sub.add_parser(
        "sanitize",
        help="remove identity directions from an embedding file (ISP), streaming",
        description=(
            "Fit an Identity Sanitization Projection (ISP) on FILE and write the "
            "sanitised embeddings, streaming: FILE (CSV, gzip CSV or Parquet) is "
            "read twice in chunks of rows (fit, then transform), so files larger "
            "than memory work. The output keeps every input row in order, every "
            f"non-feature column unchanged, and a '{SOURCE_ROW}' column with the "
            "row's position in FILE; DIR also holds projector.npz and "
            "sanitize.json (rank, projector hash, rows not used by reason, and a "
            "before/after leakage summary). With --projector, a saved projector "
            "is applied instead (one pass, no identity column needed)."
        ),
    )
    san.add_argument(
        "file", metavar="FILE", help="embeddings: .csv, .csv.gz or .parquet"
    )
    san.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output directory (created; written completely or not at all)",
    )
    san.add_argument(
        "--n-components",
        default="auto",
        metavar="R",
        help="identity directions to remove: an int r, a float in (0, 1) (share "
        "of between-identity energy), 'auto' (default: directions with identity "
        "signal beyond chance, keeping at least half the dimensions) or 'full'",
    )
    san.add_argument(
        "--id-column",
        default="identity",
        metavar="C",
        help="identity column (default: identity); rows without an identity are "
        "sanitised but not used to fit, and counted",
    )
    san.add_argument(
        "--projector",
        metavar="P.npz",
        help="apply this saved projector (from a previous run's projector.npz or "
        "ISP.to_npz) instead of fitting one",
    )
    san.add_argument(
        "--format",
        choices=sorted(_FORMATS),
        help="output format (default: parquet for Parquet input, else csv.gz)",
    )
    san.add_argument(
        "--features",
        metavar="REGEX",
        help="regular expression selecting the embedding columns (default: every "
        "float column that does not look like metadata)",
    )
    san.add_argument(
        "--exclude",
        metavar="REGEX",
        help="regular expression of columns never used as embedding dimensions",
    )
    san.add_argument(
        "--chunk-rows",
        type=int,
        default=100_000,
        metavar="N",
        help="rows per chunk (default: 100000); memory grows with it",
    )
    san.add_argument(
        "--no-audit",
        action="store_true",
        help="skip the before/after leakage summary",
    )
    san.add_argument(
        "--force",
        action="store_true",
        help="replace an existing DIR written by a previous sanitize run",
    )
    san.add_argument("--quiet", action="store_true", help="no progress output")
    return san


def _parse_rank(text):
    text = text.strip()
    if text in ("auto", "full"):
        return text
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is not None and not 0 < value < 1:
            value = None
    else:
        if value < 0:
            value = None
    if value is None:
        raise UserError(
            "--n-components must be an int >= 0, a float in (0, 1), 'auto' or "
            f"'full'; got {text!r}"
        )
    return value


def _input_format(path):
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz", ".tsv", ".txt", ".gz")):
        return "csv"
    raise UserError(
        f"unsupported input {path.name}: give a .csv, .csv.gz or .parquet file"
    )


def _chunks(path, fmt, chunk_rows, columns=None):
    """Yield DataFrames of at most ``chunk_rows`` rows, in file order.

    ``columns``: read only these (the fit pass needs no metadata columns).
    """
    import pandas as pd

    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise UserError(
                "reading Parquet needs pyarrow: pip install 'skprivacy[parquet]'"
            ) from exc
        # pre_buffer=False: with pyarrow's default read-ahead cache, RSS grew
        # by ~80 MB per 100,000-row row group read (1.3 GB after 10 of them,
        # measured with pyarrow 26), defeating the streaming.
        with pq.ParquetFile(path, pre_buffer=False) as handle:
            for batch in handle.iter_batches(batch_size=chunk_rows, columns=columns):
                yield batch.to_pandas()
        return
    with pd.read_csv(path, chunksize=chunk_rows, usecols=columns) as reader:
        yield from reader


class _Writer:
    """Append DataFrame chunks to a CSV, gzip CSV or Parquet file."""

    def __init__(self, path, fmt):
        self.path, self.fmt = path, fmt
        self._fh = self._parquet = self._schema = None

    def write(self, frame):
        if self.fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            if self._parquet is None:
                self._schema = table.schema
                self._parquet = pq.ParquetWriter(self.path, self._schema)
            else:
                table = table.cast(self._schema)
            self._parquet.write_table(table)
            return
        header = self._fh is None
        if header:
            if self.fmt == "csv.gz":
                import gzip

                self._fh = gzip.open(self.path, "wt", encoding="utf-8", newline="")
            else:
                self._fh = open(self.path, "w", encoding="utf-8", newline="")
        frame.to_csv(self._fh, header=header, index=False)

    def close(self):
        if self._parquet is not None:
            self._parquet.close()
        if self._fh is not None:
            self._fh.close()


def _features(chunk, columns, dtype, start):
    """Return the chunk's embedding block (``start``: its first row's position)."""
    import numpy as np

    values = chunk[columns]
    try:
        return np.ascontiguousarray(values.to_numpy(dtype=dtype, na_value=np.nan))
    except (TypeError, ValueError) as exc:
        # Positions in the file (0-based data rows), whatever index the
        # reader gave the chunk (Parquet batches restart at 0).
        raise ValueError(
            f"a feature column holds a non-numeric cell in rows "
            f"{start}..{start + len(chunk) - 1}: {exc}"
        ) from exc


def _output_frame(chunk, features, Z, source_col, start):
    """Return the chunk with its features replaced by ``Z`` and a row key first.

    Built from a dict of columns in one go: assigning the features column by
    column into the input frame fragments it (pandas' PerformanceWarning) and
    copies it once per column.
    """
    import numpy as np
    import pandas as pd

    position = {column: k for k, column in enumerate(features)}
    index = chunk.index
    columns = {source_col: pd.Series(np.arange(start, start + len(chunk)), index)}
    for column in chunk.columns:
        k = position.get(column)
        # Non-feature columns as Series: their dtype (nullable, string,
        # categorical) is kept exactly.
        columns[column] = chunk[column] if k is None else pd.Series(Z[:, k], index)
    return pd.DataFrame(columns, copy=False)


def _label_hash(label):
    return zlib.crc32(str(label).encode("utf-8"))


class _AuditSample:
    """Rows of the held-out identities for the leakage summary (bounded)."""

    def __init__(self, identities):
        self.identities = set(identities)
        self.rows, self.labels = [], []
        self.taken = {}

    def add(self, X, labels):
        import numpy as np

        for i in np.flatnonzero([lab in self.identities for lab in labels]):
            label = labels[i]
            if self.taken.get(label, 0) < _AUDIT_ROWS_PER_IDENTITY:
                self.taken[label] = self.taken.get(label, 0) + 1
                self.rows.append(np.array(X[i], dtype=np.float64))
                self.labels.append(label)


def _tar_summary(X, labels, transformers, seed):
    """Identity-disjoint TAR at the smallest resolvable FAR, per stage."""
    import numpy as np

    from skprivacy.sanitize import OpenSetVerificationAuditor

    labels = np.asarray(labels, dtype=object).astype(str)
    codes = np.unique(labels, return_inverse=True)[1]
    counts = np.bincount(codes)
    n = len(labels)
    n_impostor = (n * n - int(np.sum(counts**2))) // 2
    fars = [far for far in _AUDIT_FARS if n_impostor * far >= 10]
    if len(counts) < 2 or counts.max() < 2 or not fars:
        return {"skipped": "too few held-out identities or rows for a resolvable FAR"}
    far = fars[0]
    out = {
        "far": far,
        "n_identities": len(counts),
        "n_rows": n,
        "n_impostor_pairs": int(n_impostor),
    }
    for stage, transform in transformers.items():
        auditor = OpenSetVerificationAuditor(probe="raw", far=far, random_state=seed)
        data = transform(np.asarray(X))
        auditor.fit(data, labels)
        with warnings.catch_warnings():
            # probe="raw" has no training identities; the overlap warning
            # does not apply.
            warnings.simplefilter("ignore", UserWarning)
            result = auditor.audit(data, labels)
        out[f"tar_{stage}"] = float(result.tar)
        out[f"tar_{stage}_interval"] = [float(v) for v in result.tar_interval]
        out[f"eer_{stage}"] = float(result.eer)
    return out


def _components_sha256(isp):
    import numpy as np

    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(isp.components_, dtype="<f8").tobytes())
    digest.update(b"renormalize=" + str(bool(isp.renormalize)).encode())
    return digest.hexdigest()


def run_sanitize(args, argv):
    """Run ``skprivacy sanitize`` from parsed arguments; return the exit status."""
    import time

    import numpy as np
    from sklearn.base import BaseEstimator

    from skprivacy.datasets import select_feature_columns
    from skprivacy.report._audit import _now, _versions
    from skprivacy.sanitize import ISP
    from skprivacy.sanitize._base import _IdentityStats
    from skprivacy.utils import validate_identity_data
    from skprivacy.utils._files import StagedDirectory, check_not_input

    started = _now()
    path = Path(args.file)
    projector = Path(args.projector) if args.projector else None
    out = Path(args.out)
    rank = _parse_rank(args.n_components)
    if projector is not None and args.n_components != "auto":
        raise UserError("give either --projector or --n-components, not both")
    if args.chunk_rows < 1:
        raise UserError(f"--chunk-rows must be >= 1; got {args.chunk_rows}")
    for source in (path, projector):
        if source is not None and not source.is_file():
            raise UserError(f"input file not found: {source}")
    fmt_in = _input_format(path)
    fmt_out = args.format or ("parquet" if fmt_in == "parquet" else "csv.gz")
    inputs = [p for p in (path, projector) if p is not None]

    def say(message):
        if not args.quiet:
            print(f"[skprivacy] {message}", file=sys.stderr, flush=True)

    with user_errors("output"):
        check_not_input(out, inputs)
        staged = StagedDirectory(
            out, force=args.force, replaceable=_OUTPUT_NAMES, inputs=inputs
        )
    with staged:
        with user_errors("reading input"):
            # Closed at once: a suspended reader would keep a decoded Parquet
            # row group (hundreds of MB for a large file) alive all run long.
            peek = _chunks(path, fmt_in, min(args.chunk_rows, 1000))
            try:
                first = next(peek)
            finally:
                peek.close()
            has_ids = args.id_column in first.columns
            if projector is None and not has_ids:
                raise ValueError(
                    f"identity column {args.id_column!r} not found (columns: "
                    f"{', '.join(map(str, first.columns[:8]))}...); name it with "
                    "--id-column, or apply a saved projector with --projector"
                )
            features, excluded = select_feature_columns(
                first,
                id_column=args.id_column if has_ids else None,
                features=args.features,
                exclude=args.exclude,
            )
            dtype = (
                np.float32
                if all(first[c].dtype == np.float32 for c in features)
                else np.float64
            )
        source_col = SOURCE_ROW
        while source_col in first.columns:
            source_col = "_" + source_col
        fit_drops = {"missing_identity": 0, "non_finite": 0, "low_norm": 0}
        t0 = time.perf_counter()
        if projector is None:
            isp = ISP(n_components=rank)
            say(f"pass 1/2: fitting ISP on {path.name} in chunks of {args.chunk_rows}")
            with user_errors("reading input"):
                n_read = 0
                needed = [*features, args.id_column]
                for chunk in _chunks(path, fmt_in, args.chunk_rows, needed):
                    X = _features(chunk, features, dtype, n_read)
                    n_read += len(chunk)
                    labels = chunk[args.id_column]
                    has = labels.notna().to_numpy()
                    fit_drops["missing_identity"] += int((~has).sum())
                    if has.any():
                        ids = labels[has].to_numpy(dtype=object).astype(str)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            isp.partial_fit(X[has], ids)
            if not hasattr(isp, "_stats") or isp._stats.n_identities < 2:
                raise UserError(
                    "fewer than 2 identities with usable rows: nothing to fit"
                )
            stats = isp._stats
            for key in ("non_finite", "low_norm"):
                fit_drops[key] = int(stats.drop_report.get(key, 0))
            try:
                isp._fit_from_stats(stats, partial=False)
            except ValueError as exc:
                raise UserError(" ".join(str(exc).split())) from exc
            # Held-out identities for the leakage summary: the smallest label
            # hashes, independent of row order.
            labels_all = list(stats.labels)
            n_audit = min(_AUDIT_MAX_IDENTITIES, max(2, len(labels_all) // 5))
            audit_ids = sorted(labels_all, key=_label_hash)[:n_audit]
        else:
            with user_errors("reading projector"):
                isp = ISP.from_npz(projector)
            if isp.n_features_in_ != len(features):
                raise UserError(
                    f"projector has {isp.n_features_in_} features but {path.name} "
                    f"has {len(features)} embedding columns"
                )
            audit_ids = []
        t_fit = time.perf_counter() - t0
        audit = None
        if not args.no_audit and has_ids:
            audit = _AuditSample(audit_ids if projector is None else [])
            held_out = _IdentityStats(len(features), scatter=isp.n_components == "auto")
            audit_pool = {}
        name = _FORMATS[fmt_out]
        writer = _Writer(staged.path / name, fmt_out)
        n_rows = n_unsanitized = 0
        say(f"pass {'2/2' if projector is None else '1/1'}: writing {name}")
        t0 = time.perf_counter()
        buffer = None
        try:
            with user_errors("reading input"):
                for chunk in _chunks(path, fmt_in, args.chunk_rows):
                    X = _features(chunk, features, dtype, n_rows)
                    bad = ~np.isfinite(X).all(axis=1)
                    if bad.any():
                        X[bad] = np.nan  # passed through as NaN, counted
                        n_unsanitized += int(bad.sum())
                    if buffer is None or buffer.shape[0] < len(X):
                        buffer = np.empty((len(X), X.shape[1]), dtype=X.dtype)
                    Z = isp._transform_array(X, out=buffer[: len(X)])
                    writer.write(_output_frame(chunk, features, Z, source_col, n_rows))
                    if audit is not None:
                        labels = chunk[args.id_column]
                        keep = labels.notna().to_numpy() & ~bad
                        lab = labels[keep].to_numpy(dtype=object).astype(str)
                        Xk = X[keep]
                        if projector is None:
                            mask = np.array([v in audit.identities for v in lab])
                            if mask.any():
                                with warnings.catch_warnings():
                                    warnings.simplefilter("ignore")
                                    data = validate_identity_data(
                                        BaseEstimator(),
                                        Xk[mask],
                                        lab[mask],
                                        min_samples_per_identity=1,
                                        min_identities=1,
                                        dtype=(np.float64, np.float32),
                                    )
                                held_out.add_data(data)
                                audit.add(Xk[mask], lab[mask])
                        else:
                            # Projector mode: the first identities met, bounded.
                            for row, label in zip(Xk, lab):
                                taken = audit_pool.setdefault(label, 0)
                                if taken < _AUDIT_ROWS_PER_IDENTITY and (
                                    label in audit.identities
                                    or len(audit.identities) < _AUDIT_MAX_IDENTITIES
                                ):
                                    audit.identities.add(label)
                                    audit_pool[label] = taken + 1
                                    audit.rows.append(np.array(row, dtype=np.float64))
                                    audit.labels.append(label)
                    n_rows += len(X)
        finally:
            writer.close()
        t_transform = time.perf_counter() - t0
        leakage = None
        if audit is not None and audit.rows:
            rows = np.vstack(audit.rows)
            if projector is None:
                # Identity-disjoint: a projector with the same settings fitted
                # on the statistics of every other identity.
                rest = _IdentityStats(
                    len(features), scatter=held_out.scatter is not None
                )
                held = held_out.labels if held_out.labels is not None else []
                keep = ~np.isin(stats.labels, held)
                rest.labels = stats.labels[keep]
                rest.sums = stats.sums[keep]
                rest.counts = stats.counts[keep]
                if rest.scatter is not None:
                    rest.scatter = stats.scatter - held_out.scatter
                disjoint = ISP(n_components=rank)
                disjoint.n_features_in_ = len(features)
                try:
                    disjoint._fit_from_stats(rest, partial=True)
                    after = disjoint._transform_array
                    note = (
                        "TAR of held-out identities (smallest label hashes) with a "
                        "projector of the same settings fitted without them"
                    )
                except (ValueError, np.linalg.LinAlgError):
                    after = None
            else:
                after = isp._transform_array
                note = (
                    "TAR with the saved projector; its training identities are "
                    "unknown, so these may not be disjoint from them"
                )
            if after is not None:
                stages = {"before": lambda A: A, "after": after}
                leakage = _tar_summary(rows, audit.labels, stages, seed=0)
                leakage["method"] = note
                leakage["estimate"] = "point estimate with Clopper-Pearson intervals"
        isp.to_npz(staged.path / "projector.npz")
        with user_errors("reading input"):
            from skprivacy.datasets._io import _sha256

            input_sha = _sha256(path)
        record = {
            "input": {
                "path": str(path),
                "sha256": input_sha,
                "format": fmt_in,
                "id_column": args.id_column if has_ids else None,
                "feature_columns": [str(c) for c in features],
                "excluded_columns": excluded,
            },
            "mode": "apply projector" if projector else "fit and transform",
            "projector_input": str(projector) if projector else None,
            "n_components_requested": rank if projector is None else None,
            "rank": int(isp.n_components_),
            "n_features": len(features),
            "explained_energy_ratio": [
                float(v) for v in np.nan_to_num(isp.explained_energy_ratio_)
            ],
            "projector_sha256": _components_sha256(isp),
            "rows": {
                "n_input": int(n_rows),
                "n_output": int(n_rows),
                "not_used_for_fit": fit_drops if projector is None else None,
                "written_as_nan_non_finite": int(n_unsanitized),
            },
            "row_key": source_col,
            "leakage": leakage,
            "outputs": [name, "projector.npz", "sanitize.json"],
            "format": fmt_out,
            "chunk_rows": int(args.chunk_rows),
            "seconds": {
                "fit": round(t_fit, 3),
                "transform_and_write": round(t_transform, 3),
            },
            "versions": _versions(),
            "start_time": started,
            "end_time": _now(),
            "command_line": shlex.join(["skprivacy", *argv]),
        }
        (staged.path / "sanitize.json").write_text(
            json.dumps(record, indent=2, default=str) + "\n"
        )
        with user_errors("writing output"):
            staged.commit()
    summary = ""
    if leakage and "tar_before" in leakage:
        summary = (
            f"; held-out TAR@FAR={leakage['far']:g}: {leakage['tar_before']:.3f} -> "
            f"{leakage['tar_after']:.3f}"
        )
    say(
        f"removed {record['rank']} identity direction(s) from {n_rows} row(s)"
        f"{summary}; wrote {out / name}, {out / 'projector.npz'} and "
        f"{out / 'sanitize.json'}"
    )
    return 0
