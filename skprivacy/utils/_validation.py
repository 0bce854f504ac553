# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shared input layer: cleaning, normalisation and identity encoding.

Every estimator in skprivacy goes through :func:`validate_identity_data` (with
identity labels) or :func:`check_embeddings` (without), so that the shared
preprocessing rules live in exactly one place.
"""

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.exceptions import DataConversionWarning

from skprivacy.exceptions import (
    DroppedRowsWarning,
    ExcludedIdentitiesWarning,
    NoAuditablePairsError,
)
from skprivacy.utils._constants import MIN_NORM
from skprivacy.utils._identity import group_by_identity
from skprivacy.utils._sklearn import validate_data

__all__ = [
    "MIN_NORM",
    "IdentityData",
    "check_embeddings",
    "check_binary_labels",
    "check_class_labels",
    "check_conditions",
    "check_identity_column",
    "check_identity_counts",
    "check_identity_labels",
    "check_magnitude",
    "check_no_text_columns",
    "check_scores",
    "encode_identities",
    "l2_normalize",
    "row_norms",
    "validate_audit_data",
    "validate_identity_data",
    "warning_texts",
]


def _show_rows(rows, limit=10):
    """Format row indices for an error message: the first ``limit`` and a count."""
    rows = np.asarray(rows).ravel()
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    more = f" (and {rows.size - limit} more)" if rows.size > limit else ""
    return f"{shown}{more}"


def _label_kind(value):
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return "str"
    if isinstance(value, (numbers.Number, np.number, np.bool_)):
        return "number"
    return type(value).__name__


def check_identity_labels(y, *, name="y", n_samples=None):
    """Validate identity labels and return them as a 1-D numpy array.

    The one rule for labels in skprivacy: every row has a label (no None, NaN,
    ``pd.NA`` or infinity), and all labels are of one kind, either all numbers
    (int, float, bool) or all strings. Mixed kinds (``[1, "a"]``) are refused
    rather than compared as strings, because ``1`` and ``"1"`` would silently
    become one identity; convert them first, e.g. with ``y.astype(str)``.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        Identity labels: list, ndarray, pandas Series, Categorical or extension
        array (e.g. ``string`` or ``Int64``). A column vector is flattened with
        a :class:`~sklearn.exceptions.DataConversionWarning`, as in
        scikit-learn.
    name : str, default="y"
        Name of the argument, used in error messages.
    n_samples : int, default=None
        If given, the required number of labels (the rows of ``X``).

    Returns
    -------
    y : ndarray of shape (n_samples,)
        The labels (object dtype for strings and pandas extension arrays).

    Raises
    ------
    ValueError
        If ``y`` is None, not 1-D, of the wrong length, has missing or
        infinite labels (the message lists the rows), or mixes label kinds.

    Examples
    --------
    >>> from skprivacy.utils import check_identity_labels
    >>> check_identity_labels(["a", "b", "a"])
    array(['a', 'b', 'a'], dtype='<U1')
    >>> check_identity_labels(["a", None, "b"])
    Traceback (most recent call last):
    ...
    ValueError: y has 1 missing label(s) (None, NaN or NA) at row(s) 1...
    """
    return _check_labels(y, name=name, n_samples=n_samples, noun="identity label")


def check_class_labels(y, *, name="labels", n_samples=None):
    """Validate class labels that are not identities (attributes, conditions).

    The rules of :func:`check_identity_labels`: every row has a label (no
    None, NaN, ``pd.NA`` or infinity) and all labels are of one kind (all
    numbers or all strings), with messages that speak of labels rather than
    identities.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    name : str, default="labels"
        Name of the argument, used in error messages.
    n_samples : int, default=None
        If given, the required number of labels (the rows of ``X``).

    Returns
    -------
    y : ndarray of shape (n_samples,)
        The labels.

    Raises
    ------
    ValueError
        If ``y`` is None, not 1-D, of the wrong length, has missing or
        infinite labels (the message lists the rows), or mixes label kinds.

    Examples
    --------
    >>> from skprivacy.utils import check_class_labels
    >>> check_class_labels(["smile", "neutral"]).tolist()
    ['smile', 'neutral']
    >>> check_class_labels([0, None], name="attribute")
    Traceback (most recent call last):
    ...
    ValueError: attribute has 1 missing label(s) (None, NaN or NA) at row(s) 1...
    """
    return _check_labels(y, name=name, n_samples=n_samples, noun="label")


def check_binary_labels(
    y,
    *,
    name="y_true",
    n_samples=None,
    positive="positive",
    negative="negative",
    require_both=True,
):
    """Validate 0/1 labels and return them as a boolean array.

    Every row needs a label (no None, NaN or ``pd.NA``), and every label must
    be 0 or 1 (``False`` or ``True``); other values, strings included, are
    refused rather than cast to bool (where ``"0"``, ``2`` or NaN would all
    count as positive).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels.
    name : str, default="y_true"
        Name of the argument, used in error messages.
    n_samples : int, default=None
        If given, the required number of labels.
    positive, negative : str, default="positive", "negative"
        What 1 and 0 stand for, used in error messages (e.g. "genuine pairs").
    require_both : bool, default=True
        Whether both values must occur.

    Returns
    -------
    y : ndarray of shape (n_samples,), dtype=bool
        ``True`` where the label is 1.

    Raises
    ------
    ValueError
        On a missing label (the message lists the rows), a value other than
        0/1, a wrong length, or (with ``require_both``) a missing class.

    Examples
    --------
    >>> from skprivacy.utils import check_binary_labels
    >>> check_binary_labels([1, 0, True]).tolist()
    [True, False, True]
    >>> check_binary_labels([1, 0, 2])
    Traceback (most recent call last):
    ...
    ValueError: y_true must hold 0 (negative) and 1 (positive) only (or False and True); got the value(s) 2 at row(s) 2.
    """
    y = _check_labels(
        y, name=name, n_samples=n_samples, noun="0/1 label", one_kind=False
    )
    if y.dtype.kind == "b":
        labels = y
    else:
        if y.dtype.kind in "iufc":
            is_zero, is_one = y == 0, y == 1
        else:  # strings, or objects judged one by one (a string is never 0/1)
            number = np.array(
                [_label_kind(v) == "number" for v in y.tolist()], dtype=bool
            )
            is_zero = number & np.array([v == 0 for v in y.tolist()], dtype=bool)
            is_one = number & np.array([v == 1 for v in y.tolist()], dtype=bool)
        odd = ~(is_zero | is_one)
        labels = is_one
        if odd.any():
            rows = np.flatnonzero(odd)
            values = list(
                dict.fromkeys(
                    repr(v) if isinstance(v, str) else str(v) for v in y[rows].tolist()
                )
            )[:5]
            raise ValueError(
                f"{name} must hold 0 ({negative}) and 1 ({positive}) only (or "
                f"False and True); got the value(s) {', '.join(values)} at row(s) "
                f"{_show_rows(rows)}."
            )
    if require_both and (labels.all() or not labels.any()):
        got = (
            "no row"
            if labels.size == 0
            else (f"only {positive} (1)" if labels.all() else f"only {negative} (0)")
        )
        raise ValueError(
            f"{name} must contain both {positive} (1) and {negative} (0); got {got}."
        )
    return np.asarray(labels, dtype=bool)


def _article(noun):
    return "an" if noun[0] in "aeiou" else "a"


def _list_labels(values):
    """Return a list of labels as an array, never turning numbers into text.

    ``np.asarray(["a", 1, float("nan")])`` is an array of strings (``"1"``,
    ``"nan"``) in which neither the mixed kinds nor the missing label can be
    seen any more; such a list is kept as objects.
    """
    array = np.asarray(values)
    if array.dtype.kind in "US" and array.ndim == 1:
        text = (str, bytes, np.str_, np.bytes_)
        if not all(isinstance(v, text) for v in values):
            array = np.empty(len(values), dtype=object)
            array[:] = list(values)
    return array


def _check_labels(y, *, name, n_samples, noun, one_kind=True):
    """Apply the label rules of :func:`check_identity_labels`, worded for ``noun``.

    ``one_kind=False`` skips the rule against mixing numbers and strings (for
    callers that check every value themselves).
    """
    if y is None:
        raise ValueError(f"{name} is None: {name} must hold the {noun} of each row.")
    if isinstance(y, (pd.Series, pd.Index)) or pd.api.types.is_extension_array_dtype(
        getattr(y, "dtype", None)
    ):
        series = pd.Series(y)
        # Missing values of extension arrays (pd.NA) are found here, before
        # numpy conversion turns them into objects no comparison can handle.
        na = series.isna().to_numpy()
        y = series.to_numpy(dtype=object) if na.any() else series.to_numpy()
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(
                f"{name} must be 1-D (one {noun} per row); got a DataFrame "
                f"with {y.shape[1]} columns."
            )
        y = y.iloc[:, 0].to_numpy(dtype=object)
    if np.isscalar(y):
        raise ValueError(
            f"{name} must be an array of {noun}s, one per row; got the scalar {y!r}."
        )
    try:
        if isinstance(y, (list, tuple)):
            y = _list_labels(y)
        y = np.asarray(y)
    except ValueError as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a 1-D array of {noun}s: {exc}") from None
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; "
            "it is flattened (pass it as shape (n_samples,) to avoid this).",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one {noun} per row); got an array of shape {y.shape}."
        )
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y.shape[0]} label(s) but X has {n_samples} row(s); "
            f"one {noun} per row of X is needed."
        )
    if y.dtype.kind == "O":
        missing = pd.isna(y)
    elif y.dtype.kind in "fc":
        missing = np.isnan(y)
    else:
        missing = np.zeros(y.shape[0], dtype=bool)
    if missing.any():
        rows = np.flatnonzero(missing)
        raise ValueError(
            f"{name} has {rows.size} missing label(s) (None, NaN or NA) at row(s) "
            f"{_show_rows(rows)}; every row needs {_article(noun)} {noun}. Drop those "
            "rows first."
        )
    if y.dtype.kind == "O":
        kinds = pd.api.types.infer_dtype(y, skipna=False)
        if one_kind and (kinds.startswith("mixed") or kinds == "unknown-array"):
            labels = np.array([_label_kind(v) for v in y], dtype=object)
            distinct = list(dict.fromkeys(labels.tolist()))
            if len(distinct) > 1:
                first = [int(np.flatnonzero(labels == k)[0]) for k in distinct]
                raise ValueError(
                    f"{name} mixes label types ({', '.join(distinct)}; first at "
                    f"row(s) {', '.join(map(str, first))}). {noun.capitalize()}s must be "
                    "all numbers or all strings; convert them to one type first, "
                    f"e.g. {name}.astype(str)."
                )
        if kinds in ("floating", "mixed-integer-float", "decimal"):
            missing = ~np.isfinite(y.astype(np.float64))
    elif y.dtype.kind == "f":
        missing = ~np.isfinite(y)
    if missing.any():
        rows = np.flatnonzero(missing)
        raise ValueError(
            f"{name} has {rows.size} infinite label(s) at row(s) {_show_rows(rows)}; "
            f"{noun}s must be finite."
        )
    return y


def check_identity_counts(counts, *, column="identity"):
    """Refuse identities that all have a single row (a row key, not identities).

    Parameters
    ----------
    counts : array-like of int
        Rows per identity, over the whole input.
    column : str, default="identity"
        Name of the identity column, used in the message.

    Raises
    ------
    ValueError
        If there are at least two rows and every identity has exactly one.

    Examples
    --------
    >>> from skprivacy.utils import check_identity_counts
    >>> check_identity_counts([3, 1, 2])
    >>> check_identity_counts([1, 1, 1], column="path")
    Traceback (most recent call last):
    ...
    ValueError: column 'path' does not look like identity labels: each of its 3 labels occurs on one row only...
    """
    counts = np.asarray(counts)
    if counts.size >= 2 and counts.max() == 1:
        raise ValueError(
            f"column {str(column)!r} does not look like identity labels: each of "
            f"its {counts.size} labels occurs on one row only, like a row key (a "
            "file name or an index). An identity needs at least two rows; name "
            "the identity column (--id-column / id_column=)."
        )


def check_identity_column(values, *, column="identity", require_repeats=True):
    """Refuse a column that does not look like identity labels.

    Two kinds of column are refused, each with a message naming it: numbers
    that are not whole (a continuous measurement such as an embedding
    coordinate, e.g. a feature column given as the identity column by
    mistake), and labels that each occur once (see
    :func:`check_identity_counts`). Missing labels are not judged here (the
    readers drop those rows with a warning).

    Parameters
    ----------
    values : array-like or Series of shape (n_rows,)
        The column.
    column : str, default="identity"
        Its name, used in the messages.
    require_repeats : bool, default=True
        Whether labels that all occur once are refused. Pass False for the
        leading rows of a streamed file (later rows may repeat them) and call
        :func:`check_identity_counts` on the counts of the whole file.

    Raises
    ------
    ValueError
        If the column holds non-whole numbers, or (with ``require_repeats``)
        every label occurs once.

    Examples
    --------
    >>> from skprivacy.utils import check_identity_column
    >>> check_identity_column(["a", "a", "b", "b"])
    >>> check_identity_column([0.12, -0.4, 0.33, 0.12], column="e1")
    Traceback (most recent call last):
    ...
    ValueError: column 'e1' does not look like identity labels: it holds numbers that are not whole...
    """
    series = pd.Series(values).dropna()
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("floating", "mixed-integer-float", "decimal"):
        numbers = series.to_numpy(dtype=np.float64)
        fractional = np.isfinite(numbers) & (numbers != np.round(numbers))
        if fractional.any():
            shown = ", ".join(f"{v:.4g}" for v in numbers[fractional][:3])
            raise ValueError(
                f"column {str(column)!r} does not look like identity labels: it "
                f"holds numbers that are not whole ({int(fractional.sum())} of "
                f"{numbers.size}, e.g. {shown}), like an embedding coordinate or "
                "another measurement. Name the identity column (--id-column / "
                "id_column=)."
            )
    if require_repeats:
        check_identity_counts(series.value_counts(sort=False).to_numpy(), column=column)


def check_scores(
    scores, *, name="scores", n_samples=None, allow_empty=False, allow_infinite=False
):
    """Validate a 1-D array of real scores: numeric, finite, of the right length.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores (similarities, membership scores, ...).
    name : str, default="scores"
        Name of the argument, used in error messages.
    n_samples : int, default=None
        If given, the required length.
    allow_empty : bool, default=False
        Whether an empty array is acceptable.
    allow_infinite : bool, default=False
        Whether ``inf`` and ``-inf`` are acceptable (scores that are only
        ranked); NaN is never acceptable.

    Returns
    -------
    scores : ndarray of shape (n_samples,), dtype=float64
        The scores.

    Raises
    ------
    ValueError
        If the scores are not 1-D, of the wrong length, empty, or contain NaN
        or infinity (the message lists the rows).
    TypeError
        If the scores are not numeric.

    Examples
    --------
    >>> from skprivacy.utils import check_scores
    >>> check_scores([0.5, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: scores has 1 non-finite value(s) (NaN or infinity) at row(s) 1...
    """
    if scores is None:
        raise ValueError(f"{name} is None; pass an array of scores.")
    arr = np.asarray(scores)
    if arr.dtype.kind not in "biuf":
        if arr.dtype.kind == "O":
            try:
                # None and pd.NA are missing scores (NaN), reported below.
                arr = np.where(pd.isna(arr), np.nan, arr).astype(np.float64)
            except (TypeError, ValueError):
                arr = None
        else:
            arr = None
        if arr is None:
            raise TypeError(
                f"{name} must be numeric; got an array of dtype "
                f"{np.asarray(scores).dtype}."
            )
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {arr.shape}.")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} value(s) but {n_samples} were expected "
            "(one per row of the other arguments)."
        )
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty; at least one score is needed.")
    bad = np.isnan(arr) if allow_infinite else ~np.isfinite(arr)
    if bad.any():
        rows = np.flatnonzero(bad)
        what = (
            "NaN value(s)"
            if allow_infinite
            else "non-finite value(s) (NaN or infinity)"
        )
        raise ValueError(
            f"{name} has {rows.size} {what} at row(s) {_show_rows(rows)}; drop "
            "those rows first."
        )
    return arr


#: Entry magnitudes whose squares and products float64 holds: beyond 1e150
#: squares overflow (1e308), below 1e-150 they underflow.
_MAX_ABS, _MIN_ABS = 1e150, 1e-150


def check_magnitude(X, *, name="X", advice=None):
    """Refuse a numeric array whose squared entries overflow or underflow float64.

    Methods that form products or squared distances of raw rows (no
    normalisation first) would otherwise return ``inf``, NaN or 0 without a
    word for entries near 1e200 or 1e-200. NaN entries are not judged here.

    Parameters
    ----------
    X : ndarray
        Numeric array.
    name : str, default="X"
        Name of the argument, used in the message.
    advice : str, default=None
        What to do instead (default: rescale ``name``, e.g. L2-normalise its
        rows).

    Raises
    ------
    ValueError
        If the largest absolute entry is above 1e150, or non-zero and below
        1e-150.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import check_magnitude
    >>> check_magnitude(np.array([[1.0, -2.0]]))
    >>> check_magnitude(np.array([[3e200, 4e200]]))
    Traceback (most recent call last):
    ...
    ValueError: X has entries up to 4e+200, beyond 1e+150: their squares overflow float64...
    """
    X = np.asarray(X)
    if X.size == 0 or X.dtype.kind not in "iuf":
        return
    with np.errstate(invalid="ignore"):
        top = float(np.nanmax(np.abs(X))) if not np.isnan(X).all() else 0.0
    advice = advice or (
        f"Rescale {name} first (e.g. L2-normalise its rows, which skprivacy's "
        "auditors do themselves)."
    )
    if top > _MAX_ABS:
        raise ValueError(
            f"{name} has entries up to {top:.3g}, beyond {_MAX_ABS:g}: their squares "
            f"overflow float64 (products and distances would be inf or NaN). {advice}"
        )
    if 0 < top < _MIN_ABS:
        raise ValueError(
            f"{name} has entries of magnitude at most {top:.3g}, below {_MIN_ABS:g}: "
            "their squares underflow float64 (products and distances would be 0). "
            f"{advice}"
        )


def row_norms(X):
    """Return the L2 norm of every row, without overflow or underflow.

    Each row is scaled by its largest absolute entry before squaring, so rows of
    norm 1e200 or 1e-200 get their exact norm where ``sqrt(sum(x**2))`` would
    give ``inf`` or 0. Rows with a NaN get NaN, rows with an infinite entry
    ``inf``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric matrix.

    Returns
    -------
    norms : ndarray of shape (n_samples,), dtype=float64
        The row norms.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import row_norms
    >>> row_norms(np.array([[3e200, 4e200], [3.0, 4.0]]))
    array([5.e+200, 5.e+000])
    """
    X = np.asarray(X)
    # Fast path: one pass with float64 squares; only rows whose squares over-
    # or underflow (norm outside ~[1e-150, 1e150]) are rescaled.
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    redo = ~np.isfinite(norms) | ((norms < 1e-150) & (norms > 0))
    if X.dtype.kind == "f":
        # Underflow to an exact 0: only zero-norm rows are inspected (a test of
        # every entry would be a second full pass over X).
        zero = np.flatnonzero(norms == 0)
        if zero.size:
            redo[zero] = np.any(X[zero] != 0, axis=1)
    if redo.any():
        big = X[redo].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            scale = np.abs(big).max(axis=1)
            finite_scale = np.isfinite(scale) & (scale > 0)
            safe = np.where(finite_scale, scale, 1.0)
            scaled = np.sqrt(np.sum((big / safe[:, None]) ** 2, axis=1)) * safe
        nan = np.isnan(big).any(axis=1)
        scaled = np.where(finite_scale, scaled, scale)
        scaled[nan] = np.nan
        norms[redo] = scaled
    return norms


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
        Rows with norm 0 are left at 0 (callers drop them first). The norms are
        computed without overflow (:func:`row_norms`), so rows of norm 1e200
        normalise correctly.
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
    if np.asarray(X).dtype.kind not in "biuf":
        raise TypeError(
            f"X must be numeric; got an array of dtype {np.asarray(X).dtype}."
        )
    X = np.array(X, dtype=np.result_type(X, np.float32), copy=copy)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got an array of shape {X.shape}.")
    norms = row_norms(X)
    positive = norms > 0
    if X.dtype == np.float64 or np.all(norms < np.finfo(X.dtype).max):
        np.divide(X, norms[:, None].astype(X.dtype), out=X, where=positive[:, None])
    else:
        # A float32 row of norm beyond float32's range: divide in float64.
        X[positive] = _divide_rows(X[positive], norms[positive])
    return X


def check_embeddings(
    X, *, min_norm=MIN_NORM, normalize=True, warn=True, allow_all_dropped=False
):
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
    allow_all_dropped : bool, default=False
        Return an empty ``Z`` instead of raising when every row is dropped
        (query rows, which get an uninformative answer rather than an error).

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
        If every row is dropped (unless ``allow_all_dropped``), or ``X`` is not
        a 2-D matrix with at least one row and one column.
    TypeError
        If ``X`` is not numeric.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import check_embeddings
    >>> X = np.array([[3.0, 4.0], [np.nan, 1.0], [0.0, 0.0]])
    >>> Z, kept, counts = check_embeddings(X, warn=False)
    >>> Z, kept, counts
    (array([[0.6, 0.8]]), array([ True, False, False]), {'non_finite': 1, 'low_norm': 1})
    """
    X, kept, drop_counts, norms = _clean_rows(
        X,
        min_norm=min_norm,
        warn=warn,
        allow_all_dropped=allow_all_dropped,
        stacklevel=4,
    )
    if normalize:
        # X is a fresh copy when rows were dropped: normalise it in place.
        X = _divide_rows(X, norms, out=None if kept.all() else X)
    return X, kept, drop_counts


def _clean_rows(X, *, min_norm, warn, allow_all_dropped, stacklevel):
    """:func:`check_embeddings` without the normalisation.

    Returns ``(X_kept, kept, drop_counts, norms)``: the retained rows as given
    (no copy when every row is kept) and their L2 norms, from one pass over
    ``X`` (a row is finite exactly when its norm is, see :func:`row_norms`).
    """
    check_no_text_columns(X)
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"X must be a numeric matrix of embeddings; got an array of dtype "
            f"{X.dtype}."
        )
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-D (n_samples, n_features); got an array of shape "
            f"{X.shape}. Reshape a single embedding with X.reshape(1, -1)."
        )
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(
            f"X has shape {X.shape}: at least one row and one feature are needed."
        )
    if X.dtype.kind in "biu":
        X = X.astype(np.float64)
    # Norms of every row in one pass over X, without copying the finite rows out
    # first (a full copy of a large X costs seconds on a busy machine), and
    # without overflow for huge entries. row_norms gives NaN or inf exactly for
    # rows with a NaN or infinite entry, so the norms are the finiteness test
    # too (no second pass).
    norms = row_norms(X)
    finite = np.isfinite(norms)
    norms[~finite] = 0.0
    low = finite & (norms <= min_norm)
    kept = finite & ~low
    drop_counts = {"non_finite": int((~finite).sum()), "low_norm": int(low.sum())}
    n_dropped = X.shape[0] - int(kept.sum())
    if not kept.any() and not allow_all_dropped:
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
            stacklevel=stacklevel,
        )
    if kept.all():
        return X, kept, drop_counts, norms
    return X[kept], kept, drop_counts, norms[kept]


def _divide_rows(X, norms, out=None):
    """``X / norms[:, None]`` in X's dtype, exact even when norms overflow it."""
    if X.dtype == np.float64 or np.all(norms < np.finfo(X.dtype).max):
        return np.divide(X, norms[:, None].astype(X.dtype), out=out)
    return np.divide(X.astype(np.float64), norms[:, None]).astype(X.dtype)


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

    Raises
    ------
    ValueError
        If a label is missing (None, NaN, ``pd.NA``) or the labels mix numbers
        and strings (see :func:`check_identity_labels`).

    Examples
    --------
    >>> from skprivacy.utils import encode_identities
    >>> encode_identities(["b", "a", "b"])
    (array(['a', 'b'], dtype=object), array([1, 0, 1]))
    """
    y = check_identity_labels(y)
    try:
        codes, identities = pd.factorize(y, sort=True)
    except TypeError:  # labels of mutually incomparable types cannot be sorted
        codes, identities = pd.factorize(y, sort=False)
    identities = np.asarray(identities)
    if identities.dtype.kind in "US":
        identities = identities.astype(object)
    return identities, codes.astype(np.intp)


def _who(estimator):
    """Return the estimator's name for messages ("The data" for a stand-in).

    Functions validate through a private stand-in estimator (a class whose
    name starts with "_"): its name means nothing to the user.
    """
    name = type(estimator).__name__
    return "The data" if name.startswith("_") else name


def _num_rows(X):
    """Return the number of rows of an array-like (None if it has none)."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else None
    try:
        return len(X)
    except TypeError:
        return None


@dataclass(frozen=True)
class IdentityData:
    """Validated, cleaned embeddings with their identity encoding.

    Returned by :func:`validate_identity_data`; estimators do not build it
    themselves.

    Parameters
    ----------
    X : ndarray of shape (n_kept, n_features)
        Retained rows: L2-normalised, unless ``normalize=False`` was requested
        (rows as given) or ``normalize="defer"`` (rows as given, with their
        norms in ``norms``).
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
    norms : ndarray of shape (n_kept,) or None, default=None
        With ``normalize="defer"``: the L2 norm of each row of ``X``, which is
        *not* normalised; consumers normalise only the rows they use, through
        :meth:`normalized_rows`. None when ``X`` is used as it is.

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
    norms: np.ndarray = None

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
        order, starts, _ = group_by_identity(self.codes, self.n_identities)
        return order, starts

    def normalized_rows(self, rows=None, dtype=None):
        """Return rows of ``X`` as the estimator uses them, C-contiguous.

        With deferred normalisation (``norms`` set) the rows are divided by
        their norms here, exactly as ``normalize=True`` would have done it, so
        an audit that needs a few identities out of many normalises only
        those rows.

        Parameters
        ----------
        rows : array-like of int or None, default=None
            Row indices (None: every row, in order; no copy when ``X`` is
            already normalised and of ``dtype``).
        dtype : dtype or None, default=None
            Output dtype; None keeps the dtype of ``X``. Rows are normalised in
            the dtype of ``X`` before conversion.

        Returns
        -------
        rows : ndarray of shape (n_rows, n_features)
            The rows.
        """
        X = self.X if rows is None else self.X[rows]
        if self.norms is not None:
            norms = self.norms if rows is None else self.norms[rows]
            # A gathered X is a fresh copy: normalise it in place.
            X = _divide_rows(X, norms, out=None if rows is None else X)
        return np.ascontiguousarray(X, dtype=dtype)


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
    y_name="y",
):
    """Validate, clean and encode ``(X, y)`` for an identity-level estimator.

    This is the shared preprocessing of every estimator: rows that are non-finite or
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
    normalize : bool or "defer", default=True
        Whether to L2-normalise retained rows. ``"defer"`` keeps the rows as
        given and returns their norms in ``data.norms`` (no normalised copy
        of ``X``): for estimators that normalise only the rows they use
        (:meth:`IdentityData.normalized_rows`) or fold the norms into a
        weighted reduction.
    min_norm : float, default=1e-6
        Norm threshold below which rows are dropped.
    dtype : dtype, default=np.float64
        Working dtype.
    y_name : str, default="y"
        Name of the labels' argument in error messages (e.g. ``"ids"`` for a
        function whose labels are passed as ``ids``).

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
            f"{_who(estimator)} requires y to be passed, but the target y is "
            "None: y must hold the identity label of each row."
        )
    y = check_identity_labels(y, name=y_name, n_samples=_num_rows(X))
    if _num_rows(X) == 0:
        raise ValueError(
            f"X is empty (shape {getattr(X, 'shape', (0,))}): at least one row of "
            "embeddings is needed."
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
    if isinstance(normalize, str) and normalize == "defer":
        Z, kept, drop_counts, norms = _clean_rows(
            X, min_norm=min_norm, warn=True, allow_all_dropped=False, stacklevel=3
        )
    else:
        Z, kept, drop_counts = check_embeddings(
            X, min_norm=min_norm, normalize=normalize
        )
        norms = None
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
        if norms is not None:
            norms = norms[row_ok]
        identities, codes = encode_identities(y_kept)
        counts = np.bincount(codes, minlength=len(identities))
    if len(identities) < min_identities:
        raise ValueError(
            f"{_who(estimator)} needs at least {min_identities} identities "
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
        norms=norms,
    )


def check_conditions(conditions, table_pairs, input_info=None):
    """Check the conditions of a multi-condition audit and its Table I prefix.

    Parameters
    ----------
    conditions : dict of str to (X, ids)
        Non-empty; each name a non-empty string, each value a pair.
    table_pairs : int
        At least 1.
    input_info : dict or None, default=None
        Per-condition input descriptions: only names of ``conditions``.

    Raises
    ------
    TypeError
        If ``conditions`` is not a dict or a value is not a pair.
    ValueError
        For an empty ``conditions``, a bad name, ``table_pairs`` or
        ``input_info`` key.

    Examples
    --------
    >>> from skprivacy.utils import check_conditions
    >>> check_conditions({"a": ([[0.0]], [0])}, 100)
    >>> check_conditions({"a": ([[0.0]], [0])}, 0)
    Traceback (most recent call last):
    ...
    ValueError: table_pairs must be an integer >= 1; got 0.
    """
    if not isinstance(conditions, dict):
        raise TypeError(
            "conditions must be a dict {name: (X, ids)}; got "
            f"{type(conditions).__name__}."
        )
    if not conditions:
        raise ValueError("conditions is empty; give at least one {name: (X, ids)}.")
    for name, value in conditions.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(
                f"condition names must be non-empty strings; got {name!r}."
            )
        if not isinstance(value, tuple | list) or len(value) != 2:
            size = f" of length {len(value)}" if isinstance(value, tuple | list) else ""
            raise TypeError(
                f"conditions[{name!r}] must be a pair (X, ids); got "
                f"{type(value).__name__}{size}."
            )
    integer = isinstance(table_pairs, int | np.integer) and not isinstance(
        table_pairs, bool
    )
    if not integer or table_pairs < 1:
        raise ValueError(f"table_pairs must be an integer >= 1; got {table_pairs!r}.")
    unknown = set(input_info or {}) - set(conditions)
    if unknown:
        raise ValueError(f"input_info names unknown conditions {sorted(unknown)}.")


class _Input(BaseEstimator):
    """Stand-in estimator so the input layer can validate an audit's data once."""


def validate_audit_data(X, y):
    """Validate an audit's data once: the cleaned rows every estimator gets.

    Returns the :class:`IdentityData`, what cleaning did (rows and
    identities before and after, ``n_features``, ``dropped_rows`` by reason,
    ``excluded_identities``) and the warnings raised (:func:`warning_texts`).
    A :class:`~skprivacy.exceptions.NoAuditablePairsError` says when fewer
    than two identities keep two usable rows.
    """
    n_rows = int(np.asarray(y).shape[0]) if np.ndim(y) else 0
    n_ids = len(pd.unique(pd.Series(np.asarray(y, dtype=object).reshape(-1))))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        data = validate_identity_data(_Input(), X, y, min_identities=0)
    if data.n_identities < 2:
        raise NoAuditablePairsError(
            f"no auditable identity pairs: {data.n_identities} of {n_ids} identities "
            f"have at least 2 usable rows ({n_rows} rows before cleaning, "
            f"{data.X.shape[0]} after)"
        )
    drops = data.drop_report
    cleaning = {
        "n_rows_before": n_rows,
        "n_rows_after": int(data.X.shape[0]),
        "n_identities_before": n_ids,
        "n_identities_after": data.n_identities,
        "n_features": int(data.X.shape[1]),
        "dropped_rows": {
            k: drops.get(k, 0) for k in ("non_finite", "low_norm", "small_identity")
        },
        "excluded_identities": drops.get("excluded_identities", []),
    }
    return data, cleaning, warning_texts(record)


def warning_texts(record):
    """Return recorded warnings as ``"Category: message"`` texts (not deprecations)."""
    return [
        f"{w.category.__name__}: {w.message}"
        for w in record
        if not issubclass(w.category, DeprecationWarning)
    ]
