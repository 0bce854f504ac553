# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The maths of ROC-HT and its certificates, as plain functions.

Operating points of a score, the Kairouz–Oh–Viswanath (KOV) ε bound over
them, exact Clopper–Pearson bounds and the certified ε lower bound, threshold
selection on training scores, the stratified folds and the reserved-test
split. Both engines of ROC-HT (the per-pair classifier loop and the
shared-product path) and the certifier compute with these functions only, so
the two engines can differ in how they get scores, never in what they do with
them. Nothing here fits a model or holds state.
"""

import math
from collections import Counter
from functools import lru_cache
from numbers import Integral, Real
from threading import Lock

import numpy as np
from scipy.stats import beta
from sklearn.metrics import auc

from skprivacy.utils import (
    check_binary_labels,
    check_scores,
    duplicate_groups,
    spawn_generator,
)
from skprivacy.utils._sklearn import Interval, validate_params

__all__ = [
    "alpha_per_bound",
    "auc_from_counts",
    "certifiable_epsilon_ceiling",
    "certified_epsilon_lb",
    "certified_from_counts",
    "clopper_pearson_bound",
    "family_confidence",
    "fold_vectors",
    "grid_thresholds",
    "kov_epsilon",
    "kov_rows",
    "n_folds_for",
    "prepare_fold_vectors",
    "reserved_test_mask",
    "roc_operating_points",
    "roc_summary",
    "select_threshold",
    "select_threshold_rows",
    "stratified_folds",
]


# ------------------------------------------------------------ operating points
def roc_operating_points(y_true, y_score):
    """Return every ROC operating point of a score, like ``roc_curve``.

    Equivalent to :func:`sklearn.metrics.roc_curve` with
    ``drop_intermediate=False``: one point per distinct score value (the
    classifier says "positive" when ``score >= threshold``), preceded by the
    point ``(0, 0)`` at threshold ``+inf``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels: 1 (or True) for the positive class, 0 (or False) for
        the negative one. Both classes must occur.
    y_score : array-like of shape (n_samples,)
        Scores, higher = more positive; finite, as for
        :func:`~sklearn.metrics.roc_curve` (a NaN or infinite score is an
        error naming its row).

    Returns
    -------
    fpr : ndarray of shape (n_points,)
        False-positive rates, non-decreasing, from 0 to 1.
    tpr : ndarray of shape (n_points,)
        True-positive rates, non-decreasing, from 0 to 1.
    thresholds : ndarray of shape (n_points,)
        Decreasing thresholds; the first is ``inf``.

    Examples
    --------
    >>> from skprivacy.auditors import roc_operating_points
    >>> fpr, tpr, thr = roc_operating_points([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    y_true = check_binary_labels(y_true, name="y_true", require_both=False)
    y_score = check_scores(y_score, name="y_score")
    if y_true.shape != y_score.shape:
        raise ValueError(
            f"y_true and y_score have different lengths: {y_true.shape[0]} and "
            f"{y_score.shape[0]}."
        )
    n_pos = int(y_true.sum())
    n_neg = y_true.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("A ROC needs both classes; only one class is present.")
    order = np.argsort(y_score, kind="mergesort")[::-1]
    s = y_score[order]
    # Last index of each run of equal scores: a threshold admits all ties at once.
    last = np.r_[np.flatnonzero(np.diff(s)), s.shape[0] - 1]
    tps = np.cumsum(y_true[order])[last]
    fps = last + 1 - tps
    tpr = np.r_[0.0, tps / n_pos]
    fpr = np.r_[0.0, fps / n_neg]
    return fpr, tpr, np.r_[np.inf, s[last]]


# ------------------------------------------------------------------------ KOV
def _log_ratio(num, den):
    # log(num / den) with the conventions of paper 000: no evidence (-inf) when
    # the numerator is <= 0 (this also covers 0/0), +inf when only the
    # denominator is 0.
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, -np.inf)
    pos = num > 0
    inf = pos & (den <= 0)
    fin = pos & (den > 0)
    out[inf] = np.inf
    out[fin] = np.log(
        np.broadcast_to(num, out.shape)[fin] / np.broadcast_to(den, out.shape)[fin]
    )
    return out


def _rates(values, name):
    """1-D float64 array of rates, or a TypeError naming the argument."""
    try:
        return np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be numeric rates in [0, 1]; got an array of dtype "
            f"{np.asarray(values).dtype}."
        ) from None


def kov_epsilon(fpr, tpr, delta=0.0, *, return_index=False):
    r"""Kairouz–Oh–Viswanath ε lower bound maximised over ROC operating points.

    At every operating point ``(FPR, TPR)`` of a test between two neighbouring
    output distributions, an (ε, δ)-DP mechanism satisfies ``TPR <= e^ε FPR + δ``
    and ``1 - FPR <= e^ε (1 - TPR) + δ``, hence

    ``ε >= max{ log((TPR - δ) / FPR), log((1 - FPR - δ) / (1 - TPR)) }``.

    This is a point estimate when the rates are empirical, not a certificate.

    Parameters
    ----------
    fpr, tpr : array-like of shape (n_points,)
        Operating points (e.g. from :func:`roc_operating_points`).
    delta : float, default=0.0
        The δ of (ε, δ)-DP, in ``[0, 1)``.
    return_index : bool, default=False
        Also return the index of the maximising operating point.

    Returns
    -------
    epsilon : float
        ``max(0, max over points)``; ``inf`` when a denominator is 0 while its
        numerator is positive (any point with ``FPR = 0`` and ``TPR > δ``, or
        ``TPR = 1`` and ``FPR < 1 - δ``). Terms with a numerator ``<= 0``
        (including ``0 / 0``) carry no evidence.
    index : int
        Index of the maximising point (first one on ties); only if
        ``return_index``.

    See Also
    --------
    roc_operating_points : The operating points of a score.

    Notes
    -----
    ε is clipped at 0 because ε-DP with ε < 0 is impossible; with δ = 0 the
    endpoint ``(1, 1)`` already gives 0, so the clip only matters for δ > 0.
    A classifier that gives every sample the same score has the ROC
    ``{(0, 0), (1, 1)}`` and hence ε = 0.

    An infinite value says only that one empirical rate is exactly 0 or 1 at
    some operating point: a single positive scored above every negative gives
    ``FPR = 0 < TPR``. It does not by itself mean zero-error separation (the
    exact corner ``(0, 1)``).

    Examples
    --------
    >>> from skprivacy.auditors import kov_epsilon
    >>> kov_epsilon([0.0, 0.1, 1.0], [0.0, 0.5, 1.0])  # log(0.5 / 0.1)
    1.6094...
    >>> kov_epsilon([0.0, 0.0, 1.0], [0.0, 0.2, 1.0])  # FPR = 0 < TPR: endpoint
    inf
    >>> kov_epsilon([0.0, 1.0], [0.0, 1.0])  # all ties
    0.0
    """
    fpr = _rates(fpr, "fpr")
    tpr = _rates(tpr, "tpr")
    if fpr.shape != tpr.shape or fpr.size == 0:
        raise ValueError("fpr and tpr must be non-empty and of equal length.")
    for name, rate in (("fpr", fpr), ("tpr", tpr)):
        # NaN fails both comparisons, so it is caught here too.
        if not np.all((rate >= 0.0) & (rate <= 1.0)):
            bad = np.flatnonzero(~((rate >= 0.0) & (rate <= 1.0)))
            raise ValueError(
                f"{name} must hold rates in [0, 1]; got {float(rate[bad[0]])!r} at "
                f"position {int(bad[0])} ({bad.size} value(s) outside [0, 1] or NaN)."
            )
    delta = float(delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1); got {delta}.")
    eps, index = kov_rows(fpr[None, :], tpr[None, :], delta)[:2]
    epsilon, index = float(eps[0]), int(index[0])
    return (epsilon, index) if return_index else epsilon


def kov_rows(fpr, tpr, delta, valid=None):
    r"""KOV summaries of many ROCs at once (one row of operating points each).

    Parameters
    ----------
    fpr, tpr : ndarray of shape (n_rocs, n_points)
        Operating points, one ROC per row.
    delta : float
        δ of (ε, δ)-DP.
    valid : ndarray of shape (n_rocs, n_points) of bool, default=None
        Which entries are operating points (others are ignored); all if None.

    Returns
    -------
    epsilon : ndarray of shape (n_rocs,)
        :func:`kov_epsilon` of each row (may be ``inf``).
    index : ndarray of shape (n_rocs,)
        First valid point attaining it.
    epsilon_interior : ndarray of shape (n_rocs,)
        The largest *finite* KOV term of each row, at least 0: the same
        maximum without the terms whose denominator is 0 (``FPR = 0`` in
        ``log((TPR - δ)/FPR)``, ``TPR = 1`` in ``log((1 - FPR - δ)/(1 - TPR))``).
    infinite_fpr0 : ndarray of shape (n_rocs,) of bool
        Some point has ``FPR = 0`` and ``TPR > δ`` (an infinite first term).
    infinite_tpr1 : ndarray of shape (n_rocs,) of bool
        Some point has ``TPR = 1`` and ``FPR < 1 - δ`` (an infinite second
        term).

    Notes
    -----
    With empirical rates from :math:`n_A` negatives and :math:`n_B`
    positives, every finite term is at most :math:`\log\max(n_A, n_B)`
    (a positive denominator is at least :math:`1/n`), so the interior value
    is finite and grows with the sample size; it is a point estimate.
    """
    t1 = _log_ratio(tpr - delta, fpr)
    t2 = _log_ratio(1.0 - fpr - delta, 1.0 - tpr)
    per = np.maximum(t1, t2)
    if valid is not None:
        per = np.where(valid, per, -np.inf)
    index = np.argmax(per, axis=1)
    rows = np.arange(per.shape[0])
    epsilon = np.maximum(0.0, per[rows, index])
    inf1, inf2 = np.isposinf(t1), np.isposinf(t2)
    if valid is not None:
        inf1 &= valid
        inf2 &= valid
    finite = np.maximum(np.where(inf1, -np.inf, t1), np.where(inf2, -np.inf, t2))
    if valid is not None:
        finite = np.where(valid, finite, -np.inf)
    interior = np.maximum(0.0, finite.max(axis=1))
    return epsilon, index, interior, inf1.any(axis=1), inf2.any(axis=1)


def roc_summary(y_true, y_score, delta=0.0):
    """KOV ε, its finite companion, AUC, TV witness and corner of one score.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        0/1 labels (1 = positive, identity B).
    y_score : array-like of shape (n_samples,)
        Pooled out-of-fold scores.
    delta : float, default=0.0
        δ of (ε, δ)-DP.

    Returns
    -------
    summary : dict
        ``epsilon`` (:func:`kov_epsilon`), ``epsilon_interior``,
        ``infinite_fpr0``, ``infinite_tpr1`` (see :func:`kov_rows`), ``auc``,
        ``tv`` (max TPR - FPR), ``corner`` (the point (0, 1) occurs), and
        ``fpr``, ``tpr``, ``threshold`` of the maximising point.
    """
    fpr, tpr, thr = roc_operating_points(y_true, y_score)
    eps, k, interior, inf1, inf2 = kov_rows(fpr[None, :], tpr[None, :], delta)
    k = int(k[0])
    return {
        "epsilon": float(eps[0]),
        "epsilon_interior": float(interior[0]),
        "infinite_fpr0": bool(inf1[0]),
        "infinite_tpr1": bool(inf2[0]),
        "auc": float(auc(fpr, tpr)),
        "tv": float(np.max(tpr - fpr)),
        "corner": bool(np.any((fpr == 0.0) & (tpr == 1.0))),
        "fpr": float(fpr[k]),
        "tpr": float(tpr[k]),
        "threshold": float(thr[k]),
    }


def auc_from_counts(scores, n_real, n_neg, tps, fps, end):
    """AUC of many ROCs from their cumulative counts (exact integer trapezoid).

    Parameters
    ----------
    scores : ndarray of shape (n_rocs, n_columns)
        The scores (rows padded beyond ``n_real``); only read when an area is
        exactly one half.
    n_real, n_neg : ndarray of shape (n_rocs,)
        Scores of each row, and how many of them (the first) are negatives.
    tps, fps, end : ndarray of shape (n_rocs, n_columns)
        Cumulative true/false positives along the descending scores and the
        ends of runs of equal scores (see
        :func:`skprivacy._kernels.roc.ranked_counts`).

    Returns
    -------
    auc : ndarray of shape (n_rocs,)
        Equal to :func:`sklearn.metrics.auc` of the ROC; when the area is
        exactly one half, it is that function's floating-point value (whose
        side of 0.5 fixes a certifier's direction).
    """
    n_pos = n_real - n_neg
    tp_end = np.where(end, tps, 0)
    fp_end = np.where(end, fps, 0)
    prev_tp = np.zeros_like(tps)
    prev_fp = np.zeros_like(fps)
    prev_tp[:, 1:] = np.maximum.accumulate(tp_end, axis=1)[:, :-1]
    prev_fp[:, 1:] = np.maximum.accumulate(fp_end, axis=1)[:, :-1]
    twice = np.where(end, (fps - prev_fp) * (tps + prev_tp), 0).sum(axis=1)
    area = twice / (2.0 * n_pos * n_neg)
    for r in np.flatnonzero(twice == n_pos * n_neg).tolist():
        m, k = int(n_real[r]), int(n_neg[r])
        y = np.r_[np.zeros(k), np.ones(m - k)]
        fpr, tpr, _ = roc_operating_points(y, scores[r, :m])
        area[r] = float(auc(fpr, tpr))
    return area


# -------------------------------------------------------------- Clopper–Pearson
def clopper_pearson_bound(k, n, alpha, *, side="lower"):
    """One-sided exact (Clopper–Pearson) confidence bound for a binomial rate.

    Parameters
    ----------
    k : int or array-like of int
        Successes.
    n : int or array-like of int
        Trials (``0 <= k <= n``, ``n >= 1``).
    alpha : float or array-like
        Error probability of the one-sided bound, in ``(0, 1)``.
    side : {"lower", "upper"}, default="lower"
        ``"lower"``: ``P(p < bound) <= alpha``; it is ``beta.ppf(alpha, k,
        n - k + 1)``, and 0 when ``k = 0``. ``"upper"``: ``beta.ppf(1 - alpha,
        k + 1, n - k)``, and 1 when ``k = n``.

    Returns
    -------
    bound : float or ndarray
        The bound (an array for array input).

    Examples
    --------
    >>> from skprivacy.auditors import clopper_pearson_bound
    >>> round(clopper_pearson_bound(10, 10, 0.025), 4)  # 0.025 ** (1 / 10)
    0.6915
    >>> round(clopper_pearson_bound(0, 10, 0.025, side="upper"), 4)
    0.3085
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    _check_counts(k, n, "k", "n")
    if not np.all((alpha > 0) & (alpha < 1)):
        raise ValueError(f"alpha must be in (0, 1); got {alpha.ravel()[:3].tolist()}.")
    k, n, alpha = np.broadcast_arrays(k, n, alpha)
    out = np.empty(k.shape)
    if side == "lower":
        edge = k == 0
        out[edge] = 0.0
        inner = ~edge
        out[inner] = beta.ppf(alpha[inner], k[inner], n[inner] - k[inner] + 1)
    elif side == "upper":
        edge = k == n
        out[edge] = 1.0
        inner = ~edge
        out[inner] = beta.ppf(1.0 - alpha[inner], k[inner] + 1, n[inner] - k[inner])
    else:
        raise ValueError(f"side must be 'lower' or 'upper'; got {side!r}.")
    return float(out) if out.ndim == 0 else out


def _check_counts(k, n, k_name, n_name):
    # Name the offending argument: a bare "need 0 <= k <= n" does not say
    # which of tp/n_pos/fp/n_neg the caller got wrong.
    if not np.all(np.isfinite(n) & (n >= 1) & (n == np.round(n))):
        raise ValueError(
            f"{n_name} must hold whole counts >= 1; got {n.ravel()[:3].tolist()}."
        )
    if not np.all(np.isfinite(k) & (k >= 0) & (k == np.round(k))):
        raise ValueError(
            f"{k_name} must hold whole counts >= 0; got {k.ravel()[:3].tolist()}."
        )
    if np.any(k > n):
        raise ValueError(
            f"{k_name} cannot exceed {n_name} (a count of rows out of {n_name})."
        )


def alpha_per_bound(confidence, n_comparisons):
    """Error level of each one-sided bound: ``(1 - confidence) / (2 K)``."""
    return (1.0 - confidence) / (2.0 * n_comparisons)


def _kov_of_bounds(tpr_lo, fpr_hi):
    # KOV at the worst case of the two one-sided bounds.
    with np.errstate(divide="ignore"):
        e1 = np.log(tpr_lo) - np.log(fpr_hi)
        e2 = np.log1p(-fpr_hi) - np.log1p(-tpr_lo)
    return np.maximum(0.0, np.maximum(e1, e2))


def certified_from_counts(tp, n_pos, fp, n_neg, alpha):
    """Certified ε and the two bounds from test counts, each bound at ``alpha``.

    Returns
    -------
    epsilon, tpr_lower, fpr_upper : ndarray
        Broadcast over the inputs.
    """
    for k, n, k_name, n_name in (
        (tp, n_pos, "tp", "n_pos"),
        (fp, n_neg, "fp", "n_neg"),
    ):
        _check_counts(
            np.asarray(k, dtype=np.float64),
            np.asarray(n, dtype=np.float64),
            k_name,
            n_name,
        )
    tpr_lo = np.asarray(clopper_pearson_bound(tp, n_pos, alpha, side="lower"))
    fpr_hi = np.asarray(clopper_pearson_bound(fp, n_neg, alpha, side="upper"))
    return _kov_of_bounds(tpr_lo, fpr_hi), tpr_lo, fpr_hi


@lru_cache(maxsize=1024)
def _cp_table(n, alpha, side):
    return np.atleast_1d(clopper_pearson_bound(np.arange(n + 1), n, alpha, side=side))


def _cp_lookup(k, n, alpha, side):
    """Clopper–Pearson bounds of counts ``k`` out of ``n`` (broadcast) from tables."""
    n = np.asarray(n)
    sizes, inverse = np.unique(n, return_inverse=True)
    table = np.zeros((len(sizes), int(sizes.max()) + 1 if len(sizes) else 1))
    for i, size in enumerate(sizes.tolist()):
        table[i, : size + 1] = _cp_table(int(size), float(alpha), side)
    k, inverse = np.broadcast_arrays(np.asarray(k), inverse.reshape(n.shape))
    return table[inverse, k]


def certified_lookup(tp, n_pos, fp, n_neg, alpha):
    """:func:`certified_from_counts` for many counts, bounds read from tables.

    ``n_pos`` and ``n_neg`` broadcast against ``tp`` and ``fp`` (e.g. one size
    per row); each distinct size tabulates its bounds once. The values equal
    :func:`certified_from_counts` exactly.
    """
    lo = _cp_lookup(tp, n_pos, alpha, "lower")
    hi = _cp_lookup(fp, n_neg, alpha, "upper")
    return _kov_of_bounds(lo, hi), lo, hi


@validate_params(
    {
        "tp": ["array-like", Integral],
        "n_pos": ["array-like", Integral],
        "fp": ["array-like", Integral],
        "n_neg": ["array-like", Integral],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_comparisons": [Interval(Integral, 1, None, closed="left")],
        "return_bounds": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def certified_epsilon_lb(
    tp, n_pos, fp, n_neg, *, confidence=0.95, n_comparisons=1, return_bounds=False
):
    """Certified ε lower bound from reserved-test counts of a fixed test.

    The test (classifier, direction and threshold) must have been fixed
    without looking at these counts. With ``alpha = (1 - confidence) /
    (2 * n_comparisons)`` per bound, ``TPR_lo`` is the lower Clopper–Pearson
    bound on TPR = P_B(test says B) and ``FPR_hi`` the upper bound on FPR =
    P_A(test says B), and

    ``ε_LB = max(0, log(TPR_lo / FPR_hi), log((1 - FPR_hi) / (1 - TPR_lo)))``.

    If the mechanism is ε-DP, ``P(ε_LB > ε) <= 1 - confidence`` for each of
    ``n_comparisons`` such tests simultaneously (Bonferroni).

    Parameters
    ----------
    tp : int or array-like of int
        Positives (rows of identity B) the test assigns to B.
    n_pos : int or array-like of int
        Positive rows in the reserved test.
    fp : int or array-like of int
        Negatives (rows of identity A) the test assigns to B.
    n_neg : int or array-like of int
        Negative rows in the reserved test.
    confidence : float, default=0.95
        Simultaneous confidence level.
    n_comparisons : int, default=1
        Number of tests certified together (pairs × pre-declared thresholds).
    return_bounds : bool, default=False
        Also return ``TPR_lo`` and ``FPR_hi``.

    Returns
    -------
    epsilon_lb : float or ndarray
        The certified lower bound (finite; 0 when nothing is certified).
    tpr_lower, fpr_upper : float or ndarray
        Only if ``return_bounds``.

    Examples
    --------
    >>> from skprivacy.auditors import certified_epsilon_lb
    >>> certified_epsilon_lb(6, 6, 0, 6, n_comparisons=40)  # paper's CelebA case
    0.0
    >>> round(certified_epsilon_lb(30, 30, 0, 30, n_comparisons=40), 3)
    1.277
    """
    alpha = alpha_per_bound(confidence, n_comparisons)
    eps, lo, hi = certified_from_counts(tp, n_pos, fp, n_neg, alpha)
    if eps.ndim == 0:
        eps, lo, hi = float(eps), float(lo), float(hi)
    return (eps, lo, hi) if return_bounds else eps


@validate_params(
    {
        "n_pos": ["array-like", Integral],
        "n_neg": ["array-like", Integral],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_comparisons": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def certifiable_epsilon_ceiling(n_pos, n_neg, *, confidence=0.95, n_comparisons=1):
    """Largest ε lower bound a reserved test of this size can certify.

    The value a perfect classifier gets (``tp = n_pos``, ``fp = 0``):
    ``log(a^(1/n_pos) / (1 - a^(1/n_neg)))`` with ``a = (1 - confidence) /
    (2 n_comparisons)``. Report it next to certified values: a certificate at
    the ceiling means "as separable as this test size can show".

    Parameters
    ----------
    n_pos, n_neg : int or array-like of int
        Reserved-test rows of the two identities.
    confidence : float, default=0.95
        Simultaneous confidence level.
    n_comparisons : int, default=1
        Pairs × pre-declared thresholds certified together.

    Returns
    -------
    ceiling : float or ndarray
        The certifiable ceiling.

    Examples
    --------
    >>> from skprivacy.auditors import certifiable_epsilon_ceiling
    >>> round(certifiable_epsilon_ceiling(100, 100), 2)  # about 3.3
    3.28
    """
    return certified_epsilon_lb(
        n_pos, n_pos, 0, n_neg, confidence=confidence, n_comparisons=n_comparisons
    )


@validate_params(
    {
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def family_confidence(confidence, n_candidates):
    """Per-candidate confidence that keeps a family of certificates at ``confidence``.

    Selecting the best of several certificates (a
    :class:`~sklearn.model_selection.GridSearchCV` over ``G`` settings),
    averaging them (``F`` folds of
    :func:`~sklearn.model_selection.cross_validate`) or reporting the larger
    of certificates from different methods (e.g. the ROC-HT and the MMD-TV
    certificate) uses every candidate's certificate, so the selected, averaged
    or largest value holds only at the family-wide level
    ``1 - n_candidates * (1 - c)`` when each candidate was certified at
    confidence ``c`` (union bound). This returns the ``c`` that makes the
    family-wide level ``confidence``: ``1 - (1 - confidence) / n_candidates``.
    Pass it as the ``confidence`` of every certificate in the family.

    Parameters
    ----------
    confidence : float in (0, 1)
        The family-wide (simultaneous) confidence wanted.
    n_candidates : int >= 1
        Certificates in the family: ``G * F`` for a grid of ``G`` settings
        scored on ``F`` folds; 2 for the larger of two methods' certificates.

    Returns
    -------
    per_candidate : float
        Confidence each candidate must be certified at.

    Notes
    -----
    The union bound needs no independence between candidates (they share
    rows). It is conservative: the family-wide error is at most
    ``n_candidates * (1 - per_candidate) = 1 - confidence``.

    Examples
    --------
    >>> from skprivacy.auditors import family_confidence
    >>> round(family_confidence(0.95, 4 * 5), 4)  # 4 settings x 5 folds
    0.9975
    >>> round(family_confidence(0.95, 2), 4)  # the larger of two certificates
    0.975
    """
    return 1.0 - (1.0 - float(confidence)) / int(n_candidates)


# ------------------------------------------------------------------ thresholds
def select_threshold(y, scores, alpha):
    """Pick the threshold with the best anticipated certificate on training scores.

    Candidates are midpoints between consecutive distinct scores (region
    ``score > t``). Each is rated by the certificate its *training* counts would
    give at the per-bound level ``alpha`` (a proxy for what the reserved test
    will show), then by Youden's ``TPR - FPR``; among equally rated candidates
    the middle one is taken (the centre of a separating gap).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        0/1 labels.
    scores : ndarray of shape (n_samples,)
        Training (out-of-fold) scores, oriented so that B scores high.
    alpha : float
        Per-bound error level of the certificate to anticipate.

    Returns
    -------
    threshold : float
    anticipated : float
        The anticipated certificate on the training scores.
    """
    fpr, tpr, thr = roc_operating_points(y, scores)
    n_pos = int(np.sum(y == 1))
    n_neg = y.shape[0] - n_pos
    if thr.shape[0] <= 2:  # one distinct score: no informative cut exists
        return float(thr[-1]), 0.0
    # Cut k (1 <= k < last) admits the scores >= thr[k]: threshold between
    # thr[k] and the next lower distinct score.
    cuts = np.arange(1, thr.shape[0] - 1)
    t = (thr[cuts] + thr[cuts + 1]) / 2.0
    tp = np.rint(tpr[cuts] * n_pos)
    fp = np.rint(fpr[cuts] * n_neg)
    eps, _, _ = certified_from_counts(tp, n_pos, fp, n_neg, alpha)
    youden = tpr[cuts] - fpr[cuts]
    best = eps == eps.max()
    best &= youden == youden[best].max()
    idx = np.flatnonzero(best)
    k = idx[(len(idx) - 1) // 2]
    return float(t[k]), float(eps[k])


def select_threshold_rows(s, n_real, n_neg, tps, fps, end, alpha):
    """:func:`select_threshold` of many score rows from their ranked counts.

    Parameters
    ----------
    s : ndarray of shape (n_rows, n_columns)
        Scores of each row in descending order (padding beyond ``n_real``).
    n_real, n_neg : ndarray of shape (n_rows,)
        Scores per row, and negatives among them.
    tps, fps, end : ndarray of shape (n_rows, n_columns)
        Cumulative counts and run ends along ``s``
        (:func:`skprivacy._kernels.roc.ranked_counts`).
    alpha : float
        Per-bound error level.

    Returns
    -------
    thresholds : ndarray of shape (n_rows,)
        Equal to :func:`select_threshold` of each row.
    """
    P, n = s.shape
    n_pos = n_real - n_neg
    cols = np.arange(n)[None, :]
    # Every run end except the last real score is a cut.
    cut = end & (cols < (n_real - 1)[:, None])
    eps = certified_lookup(
        np.where(cut, tps, 0),
        n_pos[:, None],
        np.where(cut, fps, 0),
        n_neg[:, None],
        alpha,
    )[0]
    eps = np.where(cut, eps, -np.inf)
    best = cut & (eps == eps.max(axis=1, keepdims=True))
    youden = tps / n_pos[:, None] - fps / n_neg[:, None]
    ymax = np.where(best, youden, -np.inf).max(axis=1, keepdims=True)
    best &= youden == ymax
    count = best.sum(axis=1)
    rank = np.cumsum(best, axis=1)
    pick = best & (rank == ((count - 1) // 2 + 1)[:, None])
    j = np.argmax(pick, axis=1)
    rows = np.arange(P)
    t = (s[rows, j] + s[rows, np.minimum(j + 1, n - 1)]) / 2.0
    single = end.sum(axis=1) <= 1
    return np.where(single, s[rows, n_real - 1], t)


def grid_thresholds(scores, m):
    """``m`` pre-declared thresholds: training-score quantiles ``1/(m+1) .. m/(m+1)``."""
    levels = np.arange(1, m + 1) / (m + 1)
    return np.quantile(scores, levels)


# ----------------------------------------------------------------------- folds
def n_folds_for(cv, n_a, n_b):
    """Folds actually used: ``cv``, or fewer when an identity has fewer rows."""
    return int(min(cv, n_a, n_b))


def _per_fold(N, k):
    """Rows among positions ``0..N-1`` that round robin puts in each of ``k`` folds."""
    return (np.asarray(N)[..., None] - np.arange(k) + k - 1) // k


class _Stream:
    """The raw 32-bit outputs of a RandomState, drawn on demand and kept.

    Shared through a cache by the callers of :func:`fold_vectors`, possibly
    on several threads: drawing more outputs holds a lock.
    """

    def __init__(self, rng):
        self.rng = rng
        self.values = np.zeros(0, dtype=np.uint32)
        self.lock = Lock()

    def first(self, n):
        """Return the first ``n`` outputs (drawing more when needed)."""
        if n > self.values.size:
            with self.lock:
                if n > self.values.size:
                    more = self.rng.randint(
                        0, 2**32, size=max(n - self.values.size, 1024), dtype=np.uint32
                    )
                    self.values = np.concatenate([self.values, more])
        return self.values[:n]


@lru_cache(maxsize=4096)
def _class0_folds(n_a, k, fold_seed):
    """Folds of class 0, and the stream the class-1 shuffle draws from."""
    rng = np.random.RandomState(fold_seed)
    folds = np.arange(k).repeat(_per_fold(n_a, k))
    rng.shuffle(folds)
    folds = folds.astype(np.intp)
    folds.setflags(write=False)
    return folds, _Stream(rng)


# Class-1 folds by (n_a, n_b, k, fold_seed); cleared when it grows too large.
_CLASS1 = {}
_CLASS1_LOCK = Lock()
_CLASS1_MAX = 200_000


def _bounded_draws(U, group, n_b):
    """Replay ``RandomState.shuffle`` draws for many lengths, vectorised.

    NumPy's legacy shuffle of ``n`` items swaps ``x[i]`` with ``x[j]`` for
    ``i = n-1 .. 1``, ``j`` drawn uniformly on ``0..i`` by masked rejection:
    32-bit outputs ``u`` are read in turn until ``u & mask(i) <= i``, with
    ``mask(i)`` the smallest all-ones bit mask ``>= i``.

    Parameters
    ----------
    U : ndarray of shape (n_streams, n_draws) of uint32
        Output streams.
    group : ndarray of shape (n_keys,)
        The stream each key draws from (from its start).
    n_b : ndarray of shape (n_keys,)
        Length of each key's shuffle.

    Returns
    -------
    j : ndarray of shape (n_keys, max(n_b) - 1)
        ``j[:, t]``: the swap partner of step ``t`` (``i = n_b - 1 - t``);
        meaningless where ``i < 1``.
    complete : bool
        False if some key ran out of outputs (draw more and call again).
    """
    G, M = U.shape
    K = len(n_b)
    top = int(n_b.max()) if K else 0
    if top < 2:
        return np.zeros((K, 0), dtype=np.intp), True
    bounds = np.arange(top)
    mask = np.zeros(top, dtype=np.int64)
    mask[1:] = (1 << np.floor(np.log2(bounds[1:])).astype(np.int64) + 1) - 1
    # First accepted position at or after p, per stream, bound and p.
    positions = np.arange(M, dtype=np.int32)
    nxt = np.empty((G, top, M + 1), dtype=np.int32)
    nxt[:, :, M] = M
    nxt[:, 0, :M] = positions
    values = U.astype(np.int64)
    for i in range(1, top):
        nxt[:, i, :M] = np.where((values & mask[i]) <= i, positions, M)
    np.minimum.accumulate(nxt[:, :, ::-1], axis=2, out=nxt[:, :, ::-1])
    p = np.zeros(K, dtype=np.intp)
    j = np.zeros((K, top - 1), dtype=np.intp)
    complete = True
    for t in range(top - 1):
        i = n_b - 1 - t
        active = i >= 1
        bound = np.maximum(i, 1)
        q = nxt[group, bound, p]
        complete &= bool(np.all(q[active] < M))
        q = np.minimum(q, M - 1)
        j[:, t] = np.where(active, values[group, q] & mask[bound], 0)
        p = np.where(active, q + 1, p)
    return j, complete


def _fill_class1(keys, k, fold_seed):
    """Compute and cache the class-1 folds of ``(n_a, n_b)`` keys, all at once."""
    keys = np.asarray(keys, dtype=np.intp).reshape(-1, 2)
    if not len(keys):
        return
    sizes_a, group = np.unique(keys[:, 0], return_inverse=True)
    n_a, n_b = keys[:, 0], keys[:, 1]
    draws = 2 * int(n_b.max()) + 64
    while True:
        U = np.stack(
            [_class0_folds(a, k, fold_seed)[1].first(draws) for a in sizes_a.tolist()]
        )
        j, complete = _bounded_draws(U, group.ravel(), n_b)
        if complete:
            break
        draws *= 2
    # Fold labels in sorted order (the round-robin allocation), then the swaps.
    top = int(n_b.max())
    ends = np.cumsum(_per_fold(n_a + n_b, k) - _per_fold(n_a, k), axis=1)
    x = (np.arange(top)[None, None, :] >= ends[:, :-1, None]).sum(axis=1)
    rows = np.arange(len(keys))
    for t in range(top - 1):
        i = n_b - 1 - t
        act = np.flatnonzero(i >= 1)
        r, ii, jj = rows[act], i[act], j[act, t]
        xi = x[r, ii]
        x[r, ii] = x[r, jj]
        x[r, jj] = xi
    with _CLASS1_LOCK:
        if len(_CLASS1) + len(keys) > _CLASS1_MAX:
            _CLASS1.clear()
        for r, (a, b) in enumerate(keys.tolist()):
            folds = x[r, :b].astype(np.intp)
            folds.setflags(write=False)
            _CLASS1[(a, b, k, fold_seed)] = folds


def prepare_fold_vectors(n_a, n_b, n_folds, fold_seed):
    """Compute the folds of many ``(n_a, n_b)`` pairs of sizes at once.

    Later :func:`fold_vectors` calls with these sizes read them from a cache;
    ``n_folds`` is one number or one per pair (``min(cv, n_a, n_b)``).
    """
    n_a = np.asarray(n_a, dtype=np.intp).ravel()
    n_b = np.asarray(n_b, dtype=np.intp).ravel()
    k_all = np.broadcast_to(np.asarray(n_folds, dtype=np.intp), n_a.shape)
    fold_seed = int(fold_seed)
    for k in np.unique(k_all).tolist():
        if k < 2:
            continue
        at = k_all == k
        keys = np.unique(np.stack([n_a[at], n_b[at]], axis=1), axis=0)
        missing = [
            (a, b) for a, b in keys.tolist() if (a, b, k, fold_seed) not in _CLASS1
        ]
        _fill_class1(missing, k, fold_seed)


def fold_vectors(n_a, n_b, n_folds, fold_seed):
    """Test fold of each row of A and of B under ``StratifiedKFold``.

    The folds of ``StratifiedKFold(n_folds, shuffle=True,
    random_state=fold_seed)`` on the labels ``n_a`` zeros then ``n_b`` ones,
    computed without building the splitter: the fold counts per class are
    allocated round robin over the sorted labels, then each class's fold
    labels are shuffled by one ``RandomState(fold_seed)`` (class 0 first).
    Class 0's folds depend on ``n_a`` only, so the generator state after
    them is shared by every ``n_b``, and the class-1 shuffles of many sizes
    are replayed at once from its output stream
    (:func:`prepare_fold_vectors`). Equal to scikit-learn's split (tested).

    Parameters
    ----------
    n_a, n_b : int
        Rows of the two identities (at least ``n_folds`` each).
    n_folds : int
        Number of folds (at least 2).
    fold_seed : int
        The ``random_state`` of the splitter.

    Returns
    -------
    folds_a : ndarray of shape (n_a,)
        Fold of each row of A (read-only).
    folds_b : ndarray of shape (n_b,)
        Fold of each row of B (read-only).
    """
    n_a, n_b, n_folds, fold_seed = int(n_a), int(n_b), int(n_folds), int(fold_seed)
    key = (n_a, n_b, n_folds, fold_seed)
    if key not in _CLASS1:
        _fill_class1([(n_a, n_b)], n_folds, fold_seed)
    return _class0_folds(n_a, n_folds, fold_seed)[0], _CLASS1[key]


@lru_cache(maxsize=256)
def stratified_folds(n_a, n_b, n_folds, fold_seed):
    """``(train, test)`` index arrays of the folds of :func:`fold_vectors`.

    The rows are ``n_a`` rows of A followed by ``n_b`` rows of B, as
    ``StratifiedKFold.split`` would index them.
    """
    fa, fb = fold_vectors(n_a, n_b, n_folds, fold_seed)
    f = np.r_[fa, fb]
    rows = np.arange(f.shape[0])
    return tuple((rows[f != i], rows[f == i]) for i in range(n_folds))


# -------------------------------------------------------------- reserved test
def _test_count(n_rows, test_size):
    return min(max(math.ceil(test_size * n_rows), 1), n_rows - 1)


def reserved_test_mask(data, test_size, seed):
    """Stratified, seeded reserved-test rows; duplicate groups stay on one side.

    Parameters
    ----------
    data : IdentityData
        Validated rows.
    test_size : float in (0, 1)
        Fraction of each identity's rows to reserve.
    seed : int
        Entropy of the split.

    Returns
    -------
    mask : ndarray of shape (n_rows,) of bool
        True for reserved-test rows.
    groups : ndarray of shape (n_rows,)
        Duplicate group of each row, -1 for none
        (:func:`skprivacy.utils.duplicate_groups`).

    Notes
    -----
    Without duplicate rows, each identity reserves ``ceil(test_size * n)``
    rows (at least one, and at least one left for training), drawn uniformly
    at random. Exact and near-duplicate rows (a duplicate group) are not
    independent draws: a copy on each side would let a classifier memorise
    the test. Each group is then one unit: an identity's units are drawn in
    random order into the test until it holds ``ceil(test_size * n)`` rows
    (units already placed by an earlier identity, for a group that spans
    identities, count where they lie), never taking the last unit that leaves
    rows for training. The counts are then met approximately.
    """
    rng = spawn_generator(seed, 2**31)
    order, starts = data.order()
    mask = np.zeros(data.X.shape[0], dtype=bool)
    groups, counts = duplicate_groups(data.X)
    if counts["n_groups"] == 0:
        for i in range(data.n_identities):
            rows = order[starts[i] : starts[i + 1]]
            n_test = _test_count(len(rows), test_size)
            mask[rng.permutation(rows)[:n_test]] = True
        return mask, groups
    # A unit is a duplicate group, or a single row outside every group.
    unit = np.where(groups >= 0, groups, counts["n_groups"] + np.arange(groups.size))
    placed = {}
    for i in range(data.n_identities):
        rows = order[starts[i] : starts[i + 1]]
        target = _test_count(len(rows), test_size)
        size = Counter(unit[rows].tolist())
        n_test = sum(n for u, n in size.items() if placed.get(u) is True)
        n_train = sum(n for u, n in size.items() if placed.get(u) is False)
        free = [u for u in size if u not in placed]
        remaining = sum(size[u] for u in free)
        for j in rng.permutation(len(free)).tolist():
            u = free[j]
            remaining -= size[u]
            # To the test while it is short, unless no training row would remain.
            placed[u] = n_test < target and n_train + remaining > 0
            if placed[u]:
                n_test += size[u]
            else:
                n_train += size[u]
    in_test = np.array([placed.get(u, False) for u in unit.tolist()])
    mask[in_test] = True
    return mask, groups
