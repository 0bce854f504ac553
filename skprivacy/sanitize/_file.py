# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sanitise an embeddings file with ISP, streaming (``skprivacy sanitize``).

Two passes over the input in chunks of rows, so memory is bounded by the chunk
size and not by the file: the first accumulates ISP's per-identity sums
(``ISP.partial_fit``), the second transforms each chunk and appends it to the
output. With a saved projector the file is transformed in one pass. The output
keeps every input row in order, every non-feature column unchanged, and the
source row number; the whole output directory is staged and swapped into
place only when complete.
"""

import gzip
import hashlib
import json
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from skprivacy.datasets import classify_columns, read_embeddings
from skprivacy.datasets._io import file_sha256
from skprivacy.sanitize._base import _IdentityStats
from skprivacy.sanitize._isp import ISP
from skprivacy.sanitize._select import select_rank
from skprivacy.sanitize._verification import OpenSetVerificationAuditor
from skprivacy.utils import (
    Progress,
    RunProvenance,
    check_identity_counts,
    validate_identity_data,
)
from skprivacy.utils._files import StagedDirectory, check_not_input

__all__ = [
    "FORMATS",
    "PROVENANCE_SUFFIX",
    "SOURCE_ROW",
    "sanitize_file",
    "sanitize_provenance",
]

#: Output format -> file name of the sanitised embeddings.
FORMATS = {
    "csv": "sanitized.csv",
    "csv.gz": "sanitized.csv.gz",
    "parquet": "sanitized.parquet",
}
#: Suffix of the provenance file written next to the sanitised embeddings.
PROVENANCE_SUFFIX = ".provenance.json"
#: File of the rank selection table (``target_tar``).
_RANK_TABLE = "rank_selection.csv"
#: Files a previous run writes (``force`` replaces a directory holding only these).
_OUTPUT_NAMES = {
    *FORMATS.values(),
    *(name + PROVENANCE_SUFFIX for name in FORMATS.values()),
    "sanitize.json",
    "projector.npz",
    _RANK_TABLE,
}
#: Name of the added column holding each row's 0-based position in the input.
SOURCE_ROW = "source_row"
#: Identities held out for the before/after leakage summary: at most this many
#: (the ones with the smallest label hash, so the choice does not depend on the
#: file's row order), and at most this many rows of each.
_AUDIT_MAX_IDENTITIES = 200
_AUDIT_ROWS_PER_IDENTITY = 10
_AUDIT_FARS = (1e-4, 1e-3, 1e-2, 1e-1)
#: Rows per Arrow batch read from a Parquet file (a chunk is assembled from
#: them): Arrow's reader holds the decoded pages of one batch.
_READ_ROWS = 16 * 1024
#: Rows transformed and written at a time within a chunk. A multiple of the
#: transform's 1,024-row blocks, so every row is computed exactly as in one
#: call on the whole chunk.
_WRITE_ROWS = 16 * 1024


def _input_format(path):
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz", ".tsv", ".txt", ".gz")):
        return "csv"
    raise ValueError(
        f"unsupported input {path.name}: give a .csv, .csv.gz or .parquet file"
    )


def _nullable(arrow_type):
    """Return the nullable pandas dtype of a Parquet integer or boolean column (or None).

    pandas' default turns an integer column into float64 (and a boolean one
    into object) in exactly the chunks that hold a missing value.
    """
    # pyarrow is optional: only Parquet files need it (and call this).
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_integer(arrow_type):
        return pd.api.types.pandas_dtype(str(arrow_type).replace("int", "Int"))
    return None


def _chunks(path, fmt, chunk_rows, columns=None, features=None, dtype=None, text=()):
    """Yield chunks of at most ``chunk_rows`` rows, in file order.

    Without ``features``: DataFrames (of ``columns`` if given). With
    ``features``: ``(X, rest)`` pairs, ``X`` the chunk's embedding block
    (row-major, ``dtype``; reused from chunk to chunk) and ``rest`` a
    DataFrame of the chunk's other columns (of ``columns`` if given). A
    Parquet chunk is assembled from Arrow batches of at most ``_READ_ROWS``
    rows, its embedding block filled straight from Arrow: the embeddings never
    pass through a pandas frame, and Arrow's reader holds the pages of a few
    thousand rows rather than of a whole chunk.

    ``text``: CSV columns read as their cell text (no type guessed per
    chunk). Parquet integer and boolean columns are read as nullable dtypes
    (pandas' default makes them float64 or object in exactly the chunks that
    hold a missing value).
    """
    if fmt == "parquet":
        pq = _pyarrow_parquet()
        # pre_buffer=False: with pyarrow's default read-ahead cache, RSS grows
        # by a row group's size per row group read, defeating the streaming.
        with pq.ParquetFile(path, pre_buffer=False) as handle:
            if features is None:
                for batch in handle.iter_batches(
                    batch_size=chunk_rows, columns=columns
                ):
                    yield batch.to_pandas(types_mapper=_nullable)
            else:
                yield from _arrow_chunks(handle, chunk_rows, columns, features, dtype)
        return
    dtype_of = {c: str for c in text if columns is None or c in columns}
    with pd.read_csv(
        path, chunksize=chunk_rows, usecols=columns, dtype=dtype_of or None
    ) as reader:
        start = 0
        for chunk in reader:
            if features is None:
                yield chunk
            else:
                X = _features(chunk, features, dtype, start)
                yield X, chunk.drop(columns=features)
            start += len(chunk)


def _pyarrow_parquet():
    try:
        # pyarrow is optional: only Parquet files need it.
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            "reading Parquet needs pyarrow: pip install 'skprivacy[parquet]'"
        ) from exc
    return pq


def _arrow_chunks(handle, chunk_rows, columns, features, dtype):
    """``(X, rest)`` chunks of a Parquet file (see :func:`_chunks`)."""
    # pyarrow is optional: only Parquet files need it.
    import pyarrow as pa

    names = list(columns) if columns is not None else handle.schema_arrow.names
    feature_set = set(features)
    rest_names = [c for c in names if c not in feature_set]
    X = np.empty((chunk_rows, len(features)), dtype=dtype)
    parts, filled, start = [], 0, 0
    batches = handle.iter_batches(batch_size=min(chunk_rows, _READ_ROWS), columns=names)
    for batch in batches:
        offset = 0
        while offset < batch.num_rows:
            take = min(batch.num_rows - offset, chunk_rows - filled)
            piece = batch.slice(offset, take)
            for j, name in enumerate(features):
                values = piece.column(name).to_numpy(zero_copy_only=False)
                try:
                    X[filled : filled + take, j] = values
                except (TypeError, ValueError) as exc:
                    first = start + filled
                    raise ValueError(
                        f"a feature column holds a non-numeric cell in rows "
                        f"{first}..{first + take - 1}: {exc}"
                    ) from exc
            parts.append(piece.select(rest_names))
            filled += take
            offset += take
            if filled == chunk_rows:
                yield X, pa.Table.from_batches(parts).to_pandas(types_mapper=_nullable)
                start += filled
                parts, filled = [], 0
        del batch
    if filled:
        yield X[:filled], pa.Table.from_batches(parts).to_pandas(types_mapper=_nullable)


class _TypeConflict(Exception):
    """A later chunk holds a value that the type chosen from the peek cannot."""

    def __init__(self, column):
        super().__init__(column)
        self.column = column


#: Parquet type of each kind of metadata column of a CSV input.
_KINDS = ("int", "float", "bool", "text")
_TRUE, _FALSE = {"True", "true", "TRUE"}, {"False", "false", "FALSE"}


def _kind(values):
    """Return the kind of a CSV metadata column from its first rows, as parsed."""
    dtype = values.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    if pd.api.types.is_float_dtype(dtype):
        present = values.dropna().to_numpy()
        if present.size == 0:
            return "text"  # no value seen: nothing to commit to
        # Whole numbers with gaps: an integer column pandas read as float.
        whole = np.isfinite(present).all() and (present == np.round(present)).all()
        return "int" if whole and values.isna().any() else "float"
    return "text"


def _as_kind(values, kind):
    """Convert a column read as text to ``kind``; raise ``ValueError`` if it cannot."""
    if kind == "text":
        return values
    present = values.notna()
    if kind == "bool":
        cells = set(values[present])
        if not cells <= _TRUE | _FALSE:
            raise ValueError("not a boolean")
        return values.map(lambda v: v in _TRUE, na_action="ignore").astype("boolean")
    numbers = pd.to_numeric(values, errors="raise")
    if kind == "float":
        return numbers.astype(np.float64)
    finite = numbers[present].to_numpy(dtype=np.float64)
    if not (np.isfinite(finite).all() and (finite == np.round(finite)).all()):
        raise ValueError("not whole numbers")
    if finite.size and np.abs(finite).max() >= 2**63:
        raise ValueError("out of the int64 range")
    return numbers.astype("Int64")


class _MetadataTypes:
    """One type per non-feature column of a CSV input for Parquet output.

    Decided from the peek (whole numbers, numbers, booleans, text) and
    widened to text, for the whole output, if a later row does not fit.
    """

    def __init__(self, head, columns):
        self.kinds = {c: _kind(head[c]) for c in columns}

    def convert(self, frame):
        """Return ``frame`` with every typed column converted (text stays text)."""
        out = {}
        for column in frame.columns:
            kind = self.kinds.get(column, "text")
            try:
                out[column] = _as_kind(frame[column], kind)
            except (ValueError, TypeError, OverflowError) as exc:
                raise _TypeConflict(column) from exc
        return pd.DataFrame(out, copy=False)

    def widen(self, chunks):
        """Widen to text every column some row of ``chunks`` does not fit.

        Returns the widened column names.
        """
        widened = []
        for chunk in chunks:
            for column in chunk.columns:
                if self.kinds.get(column, "text") == "text":
                    continue
                try:
                    _as_kind(chunk[column], self.kinds[column])
                except (ValueError, TypeError, OverflowError):
                    self.kinds[column] = "text"
                    widened.append(column)
        return widened

    def arrow_types(self):
        # pyarrow is optional: only Parquet output needs it.
        import pyarrow as pa

        types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
        return {c: types.get(k, pa.string()) for c, k in self.kinds.items()}


class _Writer:
    """Append DataFrame chunks to a CSV, gzip CSV or Parquet file.

    For Parquet, every chunk is written with one schema, fixed before the
    first (``types``: the Parquet type of each column by name).
    """

    def __init__(self, path, fmt, types=None, convert=None):
        self.path, self.fmt = path, fmt
        self._types, self._convert = types or {}, convert
        self._fh = self._parquet = self._schema = None

    def _table(self, frame):
        # pyarrow is optional: only Parquet output needs it.
        import pyarrow as pa

        if self._convert is not None:
            frame = self._convert(frame)
        if self._schema is None:
            fields = []
            for column in frame.columns:
                kind = self._types.get(column)
                if kind is None:
                    kind = pa.Array.from_pandas(frame[column].iloc[:0]).type
                fields.append(pa.field(str(column), kind))
            self._schema = pa.schema(fields)
        try:
            return pa.Table.from_pandas(
                frame, schema=self._schema, preserve_index=False
            )
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            for column, field in zip(frame.columns, self._schema):
                try:
                    pa.Array.from_pandas(frame[column], type=field.type)
                except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
                    raise ValueError(
                        f"column {str(column)!r} holds a value that its Parquet type "
                        f"{field.type} cannot ({' '.join(str(exc).split())})"
                    ) from exc
            raise

    def write(self, frame):
        if self.fmt == "parquet":
            # pyarrow is optional: only Parquet output needs it.
            import pyarrow.parquet as pq

            table = self._table(frame)
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self.path, table.schema)
            self._parquet.write_table(table)
            return
        header = self._fh is None
        if header:
            if self.fmt == "csv.gz":
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


def _output_frame(rest, order, features, Z, source_col, start):
    """Return the chunk's columns in ``order``, the features taken from ``Z``.

    ``rest`` holds the chunk's non-feature columns; a row key comes first.
    Built from a dict of columns in one go: assigning the features column by
    column into a frame fragments it (pandas' PerformanceWarning) and copies
    it once per column.
    """
    position = {column: k for k, column in enumerate(features)}
    index = rest.index
    out = {source_col: pd.Series(np.arange(start, start + len(rest)), index)}
    for column in order:
        k = position.get(column)
        # Non-feature columns as Series: their dtype (nullable, string,
        # categorical) is kept exactly.
        out[column] = rest[column] if k is None else pd.Series(Z[:, k], index)
    return pd.DataFrame(out, copy=False)


def _label_hash(label):
    return zlib.crc32(str(label).encode("utf-8"))


class _AuditSample:
    """Rows of the held-out identities for the leakage summary (bounded).

    With ``open_ended`` (a saved projector: no fitted identities to hold out)
    the first identities met are taken, at most ``_AUDIT_MAX_IDENTITIES``.
    """

    def __init__(self, identities, open_ended=False):
        self.identities = set(identities)
        self.open_ended = open_ended
        self.rows, self.labels = [], []
        self.taken = {}

    def add(self, X, labels):
        for row, label in zip(X, labels):
            taken = self.taken.get(label, 0)
            if taken >= _AUDIT_ROWS_PER_IDENTITY:
                continue
            if label not in self.identities:
                if not self.open_ended or len(self.identities) >= _AUDIT_MAX_IDENTITIES:
                    continue
                self.identities.add(label)
            self.taken[label] = taken + 1
            self.rows.append(np.array(row, dtype=np.float64))
            self.labels.append(label)


def _tar_summary(X, labels, transformers, seed):
    """Identity-disjoint TAR at the smallest resolvable FAR, per stage."""
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
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(isp.components_, dtype="<f8").tobytes())
    digest.update(b"renormalize=" + str(bool(isp.renormalize)).encode())
    return digest.hexdigest()


class _Layout:
    """What the peek decides, for every pass: the columns and how each is read.

    Attributes: ``columns`` (features, in file order), ``excluded`` (every
    other column and why), ``dtype`` of the features, ``has_ids``,
    ``id_column``, ``order`` (every column, in file order), ``source_col``
    (the added row key), ``text`` (CSV columns
    read as their cell text: every non-feature column, so CSV output copies
    them unchanged), and for Parquet output the ``types`` of the non-feature
    columns (``_MetadataTypes`` for CSV input, the input's own for Parquet).
    """

    def __init__(self, path, fmt_in, fmt_out, id_column, projector, features, exclude):
        # One peek at the first rows, whatever the chunk size: the same file
        # always gets the same feature columns.
        columns, excluded, head = classify_columns(
            path, id_column=id_column, features=features, exclude=exclude
        )
        self.has_ids = id_column in head.columns
        if projector is None and not self.has_ids:
            raise ValueError(
                f"identity column {id_column!r} not found (columns: "
                f"{', '.join(map(str, head.columns[:8]))}...); name it with "
                "id_column (--id-column), or apply a saved projector"
            )
        self.columns, self.excluded, self.id_column = columns, excluded, id_column
        self.dtype = (
            np.float32
            if all(head[c].dtype == np.float32 for c in columns)
            else np.float64
        )
        self.order = list(head.columns)
        self.source_col = SOURCE_ROW
        while self.source_col in head.columns:
            self.source_col = "_" + self.source_col
        kept = [c for c in head.columns if c not in set(columns)]
        self.text = kept if fmt_in == "csv" else []
        self.types = None
        if fmt_out == "parquet" and fmt_in == "csv":
            self.types = _MetadataTypes(head, kept)
        elif fmt_out == "parquet":
            # pyarrow is optional: only Parquet files need it.
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            self.types = {c: schema.field(str(c)).type for c in kept}

    def writer(self, target, fmt_out):
        """Return the output writer (Parquet: the schema fixed before any row)."""
        if not isinstance(self.types, _MetadataTypes):
            return _Writer(target, fmt_out, self.types)
        return _Writer(target, fmt_out, self.types.arrow_types(), self.types.convert)


def _fit_pass(path, fmt, chunk_rows, layout, n_components):
    """Fit ISP on the whole file, chunk by chunk; count the rows not used."""
    columns, dtype, id_column = layout.columns, layout.dtype, layout.id_column
    isp = ISP(n_components=n_components)
    drops = {"missing_identity": 0, "non_finite": 0, "low_norm": 0}
    n_read = 0
    needed = [*columns, id_column]
    for X, rest in _chunks(path, fmt, chunk_rows, needed, columns, dtype, layout.text):
        n_read += len(X)
        labels = rest[id_column]
        has = labels.notna().to_numpy()
        drops["missing_identity"] += int((~has).sum())
        if has.any():
            ids = labels[has].to_numpy(dtype=object).astype(str)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                isp.partial_fit(X if has.all() else X[has], ids)
        # Release this chunk before the next one is decoded.
        del X, rest, labels, has
    stats = getattr(isp, "_stats", None)
    if stats is not None:
        # A column whose labels all occur once is a row key, not identities.
        check_identity_counts(stats.counts, column=id_column)
    if stats is None or stats.n_identities < 2:
        raise ValueError("fewer than 2 identities with usable rows: nothing to fit")
    for key in ("non_finite", "low_norm"):
        drops[key] = int(stats.drop_report.get(key, 0))
    isp._fit_from_stats(stats, partial=False)
    return isp, drops


def _held_out_projector(isp, held_out, n_features, n_components):
    """Return the transform of a projector fitted without the held-out identities."""
    stats = isp._stats
    rest = _IdentityStats(n_features, scatter=held_out.scatter is not None)
    held = held_out.labels if held_out.labels is not None else []
    keep = ~np.isin(stats.labels, held)
    rest.labels = stats.labels[keep]
    rest.sums = stats.sums[keep]
    rest.counts = stats.counts[keep]
    if rest.scatter is not None:
        rest.scatter = stats.scatter - held_out.scatter
    disjoint = ISP(n_components=n_components)
    disjoint.n_features_in_ = n_features
    try:
        disjoint._fit_from_stats(rest, partial=True)
    except (ValueError, np.linalg.LinAlgError):
        return None
    return disjoint._transform_array


def _rank_for_target(path, id_column, features, exclude, target, far):
    """Pick the ISP rank by :func:`select_rank` on the whole file, in memory."""
    with warnings.catch_warnings():
        # Excluded columns are recorded by the passes; the outcome (met or
        # not) is reported in the record and the error.
        warnings.simplefilter("ignore")
        X, ids, _ = read_embeddings(
            path, id_column=id_column, features=features, exclude=exclude
        )
        result = select_rank(
            ISP(), X, ids.to_numpy(), target=target, far=far, random_state=0
        )
    table = result.table_
    selection = {
        "method": (
            "select_rank: smallest ISP rank whose upper confidence bound on the "
            "TAR at the FAR, measured on identities held out of the projector's "
            "fit (5-fold cross-fitting, pairs within folds), is at most the target; "
            f"bounds jointly at {result.confidence:.0%} over {len(table)} ranks "
            "(Bonferroni)"
        ),
        "target_tar": float(target),
        "far": float(far),
        "confidence": result.confidence,
        "n_identities": result.n_identities,
        "rank": result.rank_,
        "n_ranks_tried": len(table),
        "table": _RANK_TABLE,
    }
    if result.rank_ is None:
        best = table.loc[table["tar_upper"].idxmin()]
        raise ValueError(
            f"no ISP rank up to {int(table['rank'].max())} brings the cross-fitted "
            f"TAR@FAR={far:g} on held-out identities to {target:g} or below at "
            f"{result.confidence:.0%} confidence (smallest upper bound "
            f"{best['tar_upper']:.3f} at rank {int(best['rank'])}, point estimate "
            f"{best['tar']:.3f}; {result.n_identities} identities): erasure by ISP "
            "does not meet this target on these identities; nothing was written"
        )
    row = table.loc[table["rank"] == result.rank_].iloc[0]
    selection.update(tar=float(row["tar"]), tar_upper=float(row["tar_upper"]))
    return result.rank_, selection, table


def sanitize_provenance(path):
    """Return the provenance of a file written by :func:`sanitize_file`, or None.

    :func:`sanitize_file` writes ``<output>.provenance.json`` next to the
    sanitised embeddings (any format: CSV, gzip CSV or Parquet), recording
    the eraser, its rank, the identities it was fitted on and the input's
    SHA-256. ``skprivacy audit`` reads it to say when an audit of the file is
    in-sample.

    Parameters
    ----------
    path : str or path-like
        The sanitised embeddings file, or its ``.provenance.json`` itself.

    Returns
    -------
    record : dict or None
        The provenance record, or None when there is none next to ``path``.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import sanitize_file, sanitize_provenance
    >>> X, ids = make_identity_embeddings(10, 6, 8, random_state=0)
    >>> frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
    >>> frame.insert(0, "identity", [f"p{i}" for i in ids])
    >>> root = tempfile.mkdtemp()
    >>> frame.to_csv(f"{root}/emb.csv", index=False)
    >>> _ = sanitize_file(f"{root}/emb.csv", f"{root}/out", n_components=2,
    ...                   leakage_summary=False)
    >>> record = sanitize_provenance(f"{root}/out/sanitized.csv.gz")
    >>> record["eraser"], record["fitted_on"]["n_identities"]
    ('ISP(n_components=2)', 10)
    """
    path = Path(path)
    if not path.name.endswith(PROVENANCE_SUFFIX):
        path = path.with_name(path.name + PROVENANCE_SUFFIX)
    if not path.is_file():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(record, dict) or "eraser" not in record:
        raise ValueError(f"{path} is not a sanitize provenance file")
    return record


def _provenance_sidecar(isp, record, name, fitted_ids):
    """Return the record written to ``<output>.provenance.json``."""
    fitted_on = None
    if fitted_ids is not None:
        labels = sorted(str(v) for v in fitted_ids)
        fitted_on = {
            "n_identities": len(labels),
            "identities": labels,
            "identities_sha256": hashlib.sha256(
                "\n".join(labels).encode("utf-8")
            ).hexdigest(),
        }
    return {
        "eraser": f"ISP(n_components={int(isp.n_components_)})",
        "class": "ISP",
        "params": {"n_components": int(isp.n_components_)},
        "rank": int(isp.n_components_),
        "n_components_requested": record["n_components_requested"],
        "fitted_on": fitted_on,
        "audit_note": (
            "the projector was fitted on the identities listed in fitted_on; an "
            "audit of this file on them is in-sample and optimistic: audit the "
            "input with cross-fitted erasure (skprivacy audit INPUT --erase "
            "isp:RANK) instead"
            if fitted_on
            else "applied a saved projector whose training identities are unknown"
        ),
        "input": {k: record["input"][k] for k in ("path", "sha256", "format")},
        "output": name,
        "projector_sha256": record["projector_sha256"],
        **{k: record[k] for k in ("versions", "start_time", "end_time")},
        "command_line": record["command_line"],
    }


def sanitize_file(
    path,
    out,
    *,
    n_components="auto",
    target_tar=None,
    far=1e-3,
    id_column="identity",
    projector=None,
    output_format=None,
    features=None,
    exclude=None,
    chunk_rows=100_000,
    leakage_summary=True,
    force=False,
    verbose=0,
    progress=None,
    command_line=None,
):
    """Remove identity directions from an embeddings file with ISP, streaming.

    ``path`` (CSV, gzip CSV or Parquet) is read twice in chunks of
    ``chunk_rows`` rows: first to accumulate :class:`ISP`'s per-identity
    sums (:meth:`ISP.partial_fit`, exactly the statistics of a fit on the
    whole file), then to transform each chunk and append it to the output, so
    memory is bounded by the chunk, not by the file. With ``projector`` a
    saved projector is applied in one pass (no identity column needed). The
    output directory is staged and moved into place only when complete.

    Parameters
    ----------
    path : str or path-like
        Embeddings file: ``.csv``, ``.csv.gz`` or ``.parquet``.
    out : str or path-like
        Output directory (created; written completely or not at all).
    n_components : int, float, "auto" or "full", default="auto"
        Identity directions to remove, as :class:`ISP`'s ``n_components``.
    target_tar : float in (0, 1) or None, default=None
        Instead of ``n_components``: the rank is the smallest whose upper
        confidence bound on the TAR at ``far``, on identities held out of the
        projector's fit, is at most ``target_tar`` (:func:`select_rank` with
        ``random_state=0``; the file is read into memory for it). The table
        of every rank tried is written as ``rank_selection.csv`` and the
        choice in ``sanitize.json``'s ``rank_selection``.
    far : float in (0, 1), default=1e-3
        False-accept rate of ``target_tar``.
    id_column : str, default="identity"
        Identity column; rows without an identity are sanitised but not used
        to fit, and counted.
    projector : str, path-like or None, default=None
        A saved projector (a previous run's ``projector.npz`` or
        :meth:`ISP.to_npz`) to apply instead of fitting one.
    output_format : {"csv", "csv.gz", "parquet"} or None, default=None
        None: ``"parquet"`` for Parquet input, else ``"csv.gz"``.
    features, exclude : str or None, default=None
        Regular expressions choosing / excluding the embedding columns (see
        :func:`~skprivacy.datasets.select_feature_columns`).
    chunk_rows : int, default=100_000
        Rows per chunk; memory grows with it.
    leakage_summary : bool, default=True
        Measure the open-set TAR of up to 200 held-out identities before and
        after a projector of the same settings fitted without them.
    force : bool, default=False
        Replace an existing ``out`` written by a previous run.
    verbose : int, default=0
        Print a line per pass.
    progress : object or None, default=None
        Progress sink (the protocol of :class:`~skprivacy.utils.Progress`);
        overrides ``verbose``.
    command_line : str or None, default=None
        The command that started the run, recorded in ``sanitize.json``.

    Returns
    -------
    record : dict
        The content of ``sanitize.json``: input checksum and columns, rank
        (and with ``target_tar`` its ``rank_selection``),
        removed energy, the projector's SHA-256, rows in and out and rows not
        used to fit by reason, the leakage summary (a point estimate with
        Clopper-Pearson intervals), outputs, timings and provenance.

    Notes
    -----
    Next to the sanitised embeddings, ``<output>.provenance.json`` (e.g.
    ``sanitized.parquet.provenance.json``) records the eraser, its rank, the
    identities the projector was fitted on and the input's SHA-256; read it
    with :func:`sanitize_provenance`. An audit of the sanitised file on those
    identities is in-sample (the projector removed exactly their mean
    differences), and ``skprivacy audit`` says so when it finds the record.

    Raises
    ------
    ValueError
        When no rank meets ``target_tar`` (nothing is written), or
        for an unsupported or unreadable input, a missing identity column,
        a non-numeric feature cell (the message gives the rows), fewer than
        two identities, a projector of another width, or a refused ``out``.
    FileNotFoundError
        When ``path`` or ``projector`` does not exist.

    Examples
    --------
    >>> import json, tempfile
    >>> import pandas as pd
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import sanitize_file
    >>> X, ids = make_identity_embeddings(10, 6, 8, random_state=0)
    >>> frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
    >>> frame.insert(0, "identity", [f"p{i}" for i in ids])
    >>> root = tempfile.mkdtemp()
    >>> frame.to_csv(f"{root}/emb.csv", index=False)
    >>> record = sanitize_file(f"{root}/emb.csv", f"{root}/out", n_components=2)
    >>> record["rank"], record["rows"]["n_output"]
    (2, 60)
    >>> pd.read_csv(f"{root}/out/sanitized.csv.gz").shape
    (60, 10)
    """
    run = RunProvenance(command_line)
    path = Path(path)
    projector = None if projector is None else Path(projector)
    out = Path(out)
    if projector is not None and n_components != "auto":
        raise ValueError("give either a projector or n_components, not both")
    if target_tar is not None and (projector is not None or n_components != "auto"):
        raise ValueError("give target_tar, n_components or a projector, not several")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1; got {chunk_rows}")
    for source in (path, projector):
        if source is not None and not source.exists():
            raise FileNotFoundError(f"input file not found: {source}")
        if source is not None and not source.is_file():
            raise ValueError(
                f"{source} is not a regular file (a directory, a pipe or a device): "
                "it is read more than once; save it to a file first"
            )
    fmt_in = _input_format(path)
    fmt_out = output_format or ("parquet" if fmt_in == "parquet" else "csv.gz")
    if fmt_out not in FORMATS:
        raise ValueError(
            f"output_format {fmt_out!r} is not one of {', '.join(sorted(FORMATS))}"
        )
    say = progress if progress is not None else Progress("sanitize_file", verbose)
    inputs = [p for p in (path, projector) if p is not None]
    check_not_input(out, inputs)
    staged = StagedDirectory(out, force=force, replaceable=_OUTPUT_NAMES, inputs=inputs)
    with staged:
        layout = _Layout(path, fmt_in, fmt_out, id_column, projector, features, exclude)
        columns, has_ids = layout.columns, layout.has_ids
        selection = None
        if target_tar is not None:
            say.message(f"choosing the rank: cross-fitted TAR at FAR={far:g}")
            n_components, selection, table = _rank_for_target(
                path, id_column, features, exclude, target_tar, far
            )
            table.to_csv(staged.path / _RANK_TABLE, index=False)
        t0 = time.perf_counter()
        if projector is None:
            say.message(
                f"pass 1/2: fitting ISP on {path.name} in chunks of {chunk_rows}"
            )
            isp, fit_drops = _fit_pass(path, fmt_in, chunk_rows, layout, n_components)
            # Held-out identities for the leakage summary: the smallest label
            # hashes, independent of row order.
            labels_all = list(isp._stats.labels)
            n_audit = min(_AUDIT_MAX_IDENTITIES, max(2, len(labels_all) // 5))
            audit_ids = sorted(labels_all, key=_label_hash)[:n_audit]
        else:
            isp = ISP.from_npz(projector)
            if isp.n_features_in_ != len(columns):
                raise ValueError(
                    f"projector has {isp.n_features_in_} features but {path.name} "
                    f"has {len(columns)} embedding columns"
                )
            audit_ids, fit_drops = [], None
        t_fit = time.perf_counter() - t0
        name = FORMATS[fmt_out]
        say.message(f"pass {'2/2' if projector is None else '1/1'}: writing {name}")
        t0 = time.perf_counter()
        for attempt in (1, 2):
            sample = held_out = None
            if leakage_summary and has_ids:
                sample = _AuditSample(audit_ids, open_ended=projector is not None)
                held_out = _IdentityStats(
                    len(columns), scatter=isp.n_components == "auto"
                )
            try:
                n_rows, n_unsanitized = _write_pass(
                    path, fmt_in, chunk_rows, staged.path / name, fmt_out, isp,
                    layout, sample, held_out,
                )  # fmt: skip
                break
            except _TypeConflict as conflict:
                if attempt == 2:  # the survey below widened every column it must
                    raise RuntimeError(f"column {conflict.column!r}") from conflict
                # A later row does not fit the type the first rows gave a
                # column: every such column is written as text, from the start.
                kept = list(layout.types.kinds)
                widened = layout.types.widen(
                    _chunks(path, fmt_in, chunk_rows, kept, text=layout.text)
                )
                say.message(
                    f"column(s) {', '.join(map(repr, map(str, widened)))} hold "
                    "values the type of their first rows cannot: written as text; "
                    f"writing {name} again"
                )
        t_transform = time.perf_counter() - t0
        leakage = None
        if sample is not None and sample.rows:
            if projector is None:
                after = _held_out_projector(isp, held_out, len(columns), n_components)
                note = (
                    "TAR of held-out identities (smallest label hashes) with a "
                    "projector of the same settings fitted without them"
                )
            else:
                after = isp._transform_array
                note = (
                    "TAR with the saved projector; its training identities are "
                    "unknown, so these may not be disjoint from them"
                )
            if after is not None:
                stages = {"before": lambda A: A, "after": after}
                leakage = _tar_summary(np.vstack(sample.rows), sample.labels, stages, 0)
                leakage["method"] = note
                leakage["estimate"] = "point estimate with Clopper-Pearson intervals"
        isp.to_npz(staged.path / "projector.npz")
        record = {
            "input": {
                "path": str(path),
                "sha256": file_sha256(path),
                "format": fmt_in,
                "id_column": id_column if has_ids else None,
                "feature_columns": [str(c) for c in columns],
                "excluded_columns": layout.excluded,
            },
            "mode": "apply projector" if projector else "fit and transform",
            "projector_input": str(projector) if projector else None,
            "n_components_requested": n_components if projector is None else None,
            "rank": int(isp.n_components_),
            "rank_selection": selection,
            "n_features": len(columns),
            "explained_energy_ratio": [
                float(v) for v in np.nan_to_num(isp.explained_energy_ratio_)
            ],
            "projector_sha256": _components_sha256(isp),
            "rows": {
                "n_input": int(n_rows),
                "n_output": int(n_rows),
                "not_used_for_fit": fit_drops,
                "written_as_nan_non_finite": int(n_unsanitized),
            },
            "row_key": layout.source_col,
            "leakage": leakage,
            "outputs": [
                name,
                "projector.npz",
                "sanitize.json",
                name + PROVENANCE_SUFFIX,
                *([_RANK_TABLE] if selection else []),
            ],
            "format": fmt_out,
            "chunk_rows": int(chunk_rows),
            "seconds": {
                "fit": round(t_fit, 3),
                "transform_and_write": round(t_transform, 3),
            },
            **run.record(),
        }
        (staged.path / "sanitize.json").write_text(
            json.dumps(record, indent=2, default=str) + "\n"
        )
        fitted_ids = isp.identities_ if projector is None else None
        sidecar = _provenance_sidecar(isp, record, name, fitted_ids)
        (staged.path / (name + PROVENANCE_SUFFIX)).write_text(
            json.dumps(sidecar, indent=2, default=str) + "\n"
        )
        staged.commit()
    return record


def _sample_rows(X, labels, bad, sample, held):
    """Add a chunk's rows of held-out identities to ``sample`` and ``held``.

    Only those rows are copied, not the chunk.
    """
    keep = labels.notna().to_numpy() & ~bad
    lab = labels[keep].to_numpy(dtype=object).astype(str)
    rows = np.flatnonzero(keep)
    if sample.open_ended:
        sample.add((X[i] for i in rows), lab)
        return
    mask = np.array([v in sample.identities for v in lab], dtype=bool)
    if mask.any():
        Xh = X[rows[mask]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = validate_identity_data(
                BaseEstimator(),
                Xh,
                lab[mask],
                min_samples_per_identity=1,
                min_identities=1,
                dtype=(np.float64, np.float32),
            )
        held.add_data(data)
        sample.add(Xh, lab[mask])


def _write_pass(path, fmt, chunk_rows, target, fmt_out, isp, layout, sample, held):
    """Transform every chunk and append it to ``target``; collect the held-out rows.

    Returns the rows written and the rows written as NaN (a non-finite entry).
    """
    columns, dtype, order = layout.columns, layout.dtype, layout.order
    source_col, id_column = layout.source_col, layout.id_column
    writer = layout.writer(target, fmt_out)
    n_rows = n_unsanitized = 0
    buffer = None
    try:
        chunks = _chunks(
            path, fmt, chunk_rows, features=columns, dtype=dtype, text=layout.text
        )
        for X, rest in chunks:
            bad = ~np.isfinite(X).all(axis=1)
            if bad.any():
                X[bad] = np.nan  # passed through as NaN, counted
                n_unsanitized += int(bad.sum())
            # Transformed and written in slices: the output frame and its
            # Arrow table exist for one slice at a time, not the whole chunk.
            step = min(len(X), _WRITE_ROWS)
            if buffer is None or buffer.shape[0] < step:
                buffer = np.empty((step, X.shape[1]), dtype=X.dtype)
            for lo in range(0, len(X), step):
                hi = min(lo + step, len(X))
                Z = isp._transform_array(X[lo:hi], out=buffer[: hi - lo])
                frame = _output_frame(
                    rest.iloc[lo:hi], order, columns, Z, source_col, n_rows + lo
                )
                writer.write(frame)
                del frame, Z
            n_rows += len(X)
            if sample is not None:
                _sample_rows(X, rest[id_column], bad, sample, held)
            # Release this chunk before the next one is decoded.
            del X, rest
    finally:
        writer.close()
    return n_rows, n_unsanitized
