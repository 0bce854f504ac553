# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cross-fitted erasure: every identity transformed by an eraser that never saw it."""

from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import GroupKFold

from skprivacy.utils import check_identity_labels
from skprivacy.utils._sklearn import HasMethods, Interval, validate_params

__all__ = ["cross_fit_transform"]


def _n_rows(X):
    """Return the number of rows of an array, DataFrame or list of rows."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape):
        return int(shape[0])
    if shape is not None:
        raise ValueError("X must be a matrix of rows; got a scalar.")
    return len(X)


def _take_rows(X, rows):
    """Rows of an array or DataFrame, by position."""
    if isinstance(X, (pd.DataFrame, pd.Series)):
        return X.iloc[rows]
    return np.asarray(X)[rows]


def _identity_splits(X, y, cv=5, groups=None):
    """Identity-disjoint folds of ``(X, y)``, checked.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Rows (only their number is used).
    y : array-like of shape (n_samples,)
        Identity labels.
    cv : int, cross-validation generator or iterable, default=5
        An int gives ``GroupKFold(n_splits=cv)`` over the identities; a
        splitter is called as ``cv.split(X, y, groups)``; an iterable yields
        ``(train, test)`` index arrays.
    groups : array-like of shape (n_samples,), default=None
        The units that must never be split (default: ``y``).

    Returns
    -------
    splits : list of (ndarray, ndarray)
        ``(train, test)`` row positions. The test folds partition the rows
        and no group has rows on both sides of any split.

    Raises
    ------
    ValueError
        If a split puts one group on both sides, or the test folds are not a
        partition of the rows.
    """
    n = _n_rows(X)
    y = check_identity_labels(y, n_samples=n)
    groups = (
        y
        if groups is None
        else check_identity_labels(groups, name="groups", n_samples=n)
    )
    if cv is None:
        cv = 5
    if isinstance(cv, Integral):
        n_groups = pd.unique(groups).size
        if cv > n_groups:
            raise ValueError(
                f"cv={cv} identity folds need at least {cv} identities; got "
                f"{n_groups}. Use fewer folds."
            )
        splits = GroupKFold(n_splits=cv).split(np.zeros((n, 1)), y, groups)
    elif hasattr(cv, "split"):
        splits = cv.split(np.zeros((n, 1)), y, groups)
    else:
        splits = cv
    splits = [
        (np.asarray(tr, dtype=np.intp), np.asarray(te, dtype=np.intp))
        for tr, te in splits
    ]
    seen = np.zeros(n, dtype=np.intp)
    for f, (tr, te) in enumerate(splits):
        both = np.intersect1d(pd.unique(groups[tr]), pd.unique(groups[te]))
        if both.size:
            raise ValueError(
                f"Fold {f} of the cross-validation splits {both.size} identity(ies) "
                f"between its training and test rows (e.g. {both[0]!r}); an eraser "
                "fitted on an identity would then transform that identity's rows "
                "in-sample. Use an identity-disjoint splitter such as "
                "GroupKFold with groups=ids, or pass cv as an int."
            )
        np.add.at(seen, te, 1)
    if not np.all(seen == 1):
        missing, repeated = int((seen == 0).sum()), int((seen > 1).sum())
        raise ValueError(
            "The test folds must partition the rows (every row transformed "
            f"exactly once); {missing} row(s) are in no test fold and {repeated} "
            "in several."
        )
    return splits


def _fit_transform_fold(eraser, X, y, train, test, fold, n_folds):
    est = clone(eraser)
    y_train = y[train]
    try:
        est.fit(_take_rows(X, train), y_train)
    except ValueError as exc:
        raise ValueError(
            f"Fitting {type(eraser).__name__} on fold {fold + 1} of {n_folds} "
            f"({pd.unique(y_train).size} training identities) failed: {exc}"
        ) from exc
    return est.transform(_take_rows(X, test))


def _assemble(outputs, splits, X, n):
    """Put the folds' outputs back in the original row order."""
    test = np.concatenate([te for _, te in splits])
    inverse = np.empty_like(test)
    inverse[test] = np.arange(test.size)
    if isinstance(outputs[0], pd.DataFrame):
        out = pd.concat(outputs, axis=0).iloc[inverse]
        out.index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(n)
        return out
    arrays = [np.asarray(o) for o in outputs]
    dtype = np.result_type(*arrays)
    out = np.empty((n,) + arrays[0].shape[1:], dtype=dtype)
    for (_, te), a in zip(splits, arrays):
        out[te] = a
    return out


def _cross_fit(eraser, X, y, splits, n_jobs=None):
    """Cross-fitted output of ``eraser`` over precomputed identity splits."""
    n = _n_rows(X)
    y = np.asarray(y)
    outputs = Parallel(n_jobs=n_jobs)(
        delayed(_fit_transform_fold)(eraser, X, y, tr, te, f, len(splits))
        for f, (tr, te) in enumerate(splits)
    )
    return _assemble(outputs, splits, X, n)


@validate_params(
    {
        "eraser": [HasMethods(["fit", "transform"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "cv": [Interval(Integral, 2, None, closed="left"), "cv_object"],
        "groups": ["array-like", None],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=False,
)
def cross_fit_transform(eraser, X, y, *, cv=5, groups=None, n_jobs=None):
    """Transform every identity with an eraser fitted on the *other* identities.

    The :func:`~sklearn.model_selection.cross_val_predict` of erasers: the
    identities are split into folds, and each fold's rows are transformed by
    a clone of ``eraser`` fitted on the rows of the other folds. No row is
    transformed by an eraser that saw its identity, so an audit of the output
    measures what the eraser does to *new* people, which is how it is used.
    An eraser fitted and audited on the same identities removes exactly their
    mean differences, and mean-based audits of its output then see nothing
    however re-identifiable the rows remain.

    Read more in the :ref:`User Guide <cross_fit>`.

    Parameters
    ----------
    eraser : estimator
        Any transformer fitted as ``fit(X, y)`` with identity labels ``y``:
        :class:`ISP`, :class:`LEACE`, :class:`INLP`, or a
        :class:`~sklearn.pipeline.Pipeline` of them (``y`` reaches every step).
    X : array-like or DataFrame of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity labels (the eraser's ``y``).
    cv : int, cross-validation generator or iterable, default=5
        An int gives ``GroupKFold(n_splits=cv)`` over ``groups``; a splitter
        is called as ``cv.split(X, y, groups)``; an iterable yields
        ``(train, test)`` index arrays. The test folds must partition the
        rows, and a split that puts one identity on both sides raises.
    groups : array-like of shape (n_samples,), default=None
        The units folds keep whole; default ``y``. Pass coarser groups (e.g.
        a person with several label spellings) to keep them together.
    n_jobs : int, default=None
        Folds fitted in parallel through joblib.

    Returns
    -------
    X_cross : ndarray or DataFrame of shape (n_samples, n_output_features)
        The transformed rows in the original order, in the container and
        dtype the eraser's ``transform`` returns (a DataFrame with
        ``set_output(transform="pandas")``, indexed like ``X`` when ``X`` is
        one).

    Raises
    ------
    ValueError
        If a split puts one identity in both its training and test rows, the
        test folds do not partition the rows, there are fewer identities than
        folds, or a fold's eraser cannot be fitted (the message names the
        fold and its number of training identities; e.g. ``n_components``
        above ``n_training_identities - 1`` for :class:`ISP`).

    See Also
    --------
    select_rank : The smallest rank meeting a leakage target, on cross-fitted
        output.

    Notes
    -----
    With ``K`` folds each eraser sees a share ``(K - 1) / K`` of the
    identities, so it estimates fewer directions than one fitted on all
    (``ISP`` can remove at most ``m_train - 1``). The output of different
    folds comes from different erasers: compare rows within a fold when the
    comparison must match a single deployed eraser (as :func:`select_rank`
    does).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import ISP, cross_fit_transform
    >>> X, ids = make_identity_embeddings(12, 5, 16, random_state=0)
    >>> Z = cross_fit_transform(ISP(n_components=4), X, ids, cv=3)
    >>> Z.shape
    (60, 16)
    """
    splits = _identity_splits(X, y, cv=cv, groups=groups)
    y = check_identity_labels(y, n_samples=_n_rows(X))
    return _cross_fit(eraser, X, y, splits, n_jobs=n_jobs)
