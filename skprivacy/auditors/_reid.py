# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Leave-one-out re-identification: the nearest-neighbour attack a user fears."""

import math
from fractions import Fraction
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from scipy.special import gammaln
from scipy.stats import binom
from sklearn.base import BaseEstimator

from skprivacy.auditors._description import AuditDescription, format_value, plain
from skprivacy.auditors._roc_core import clopper_pearson_bound
from skprivacy.utils import (
    DUPLICATE_TOL,
    limit_blas_threads,
    map_blas_threads,
    seed_from,
    spawn_generator,
    validate_identity_data,
)
from skprivacy.utils._identity import group_by_identity
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["ReidentificationAuditor"]

#: A rate at least this many times its chance level separates identities.
SEPARATION_FACTOR = 5

# Queries per task: the score block of one task is (gallery chunk x _QUERY_BLOCK).
_QUERY_BLOCK = 256
# Gallery rows per product, rounded to whole identities: a float32 score
# chunk of 8,192 x 256 (8 MB) is reduced to per-identity maxima while it is
# still in cache. Measured on 20,000 x 512 float32 (one thread per block):
# 8,192-row chunks ran 10-20% faster than 2,048 or 4,096.
_CHUNK_ROWS = 8192


def _identity_chunks(starts, target):
    """Split identities into consecutive runs of about ``target`` gallery rows.

    Returns a list of ``(id_start, id_stop)``; an identity larger than
    ``target`` forms its own run (identities are never split, so a run's
    per-identity maxima are final).
    """
    n_ids = len(starts) - 1
    out, i = [], 0
    while i < n_ids:
        j = int(np.searchsorted(starts, starts[i] + target, side="right")) - 1
        j = min(max(j, i + 1), n_ids)
        out.append((i, j))
        i = j
    return out


def _duplicate_threshold(dtype, d):
    """Scores below this cannot belong to a near-duplicate of the query.

    A near-duplicate has cosine at least ``1 - DUPLICATE_TOL``; the product
    in ``dtype`` may be off by about ``d`` rounding errors, so the shortlist
    keeps a margin of ``4 d eps`` (2.4e-4 for float32 at d = 512; distinct
    face images lie at cosine distances above 1e-3).
    """
    return 1.0 - DUPLICATE_TOL - 1e-9 - 4.0 * d * float(np.finfo(dtype).eps)


def _near_duplicates(Zg, q_row, rows):
    """Which ``rows`` are within ``DUPLICATE_TOL`` of row ``q_row``, exactly.

    Decided in float64 on re-normalised rows, by the cosine distance
    ``||a - b||^2 / 2`` (the rule of :func:`~skprivacy.utils.duplicate_groups`).
    """
    a = Zg[q_row].astype(np.float64)
    a /= np.linalg.norm(a)
    B = Zg[rows].astype(np.float64)
    B /= np.linalg.norm(B, axis=1, keepdims=True)
    diff = B - a
    return 0.5 * np.einsum("ij,ij->i", diff, diff) <= DUPLICATE_TOL


def _loo_block(Zg, starts, own, qpos, n_neighbors, chunks, hide_duplicates):
    """Leave-one-out search of one block of queries against every gallery row.

    Parameters
    ----------
    Zg : ndarray of shape (n_rows, d)
        Unit rows grouped by identity (identity ``i`` is
        ``Zg[starts[i]:starts[i + 1]]``).
    starts : ndarray of shape (n_identities + 1,)
        Identity offsets into ``Zg``.
    own : ndarray of shape (n_block,)
        Identity code of each query.
    qpos : ndarray of shape (n_block,), sorted
        Row of each query in ``Zg`` (its own row, never in its gallery).
    n_neighbors : int
        Neighbours voting for the top-1 decision.
    chunks : list of (int, int)
        Identity runs (see :func:`_identity_chunks`).
    hide_duplicates : bool
        Whether near-duplicates of a query are hidden from its gallery (they
        are found and counted either way).

    Returns
    -------
    out : dict
        Per query: ``rank`` (1 + the number of other identities whose best
        row scores at least as high as the query's best own row; the number
        of identities when no own row is left), ``tie`` (an other identity's
        best equals the own best), ``n_dup`` and ``n_dup_own`` (gallery rows
        that near-duplicate the query, in all and in its own identity) and,
        with ``n_neighbors > 1``, ``vote`` (the own identity strictly wins the
        vote) and ``vote_tie``.
    """
    b = qpos.shape[0]
    n_ids = starts.shape[0] - 1
    dtype = Zg.dtype
    Qt = Zg[qpos].T
    best = np.empty((n_ids, b), dtype=dtype)
    max_rows = max(int(starts[j] - starts[i]) for i, j in chunks)
    buf = np.empty((max_rows, b), dtype=dtype)
    k = n_neighbors
    if k > 1:
        top_val = np.full((k + 1, b), -np.inf, dtype=dtype)
        top_row = np.full((k + 1, b), -1, dtype=np.intp)
    cols = np.arange(b)
    shortlist = _duplicate_threshold(dtype, Zg.shape[1])
    dup_q, dup_row = [], []
    for i, j in chunks:
        r0, r1 = int(starts[i]), int(starts[j])
        S = buf[: r1 - r0]
        np.matmul(Zg[r0:r1], Qt, out=S)
        lo, hi = np.searchsorted(qpos, [r0, r1])
        S[qpos[lo:hi] - r0, cols[lo:hi]] = -np.inf  # leave one out
        seg = starts[i:j] - r0
        chunk_best = best[i:j]
        np.maximum.reduceat(S, seg, axis=0, out=chunk_best)
        # Near-duplicates score at the top of their identity: only segments
        # whose best reaches the shortlist threshold are looked into.
        for s_id, q in zip(*np.nonzero(chunk_best >= shortlist)):
            rows = seg[s_id] + np.flatnonzero(
                S[seg[s_id] : int(starts[i + s_id + 1]) - r0, q] >= shortlist
            )
            dup = rows[_near_duplicates(Zg, qpos[q], rows + r0)]
            if dup.size:
                dup_q.append(np.full(dup.size, q))
                dup_row.append(dup + r0)
                if hide_duplicates:
                    S[dup, q] = -np.inf
                    chunk_best[s_id, q] = S[
                        seg[s_id] : int(starts[i + s_id + 1]) - r0, q
                    ].max()
        if k > 1:
            # Running k + 1 best rows per query (one more than voted, to see
            # ties at the k-th place).
            m = min(k + 1, r1 - r0)
            idx = np.argpartition(S, r1 - r0 - m, axis=0)[r1 - r0 - m :]
            cand_val = np.concatenate([top_val, np.take_along_axis(S, idx, 0)])
            cand_row = np.concatenate([top_row, idx + r0])
            keep = np.argpartition(cand_val, cand_val.shape[0] - k - 1, axis=0)[
                cand_val.shape[0] - k - 1 :
            ]
            top_val = np.take_along_axis(cand_val, keep, 0)
            top_row = np.take_along_axis(cand_row, keep, 0)
    dup_q = np.concatenate(dup_q) if dup_q else np.empty(0, dtype=np.intp)
    dup_row = np.concatenate(dup_row) if dup_row else np.empty(0, dtype=np.intp)
    codes_of_row = np.repeat(np.arange(n_ids), np.diff(starts))
    own_best = best[own, cols].copy()
    best[own, cols] = -np.inf
    other_best = best.max(axis=0)
    n_ge = np.count_nonzero(best >= own_best, axis=0)
    found = own_best > -np.inf
    out = {
        "rank": np.where(found, n_ge + 1, n_ids).astype(np.intp),
        "tie": found & (other_best == own_best),
        "n_dup": np.bincount(dup_q, minlength=b),
        "n_dup_own": np.bincount(
            dup_q[codes_of_row[dup_row] == own[dup_q]], minlength=b
        ),
    }
    if k > 1:
        hidden_q, hidden_row = cols, qpos
        if hide_duplicates:
            hidden_q = np.concatenate([cols, dup_q])
            hidden_row = np.concatenate([qpos, dup_row])
        out.update(
            _vote(
                top_val, top_row, Zg, codes_of_row, own, qpos, hidden_q, hidden_row, k
            )
        )
    return out


def _vote(top_val, top_row, Zg, codes_of_row, own, qpos, hidden_q, hidden_row, k):
    """Majority vote of the ``k`` nearest rows; ties at the k-th place resolved.

    The ``k`` nearest rows are ordered by score, then by gallery row (lower
    first); queries with a tie at the k-th place are re-scored alone to apply
    that rule (``hidden_row[e]`` is hidden from query ``hidden_q[e]``).
    """
    order = np.argsort(-top_val, axis=0, kind="stable")
    val = np.take_along_axis(top_val, order, 0)
    row = np.take_along_axis(top_row, order, 0)
    boundary_tie = val[k - 1] == val[k]
    nearest = row[:k].copy()
    for q in np.flatnonzero(boundary_tie & (val[k - 1] > -np.inf)):
        s = Zg @ Zg[qpos[q]]
        s[hidden_row[hidden_q == q]] = -np.inf
        nearest[:, q] = np.lexsort((np.arange(s.shape[0]), -s))[:k]
    nb_codes = codes_of_row[nearest]  # (k, b)
    # Votes for each neighbour's identity, by pairwise comparison (k is small).
    votes = (nb_codes[:, None, :] == nb_codes[None, :, :]).sum(axis=1)
    is_own = nb_codes == own[None, :]
    own_votes = np.where(is_own, votes, 0).max(axis=0)
    other_votes = np.where(is_own, 0, votes).max(axis=0)
    valid = val[k - 1] > -np.inf
    return {
        "vote": valid & (own_votes > other_votes),
        "vote_tie": valid & (own_votes == other_votes) & (own_votes > 0),
    }


# --------------------------------------------------------------------- chance
def _poly_mul(p, q, deg):
    out = [0] * min(len(p) + len(q) - 1, deg + 1)
    for i, a in enumerate(p[: deg + 1]):
        if a:
            for j, b in enumerate(q[: deg + 1 - i]):
                out[i + j] += a * b
    return out


def _poly_pow(p, m, deg):
    result, base = [1], list(p[: deg + 1])
    while m:
        if m & 1:
            result = _poly_mul(result, base, deg)
        m >>= 1
        if m:
            base = _poly_mul(base, base, deg)
    return result


def _vote_chance(a, sizes, mults, k):
    """Chance that the own identity strictly wins a ``k``-NN vote.

    Exact under exchangeability (embeddings that carry no identity): the
    ``k`` nearest rows are then a uniformly random ``k``-subset of the
    gallery, which holds ``a`` rows of the own identity and ``mults[s]``
    other identities of ``sizes[s]`` rows. Integer arithmetic throughout.
    """
    g = a + int(np.dot(sizes, mults))
    k = min(k, g)
    total = 0
    for c in range(1, min(a, k) + 1):
        rest = k - c
        poly = [1]
        for s, m in zip(sizes.tolist(), mults.tolist()):
            per = [math.comb(s, t) for t in range(min(c - 1, s, rest) + 1)]
            poly = _poly_mul(poly, _poly_pow(per, m, rest), rest)
        if rest < len(poly):
            total += math.comb(a, c) * poly[rest]
    return float(Fraction(total, math.comb(g, k)))


def _rank_chance(a, sizes, mults, k):
    """Chance that the own identity ranks among the top ``k`` identities.

    Under exchangeability the gallery order is a uniformly random
    permutation; with i.i.d. exponential arrival times per row, identity
    ``j``'s first arrival is ``Exp(n_j)``, so

    ``P(rank <= k) = int_0^inf a exp(-a t) P(N(t) <= k - 1) dt``

    with ``N(t)`` the number of other identities arrived by ``t``, a sum of
    independent ``Bernoulli(1 - exp(-n_j t))`` (binomial per size group,
    truncated at ``k - 1``). ``k = 1`` gives ``a / g``. The integral is a
    Gauss-Legendre rule on geometric pieces of ``[0, 40 / a]`` (the own
    arrival density is below ``e^-40`` beyond), vectorised over its nodes.
    """
    n_other = int(mults.sum())
    if k > n_other:
        return 1.0
    g_other = float(np.dot(sizes, mults))
    if k == 1:
        return a / (a + g_other)
    # Break points on the scale of the other identities' arrivals.
    stop = 40.0 / a
    points = [0.0]
    x = 0.25 / g_other
    while x < stop:
        points.append(x)
        x *= 4
    points.append(stop)
    lo, hi = np.array(points[:-1]), np.array(points[1:])
    nodes, weights = np.polynomial.legendre.leggauss(40)
    t = (lo[:, None] + (hi - lo)[:, None] * (nodes + 1) / 2).ravel()
    w = ((hi - lo)[:, None] / 2 * weights).ravel()
    dist = np.zeros((t.size, k))
    dist[:, 0] = 1.0
    j = np.arange(k)
    for s, m in zip(sizes, mults):
        # Binomial(m, p) probabilities of 0..k-1 arrivals, in logs.
        log_p = np.log(-np.expm1(-s * t))
        log_q = -s * t
        log_comb = gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1)
        with np.errstate(invalid="ignore"):
            logs = log_comb + j * log_p[:, None] + (m - j) * log_q[:, None]
        pmf = np.where(j <= m, np.exp(logs), 0.0)
        pmf[:, 0] = np.exp(m * log_q)
        new = np.zeros_like(dist)
        for c in range(k):
            new[:, c:] += dist[:, : k - c] * pmf[:, c : c + 1]
        dist = new
    total = float(np.sum(w * a * np.exp(-a * t) * dist.sum(axis=1)))
    return min(total, 1.0)


def _chances(counts, own, a, g, n_neighbors, top_k):
    """Per-query chance of the top-1 decision and of a top-``k`` rank.

    ``counts`` are the gallery rows per identity; query ``q`` (identity
    ``own[q]``) sees ``a[q]`` rows of its own identity and ``g[q]`` rows in
    all (its own row and any hidden duplicates removed). The top-1 chance of
    ``n_neighbors=1`` is exactly ``a / g``; the vote and rank chances treat
    the other identities as whole (hidden duplicates across identities, a
    label error, are rare and ignored there).
    """
    n_q = own.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        top1 = np.where(g > 0, a / np.maximum(g, 1), 0.0)
    topk = np.empty(n_q)
    size_values, size_inverse = np.unique(counts, return_inverse=True)
    all_mults = np.bincount(size_inverse, minlength=size_values.size)
    # The chances depend on the own identity's size and on a only.
    keys = np.stack([size_inverse[own], a], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    for u, (size_index, a_u) in enumerate(uniq.tolist()):
        mults = all_mults.copy()
        mults[size_index] -= 1
        keep = mults > 0
        sizes, m = size_values[keep], mults[keep]
        rows = inverse == u
        if a_u == 0:
            topk[rows] = 0.0
            if n_neighbors > 1:
                top1[rows] = 0.0
            continue
        topk[rows] = _rank_chance(a_u, sizes.astype(float), m, top_k)
        if n_neighbors > 1:
            top1[rows] = _vote_chance(a_u, sizes, m, n_neighbors)
    return top1, topk


def _two_sided_cp(k, n, confidence):
    """Two-sided Clopper-Pearson intervals of ``k[i]`` successes in ``n``."""
    half = (1.0 - confidence) / 2
    k = np.asarray(k)
    lo = np.atleast_1d(clopper_pearson_bound(k, n, half, side="lower"))
    hi = np.atleast_1d(clopper_pearson_bound(k, n, half, side="upper"))
    return [(float(a), float(b)) for a, b in zip(lo, hi)]


# -------------------------------------------------------------------- auditor
class ReidentificationAuditor(BaseEstimator):
    r"""Leave-one-out nearest-neighbour re-identification over all identities.

    Every image (row) in turn is the query and every *other* row is the
    gallery: the attack succeeds when the query's nearest rows belong to its
    own identity. This is the simplest attack a user fears ("given a new
    photo, find the person") and needs no training. ``score()`` returns the
    leave-one-out top-1 rate (higher = leakier); beside it the auditor
    reports the top-``k`` rate, the rate a guess achieves (``chance_``), an
    exact binomial interval and a one-sided test against chance.

    Read more in the :ref:`User Guide <reidentification>`.

    Parameters
    ----------
    n_neighbors : int, default=1
        Neighbours (gallery rows) voting for the top-1 decision, as in
        :class:`~sklearn.neighbors.KNeighborsClassifier` with uniform
        weights. A query counts as re-identified only when its own identity
        gets strictly more votes than any other (a tied vote is a failure).
    metric : {"cosine", "euclidean"}, default="cosine"
        Similarity of two rows. Rows are L2-normalised by the input layer,
        where the Euclidean distance ``sqrt(2 - 2 cos)`` orders neighbours
        exactly as the cosine does: both give the same results.
    top_k : int, default=5
        Rank for ``top_k_rate_``: the share of queries whose own identity is
        among the ``top_k`` identities ranked by their best-matching row
        (closed-set identification rank, as in a CMC curve).
    confidence : float, default=0.95
        Level of the two-sided intervals ``ci_``, ``top_k_ci_`` and
        ``bootstrap_ci_``.
    max_queries : int or None, default=10_000
        With more mated rows than this (rows whose identity has another row),
        a seeded uniform sample of ``max_queries`` of them are the queries;
        every row stays in the gallery. ``None`` queries every mated row.
        ``queries_sampled_`` and ``query_indices_`` record what was done.
    exclude_duplicates : bool, default=True
        Hide from each query the rows that duplicate it, in any identity:
        exact copies and near-duplicates (cosine distance at most
        :data:`~skprivacy.utils.DUPLICATE_TOL` = 1e-6, the rule of
        :func:`~skprivacy.utils.duplicate_groups`: the same image recast,
        rescaled or rounded). A copy of the query image in the gallery is
        found trivially and says nothing about the attack a user fears,
        finding a *new* image of the person; hence the default.
        ``n_duplicate_queries_`` counts the queries that had one. ``False``
        keeps them (the rate of an attacker who holds the very image).
    n_bootstrap : int, default=1000
        Identity-level bootstrap replicates for ``bootstrap_ci_`` (0: none).
    n_jobs : int, default=None
        Parallel tasks (blocks of queries, run on threads through joblib, so
        ``joblib.parallel_config(backend="dask")`` sends them to a dask
        cluster). ``None`` means one joblib worker, but the blocks are still
        spread over the threads the BLAS would use.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the query sample and the bootstrap.

    Attributes
    ----------
    rate_ : float
        Leave-one-out top-1 re-identification rate; what ``score()``
        returns. A point estimate.
    summary_ : float
        Same as ``rate_`` (the common name of an auditor's summary).
    guarantee_ : str
        ``"point estimate"``.
    chance_ : float
        Expected top-1 rate of embeddings that carry no identity (see Notes).
    ci_ : tuple of float
        Two-sided exact (Clopper-Pearson) interval of the top-1 rate at
        ``confidence``, conditional on the audited rows (see Notes).
    p_value_ : float
        One-sided exact binomial test of "rate <= chance".
    bootstrap_ci_ : tuple of float or None
        Percentile interval of the top-1 rate over identity-level bootstrap
        replicates (None when ``n_bootstrap=0``).
    top_k_rate_ : float
        Share of queries whose identity ranks among the best ``top_k``.
    top_k_chance_ : float
        Its chance level.
    top_k_ci_ : tuple of float
        Two-sided exact interval of ``top_k_rate_``.
    n_queries_ : int
        Queries audited.
    n_reidentified_ : int
        Queries re-identified (top-1).
    n_top_k_ : int
        Queries whose identity ranks among the best ``top_k``.
    n_tied_queries_ : int
        Queries whose top-1 decision was a tie (counted as failures).
    n_duplicate_queries_ : int
        Audited queries with an exact or near-duplicate elsewhere in the
        data (counted whether or not they were hidden).
    n_non_mated_rows_ : int
        Rows that cannot be queries: no other row of their identity is left
        in the gallery (single-row identities, or only duplicates). They stay
        in the gallery as distractors.
    queries_sampled_ : bool
        Whether the queries are a sample of the mated rows.
    query_indices_ : ndarray of shape (n_queries_,)
        Indices (rows of the ``X`` given to :meth:`fit`) of the queries.
    n_gallery_rows_ : int
        Rows searched (every retained row).
    results_ : pandas.DataFrame
        One row per identity: ``identity``, ``n_samples``, ``n_queries``,
        ``n_reidentified``, ``rate``, ``top_k_rate``, ``chance`` (mean chance
        of its queries), ``n_duplicate_queries``.
    description_ : AuditDescription
        What the fitted audit reports, for :func:`skprivacy.audit`: the rate,
        its chance level, intervals, test and counts in one summary entry.
    identities_ : ndarray of shape (n_identities,)
        Identity labels in the gallery.
    drop_report_ : dict
        Rows dropped by the input layer, by reason.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.neighbors.KNeighborsClassifier : The same decision rule, fitted
        on all rows but the query.
    skprivacy.sanitize.OpenSetVerificationAuditor : One-to-one verification
        of unseen identities at a low false-accept rate.

    Notes
    -----
    **Search.** Rows are L2-normalised and the similarity is the cosine. The
    query's own row is never in its gallery (leave-one-out), nor, with
    ``exclude_duplicates=True``, its near-duplicates. Products run in blocks
    of 256 queries against chunks of about 8,192 gallery rows (whole
    identities), reduced to per-identity maxima in cache: memory stays at a
    few score chunks per thread whatever the size, and float32 input is
    computed in float32. Duplicates come out of the same products: a
    near-duplicate is the best row of its identity, so only identities whose
    best score is within rounding of 1 are examined, and their candidate rows
    are decided on the exact float64 distance.

    **Ties** count against the attacker: a query is re-identified only when
    its own identity's best row scores strictly higher than every other
    identity's best row (``n_neighbors=1``), or wins the vote strictly; its
    rank is 1 + the number of other identities scoring *at least* as high.
    So ties never inflate the rate; ``n_tied_queries_`` says how often they
    occurred. With ``n_neighbors > 1``, rows tied at the last voting place are
    taken in gallery order: by sorted identity label, then by row of ``X``.

    **Chance.** ``chance_`` is the expected rate when the embeddings carry no
    identity at all, i.e. the gallery order is a uniformly random permutation
    of the other rows. For ``n_neighbors=1`` a query of an identity with
    ``n_i`` rows in a data set of ``n`` rows then succeeds with probability
    ``(n_i - 1) / (n - 1)``, so with unequal identity sizes the chance is

    .. math:: \text{chance} = \frac{1}{|Q|}\sum_{q \in Q}
              \frac{n_{i(q)} - 1}{n - 1},

    which for all queries is :math:`\sum_i n_i (n_i - 1) / (n (n - 1))`:
    larger than ``1 / n_identities`` when sizes differ (a large identity is
    found by chance more often), and not the ``1 / n_identities`` of a
    uniform guess. Hidden duplicates are removed from ``n_i - 1`` and
    ``n - 1``. For ``n_neighbors > 1`` and for ``top_k`` the same
    random-permutation model gives the exact chance (a hypergeometric
    count over identity sizes, and an integral over first arrival times).

    **Intervals and test.** ``ci_`` is the Clopper-Pearson interval of
    ``n_reidentified_`` successes in ``n_queries_`` trials and ``p_value_``
    the exact one-sided binomial tail ``P(Bin(n_queries_, chance_) >=
    n_reidentified_)``. Rows of one identity are not independent (they share
    the person), and queries share gallery rows, so these are conditional
    on the audited rows: they describe how the rate of *these* queries is
    pinned down, not how it would vary over new people. ``bootstrap_ci_``
    resamples whole identities (with their queries) to show the between-people
    spread. With sampled queries (``queries_sampled_``) the interval covers
    the rate over every mated row (a sample without replacement is less
    variable than the binomial assumes, so it is conservative).

    Examples
    --------
    >>> from skprivacy import ReidentificationAuditor
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(20, 5, 16, random_state=0)
    >>> auditor = ReidentificationAuditor(random_state=0).fit(X, ids)
    >>> auditor.n_queries_, round(auditor.chance_, 4)
    (100, 0.0404)
    >>> auditor.score() > auditor.chance_
    True
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions({"cosine", "euclidean"})],
        "top_k": [Interval(Integral, 1, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "max_queries": [Interval(Integral, 1, None, closed="left"), None],
        "exclude_duplicates": ["boolean"],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        n_neighbors=1,
        metric="cosine",
        *,
        top_k=5,
        confidence=0.95,
        max_queries=10_000,
        exclude_duplicates=True,
        n_bootstrap=1000,
        n_jobs=None,
        random_state=None,
    ):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.top_k = top_k
        self.confidence = confidence
        self.max_queries = max_queries
        self.exclude_duplicates = exclude_duplicates
        self.n_bootstrap = n_bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------- the audit
    def _audit(self, X, y, reset):
        data = validate_identity_data(
            self,
            X,
            y,
            reset=reset,
            min_samples_per_identity=1,
            min_identities=2,
            normalize="defer",
            dtype=[np.float64, np.float32],
        )
        order, starts, _ = group_by_identity(data.codes, data.n_identities)
        Zg = data.normalized_rows(order)
        counts = np.diff(starts)
        n = Zg.shape[0]
        own_all = np.repeat(np.arange(data.n_identities), counts)
        seed = seed_from(self.random_state)

        mated = np.flatnonzero(counts[own_all] > 1)
        if mated.size == 0:
            raise ValueError(self._no_query_message(Zg.shape[1]))
        sampled = self.max_queries is not None and mated.size > self.max_queries
        if sampled:
            rng = spawn_generator(seed, 0)
            queries = np.sort(rng.choice(mated, size=self.max_queries, replace=False))
        else:
            queries = mated

        blocks = [
            queries[s : s + _QUERY_BLOCK] for s in range(0, queries.size, _QUERY_BLOCK)
        ]
        chunks = _identity_chunks(starts, _CHUNK_ROWS)
        k = self.n_neighbors
        hide = self.exclude_duplicates

        def run(qb):
            return _loo_block(Zg, starts, own_all[qb], qb, k, chunks, hide)

        if effective_n_jobs(self.n_jobs) == 1:
            outs = map_blas_threads(run, blocks)
        else:
            with limit_blas_threads(1):
                outs = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                    delayed(_loo_block)(Zg, starts, own_all[qb], qb, k, chunks, hide)
                    for qb in blocks
                )

        def gather(key):
            return np.concatenate([o[key] for o in outs])

        rank, n_dup, n_dup_own = gather("rank"), gather("n_dup"), gather("n_dup_own")
        own = own_all[queries]
        if hide:
            a = counts[own] - 1 - n_dup_own
            g = n - 1 - n_dup
        else:
            a, g = counts[own] - 1, np.full(queries.size, n - 1)
        # A query whose every other own row is a hidden duplicate has no mate.
        mate = a > 0
        if not mate.any():
            raise ValueError(self._no_query_message(Zg.shape[1]))
        if k > 1:
            success, tie = gather("vote"), gather("vote_tie")
        else:
            success, tie = rank == 1, gather("tie")
        n_non_mated = int(n - mated.size + (~mate).sum())
        queries, own, rank, n_dup = queries[mate], own[mate], rank[mate], n_dup[mate]
        success, tie, a, g = success[mate], tie[mate], a[mate], g[mate]
        chance1, chancek = _chances(counts, own, a, g, k, self.top_k)
        return {
            "data": data,
            "order": order,
            "queries": queries,
            "own": own,
            "success": success,
            "tie": tie,
            "topk": rank <= self.top_k,
            "chance1": chance1,
            "chancek": chancek,
            "has_dup": n_dup > 0,
            "n_non_mated": n_non_mated,
            "sampled": bool(sampled),
            "seed": seed,
        }

    @staticmethod
    def _no_query_message(n_features):
        hint = (
            " With 1 feature(s), every L2-normalised row is +1 or -1, so all "
            "rows are duplicates."
            if n_features == 1
            else ""
        )
        return (
            "No row can be a query: every identity has a single usable row "
            "(after hiding duplicates), so there is nothing to re-identify. "
            "Re-identification needs at least one identity with two distinct "
            f"rows.{hint}"
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run the leave-one-out re-identification attack on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings (rows are L2-normalised; unusable rows are dropped and
            reported).
        y : array-like of shape (n_samples,)
            Identity label of each row.

        Returns
        -------
        self : ReidentificationAuditor
            The fitted auditor.
        """
        res = self._audit(X, y, reset=True)
        data = res["data"]
        n_q = int(res["queries"].size)
        n_succ = int(res["success"].sum())
        n_topk = int(res["topk"].sum())
        self.identities_ = data.identities
        self.drop_report_ = data.drop_report
        self.n_gallery_rows_ = int(data.X.shape[0])
        self.n_queries_ = n_q
        self.n_reidentified_ = n_succ
        self.n_top_k_ = n_topk
        self.n_tied_queries_ = int(res["tie"].sum())
        self.n_duplicate_queries_ = int(res["has_dup"].sum())
        self.n_non_mated_rows_ = res["n_non_mated"]
        self.queries_sampled_ = res["sampled"]
        kept_rows = np.flatnonzero(data.kept)
        self.query_indices_ = kept_rows[res["order"][res["queries"]]]
        self.rate_ = n_succ / n_q
        self.summary_ = self.rate_
        self.guarantee_ = "point estimate"
        self.chance_ = float(res["chance1"].mean())
        self.ci_, self.top_k_ci_ = _two_sided_cp([n_succ, n_topk], n_q, self.confidence)
        self.p_value_ = float(binom.sf(n_succ - 1, n_q, min(self.chance_, 1.0)))
        self.top_k_rate_ = n_topk / n_q
        self.top_k_chance_ = float(res["chancek"].mean())
        own = res["own"]
        n_ids = data.n_identities
        q_per = np.bincount(own, minlength=n_ids)
        s_per = np.bincount(own, weights=res["success"], minlength=n_ids)
        k_per = np.bincount(own, weights=res["topk"], minlength=n_ids)
        c_per = np.bincount(own, weights=res["chance1"], minlength=n_ids)
        d_per = np.bincount(own, weights=res["has_dup"], minlength=n_ids)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.results_ = pd.DataFrame(
                {
                    "identity": data.identities,
                    "n_samples": data.counts,
                    "n_queries": q_per,
                    "n_reidentified": s_per.astype(np.int64),
                    "rate": s_per / q_per,
                    "top_k_rate": k_per / q_per,
                    "chance": c_per / q_per,
                    "n_duplicate_queries": d_per.astype(np.int64),
                }
            )
        self.bootstrap_ci_ = self._bootstrap(s_per, q_per, res["seed"])
        return self

    def _bootstrap(self, successes, queries, seed):
        """Percentile interval of the rate over identity-level resamples."""
        if self.n_bootstrap == 0:
            return None
        audited = queries > 0
        s, q = successes[audited], queries[audited]
        m = s.size
        rng = spawn_generator(seed, 1)
        rates = np.empty(self.n_bootstrap)
        step = max(1, (1 << 22) // max(m, 1))
        for b0 in range(0, self.n_bootstrap, step):
            b1 = min(b0 + step, self.n_bootstrap)
            w = rng.multinomial(m, np.full(m, 1.0 / m), size=b1 - b0)
            rates[b0:b1] = (w @ s) / (w @ q)
        half = (1.0 - self.confidence) / 2
        lo, hi = np.quantile(rates, [half, 1.0 - half])
        return (float(lo), float(hi))

    def score(self, X=None, y=None):
        """Return the leave-one-out top-1 re-identification rate (higher = leakier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Embeddings to audit with the fitted settings; ``None`` returns the
            rate of the fitted data (``rate_``). Has no side effects.
        y : array-like of shape (n_samples,), default=None
            Identity labels of ``X`` (required with ``X``).

        Returns
        -------
        rate : float
            Share of queries re-identified; a point estimate.
        """
        check_is_fitted(self)
        if X is None:
            return self.rate_
        res = self._audit(X, y, reset=False)
        return float(res["success"].sum() / res["queries"].size)

    @property
    def description_(self):
        """What the fitted audit reports (:class:`~skprivacy.auditors.AuditDescription`).

        The summary entry holds ``value`` (``rate_``), ``chance``, ``ci``,
        ``separates`` (the rate is at least :data:`SEPARATION_FACTOR` times
        chance, or its interval lies above chance), ``rules_out_separation``
        (that many times chance is a rate below 1 that the interval rules
        out: the sample could have shown it), ``p_value``, ``bootstrap_ci``,
        ``top_k``, ``top_k_rate``,
        ``top_k_chance``, ``top_k_ci``, ``n_queries``, ``queries_sampled``,
        ``n_duplicate_queries``, ``n_tied_queries`` and ``confidence``.
        """
        check_is_fitted(self)
        k = self.n_neighbors
        rule = "nearest row" if k == 1 else f"vote of the {k} nearest rows"
        lo, hi = self.ci_
        sampled = " (a seeded sample)" if self.queries_sampled_ else ""
        return AuditDescription(
            title="Re-identification" if k == 1 else f"Re-identification {k}-NN",
            kind=self.guarantee_,
            value=float(self.rate_),
            statistic=(
                f"share of {self.n_queries_} query images{sampled} whose {rule} "
                "(cosine, every other image a candidate) belongs to their own "
                "identity, leave-one-out"
            ),
            says=(
                "How often the simplest attack, a nearest-neighbour search among "
                "the other images, names the person: a rate to compare with its "
                "chance level."
            ),
            does_not_say=(
                "Not a bound on stronger attacks (a trained probe may do better), "
                "and its interval is conditional on the audited images (images of "
                "one person are not independent); "
                + (
                    "copies of the query image are hidden from its search."
                    if self.exclude_duplicates
                    else "copies of the query image were left in its search, "
                    "where they are found trivially."
                )
            ),
            finding=(
                f"leave-one-out {'1-NN' if k == 1 else f'{k}-NN'} re-identifies "
                f"{format_value(100 * self.rate_)}% of {self.n_queries_} images "
                f"(chance {format_value(100 * self.chance_)}%, "
                f"{self.confidence:.0%} interval {format_value(100 * lo)}-"
                f"{format_value(100 * hi)}%)"
            ),
            entry={
                "chance": float(self.chance_),
                "ci": [float(lo), float(hi)],
                "separates": bool(
                    self.rate_ >= SEPARATION_FACTOR * self.chance_ or lo > self.chance_
                ),
                "rules_out_separation": bool(hi < SEPARATION_FACTOR * self.chance_ < 1),
                "p_value": float(self.p_value_),
                "bootstrap_ci": (
                    None
                    if self.bootstrap_ci_ is None
                    else [float(v) for v in self.bootstrap_ci_]
                ),
                "top_k": int(self.top_k),
                "top_k_rate": float(self.top_k_rate_),
                "top_k_chance": float(self.top_k_chance_),
                "top_k_ci": [float(v) for v in self.top_k_ci_],
                "n_queries": int(self.n_queries_),
                "queries_sampled": bool(self.queries_sampled_),
                "n_duplicate_queries": int(self.n_duplicate_queries_),
                "n_tied_queries": int(self.n_tied_queries_),
                "confidence": float(self.confidence),
                "estimator": type(self).__name__,
                "parameters": plain(self.get_params(deep=False)),
            },
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = True
        return tags
