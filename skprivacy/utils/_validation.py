# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shared input layer: cleaning, normalisation and identity encoding.

Every estimator in skprivacy goes through :func:`validate_identity_data` (with
identity labels) or :func:`check_embeddings` (without), so that the rules of
DESIGN.md "Shared preprocessing" live in exactly one place.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from skprivacy.exceptions import DroppedRowsWarning, ExcludedIdentitiesWarning
from skprivacy.utils._sklearn import validate_data

__all__ = [
    "MIN_NORM",
    "IdentityData",
    "check_embeddings",
    "check_no_text_columns",
    "encode_identities",
    "l2_normalize",
    "validate_identity_data",
]

#: Rows whose L2 norm is at or below this value carry no direction and are dropped.
MIN_NORM = 1e-6


def check_no_text_columns(X):
    """Raise a ``ValueError`` naming the non-numeric columns of a DataFrame.

    Parameters
    ----------
    X : array-like or DataFrame
        Candidate embedding matrix. Only DataFrames are inspected.

    Raises
    ------
    ValueError
        If ``X`` is a DataFrame with columns that are not numeric (bool counts as
        numeric).

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.utils import check_no_text_columns
    >>> check_no_text_columns(pd.DataFrame({"e0": [0.1], "name": ["x"]}))
    Traceback (most recent call last):
    ...
    ValueError: Embedding columns must be numeric; non-numeric column(s): 'name'...
    """
    if isinstance(X, pd.DataFrame):
        bad = [
            str(col)
            for col, dtype in X.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(dtype))
        ]
        if bad:
            shown = ", ".join(repr(b) for b in bad[:10])
            more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
            raise ValueError(
                f"Embedding columns must be numeric; non-numeric column(s): {shown}"
                f"{more}. Drop them or select the embedding columns first."
            )


def l2_normalize(X, *, copy=True):
    """Scale every row of ``X`` to unit L2 norm.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows with norm 0 are left at 0 (callers drop them first).
    copy : bool, default=True
        If False, ``X`` is normalised in place when it is a float array.

    Returns
    -------
    X_normalized : ndarray of shape (n_samples, n_features)
        Rows of unit L2 norm.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import l2_normalize
    >>> l2_normalize(np.array([[3.0, 4.0]]))
    array([[0.6, 0.8]])
    """
    X = np.array(X, dtype=np.result_type(X, np.float32), copy=copy)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    np.divide(X, norms, out=X, where=norms > 0)
    return X


def check_embeddings(X, *, min_norm=MIN_NORM, normalize=True, warn=True):
    """Drop unusable rows of an embedding matrix and L2-normalise the rest.

    A row is dropped when any entry is NaN or infinite (reason ``"non_finite"``),
    or when its L2 norm is at most ``min_norm`` (reason ``"low_norm"``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Numeric matrix, already converted by ``validate_data``.
    min_norm : float, default=1e-6
        Rows with L2 norm ``<= min_norm`` are dropped.
    normalize : bool, default=True
        Whether to L2-normalise the retained rows.
    warn : bool, default=True
        Emit a :class:`~skprivacy.exceptions.DroppedRowsWarning` when rows are
        dropped.

    Returns
    -------
    Z : ndarray of shape (n_kept, n_features)
        The retained rows, unit norm if ``normalize``.
    kept : ndarray of shape (n_samples,), dtype=bool
        Which input rows were retained.
    drop_counts : dict
        ``{"non_finite": int, "low_norm": int}``.

    Raises
    ------
    ValueError
        If every row is dropped.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import check_embeddings
    >>> X = np.array([[3.0, 4.0], [np.nan, 1.0], [0.0, 0.0]])
    >>> Z, kept, counts = check_embeddings(X, warn=False)
    >>> Z, kept, counts
    (array([[0.6, 0.8]]), array([ True, False, False]), {'non_finite': 1, 'low_norm': 1})
    """
    X = np.asarray(X)
    finite = np.isfinite(X).all(axis=1)
    # Norms of every row in one pass over X, without copying the finite rows out
    # first (a full copy of a large X costs seconds on a busy machine); the
    # values of non-finite rows are discarded.
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    # Guard against overflow of the squares for huge finite entries.
    overflow = finite & ~np.isfinite(norms)
    if overflow.any():
        big = X[overflow].astype(np.float64)
        scale = np.abs(big).max(axis=1)
        norms[overflow] = scale * np.linalg.norm(big / scale[:, None], axis=1)
    norms[~finite] = 0.0
    low = finite & (norms <= min_norm)
    kept = finite & ~low
    drop_counts = {"non_finite": int((~finite).sum()), "low_norm": int(low.sum())}
    n_dropped = X.shape[0] - int(kept.sum())
    if not kept.any():
        raise ValueError(
            f"Every row was dropped: {drop_counts['non_finite']} non-finite (NaN/inf) "
            f"row(s) and {drop_counts['low_norm']} row(s) with L2 norm <= {min_norm:g}; "
            "no usable embeddings remain."
        )
    if n_dropped and warn:
        warnings.warn(
            f"Dropped {n_dropped} of {X.shape[0]} row(s): "
            f"{drop_counts['non_finite']} non-finite (NaN/inf), "
            f"{drop_counts['low_norm']} with L2 norm <= {min_norm:g}.",
            DroppedRowsWarning,
            stacklevel=3,
        )
    if kept.all():
        Z = X / norms[:, None].astype(X.dtype) if normalize else X
    else:
        Z = X[kept]
        if normalize:
            Z /= norms[kept, None].astype(Z.dtype)
    return Z, kept, drop_counts


def encode_identities(y):
    """Map identity labels of any hashable type to integer codes.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Identity labels (strings, integers, mixed objects, ...).

    Returns
    -------
    identities : ndarray of shape (n_identities,)
        The distinct labels, sorted when the labels are mutually comparable,
        otherwise in order of first appearance.
    codes : ndarray of shape (n_samples,), dtype=intp
        ``identities[codes]`` reproduces ``y``.

    Examples
    --------
    >>> from skprivacy.utils import encode_identities
    >>> encode_identities(["b", "a", "b"])
    (array(['a', 'b'], dtype=object), array([1, 0, 1]))
    """
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.reshape(-1)
    try:
        codes, identities = pd.factorize(y, sort=True)
    except TypeError:  # labels of mutually incomparable types cannot be sorted
        codes, identities = pd.factorize(y, sort=False)
    identities = np.asarray(identities)
    if identities.dtype.kind in "US":
        identities = identities.astype(object)
    return identities, codes.astype(np.intp)


@dataclass(frozen=True)
class IdentityData:
    """Validated, cleaned embeddings with their identity encoding.

    Returned by :func:`validate_identity_data`; estimators do not build it
    themselves.

    Parameters
    ----------
    X : ndarray of shape (n_kept, n_features)
        Retained rows (L2-normalised unless ``normalize=False`` was requested).
    y : ndarray of shape (n_kept,)
        Identity label of each retained row.
    codes : ndarray of shape (n_kept,)
        Integer code of each retained row into ``identities``.
    identities : ndarray of shape (n_identities,)
        Distinct auditable identities.
    counts : ndarray of shape (n_identities,)
        Rows per identity.
    kept : ndarray of shape (n_input_rows,), dtype=bool
        Which input rows survive (cleaning and identity-size filtering).
    drop_report : dict
        Counts by reason: ``non_finite``, ``low_norm``, ``small_identity``
        (rows of identities with fewer than ``min_samples_per_identity``
        usable rows), and ``excluded_identities`` (their labels).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from skprivacy.utils import validate_identity_data
    >>> data = validate_identity_data(BaseEstimator(), np.eye(4) + 1, [0, 0, 1, 1])
    >>> data.identities, data.counts, data.rows_of(1).shape
    (array([0, 1]), array([2, 2]), (2, 4))
    """

    X: np.ndarray
    y: np.ndarray
    codes: np.ndarray
    identities: np.ndarray
    counts: np.ndarray
    kept: np.ndarray
    drop_report: dict = field(default_factory=dict)

    @property
    def n_identities(self):
        """Number of auditable identities."""
        return len(self.identities)

    def rows_of(self, code):
        """Return the rows of one identity.

        Parameters
        ----------
        code : int
            Integer code of the identity (its index in ``identities``).

        Returns
        -------
        rows : ndarray of shape (n_rows, n_features)
            That identity's retained rows.
        """
        return self.X[self.codes == code]

    def order(self):
        """Return ``(order, starts)``: row order grouped by identity and offsets.

        ``X[order[starts[i]:starts[i + 1]]]`` are the rows of identity ``i``.
        """
        order = np.argsort(self.codes, kind="stable")
        starts = np.concatenate([[0], np.cumsum(self.counts)])
        return order, starts


def validate_identity_data(
    estimator,
    X,
    y,
    *,
    reset=True,
    min_samples_per_identity=2,
    min_identities=2,
    normalize=True,
    min_norm=MIN_NORM,
    dtype=np.float64,
):
    """Validate, clean and encode ``(X, y)`` for an identity-level estimator.

    This is the shared preprocessing of DESIGN.md: rows that are non-finite or
    have L2 norm ``<= min_norm`` are dropped and the rest are L2-normalised;
    identities with fewer than ``min_samples_per_identity`` usable rows are
    excluded. Every drop is counted, warned about, and returned in
    ``drop_report``.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator being fitted or scored (for ``n_features_in_`` and
        ``feature_names_in_`` bookkeeping through ``validate_data``).
    X : array-like or DataFrame of shape (n_samples, n_features)
        Embeddings; must be numeric.
    y : array-like of shape (n_samples,)
        Identity labels of any hashable type.
    reset : bool, default=True
        ``True`` in ``fit``; ``False`` when scoring or transforming new data.
    min_samples_per_identity : int, default=2
        Identities with fewer usable rows are excluded (warned and reported).
    min_identities : int, default=2
        Raise when fewer identities remain.
    normalize : bool, default=True
        Whether to L2-normalise retained rows.
    min_norm : float, default=1e-6
        Norm threshold below which rows are dropped.
    dtype : dtype, default=np.float64
        Working dtype.

    Returns
    -------
    data : IdentityData
        The cleaned data and its identity encoding.

    Raises
    ------
    ValueError
        On mismatched lengths, non-numeric columns, input that is not 2-D,
        every row dropped, or fewer than ``min_identities`` auditable identities.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from skprivacy.utils import validate_identity_data
    >>> X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0], [0.0, 4.0], [np.nan, 1.0]])
    >>> data = validate_identity_data(BaseEstimator(), X, ["a", "a", "b", "b", "b"])
    >>> data.X.tolist(), data.identities.tolist()
    ([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], ['a', 'b'])
    >>> data.drop_report["non_finite"]
    1
    """
    check_no_text_columns(X)
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is "
            "None: y must hold the identity label of each row."
        )
    X, y = validate_data(
        estimator,
        X,
        y,
        reset=reset,
        dtype=dtype,
        ensure_all_finite=False,
        y_numeric=False,
    )
    Z, kept, drop_counts = check_embeddings(X, min_norm=min_norm, normalize=normalize)
    y_kept = np.asarray(y)[kept]
    identities, codes = encode_identities(y_kept)
    counts = np.bincount(codes, minlength=len(identities))
    small = counts < min_samples_per_identity
    excluded = identities[small]
    n_small_rows = int(counts[small].sum())
    if small.any():
        shown = ", ".join(repr(e) for e in excluded[:10].tolist())
        more = f" (and {len(excluded) - 10} more)" if len(excluded) > 10 else ""
        warnings.warn(
            f"Excluded {len(excluded)} identity(ies) with fewer than "
            f"{min_samples_per_identity} usable row(s) ({n_small_rows} row(s)): "
            f"{shown}{more}.",
            ExcludedIdentitiesWarning,
            stacklevel=2,
        )
        row_ok = ~small[codes]
        kept_idx = np.flatnonzero(kept)
        kept = np.zeros_like(kept)
        kept[kept_idx[row_ok]] = True
        Z, y_kept = Z[row_ok], y_kept[row_ok]
        identities, codes = encode_identities(y_kept)
        counts = np.bincount(codes, minlength=len(identities))
    if len(identities) < min_identities:
        raise ValueError(
            f"{type(estimator).__name__} needs at least {min_identities} identities "
            f"with at least {min_samples_per_identity} usable row(s) each; got "
            f"{len(identities)} identity(ies) from {int(np.asarray(y).shape[0])} "
            "sample(s)."
        )
    drop_report = {
        "n_input_rows": int(X.shape[0]),
        "n_kept_rows": int(Z.shape[0]),
        **drop_counts,
        "small_identity": n_small_rows,
        "excluded_identities": excluded.tolist(),
    }
    return IdentityData(
        X=Z,
        y=y_kept,
        codes=codes,
        identities=identities,
        counts=counts,
        kept=kept,
        drop_report=drop_report,
    )
