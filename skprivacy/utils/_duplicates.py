# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact and near-duplicate rows of an embedding matrix.

Two rows are near-duplicates when their directions almost coincide: the
cosine distance of the L2-normalised rows is at most a tolerance. The search
is a band join: rows are sorted by their projection on one direction, and
only rows whose projections lie within the largest distance a near-duplicate
can have are compared, by blocked matrix products of bounded memory.
"""

import numbers

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from skprivacy.utils._constants import DUPLICATE_TOL, MIN_NORM
from skprivacy.utils._threads import map_blas_threads
from skprivacy.utils._validation import (
    _clean_rows,
    _divide_rows,
    check_identity_labels,
    encode_identities,
)

__all__ = ["describe_duplicates", "duplicate_groups", "near_duplicates_of"]

# Rows per block of the band join, and the largest number of columns one
# product covers: a block product holds at most _BLOCK * _COLUMNS float64
# values (4 MB).
_BLOCK = 128
_COLUMNS = 4096


def _check_tol(tol):
    if (
        not isinstance(tol, numbers.Real)
        or isinstance(tol, bool)
        or not np.isfinite(tol)
        or not 0 <= tol < 2
    ):
        raise ValueError(
            f"tol must be a real number in [0, 2) (a cosine distance); got {tol!r}."
        )
    return float(tol)


def _unit_rows(X):
    """Return the usable rows of ``X`` L2-normalised in float64, and which rows."""
    X, kept, _, norms = _clean_rows(
        X, min_norm=MIN_NORM, warn=False, allow_all_dropped=True, stacklevel=4
    )
    Z = _divide_rows(np.asarray(X, dtype=np.float64), norms)
    return np.ascontiguousarray(Z), kept


def _sort_direction(Z):
    """Return a unit direction along which the rows of ``Z`` spread widely.

    The leading principal axis of (an evenly spaced sample of) the rows, by a
    few power iterations started from the row farthest from the mean. Only the
    speed of the search depends on it, never its result: any unit direction
    gives a correct band join.
    """
    d = Z.shape[1]
    step = max(1, Z.shape[0] // 4096)
    C = Z[::step] - Z[::step].mean(axis=0)
    v = C[np.argmax(np.einsum("ij,ij->i", C, C))] if C.size else np.zeros(d)
    for _ in range(8):
        norm = np.linalg.norm(v)
        if not norm > 0:
            break
        v = C.T @ (C @ (v / norm))
    norm = np.linalg.norm(v)
    if not norm > 0:
        v, norm = np.eye(1, d).ravel(), 1.0
    return v / norm


def _half_distances(A, B):
    """Return ``||a - b||^2 / 2`` for paired rows (cosine distance of unit rows)."""
    out = np.empty(A.shape[0])
    for start in range(0, A.shape[0], _BLOCK):
        diff = A[start : start + _BLOCK] - B[start : start + _BLOCK]
        out[start : start + _BLOCK] = 0.5 * np.einsum("ij,ij->i", diff, diff)
    return out


def _band_join(Zq, pq, Zr, pr, tol, *, self_join):
    """Return ``(i, j)`` index arrays of near-duplicate query/reference rows.

    ``Zq``/``Zr`` are unit rows sorted by their projections ``pq``/``pr``
    (ascending) on one unit direction. With ``self_join`` the query and the
    reference are the same rows and only pairs ``i < j`` are returned. Blocks
    of query rows run on the BLAS threads, each product single-threaded.
    """
    d = Zq.shape[1]
    # |p_i - p_j| = |<a - b, v>| <= ||a - b|| = sqrt(2 dist): rows farther apart
    # in projection cannot be near-duplicates. The margins cover rounding.
    reach = np.sqrt(2.0 * tol) + 1e-9
    gram_margin = 1e-9 + 4.0 * d * np.finfo(np.float64).eps

    def join_block(a):
        b = min(a + _BLOCK, Zq.shape[0])
        lo = a if self_join else np.searchsorted(pr, pq[a] - reach, side="left")
        hi = np.searchsorted(pr, pq[b - 1] + reach, side="right")
        found_i, found_j = [], []
        for c0 in range(lo, hi, _COLUMNS):
            c1 = min(c0 + _COLUMNS, hi)
            G = Zq[a:b] @ Zr[c0:c1].T
            ii, jj = np.nonzero(G >= 1.0 - tol - gram_margin)
            ii += a
            jj += c0
            if self_join:
                upper = jj > ii
                ii, jj = ii[upper], jj[upper]
            if ii.size:
                # Decide on the exact distance (the product only shortlists).
                exact = _half_distances(Zq[ii], Zr[jj]) <= tol
                found_i.append(ii[exact])
                found_j.append(jj[exact])
        return found_i, found_j

    found = map_blas_threads(join_block, range(0, Zq.shape[0], _BLOCK))
    ii = [i for block in found for i in block[0]]
    jj = [j for block in found for j in block[1]]
    if not ii:
        return np.empty(0, np.intp), np.empty(0, np.intp)
    return np.concatenate(ii), np.concatenate(jj)


def duplicate_groups(X, y=None, *, tol=DUPLICATE_TOL):
    r"""Group the exact and near-duplicate rows of an embedding matrix.

    Rows are compared by direction: two rows are near-duplicates when the
    cosine distance of their L2-normalised versions is at most ``tol``.
    A duplicate group is a connected component of that relation, so a chain
    of near-duplicates forms one group. Exact copies, copies cast to another
    dtype, rescaled copies and copies with tiny noise or rounding all fall in
    one group at the default tolerance.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings of any numeric dtype. Rows with a non-finite entry or an L2
        norm of at most 1e-6 have no direction: they belong to no group.
    y : array-like of shape (n_samples,), default=None
        Identity labels. When given, groups whose rows carry more than one
        identity (the same image under two labels: label noise) are counted.
    tol : float, default=1e-6
        Largest cosine distance ``1 - cos(a, b)`` between near-duplicates, in
        ``[0, 2)``; 0 finds rows of exactly equal direction only.

    Returns
    -------
    groups : ndarray of shape (n_samples,), dtype=intp
        Duplicate group of each row, numbered from 0 in order of each group's
        first row; -1 for rows that duplicate no other row.
    counts : dict
        ``n_rows``: rows in a duplicate group; ``n_groups``: number of groups;
        ``n_cross_identity_groups``: groups spanning more than one identity
        (None when ``y`` is None).

    Raises
    ------
    ValueError
        If ``X`` is not a 2-D matrix, ``y`` does not hold one valid label per
        row, or ``tol`` is outside ``[0, 2)``.
    TypeError
        If ``X`` is not numeric.

    See Also
    --------
    near_duplicates_of : Which query rows near-duplicate a reference row.

    Notes
    -----
    For unit vectors :math:`\hat a, \hat b`, the cosine distance is
    :math:`1 - \hat a^\top \hat b = \lVert \hat a - \hat b\rVert^2 / 2`.
    The default ``tol = 1e-6`` holds, with orders of magnitude to spare,
    every copy made by a float32 cast (relative error about 6e-8 per entry,
    distance about 1e-15), by any rescaling (removed by the normalisation),
    by adding noise of 1e-9 per entry or rounding a unit-norm row to 6
    decimals (error at most :math:`5\cdot10^{-7}\sqrt{d}` in norm, distance
    at most :math:`1.25\cdot10^{-13} d`, i.e. 6.4e-11 at d = 512); the
    closest distinct images of the bundled face data sets lie at cosine
    distances above 1e-3.

    The search sorts the rows by their projection :math:`p = \hat a^\top v`
    on one unit direction :math:`v` (the leading principal axis of the rows).
    Since :math:`|p_a - p_b| \le \lVert \hat a - \hat b\rVert =
    \sqrt{2\,(1 - \hat a^\top \hat b)}`, only rows within
    :math:`\sqrt{2\,\mathrm{tol}}` in projection are compared, block by
    block through matrix products whose size is bounded (at most
    128 × 4096 values at a time); each shortlisted pair is then decided on
    its exact distance :math:`\lVert \hat a - \hat b\rVert^2 / 2`. The
    result does not depend on the direction, only the time does.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import duplicate_groups
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 0.0], [0.6, 0.8]])
    >>> groups, counts = duplicate_groups(X, y=["a", "b", "b", "c"])
    >>> groups
    array([ 0, -1,  0, -1])
    >>> counts
    {'n_rows': 2, 'n_groups': 1, 'n_cross_identity_groups': 1}
    """
    tol = _check_tol(tol)
    Z, kept = _unit_rows(X)
    n = kept.shape[0]
    if y is not None:
        y = check_identity_labels(y, n_samples=n)
    rows = np.flatnonzero(kept)
    groups = np.full(n, -1, dtype=np.intp)
    if Z.shape[0] > 1:
        p = Z @ _sort_direction(Z)
        order = np.argsort(p, kind="stable")
        Zs, ps = Z[order], p[order]
        ii, jj = _band_join(Zs, ps, Zs, ps, tol, self_join=True)
        if ii.size:
            m = Z.shape[0]
            graph = sparse.coo_matrix(
                (np.ones(ii.size, dtype=np.int8), (order[ii], order[jj])), shape=(m, m)
            )
            _, component = connected_components(graph, directed=False)
            sizes = np.bincount(component)
            in_group = sizes[component] > 1
            # Number groups in order of their first row.
            first, local = np.unique(component[in_group], return_index=True)
            rank = np.empty(component.max() + 1, dtype=np.intp)
            rank[first[np.argsort(local, kind="stable")]] = np.arange(first.size)
            groups[rows[in_group]] = rank[component[in_group]]
    in_group = groups >= 0
    n_groups = int(groups.max()) + 1 if in_group.any() else 0
    n_cross = None
    if y is not None:
        _, label_codes = encode_identities(y[in_group])
        g = groups[in_group]
        # A group spans several identities when its labels are not all equal.
        lo = np.full(n_groups, np.iinfo(np.intp).max)
        hi = np.full(n_groups, -1)
        np.minimum.at(lo, g, label_codes)
        np.maximum.at(hi, g, label_codes)
        n_cross = int(np.count_nonzero(lo != hi))
    counts = {
        "n_rows": int(in_group.sum()),
        "n_groups": n_groups,
        "n_cross_identity_groups": n_cross,
    }
    return groups, counts


def near_duplicates_of(X_query, X_ref, *, tol=DUPLICATE_TOL):
    r"""Flag the query rows that near-duplicate any reference row.

    The test of :func:`duplicate_groups` across two matrices: a query row is
    flagged when the cosine distance between its L2-normalised version and
    that of some reference row is at most ``tol``. Use it to find held-out
    rows that are copies (exact, recast, rescaled, rounded or slightly
    perturbed) of training rows.

    Parameters
    ----------
    X_query : array-like of shape (n_queries, n_features)
        Rows to check, any numeric dtype.
    X_ref : array-like of shape (n_references, n_features)
        Reference rows, any numeric dtype. Rows with a non-finite entry or an
        L2 norm of at most 1e-6 have no direction and match nothing (nor are
        such query rows flagged).
    tol : float, default=1e-6
        Largest cosine distance ``1 - cos(a, b)`` between near-duplicates, in
        ``[0, 2)``.

    Returns
    -------
    mask : ndarray of shape (n_queries,), dtype=bool
        True for query rows within ``tol`` of a reference row.

    Raises
    ------
    ValueError
        If the inputs are not 2-D matrices with the same number of columns, or
        ``tol`` is outside ``[0, 2)``.
    TypeError
        If an input is not numeric.

    See Also
    --------
    duplicate_groups : Duplicate groups within one matrix.

    Notes
    -----
    The same band join as :func:`duplicate_groups`: both matrices are sorted
    by their projection on one unit direction, each block of query rows is
    compared by one bounded matrix product with the reference rows whose
    projections lie within :math:`\sqrt{2\,\mathrm{tol}}` of the block's,
    and shortlisted pairs are decided on the exact distance.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import near_duplicates_of
    >>> X_ref = np.array([[0.6, 0.8], [1.0, 0.0]])
    >>> X_query = np.array([[1.8, 2.4], [0.0, 1.0], [np.float32(0.6), 0.8]])
    >>> near_duplicates_of(X_query, X_ref)
    array([ True, False,  True])
    """
    tol = _check_tol(tol)
    Zq, kept_q = _unit_rows(X_query)
    Zr, _ = _unit_rows(X_ref)
    if Zq.shape[1] != Zr.shape[1]:
        raise ValueError(
            f"X_query has {Zq.shape[1]} feature(s) but X_ref has {Zr.shape[1]}; "
            "both must hold embeddings of the same dimension."
        )
    mask = np.zeros(kept_q.shape[0], dtype=bool)
    if Zq.shape[0] == 0 or Zr.shape[0] == 0:
        return mask
    v = _sort_direction(Zr)
    pq, pr = Zq @ v, Zr @ v
    order_q = np.argsort(pq, kind="stable")
    order_r = np.argsort(pr, kind="stable")
    ii, _ = _band_join(
        Zq[order_q], pq[order_q], Zr[order_r], pr[order_r], tol, self_join=False
    )
    hit = np.zeros(Zq.shape[0], dtype=bool)
    hit[order_q[ii]] = True
    mask[np.flatnonzero(kept_q)] = hit
    return mask


def describe_duplicates(groups, counts, y, positions, *, listed=100):
    """Return the duplicates record of a report: counts, groups and a sentence.

    Parameters
    ----------
    groups, counts : ndarray, dict
        The output of :func:`duplicate_groups` on the rows.
    y : ndarray of shape (n_samples,)
        Identity label of each row.
    positions : ndarray of shape (n_samples,)
        Position of each row in the caller's data (e.g. before cleaning).
    listed : int, default=100
        Groups listed (the first ones).

    Returns
    -------
    record : dict
        ``counts`` with ``tolerance``, ``groups`` (each with its ``rows``, as
        positions, and ``identities``) and ``text``, one sentence naming them.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import duplicate_groups
    >>> from skprivacy.utils._duplicates import describe_duplicates
    >>> X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    >>> y = np.array(["a", "b", "b"])
    >>> record = describe_duplicates(*duplicate_groups(X, y), y, np.arange(3))
    >>> record["n_groups"], record["n_cross_identity_groups"], record["groups"]
    (1, 1, [{'rows': [0, 1], 'identities': ['a', 'b']}])
    """
    shown = [
        {
            "rows": positions[groups == g].tolist(),
            "identities": list(dict.fromkeys(y[groups == g].tolist())),
        }
        for g in range(min(counts["n_groups"], listed))
    ]
    within = f"within cosine distance {DUPLICATE_TOL:g} after L2 normalisation"
    if not counts["n_groups"]:
        text = f"No duplicate rows ({within})."
    else:
        names = "; ".join(
            f"{', '.join(map(str, g['rows']))} ({', '.join(map(str, g['identities']))})"
            for g in shown
        )
        more = counts["n_groups"] - len(shown)
        text = (
            f"{counts['n_groups']} groups of duplicate rows ({counts['n_rows']} rows, "
            f"exact copies or {within}), {counts['n_cross_identity_groups']} of "
            "them across identities (the same image under two labels). They are "
            "audited as they are; the re-identification attack hides a query's "
            "copies from its search. Rows (positions in the audited data) and "
            f"identities: {names}" + (f"; and {more} more groups." if more else ".")
        )
    return {**counts, "tolerance": DUPLICATE_TOL, "groups": shown, "text": text}
