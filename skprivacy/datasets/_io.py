# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reading users' embedding files (CSV, gzip CSV, Parquet, .npy/.npz)."""

import hashlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from skprivacy.exceptions import DroppedRowsWarning, ExcludedColumnsWarning
from skprivacy.utils import check_identity_column

__all__ = [
    "classify_columns",
    "read_embeddings",
    "select_feature_columns",
    "select_features",
]

#: Rows read from the start of a file to classify its columns (features,
#: metadata, identity) before streaming it, whatever the chunk size.
PEEK_ROWS = 1000

#: A float column with at most this many distinct values (and at most one per
#: ``_LOW_CARDINALITY_ROWS`` rows) is metadata (a pose, a scale, a flag), not an
#: embedding dimension: a continuous embedding coordinate takes a new value on
#: almost every row.
_LOW_CARDINALITY_MAX = 20
_LOW_CARDINALITY_ROWS = 10
#: An object column counts as a numeric column with bad cells (an error) rather
#: than as text (excluded) when at least this share of its cells parse as numbers.
_NUMERIC_SHARE = 0.5
_PANDAS_INDEX = re.compile(r"^Unnamed: \d+$")
#: Column names given to the columns of a .npy/.npz embedding matrix.
_ARRAY_COLUMNS = r"^e\d+$"


def _exclusion_reason(column, values):
    """Why an automatically considered column is not an embedding dimension.

    Returns None for a float column that looks like an embedding coordinate.
    Raises ValueError for a mostly numeric column holding text cells, since
    dropping it would silently remove one dimension of the embedding.
    """
    name = str(column)
    dtype = values.dtype
    if _PANDAS_INDEX.match(name):
        return "index column written by pandas (df.to_csv without index=False)"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer-valued (metadata such as a frame, shot or pose number)"
    if not pd.api.types.is_numeric_dtype(dtype):
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            _check_numeric_cells(column, values, lenient=True)
            return "text"
        return f"not numeric ({dtype})"
    finite = values[np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))]
    if finite.empty:
        return "no finite value"
    distinct = finite.nunique()
    if distinct == 1:
        return "constant"
    v = finite.to_numpy()
    # Beyond 1/eps (2**53 in float64) every float is whole: such magnitudes
    # (embeddings at scale 1e200) say nothing about metadata.
    exact = 1.0 / np.finfo(v.dtype).eps if v.dtype.kind == "f" else np.inf
    if np.abs(v).max() < exact and np.array_equal(v, np.round(v)):
        n = len(values)
        if np.array_equal(values.to_numpy(), np.arange(n)) or np.array_equal(
            values.to_numpy(), np.arange(1, n + 1)
        ):
            return "index-like (row numbers 0..n-1 or 1..n)"
        return "whole numbers only (metadata such as a frame, shot or pose number)"
    limit = min(_LOW_CARDINALITY_MAX, max(2, len(values) // _LOW_CARDINALITY_ROWS))
    if distinct <= limit:
        return f"low cardinality ({distinct} distinct values in {len(values)} rows)"
    return None


def _check_numeric_cells(column, values, *, lenient):
    """Raise if a column meant as numeric holds cells that are not numbers.

    With ``lenient``, a column whose cells are mostly not numbers is accepted
    (it is text, such as image paths); otherwise any non-numeric cell fails.
    """
    present = values.notna().to_numpy()
    parsed = pd.to_numeric(values, errors="coerce")
    bad = present & parsed.isna().to_numpy()
    if not bad.any():
        return
    if lenient and parsed.notna().sum() < _NUMERIC_SHARE * max(1, present.sum()):
        return
    rows = np.flatnonzero(bad)
    shown = ", ".join(f"row {r} holds {values.iloc[r]!r}" for r in rows[:3]) + (
        f" (and {len(rows) - 3} more)" if len(rows) > 3 else ""
    )
    raise ValueError(
        f"column {str(column)!r} looks numeric but {shown}, which is not a number "
        "(rows are counted from 0 after the header); fix those cells, or exclude "
        "the column with --exclude / exclude=."
    )


def select_feature_columns(frame, *, id_column, features=None, exclude=None):
    """Choose the embedding columns of a table and say why every other one is out.

    The rule, applied by every reader and command:

    1. The identity column is never a feature; columns whose name matches
       ``exclude`` (``re.search``) are left out.
    2. If ``features`` is given, the columns whose name matches it are the
       features; each must be numeric (integers allowed, booleans not), and a
       non-numeric cell is an error naming its column and row.
    3. Otherwise the float columns are the features, except those that look
       like metadata: pandas' index column (``Unnamed: 0``), booleans,
       integers, whole-number or index-like (0..n-1, 1..n) floats, constant
       columns, and low-cardinality columns (at most 20 distinct values, and
       at most one per 10 rows). Text columns are left out, unless most of
       their cells are numbers: then the other cells are an error naming the
       column and rows, since dropping the column would silently remove an
       embedding dimension.

    Parameters
    ----------
    frame : DataFrame
        The table as read (all rows, or a leading chunk of a streamed file).
    id_column : str
        The identity column.
    features : str or None, default=None
        Regular expression selecting the feature columns by name.
    exclude : str or None, default=None
        Regular expression of column names never used as features.

    Returns
    -------
    feature_columns : list
        The selected column labels, in table order.
    excluded_columns : dict of str to str
        Every other column (except the identity column) mapped to the reason
        it was left out.

    Raises
    ------
    ValueError
        If a regular expression is invalid, ``features`` matches no column, a
        selected column holds a non-numeric cell, or no feature column remains.

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.datasets import select_feature_columns
    >>> frame = pd.DataFrame({"identity": ["a", "a", "b"], "shot": [1, 2, 1],
    ...                       "e0": [0.12, -0.4, 0.33], "e1": [0.5, 0.01, -0.2]})
    >>> cols, excluded = select_feature_columns(frame, id_column="identity")
    >>> cols
    ['e0', 'e1']
    >>> excluded
    {'shot': 'integer-valued (metadata such as a frame, shot or pose number)'}
    """
    patterns = {}
    for option, text in (("features", features), ("exclude", exclude)):
        if text is None:
            continue
        if not isinstance(text, str):
            raise TypeError(
                f"{option} must be a regular expression (a str) matching column "
                f"names, e.g. '^e\\d+$'; got {type(text).__name__} {text!r}."
            )
        try:
            patterns[option] = re.compile(text)
        except re.error as exc:
            raise ValueError(
                f"invalid regular expression for {option}: {text!r} ({exc})"
            ) from exc
    if len(frame) == 0 and "features" not in patterns:
        raise ValueError(
            "the table has no rows (a header only): no embeddings to choose "
            "columns from."
        )
    excluded = {}
    candidates = []
    for column in frame.columns:
        if column == id_column:
            continue
        if "exclude" in patterns and patterns["exclude"].search(str(column)):
            excluded[str(column)] = f"matches exclude pattern {exclude!r}"
        else:
            candidates.append(column)
    if "features" in patterns:
        chosen = [c for c in candidates if patterns["features"].search(str(c))]
        if not chosen:
            raise ValueError(f"no column matches the features pattern {features!r}.")
        for column in chosen:
            values = frame[column]
            if pd.api.types.is_bool_dtype(values.dtype):
                raise ValueError(
                    f"column {str(column)!r} matched by the features pattern is "
                    "boolean, not an embedding dimension."
                )
            if not pd.api.types.is_numeric_dtype(values.dtype):
                _check_numeric_cells(column, values, lenient=False)
        for column in candidates:
            if column not in chosen:
                excluded[str(column)] = f"does not match features pattern {features!r}"
        return chosen, excluded
    chosen = []
    for column in candidates:
        reason = _exclusion_reason(column, frame[column])
        if reason is None:
            chosen.append(column)
        else:
            excluded[str(column)] = reason
    if not chosen:
        _check_rows(frame, id_column, excluded)
        listed = "; ".join(f"{k}: {v}" for k, v in list(excluded.items())[:5])
        raise ValueError(
            "no embedding column found: every column other than the identity column "
            f"looks like metadata ({listed}). Name the embedding columns with "
            "--features REGEX (features=)."
        )
    return chosen, excluded


def _shown(values, limit=5):
    values = list(values)
    return ", ".join(repr(str(v)) for v in values[:limit]) + (
        f" and {len(values) - limit} more" if len(values) > limit else ""
    )


def _check_rows(frame, id_column, excluded):
    """Name the real cause when no column is left because the rows are empty.

    A table without rows, or whose float columns hold no finite value at all,
    has every column looking like metadata; the cause is the rows.
    """
    if len(frame) == 0:
        raise ValueError(
            "the table has no rows (only a header): there are no embeddings to use."
        )
    empty = [c for c, reason in excluded.items() if reason == "no finite value"]
    if not empty:
        return
    who = "no row has a finite embedding"
    if id_column is not None and id_column in frame.columns:
        n = len(pd.unique(frame[id_column].dropna()))
        if n == 1:
            who = "the one identity has no finite row"
        elif n > 1:
            who = f"none of the {n} identities has a finite row"
    raise ValueError(
        f"{who}: the float columns ({_shown(empty)}) hold only NaN or infinite "
        "values, so there is no embedding to use."
    )


def identities_without_finite_rows(X, ids):
    """Return the identities none of whose rows is finite in every column of ``X``.

    Parameters
    ----------
    X : DataFrame of shape (n_rows, n_features)
        Numeric embedding columns.
    ids : Series of shape (n_rows,)
        Identity labels (missing labels are ignored).

    Returns
    -------
    identities : list
        In order of first appearance.
    """
    finite = np.ones(len(X), dtype=bool)
    for column in X.columns:  # one column at a time: no copy of the whole table
        finite &= np.isfinite(X[column].to_numpy(dtype=np.float64, na_value=np.nan))
    if finite.all():
        return []
    labels = ids.to_numpy(dtype=object)
    present = ids.notna().to_numpy()
    with_finite = set(labels[finite & present])
    return [v for v in pd.unique(labels[present]) if v not in with_finite]


def _peek(path, n_rows):
    """Read the first ``n_rows`` data rows of a CSV (any compression) or Parquet file."""
    name = Path(path).name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            # Function-level import: pyarrow is an optional dependency.
            import pyarrow as pa
            import pyarrow.parquet as pq

            # One column at a time: reading every column of a row group at
            # once holds all their pages (and dictionaries), hundreds of MB for
            # a wide file, for a few rows.
            with pq.ParquetFile(path, pre_buffer=False) as handle:
                schema = handle.schema_arrow
                arrays = {}
                for name in schema.names:
                    pieces, n = [], 0
                    for batch in handle.iter_batches(batch_size=n_rows, columns=[name]):
                        pieces.append(batch.column(0).slice(0, n_rows - n))
                        n += len(pieces[-1])
                        if n >= n_rows:
                            break
                    arrays[name] = pa.chunked_array(
                        pieces, type=schema.field(name).type
                    )
            return pa.table(arrays, schema=schema).to_pandas()
        return pd.read_csv(path, nrows=n_rows)
    except ImportError as exc:
        raise ImportError(
            f"Reading Parquet needs pyarrow: pip install 'skprivacy[parquet]' ({exc})."
        ) from exc
    except (OSError, UnicodeError):
        raise
    except Exception as exc:  # any parser error becomes one clear message
        raise ValueError(f"Could not read {path}: {exc}") from exc


def classify_columns(path, *, id_column, features=None, exclude=None, n_rows=PEEK_ROWS):
    """Classify the columns of a file from one peek at its first rows.

    For files processed in chunks: the feature columns are chosen (by
    :func:`select_feature_columns`) on the first ``n_rows`` rows, read once
    whatever the chunk size, so the same file always gets the same features.
    The identity column, when present, must look like identity labels
    (:func:`~skprivacy.utils.check_identity_column`: whole numbers or text;
    labels that all occur once are judged on the whole file, with
    :func:`~skprivacy.utils.check_identity_counts`, since later rows may
    repeat them).

    Parameters
    ----------
    path : str or path-like
        A CSV (any compression pandas infers) or Parquet (``.parquet``,
        ``.pq``) file.
    id_column : str or None
        The identity column; None (or a name the file lacks) for a file
        without one.
    features : str or None, default=None
        Regular expression selecting the feature columns by name.
    exclude : str or None, default=None
        Regular expression of column names never used as features.
    n_rows : int, default=PEEK_ROWS
        Rows read.

    Returns
    -------
    feature_columns : list
        The selected column labels, in file order.
    excluded_columns : dict of str to str
        Every other column (except the identity column) and why it is out.
    head : DataFrame
        The rows read (column dtypes, presence of the identity column).

    Raises
    ------
    ValueError
        As :func:`select_feature_columns`, if the file cannot be parsed, or if
        the identity column does not look like identity labels.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd
    >>> from skprivacy.datasets import classify_columns
    >>> rng = np.random.default_rng(0)
    >>> frame = pd.DataFrame({"identity": np.repeat(["a", "b"], 50),
    ...                       "shot": np.tile(np.arange(50), 2),
    ...                       "e0": rng.normal(size=100), "e1": rng.normal(size=100)})
    >>> path = os.path.join(tempfile.mkdtemp(), "emb.csv")
    >>> frame.to_csv(path, index=False)
    >>> cols, excluded, head = classify_columns(path, id_column="identity")
    >>> cols, excluded["shot"], len(head)
    (['e0', 'e1'], 'integer-valued (metadata such as a frame, shot or pose number)', 100)
    >>> classify_columns(path, id_column="e1")
    Traceback (most recent call last):
    ...
    ValueError: column 'e1' does not look like identity labels: it holds numbers that are not whole...
    """
    head = _peek(path, n_rows)
    if head.empty:
        raise ValueError(
            f"{path} has no data rows (only a header): there are no embeddings to use."
        )
    if id_column is not None and id_column in head.columns:
        check_identity_column(head[id_column], column=id_column, require_repeats=False)
    else:
        id_column = None
    feature_columns, excluded = select_feature_columns(
        head, id_column=id_column, features=features, exclude=exclude
    )
    return feature_columns, excluded, head


def select_features(X, *, features=None, exclude=None):
    """Apply the column rule to embeddings in memory; name every column.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_features)
        Embeddings. A DataFrame's columns follow
        :func:`select_feature_columns` (it has no identity column).
    features, exclude : str or None, default=None
        Regular expressions choosing / excluding a DataFrame's columns.

    Returns
    -------
    X : DataFrame or ndarray
        A DataFrame's feature columns, or the array (other containers, such
        as sparse matrices, are returned as given for the input layer to name).
    feature_columns : list of str
        The column names (an array's are ``"0"``, ``"1"``, ...).
    excluded_columns : dict of str to str
        A DataFrame's columns left out, with the reason.

    Warns
    -----
    ExcludedColumnsWarning
        When the rule (no ``features``) leaves a column out.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.datasets import select_features
    >>> select_features(np.zeros((3, 2)))[1:]
    (['0', '1'], {})
    """
    if isinstance(X, pd.DataFrame):
        columns, excluded = select_feature_columns(
            X, id_column=None, features=features, exclude=exclude
        )
        if excluded and features is None:
            warnings.warn(
                f"{describe_excluded(excluded)} Pass features= to choose the "
                "embedding columns explicitly.",
                ExcludedColumnsWarning,
                stacklevel=3,
            )
        return X[columns], [str(c) for c in columns], excluded
    if features is not None or exclude is not None:
        raise ValueError(
            "features= and exclude= select DataFrame columns by name; X is an array."
        )
    if not hasattr(X, "__array__") and not isinstance(X, list | tuple):
        return X, [], {}
    X = np.asarray(X)
    return X, [str(j) for j in range(X.shape[1] if X.ndim == 2 else 0)], {}


def describe_excluded(excluded):
    """One sentence naming every excluded column and why (for warnings and logs)."""
    return (
        "Columns not used as embedding dimensions: "
        + "; ".join(f"{name!r} ({reason})" for name, reason in excluded.items())
        + "."
    )


def file_sha256(path):
    """Return the SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _HashingReader(io.RawIOBase):
    """A binary stream read once, whose bytes are hashed as they are read.

    The checksum is then that of exactly the bytes parsed, also for a pipe
    (``<(zcat f.csv.gz)``) that cannot be read a second time.
    """

    def __init__(self, raw):
        self._raw = raw
        self.digest = hashlib.sha256()

    def readable(self):
        return True

    def readinto(self, buffer):
        n = self._raw.readinto(buffer)
        if n:
            self.digest.update(memoryview(buffer)[:n])
        return n


#: How files start: the format of an input whose name does not say it (a pipe).
_MAGIC = (
    (b"PAR1", "parquet"),
    (b"\x93NUMPY", "npy"),
    (b"PK\x03\x04", "npz"),
    (b"PK\x05\x06", "npz"),
)
#: Compression of a CSV input, from its first bytes.
_COMPRESSION = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


def _format(name, head):
    if name.endswith(".npy"):
        return "npy"
    if name.endswith(".npz"):
        return "npz"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".tsv", ".txt", ".gz", ".bz2", ".xz", ".zip", ".zst")):
        return "csv"
    return next((fmt for magic, fmt in _MAGIC if head.startswith(magic)), "csv")


def _read_once(path):
    """Read a table or array file once; return ``(frame or array, format, sha256)``.

    CSV (any compression) is parsed as it streams; the other formats are
    read into memory first. The checksum is that of the bytes read.
    """
    with (
        open(path, "rb", buffering=0) as raw,
        io.BufferedReader(_HashingReader(raw), 1 << 20) as stream,
    ):
        head = stream.peek(8)[:8]
        if not head:
            raise ValueError(f"{path} is empty (0 bytes).")
        fmt = _format(Path(path).name.lower(), head)
        compression = next((c for m, c in _COMPRESSION if head.startswith(m)), None)
        try:
            if fmt == "csv" and not head.startswith(b"PK"):
                data = pd.read_csv(stream, compression=compression)
            else:  # zip (a zipped CSV), Parquet, .npy and .npz need random access
                buffer = io.BytesIO(stream.read())
                if fmt == "csv":
                    data = pd.read_csv(buffer, compression="zip")
                elif fmt == "parquet":
                    data = pd.read_parquet(buffer)
                else:
                    data = np.load(buffer, allow_pickle=False)
                    if fmt == "npz":
                        data = {k: data[k] for k in data.files}
        except ImportError as exc:
            raise ImportError(
                f"Reading Parquet needs pyarrow: pip install 'skprivacy[parquet]' ({exc})."
            ) from exc
        except Exception as exc:  # any parser error becomes one clear message
            raise ValueError(
                f"Could not read {path} as {fmt.upper()}: {' '.join(str(exc).split())}"
            ) from exc
        while stream.read(1 << 20):  # bytes after what the parser needed: hashed too
            pass
        return data, fmt, stream.raw.digest.hexdigest()


def _read_labels(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Label file not found: {path}")
    if path.suffix == ".npy":
        return np.load(path, allow_pickle=False)
    return pd.read_csv(path, header=None).iloc[:, 0].to_numpy()


def _labelled_frame(matrix, row_labels, id_column, labels_name, matrix_name):
    # An embedding matrix and its identity labels as one table, lengths checked.
    if matrix.ndim != 2:
        raise ValueError(
            f"{matrix_name} holds a {matrix.ndim}-D array of shape {matrix.shape}; "
            "expected a 2-D embedding matrix (rows x dimensions)."
        )
    if np.ndim(row_labels) != 1:
        raise ValueError(
            f"{labels_name} holds an array of shape {np.shape(row_labels)}; expected "
            "one identity label per row (1-D)."
        )
    if len(row_labels) != len(matrix):
        raise ValueError(
            f"{labels_name} has {len(row_labels)} labels but {matrix_name} has "
            f"{len(matrix)} rows."
        )
    frame = pd.DataFrame(matrix, columns=[f"e{j}" for j in range(matrix.shape[1])])
    frame.insert(0, id_column, row_labels)
    return frame


def read_embeddings(
    path, *, id_column="identity", features=None, exclude=None, labels=None
):
    """Read an embedding table with an identity column from a user file.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` or ``.csv.gz`` file (any compression pandas infers), a
        ``.parquet`` file, a ``.npz`` archive holding an embedding array ``X``
        (or ``embeddings``) and an identity array named ``id_column`` (or
        ``ids``), or a ``.npy`` embedding matrix together with ``labels``.
    id_column : str, default="identity"
        Column (or ``.npz`` array) holding the identity labels.
    features : str or None, default=None
        Regular expression selecting the embedding columns by name
        (``re.search``). ``None`` applies the automatic rule of
        :func:`select_feature_columns`: float columns, leaving out (and naming,
        in an :class:`~skprivacy.exceptions.ExcludedColumnsWarning`) integer,
        boolean, index-like, low-cardinality and text columns.
    exclude : str or None, default=None
        Regular expression of column names never used as embedding columns.
    labels : str, path-like or None, default=None
        For ``.npy`` input: a ``.npy`` array or a one-label-per-line text file
        with the identity of each row.

    Returns
    -------
    X : DataFrame of shape (n_rows, n_features)
        The embedding columns, in file order.
    ids : Series of shape (n_rows,)
        Identity labels aligned with ``X``.
    info : dict
        ``path``, ``format``, ``sha256`` of the file, ``n_rows_read``,
        ``id_column``, ``feature_columns`` (the columns used, in order),
        ``excluded_columns`` (every other column mapped to the reason it was
        left out), ``n_rows_missing_id`` (rows without an identity, which are
        dropped with a warning).

    Raises
    ------
    FileNotFoundError
        If ``path`` (or ``labels``) does not exist.
    ValueError
        If the file cannot be parsed, the identity column is missing or holds
        numbers that are not whole (not identity labels), no embedding column
        remains, ``features`` matches nothing, or a selected
        column holds a cell that is not a number (the message names the column
        and row).

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> from skprivacy.datasets import read_embeddings
    >>> path = os.path.join(tempfile.mkdtemp(), "emb.csv")
    >>> table = {"identity": ["a", "b"], "img": ["x.png", "y.png"], "e0": [0.1, 0.3],
    ...          "e1": [0.2, 0.4]}
    >>> pd.DataFrame(table).to_csv(path, index=False)
    >>> X, ids, info = read_embeddings(path, features="^e")
    >>> list(X.columns), ids.tolist(), info["excluded_columns"]
    (['e0', 'e1'], ['a', 'b'], {'img': "does not match features pattern '^e'"})
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Input file not found: {path}")
    if path.is_dir():
        raise ValueError(f"Input path is a directory, not a file: {path}")
    data, fmt, sha256 = _read_once(path)
    if fmt == "npy":
        if labels is None:
            raise ValueError(
                f"{path} is a bare .npy matrix: pass the identity labels of its rows "
                "(labels=... / --labels FILE), or use .npz, CSV or Parquet."
            )
        frame = _labelled_frame(
            data, _read_labels(labels), id_column, f"{labels}", f"{path}"
        )
    elif fmt == "npz":
        x_key = next((k for k in ("X", "embeddings") if k in data), None)
        y_key = next((k for k in (id_column, "ids") if k in data), None)
        if x_key is None or y_key is None:
            raise ValueError(
                f"{path} must hold arrays 'X' (or 'embeddings') and '{id_column}' (or "
                f"'ids'); found {sorted(data)}."
            )
        frame = _labelled_frame(
            data[x_key],
            data[y_key],
            id_column,
            f"{path}: '{y_key}'",
            f"'{x_key}'",
        )
    else:
        frame = data
    if len(frame) == 0:
        raise ValueError(
            f"{path} has no data rows (only a header): there are no embeddings to use."
        )

    if id_column not in frame.columns:
        shown = ", ".join(map(str, list(frame.columns)[:10]))
        raise ValueError(
            f"Identity column '{id_column}' not found in {path}; columns are: {shown}"
            f"{' ...' if frame.shape[1] > 10 else ''}."
        )
    check_identity_column(frame[id_column], column=id_column, require_repeats=False)
    # Every column of an array file is an embedding dimension by construction.
    automatic = features is None and fmt not in {"npy", "npz"}
    if features is None and not automatic:
        features = _ARRAY_COLUMNS
    feature_columns, excluded = select_feature_columns(
        frame, id_column=id_column, features=features, exclude=exclude
    )
    # Said of the columns the classification left out, not of those the
    # caller excluded by name (exclude=/--exclude): nothing to advise there.
    guessed = {
        k: v for k, v in excluded.items() if not v.startswith("matches exclude pattern")
    }
    if guessed and automatic:
        warnings.warn(
            f"{path.name}: {describe_excluded(guessed)} Pass features=/--features "
            "to choose the embedding columns explicitly.",
            ExcludedColumnsWarning,
            stacklevel=2,
        )
    missing_id = frame[id_column].isna().to_numpy()
    if missing_id.any():
        warnings.warn(
            f"Dropped {int(missing_id.sum())} row(s) of {path} with no identity label.",
            UserWarning,
            stacklevel=2,
        )
        frame = frame.loc[~missing_id]
    lost = identities_without_finite_rows(frame[feature_columns], frame[id_column])
    if lost:
        warnings.warn(
            f"{path.name}: {'identity' if len(lost) == 1 else 'identities'} "
            f"{_shown(lost)} {'has' if len(lost) == 1 else 'have'} no finite row "
            "(every row holds NaN or inf in an embedding column) and cannot be "
            "audited.",
            DroppedRowsWarning,
            stacklevel=2,
        )
    info = {
        "path": str(path.resolve()),
        "format": fmt,
        "sha256": sha256,
        "n_rows_read": int(len(missing_id)),
        "n_rows_missing_id": int(missing_id.sum()),
        "id_column": id_column,
        "feature_columns": [str(c) for c in feature_columns],
        "excluded_columns": excluded,
    }
    X = frame[feature_columns].reset_index(drop=True)
    ids = frame[id_column].reset_index(drop=True)
    return X, ids, info
