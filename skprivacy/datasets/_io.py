# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reading users' embedding files (CSV, gzip CSV, Parquet, .npy/.npz)."""

import hashlib
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["read_embeddings"]


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_table(path, fmt):
    try:
        if fmt == "parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except ImportError as exc:
        raise ImportError(
            f"Reading Parquet needs pyarrow: pip install 'skprivacy[parquet]' ({exc})."
        ) from exc
    except Exception as exc:  # any parser error becomes one clear message
        raise ValueError(f"Could not read {path} as {fmt.upper()}: {exc}") from exc


def _read_labels(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Label file not found: {path}")
    if path.suffix == ".npy":
        return np.load(path, allow_pickle=False)
    return pd.read_csv(path, header=None).iloc[:, 0].to_numpy()


def _labelled_frame(matrix, row_labels, id_column, labels_name, matrix_name):
    # An embedding matrix and its identity labels as one table, lengths checked.
    if len(row_labels) != len(matrix):
        raise ValueError(
            f"{labels_name} has {len(row_labels)} labels but {matrix_name} has "
            f"{len(matrix)} rows."
        )
    frame = pd.DataFrame(matrix, columns=[f"e{j}" for j in range(matrix.shape[1])])
    frame.insert(0, id_column, row_labels)
    return frame


def read_embeddings(path, *, id_column="identity", features=None, labels=None):
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
        (``re.search``). ``None`` takes every numeric column except the
        identity column.
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
        ``id_column``, ``feature_columns``, ``ignored_columns`` (columns not
        used, e.g. metadata), ``n_rows_missing_id`` (rows without an identity,
        which are dropped with a warning).

    Raises
    ------
    FileNotFoundError
        If ``path`` (or ``labels``) does not exist.
    ValueError
        If the file cannot be parsed, the identity column is missing, no
        numeric embedding column remains, or ``features`` matches nothing.

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> from skprivacy.datasets import read_embeddings
    >>> path = os.path.join(tempfile.mkdtemp(), "emb.csv")
    >>> table = {"identity": ["a", "b"], "img": ["x.png", "y.png"], "e0": [0.1, 0.3],
    ...          "e1": [0.2, 0.4]}
    >>> pd.DataFrame(table).to_csv(path, index=False)
    >>> X, ids, info = read_embeddings(path)
    >>> list(X.columns), ids.tolist(), info["ignored_columns"]
    (['e0', 'e1'], ['a', 'b'], ['img'])
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Input file not found: {path}")
    if path.is_dir():
        raise ValueError(f"Input path is a directory, not a file: {path}")
    name = path.name.lower()
    if name.endswith(".npy"):
        fmt = "npy"
        try:
            matrix = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise ValueError(f"Could not read {path} as NPY: {exc}") from exc
        if labels is None:
            raise ValueError(
                f"{path} is a bare .npy matrix: pass the identity labels of its rows "
                "(labels=... / --labels FILE), or use .npz, CSV or Parquet."
            )
        if matrix.ndim != 2:
            raise ValueError(
                f"{path} holds a {matrix.ndim}-D array; expected a 2-D embedding matrix."
            )
        frame = _labelled_frame(
            matrix, _read_labels(labels), id_column, f"{labels}", f"{path}"
        )
    elif name.endswith(".npz"):
        fmt = "npz"
        try:
            archive = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise ValueError(f"Could not read {path} as NPZ: {exc}") from exc
        x_key = next((k for k in ("X", "embeddings") if k in archive), None)
        y_key = next((k for k in (id_column, "ids") if k in archive), None)
        if x_key is None or y_key is None:
            raise ValueError(
                f"{path} must hold arrays 'X' (or 'embeddings') and '{id_column}' (or "
                f"'ids'); found {sorted(archive.files)}."
            )
        frame = _labelled_frame(
            archive[x_key],
            archive[y_key],
            id_column,
            f"{path}: '{y_key}'",
            f"'{x_key}'",
        )
    elif name.endswith((".parquet", ".pq")):
        fmt = "parquet"
        frame = _read_table(path, fmt)
    else:
        fmt = "csv"
        frame = _read_table(path, fmt)

    if id_column not in frame.columns:
        shown = ", ".join(map(str, list(frame.columns)[:10]))
        raise ValueError(
            f"Identity column '{id_column}' not found in {path}; columns are: {shown}"
            f"{' ...' if frame.shape[1] > 10 else ''}."
        )
    candidates = [c for c in frame.columns if c != id_column]
    if features is not None:
        pattern = re.compile(features)
        candidates = [c for c in candidates if pattern.search(str(c))]
        if not candidates:
            raise ValueError(f"No column of {path} matches --features {features!r}.")
    feature_columns = [
        c for c in candidates if pd.api.types.is_numeric_dtype(frame[c].dtype)
    ]
    if features is not None and len(feature_columns) < len(candidates):
        bad = [str(c) for c in candidates if c not in feature_columns]
        raise ValueError(
            f"Column(s) matched by --features are not numeric: {', '.join(bad[:10])}."
        )
    if not feature_columns:
        raise ValueError(f"No numeric embedding column found in {path}.")
    ignored = [
        str(c) for c in frame.columns if c != id_column and c not in feature_columns
    ]
    missing_id = frame[id_column].isna().to_numpy()
    if missing_id.any():
        warnings.warn(
            f"Dropped {int(missing_id.sum())} row(s) of {path} with no identity label.",
            UserWarning,
            stacklevel=2,
        )
        frame = frame.loc[~missing_id]
    info = {
        "path": str(path.resolve()),
        "format": fmt,
        "sha256": _sha256(path),
        "n_rows_read": int(len(missing_id)),
        "n_rows_missing_id": int(missing_id.sum()),
        "id_column": id_column,
        "feature_columns": [str(c) for c in feature_columns],
        "ignored_columns": ignored,
    }
    X = frame[feature_columns].reset_index(drop=True)
    ids = frame[id_column].reset_index(drop=True)
    return X, ids, info
