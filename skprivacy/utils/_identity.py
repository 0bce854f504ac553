# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-identity reductions: the one implementation of sums and row grouping."""

import numpy as np
from scipy import sparse

__all__ = ["group_by_identity", "identity_sums"]


def _check_codes(codes, n_identities):
    codes = np.asarray(codes)
    if codes.ndim != 1 or (codes.size and codes.dtype.kind not in "iu"):
        raise ValueError(
            "codes must be a 1-D array of integer identity codes; got an array of "
            f"shape {codes.shape} and dtype {codes.dtype}."
        )
    if n_identities is None:
        n_identities = int(codes.max()) + 1 if codes.size else 0
    if codes.size and (codes.min() < 0 or codes.max() >= n_identities):
        raise ValueError(
            f"codes must lie in [0, n_identities={n_identities}); got values from "
            f"{int(codes.min())} to {int(codes.max())}."
        )
    return codes.astype(np.intp, copy=False), int(n_identities)


def identity_sums(X, codes, n_identities=None, *, dtype=None, weights=None):
    """Sum the rows of each identity with one sparse indicator product.

    One vectorised pass over ``X`` whatever the row order (no sort, no copy of
    ``X``), which is why every per-identity mean, prototype and scatter in
    skprivacy goes through here.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or (n_samples,)
        Values to sum; a 1-D array is summed as a single column.
    codes : array-like of shape (n_samples,)
        Integer identity code of each row, in ``[0, n_identities)``.
    n_identities : int, default=None
        Number of identities (rows of the result); ``max(codes) + 1`` if None.
    dtype : dtype, default=None
        Accumulation dtype; the dtype of ``X`` (at least float32) if None.
    weights : array-like of shape (n_samples,), default=None
        Row weights: ``sums[i]`` is then the weighted sum
        ``sum_j weights[j] X[j]`` over the rows with code ``i``, in the same
        single pass (e.g. ``1 / norms`` for sums of L2-normalised rows without
        normalising ``X``).

    Returns
    -------
    sums : ndarray of shape (n_identities, n_features) or (n_identities,)
        ``sums[i]`` is the sum of the rows with code ``i`` (zero if none).

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import identity_sums
    >>> identity_sums(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), [1, 0, 1])
    array([[3., 4.],
           [6., 8.]])
    """
    X = np.asarray(X)
    codes, n_identities = _check_codes(codes, n_identities)
    if X.shape[0] != codes.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} row(s) but codes has {codes.shape[0]} entries."
        )
    if dtype is None:
        dtype = np.result_type(X.dtype, np.float32)
    n = codes.shape[0]
    if weights is None:
        values = np.ones(n, dtype=dtype)
    else:
        values = np.asarray(weights, dtype=dtype).reshape(-1)
        if values.shape[0] != n:
            raise ValueError(
                f"weights has {values.shape[0]} entries but codes has {n}."
            )
    indicator = sparse.csr_array(
        (values, (codes, np.arange(n))), shape=(n_identities, n)
    )
    return np.asarray(indicator @ X.astype(dtype, copy=False))


def group_by_identity(codes, n_identities=None):
    """Order rows so that each identity's rows are contiguous.

    Parameters
    ----------
    codes : array-like of shape (n_samples,)
        Integer identity code of each row, in ``[0, n_identities)``.
    n_identities : int, default=None
        Number of identities; ``max(codes) + 1`` if None.

    Returns
    -------
    order : ndarray of shape (n_samples,)
        A stable permutation: ``order[starts[i]:starts[i + 1]]`` are the rows of
        identity ``i``, in their input order.
    starts : ndarray of shape (n_identities + 1,)
        Offsets of each identity's block in ``order``.
    counts : ndarray of shape (n_identities,)
        Rows per identity.

    Examples
    --------
    >>> from skprivacy.utils import group_by_identity
    >>> order, starts, counts = group_by_identity([1, 0, 1, 0, 2])
    >>> order.tolist(), starts.tolist(), counts.tolist()
    ([1, 3, 0, 2, 4], [0, 2, 4, 5], [2, 2, 1])
    """
    codes, n_identities = _check_codes(codes, n_identities)
    counts = np.bincount(codes, minlength=n_identities)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
    if codes.size < 2 or np.all(codes[1:] >= codes[:-1]):
        order = np.arange(codes.size, dtype=np.intp)  # already grouped
    else:
        order = np.argsort(codes, kind="stable")
    return order, starts, counts
