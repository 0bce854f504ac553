# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reserved-test ROC-HT certificates: simultaneous ε lower bounds with confidence.

Per identity pair a classifier, its
score direction and its threshold(s) are fixed on training rows only; on
reserved test rows the true/false positives are counted, and exact
Clopper–Pearson bounds on TPR and FPR give an ε lower bound through the
Kairouz–Oh–Viswanath inequalities. A Bonferroni correction over every
certified pair, both bounds and every pre-declared threshold makes the
statement simultaneous: if every pair's mechanism is ε-DP, the probability
that *any* certified lower bound exceeds its pair's true ε is at most
``1 - confidence``.
"""

import hashlib
import math
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from scipy.stats import beta
from sklearn.base import clone
from sklearn.metrics import auc

from skprivacy.auditors._base import (
    _IN_PROCESS_SECONDS,
    FLOP_RATE,
    BasePairAuditor,
    PairAuditContext,
    _entropy,
)
from skprivacy.auditors._description import describe_certifier
from skprivacy.auditors._roc import (
    _check_classifier,
    _seeded,
    n_folds_for,
    out_of_fold_scores,
    pair_fit_context,
    pair_rows,
    positive_scores,
    roc_operating_points,
)
from skprivacy.auditors._roc_fast import (
    PairEstimators,
    certify_pairs,
    fast_kind,
    identity_means,
    plan_chunks,
    shared_rows,
    with_shared_covariance,
)
from skprivacy.utils import IdentityData, validate_identity_data
from skprivacy.utils._sklearn import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_params,
)
from skprivacy.utils._threads import limit_blas_threads

__all__ = [
    "ROCHTCertifier",
    "certifiable_epsilon_ceiling",
    "certified_epsilon_lb",
    "clopper_pearson_bound",
    "family_confidence",
]


# --------------------------------------------------------------------- maths
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


def _certified(tp, n_pos, fp, n_neg, alpha):
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
    # KOV at the worst case of the two one-sided bounds (each at level alpha).
    tpr_lo = np.asarray(clopper_pearson_bound(tp, n_pos, alpha, side="lower"))
    fpr_hi = np.asarray(clopper_pearson_bound(fp, n_neg, alpha, side="upper"))
    with np.errstate(divide="ignore"):
        e1 = np.log(tpr_lo) - np.log(fpr_hi)
        e2 = np.log1p(-fpr_hi) - np.log1p(-tpr_lo)
    eps = np.maximum(0.0, np.maximum(e1, e2))
    return eps, tpr_lo, fpr_hi


def _alpha_per_bound(confidence, n_comparisons):
    return (1.0 - confidence) / (2.0 * n_comparisons)


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
    alpha = _alpha_per_bound(confidence, n_comparisons)
    eps, lo, hi = _certified(tp, n_pos, fp, n_neg, alpha)
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
    :class:`~sklearn.model_selection.GridSearchCV` over ``G`` settings) or
    averaging them (``F`` folds of
    :func:`~sklearn.model_selection.cross_validate`) uses every candidate's
    certificate, so the selected or averaged value holds only at the
    family-wide level ``1 - n_candidates * (1 - c)`` when each candidate
    was certified at confidence ``c`` (union bound). This returns the ``c``
    that makes the family-wide level ``confidence``:
    ``1 - (1 - confidence) / n_candidates``. Pass it as the ``confidence``
    of every :class:`ROCHTCertifier` in the family.

    Parameters
    ----------
    confidence : float in (0, 1)
        The family-wide (simultaneous) confidence wanted.
    n_candidates : int >= 1
        Certificates in the family: ``G * F`` for a grid of ``G`` settings
        scored on ``F`` folds.

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
    """
    return 1.0 - (1.0 - float(confidence)) / int(n_candidates)


def row_hashes(X):
    """BLAKE2b digests of the rows of a 2-D float64 array (exact content).

    Two rows get the same digest exactly when their bytes are equal (up to
    the 128-bit collision probability). Used to recognise rows that a
    :class:`ROCHTCertifier` was trained on.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated rows.

    Returns
    -------
    digests : ndarray of shape (n_samples,), dtype ``S16``
        One digest per row.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.auditors._certify import row_hashes
    >>> h = row_hashes(np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    # -0.0 and 0.0 are the same row for a classifier; so are all NaN payloads
    # (validated rows hold no NaN, but be exact about what "same" means).
    X = X + 0.0
    return np.array(
        [hashlib.blake2b(row.tobytes(), digest_size=16).digest() for row in X],
        dtype="S16",
    ).reshape(X.shape[0])


def select_threshold(y, scores, alpha):
    """Pick the threshold with the best anticipated certificate on training scores.

    Candidates are midpoints between consecutive distinct scores (region
    ``score > t``). Each is rated by the certificate its *training* counts would
    give at the per-bound level ``alpha`` (a proxy for what the reserved test
    will show), then by Youden's ``TPR - FPR``; among equally rated candidates
    the middle one is taken (the centre of a separating gap).

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
    eps, _, _ = _certified(tp, n_pos, fp, n_neg, alpha)
    youden = tpr[cuts] - fpr[cuts]
    best = eps == eps.max()
    best &= youden == youden[best].max()
    idx = np.flatnonzero(best)
    k = idx[(len(idx) - 1) // 2]
    return float(t[k]), float(eps[k])


def _grid_thresholds(scores, m):
    # Pre-declared set: m quantiles of the training scores, fixed before the
    # reserved test is looked at.
    levels = np.arange(1, m + 1) / (m + 1)
    return np.quantile(scores, levels)


# ---------------------------------------------------------------- pair work
def _train_pairs(clf, cv, thresholds, alpha, data, state, pairs, context):
    """Fit classifier, direction and threshold(s) of each pair on training rows.

    ``context`` gives the pair generators and fold seed of the audit (the same
    per-pair generators as :class:`ROCHTAuditor` draws from).
    """
    out = []
    with pair_fit_context():
        for a, b in pairs:
            X, y = pair_rows(data, state, a, b)
            na, nb = int((y == 0).sum()), int((y == 1).sum())
            template = _seeded(clf, context.pair_rng(a, b))
            k = n_folds_for(cv, na, nb)
            estimator = clone(template).fit(X, y)
            if k >= 2:
                scores = out_of_fold_scores(template, X, y, k, context.seed)
            else:  # one training row per identity: only in-sample scores exist
                scores = positive_scores(estimator, X)
            train_auc = float(auc(*roc_operating_points(y, scores)[:2]))
            direction = 1 if train_auc >= 0.5 else -1
            s = direction * scores
            if thresholds == "train":
                t, _ = select_threshold(y, s, alpha)
                t = np.array([t])
            else:
                t = _grid_thresholds(s, thresholds)
            out.append((estimator, t, direction, train_auc, na, nb))
    return out


def _fast_certify_chunk(
    Z_train, train_index, Z_test, test_index, pairs, cv, seed, thresholds, a1, a2
):
    with limit_blas_threads():
        return certify_pairs(
            Z_train,
            train_index,
            Z_test,
            test_index,
            pairs,
            cv,
            seed,
            thresholds,
            a1,
            a2,
        )


def _subset(data, mask):
    codes = data.codes[mask]
    return IdentityData(
        X=data.X[mask],
        y=data.y[mask],
        codes=codes,
        identities=data.identities,
        counts=np.bincount(codes, minlength=data.n_identities),
        kept=mask,
        drop_report=data.drop_report,
    )


def reserved_test_mask(data, test_size, seed):
    """Stratified, seeded reserved-test rows: ``ceil(test_size * n)`` per identity.

    Every identity keeps at least one training and one test row.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31,)))
    order, starts = data.order()
    mask = np.zeros(data.X.shape[0], dtype=bool)
    for i in range(data.n_identities):
        rows = order[starts[i] : starts[i + 1]]
        n_test = min(max(math.ceil(test_size * len(rows)), 1), len(rows) - 1)
        mask[rng.permutation(rows)[:n_test]] = True
    return mask


# -------------------------------------------------------------------- estimator
class ROCHTCertifier(BasePairAuditor):
    """Reserved-test ROC-HT certificates: simultaneous ε lower bounds.

    The confidence-carrying version of :class:`ROCHTAuditor`. Per identity
    pair ``(A, B)`` (label 0 / 1), on **training rows only**: a classifier is
    fitted, its score direction is fixed (so that B scores high, judged by
    out-of-fold AUC) and its threshold(s) chosen from out-of-fold scores. On
    **reserved test rows** the counts ``tp`` (B rows scored above the
    threshold) and ``fp`` (A rows scored above it) give exact Clopper–Pearson
    bounds ``TPR_lo`` and ``FPR_hi`` and the certified

    ``ε_LB = max(0, log(TPR_lo / FPR_hi), log((1 - FPR_hi) / (1 - TPR_lo)))``.

    Each bound has level ``(1 - confidence) / (2 K m)``, where ``K`` is the
    number of pairs actually certified (or the declared ``n_comparisons``)
    and ``m`` the number of pre-declared
    thresholds, so with probability at least ``confidence`` **every** reported
    ε_LB is below its pair's true ε. This is a certificate, not a point
    estimate.

    Two ways to use it:

    * **Reserved test inside the data** (``test_size`` a float, the default):
      ``fit(X, y)`` splits every identity's rows (stratified, seeded) into
      train and reserved test, trains on the former and certifies on the
      latter; ``score()`` returns the largest certified ε_LB.
    * **scikit-learn shape** (any ``test_size``; use ``test_size=None`` to
      train on all of ``X_train``): ``fit(X_train, y_train)`` then
      ``score(X_test, y_test)`` certifies on held-out data and returns the
      largest simultaneous ε_LB; :meth:`certify` returns the per-pair table.
      Rows the tests were trained on are refused (``ValueError``) unless
      ``allow_seen_rows=True`` drops them.

    Parameters
    ----------
    classifier : estimator or None, default=None
        Binary classifier with ``predict_proba`` or ``decision_function``;
        ``None`` means ``LogisticRegression(C=1.0, solver="lbfgs",
        max_iter=1000)``. A ``random_state=None`` is replaced by a per-pair
        seed derived from ``random_state``. A
        :class:`~skprivacy.CentroidClassifier` or
        :class:`~skprivacy.PooledLDAClassifier` takes the shared-product fast
        path (same folds, thresholds and certificates as the generic path);
        its ``estimators_`` are built on access.
    cv : int, default=5
        Folds of the out-of-fold scores on the training rows that fix the
        direction and threshold(s) (fewer if an identity has fewer training
        rows; in-sample scores if it has one).
    test_size : float in (0, 1) or None, default=0.3
        Fraction of each identity's rows reserved for the test in ``fit``
        (``ceil``; at least one train and one test row). ``None``: train on
        everything and certify only through ``score(X_test, y_test)``.
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence over all certified pairs, both bounds and all
        thresholds.
    thresholds : "train" or int >= 2, default="train"
        ``"train"``: one threshold per pair, chosen on the training rows (the
        out-of-fold cut with the best anticipated certificate). An int ``m``:
        a pre-declared set of ``m`` thresholds per pair (quantiles of the
        training out-of-fold scores at levels ``1/(m+1), ..., m/(m+1)``); the
        best one on the reserved test is reported and the search is paid for
        with ``m`` in the Bonferroni correction.
    n_pairs : int or None, default=200
        Pairs of the seeded pair ordering to certify (``None``: all). Ignored
        when ``pairs`` is given.
    pairs : sequence of (id_a, id_b) or None, default=None
        Certify exactly these identity pairs (labels as in ``y``; ``id_b`` is
        the positive class) instead of a prefix of the seeded ordering, e.g. a
        paper's selected pairs.
    n_comparisons : int or None, default=None
        ``K`` of the Bonferroni correction. ``None``: the number of pairs
        actually certified. An int declares a larger family (e.g. 20
        selected pairs reported under the 40-pair correction shared with
        other conditions); it must be at least the number of pairs certified
        (``ValueError`` otherwise) and, for the guarantee to hold, **fixed
        before the test data are seen**, as must ``pairs``: choosing pairs or
        ``K`` after looking at certificates makes the selection part of the
        family.
    random_state : int, RandomState instance or None, default=0
        Seeds the pair ordering, the reserved-test split and the folds.
    n_jobs : int or None, default=None
        Parallel jobs over chunks of pairs (joblib).

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per pair: ``id_a``, ``id_b``, ``epsilon`` (certified ε_LB;
        NaN when ``test_size=None``), ``ceiling`` (what a perfect classifier
        would certify with these test sizes), ``tp``, ``n_pos``, ``fp``,
        ``n_neg``, ``tpr_lower``, ``fpr_upper``, ``threshold`` (the one
        reported), ``direction`` (+1: high score means B), ``train_auc``
        (out-of-fold AUC on training rows), ``n_train_a``, ``n_train_b``.
    summary_ : float
        Largest certified ε_LB over the pairs (``score()``).
    n_certified_ : int
        Pairs certified in ``fit`` (0 when ``test_size=None``).
    n_comparisons_ : int
        ``K`` used in ``fit``: ``n_comparisons``, or ``n_certified_`` when it
        is None (the fitted pairs when ``test_size=None``).
    alpha_per_bound_ : float
        ``(1 - confidence) / (2 K m)`` used in ``fit``.
    ceiling_ : float
        Largest ``ceiling`` over the pairs.
    estimators_ : sequence of estimators
        The fitted per-pair classifiers, aligned with ``pairs_`` (a list; on
        the fast path a sequence that builds each one on access).
    thresholds_ : ndarray of shape (n_pairs, m)
        Pre-declared thresholds per pair (on ``direction * score``).
    directions_ : ndarray of shape (n_pairs,)
        Score direction per pair.
    seen_row_hashes_ : ndarray of dtype ``S16``
        Sorted digests (:func:`row_hashes`) of the validated rows the per-pair
        tests were trained on; :meth:`certify` and :meth:`score` refuse such
        rows.
    n_seen_rows_dropped_ : int
        Rows seen in fit that the last ``certify``/``score`` call with
        ``allow_seen_rows=True`` dropped (0 after ``fit``).
    pairs_, identities_, drop_report_, summary_kind_, guarantee_, \
pair_details_, n_features_in_, feature_names_in_ :
        See :class:`~skprivacy.auditors.BasePairAuditor`.

    See Also
    --------
    ROCHTAuditor : The out-of-fold point estimate.
    certified_epsilon_lb : The bound from counts.
    certifiable_epsilon_ceiling : The best a test of a given size can do.

    Notes
    -----
    Soundness rests on three facts: the classifier, direction and thresholds
    depend on training rows only; the reserved-test rows are independent draws
    from the two identities' distributions; and Clopper–Pearson bounds are
    exact. The union bound then needs no independence between pairs (an
    identity's test rows are reused by all of its pairs). The
    ``benchmarks/soundness.py`` simulation checks the guarantee on mechanisms
    with known ε.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy import ROCHTCertifier
    >>> X, ids = make_identity_embeddings(4, 40, 16, random_state=0)
    >>> cert = ROCHTCertifier(n_pairs=3).fit(X, ids)
    >>> cert.n_certified_, cert.score() <= cert.ceiling_
    (3, True)
    """

    _summary = "max"
    _guarantee = "certificate"

    _parameter_constraints: dict = {
        **BasePairAuditor._parameter_constraints,
        "classifier": [HasMethods(["fit"]), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "test_size": [Interval(Real, 0, 1, closed="neither"), None],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "thresholds": [
            StrOptions({"train"}),
            Interval(Integral, 2, None, closed="left"),
        ],
        "pairs": ["array-like", None],
        "n_comparisons": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        classifier=None,
        *,
        cv=5,
        test_size=0.3,
        confidence=0.95,
        thresholds="train",
        n_pairs=200,
        pairs=None,
        n_comparisons=None,
        random_state=0,
        n_jobs=None,
    ):
        self.classifier = classifier
        self.cv = cv
        self.test_size = test_size
        self.confidence = confidence
        self.thresholds = thresholds
        self.n_pairs = n_pairs
        self.pairs = pairs
        self.n_comparisons = n_comparisons
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _n_thresholds(self):
        return 1 if self.thresholds == "train" else int(self.thresholds)

    def _family_size(self, n_certified):
        """``K`` of the Bonferroni correction: declared, or the pairs certified."""
        if self.n_comparisons is None:
            return int(n_certified)
        if self.n_comparisons < n_certified:
            raise ValueError(
                f"n_comparisons={self.n_comparisons} is smaller than the "
                f"{n_certified} pairs certified; the declared family must contain "
                "every certified pair."
            )
        return int(self.n_comparisons)

    def _fit_pairs(self, data):
        """Identity codes of the pairs to certify (``pairs`` or the protocol)."""
        if self.pairs is None:
            return BasePairAuditor._protocol_pairs(self, data, self.random_state)
        try:
            requested = [tuple(p) for p in self.pairs]
        except TypeError:
            requested = None
        if not requested or any(len(p) != 2 for p in requested):
            raise ValueError(
                "pairs must be a non-empty sequence of (id_a, id_b) identity "
                f"label pairs; got {self.pairs!r}."
            )
        code_of = {label: c for c, label in enumerate(data.identities.tolist())}
        codes, seen = [], set()
        for la, lb in requested:
            la = la.item() if hasattr(la, "item") else la
            lb = lb.item() if hasattr(lb, "item") else lb
            for label in (la, lb):
                if label not in code_of:
                    raise ValueError(
                        f"pairs names identity {label!r}, which is not among the "
                        "audited identities (unknown, or excluded for having too "
                        "few usable rows; see drop_report_)."
                    )
            if la == lb:
                raise ValueError(
                    f"pairs contains ({la!r}, {lb!r}): a pair needs two identities."
                )
            key = frozenset((la, lb))
            if key in seen:
                raise ValueError(f"pairs contains the pair ({la!r}, {lb!r}) twice.")
            seen.add(key)
            codes.append((code_of[la], code_of[lb]))
        return np.asarray(codes, dtype=np.intp)

    # ----------------------------------------------------------- certify hooks
    def _prepare_audit(self, data, pairs):
        if not hasattr(self, "estimators_"):
            raise ValueError(
                "ROCHTCertifier certifies held-out data with per-pair tests fitted "
                "beforehand; call fit first (for split-half controls of ROC-HT use "
                "ROCHTAuditor)."
            )
        # Map each pair of `data` (by labels) to its fitted classifier.
        index = {
            (la, lb): i
            for i, (la, lb) in enumerate(self.identities_[self.pairs_].tolist())
        }
        labels = data.identities[pairs].tolist()
        models = {}
        for (a, b), (la, lb) in zip(pairs.tolist(), labels):
            i = index[(la, lb)]
            models[(a, b)] = (
                self.estimators_[i],
                self.thresholds_[i],
                int(self.directions_[i]),
                float(self.train_auc_[i]),
                int(self.train_counts_[i, 0]),
                int(self.train_counts_[i, 1]),
            )
        return {"order": data.order(), "models": models}

    def _audit_pairs(self, data, pairs, context):
        m = self._n_thresholds()
        k_family = self._family_size(context.n_pairs_total)
        alpha = _alpha_per_bound(self.confidence, k_family * m)
        cols = {
            k: []
            for k in (
                "epsilon",
                "ceiling",
                "tp",
                "n_pos",
                "fp",
                "n_neg",
                "tpr_lower",
                "fpr_upper",
                "threshold",
                "direction",
                "train_auc",
                "n_train_a",
                "n_train_b",
            )
        }
        models, order = context.state["models"], context.state["order"]
        with pair_fit_context():
            for a, b in pairs.tolist():
                est, thr, direction, train_auc, nta, ntb = models[(a, b)]
                X, y = pair_rows(data, order, a, b)
                s = direction * positive_scores(est, X)
                above = s[None, :] > thr[:, None]
                pos = y == 1
                tp = (above & pos).sum(axis=1)
                fp = (above & ~pos).sum(axis=1)
                n_pos, n_neg = int(pos.sum()), int((~pos).sum())
                eps, lo, hi = _certified(tp, n_pos, fp, n_neg, alpha)
                j = int(np.argmax(eps))
                ceiling = _certified(n_pos, n_pos, 0, n_neg, alpha)[0]
                for key, val in (
                    ("epsilon", eps[j]),
                    ("ceiling", float(ceiling)),
                    ("tp", int(tp[j])),
                    ("n_pos", n_pos),
                    ("fp", int(fp[j])),
                    ("n_neg", n_neg),
                    ("tpr_lower", lo[j]),
                    ("fpr_upper", hi[j]),
                    ("threshold", thr[j]),
                    ("direction", direction),
                    ("train_auc", train_auc),
                    ("n_train_a", nta),
                    ("n_train_b", ntb),
                ):
                    cols[key].append(val)
        return {k: np.asarray(v) for k, v in cols.items()}

    def _audit(self, data, random_state):
        # Certify held-out `data` with the fitted per-pair tests: every fitted
        # pair whose two identities are present, in the fitted orientation.
        # Identities with no row left (after dropping seen rows) are absent.
        code_of = {
            label: c
            for c, label in enumerate(data.identities.tolist())
            if data.counts[c] > 0
        }
        pairs = [
            (code_of[la], code_of[lb])
            for la, lb in self.identities_[self.pairs_].tolist()
            if la in code_of and lb in code_of
        ]
        if not pairs:
            raise ValueError(
                "None of the fitted identity pairs has both identities in the "
                "held-out data; nothing can be certified."
            )
        pairs = np.asarray(pairs, dtype=np.intp)
        results, details = self._audit_table(data, pairs, _entropy(random_state))
        return pairs, results, details

    def _validate_test(self, X, y):
        # Held-out data: one row per identity is enough to be counted.
        return validate_identity_data(
            self, X, y, reset=False, min_samples_per_identity=1
        )

    # ------------------------------------------------------------------ public
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the per-pair tests (and certify the reserved test, if any).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings (rows are L2-normalised; unusable rows are dropped and
            reported).
        y : array-like of shape (n_samples,)
            Identity label of each row.

        Returns
        -------
        self : object
            The fitted certifier.
        """
        clf = _check_classifier(self.classifier, type(self).__name__)
        data = self._validate(X, y, reset=True)
        pairs = self._fit_pairs(data)
        seed = _entropy(self.random_state)
        m = self._n_thresholds()
        alpha = _alpha_per_bound(self.confidence, self._family_size(len(pairs)) * m)
        if self.test_size is not None:
            test_mask = reserved_test_mask(data, self.test_size, seed)
            train = _subset(data, ~test_mask)
        else:
            test_mask, train = None, data
        # An LDA whitens by the pooled covariance of the training rows only.
        clf = with_shared_covariance(clf, train.X, train.codes, train.n_identities)
        self.identities_ = data.identities
        self.drop_report_ = data.drop_report
        self.pairs_ = pairs
        # The rows the per-pair tests were trained on: certify/score refuse
        # them (a certificate from training rows is no certificate).
        self.seen_row_hashes_ = np.unique(row_hashes(train.X))
        self.n_seen_rows_dropped_ = 0
        if fast_kind(clf) is not None:
            test = _subset(data, test_mask) if test_mask is not None else None
            return self._fit_fast(clf, train, test, pairs, seed, alpha)
        state = train.order()
        context = PairAuditContext(n_pairs_total=len(pairs), seed=seed)
        chunks = [np.asarray(c, dtype=np.intp) for c in self._make_chunks(train, pairs)]
        outs = Parallel(n_jobs=self.n_jobs)(
            delayed(_train_pairs)(
                clf, self.cv, self.thresholds, alpha, train, state, pairs[c], context
            )
            for c in chunks
        )
        fitted = [None] * len(pairs)
        for c, out in zip(chunks, outs):
            for i, item in zip(c.tolist(), out):
                fitted[i] = item
        self.estimators_ = [f[0] for f in fitted]
        self.thresholds_ = np.vstack([f[1] for f in fitted])
        self.directions_ = np.array([f[2] for f in fitted], dtype=np.intp)
        self.train_auc_ = np.array([f[3] for f in fitted])
        self.train_counts_ = np.array([[f[4], f[5]] for f in fitted], dtype=np.intp)
        self.summary_kind_ = self._summary_kind()
        self.guarantee_ = self._guarantee_kind()
        self.pair_details_ = {}
        if test_mask is not None:
            test = _subset(data, test_mask)
            _, results, _ = self._audit(test, self.random_state)
            self.n_certified_ = len(results)
            self.n_comparisons_ = self._family_size(self.n_certified_)
            self.alpha_per_bound_ = _alpha_per_bound(
                self.confidence, self.n_comparisons_ * m
            )
            self.summary_ = float(results["epsilon"].max())
            self.ceiling_ = float(results["ceiling"].max())
        else:
            results = self._untested_results(pairs)
        self.results_ = results
        return self

    def _untested_results(self, pairs):
        """Per-pair table of the fitted tests when no rows were reserved to certify.

        Both fit paths (generic and shared-product) end here without a test
        split: the tests are fitted, nothing is certified yet.
        """
        nan = np.full(len(pairs), np.nan)
        self.n_certified_ = 0
        self.n_comparisons_ = self._family_size(len(pairs))
        self.alpha_per_bound_ = float("nan")
        self.summary_ = float("nan")
        self.ceiling_ = float("nan")
        return pd.DataFrame(
            {
                "id_a": self.identities_[pairs[:, 0]],
                "id_b": self.identities_[pairs[:, 1]],
                "epsilon": nan,
                "ceiling": nan,
                "threshold": self.thresholds_[:, 0],
                "direction": self.directions_,
                "train_auc": self.train_auc_,
                "n_train_a": self.train_counts_[:, 0],
                "n_train_b": self.train_counts_[:, 1],
            }
        )

    def _drop_seen_rows(self, X, y, allow_seen_rows):
        """Return the held-out data without the rows seen in fit, and their count."""
        data = self._validate_test(X, y)
        seen = np.isin(row_hashes(data.X), self.seen_row_hashes_)
        n_seen = int(seen.sum())
        if n_seen and not allow_seen_rows:
            raise ValueError(
                f"{n_seen} of the {seen.size} rows passed to certify/score were "
                "used to train the per-pair tests in fit; a certificate computed on "
                "training rows is not a certificate. Certify on held-out rows, or "
                "pass allow_seen_rows=True to drop them (the count is recorded in "
                "n_seen_rows_dropped_)."
            )
        if n_seen:
            warnings.warn(
                f"Dropped {n_seen} of {seen.size} rows seen in fit before "
                "certifying (allow_seen_rows=True).",
                UserWarning,
                stacklevel=4,
            )
            data = _subset(data, ~seen)
        return data, n_seen

    def _certify_table(self, X, y, allow_seen_rows):
        data, n_seen = self._drop_seen_rows(X, y, allow_seen_rows)
        present = np.bincount(data.codes, minlength=data.n_identities) > 0
        if n_seen and not _any_fitted_pair(self, data.identities[present]):
            # Everything certifiable was dropped: the trivial certificate.
            results = self._empty_results()
        else:
            _, results, _ = self._audit(data, self.random_state)
        results.attrs["n_seen_rows_dropped"] = n_seen
        return results, n_seen

    def _empty_results(self):
        columns = ["id_a", "id_b", "epsilon", "ceiling", "tp", "n_pos", "fp"]
        columns += ["n_neg", "tpr_lower", "fpr_upper", "threshold", "direction"]
        columns += ["train_auc", "n_train_a", "n_train_b"]
        return pd.DataFrame({c: [] for c in columns})

    def _fit_fast(self, clf, train, test, pairs, seed, alpha):
        """Shared-product path of :meth:`fit` (CentroidClassifier / PooledLDA)."""
        m = self._n_thresholds()
        Z_train = shared_rows(clf, train.X)
        order_tr, starts_tr = train.order()
        train_index = (order_tr, starts_tr, train.counts)
        if test is not None:
            Z_test = shared_rows(clf, test.X)
            order_te, starts_te = test.order()
            test_index = (order_te, starts_te, test.counts)
            n_certified = len(pairs)
            alpha_test = _alpha_per_bound(
                self.confidence, self._family_size(n_certified) * m
            )
        else:
            Z_test, test_index, alpha_test = None, None, float("nan")
        counts = train.counts if test is None else train.counts + test.counts
        keys = np.stack([counts[pairs[:, 0]], counts[pairs[:, 1]]], axis=1)
        chunks = plan_chunks(keys, pairs, keys.max(axis=1))
        rows = float(counts[pairs].sum())
        seconds = rows * 8.0 * train.X.shape[1] / FLOP_RATE
        task = delayed(_fast_certify_chunk)
        args = (Z_train, train_index, Z_test, test_index)
        settings = (self.cv, seed, self.thresholds, alpha, alpha_test)
        if effective_n_jobs(self.n_jobs) == 1 or seconds < _IN_PROCESS_SECONDS:
            outs = [_fast_certify_chunk(*args, pairs[c], *settings) for c in chunks]
        else:
            outs = Parallel(n_jobs=self.n_jobs)(
                task(*args, pairs[c], *settings) for c in chunks
            )
        order = np.concatenate(chunks)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        cols = {k: np.concatenate([o[k] for o in outs])[inverse] for k in outs[0]}
        means = identity_means(Z_train, order_tr, starts_tr)
        self.estimators_ = PairEstimators(clf, means, pairs, train.X.shape[1])
        self.thresholds_ = cols.pop("thresholds")
        self.directions_ = cols["direction"]
        self.train_auc_ = cols["train_auc"]
        self.train_counts_ = np.stack([cols["n_train_a"], cols["n_train_b"]], 1)
        self.summary_kind_ = self._summary_kind()
        self.guarantee_ = self._guarantee_kind()
        self.pair_details_ = {}
        head = {
            "id_a": self.identities_[pairs[:, 0]],
            "id_b": self.identities_[pairs[:, 1]],
        }
        if test is not None:
            names = ["epsilon", "ceiling", "tp", "n_pos", "fp", "n_neg"]
            names += ["tpr_lower", "fpr_upper", "threshold", "direction"]
            names += ["train_auc", "n_train_a", "n_train_b"]
            results = pd.DataFrame({**head, **{k: cols[k] for k in names}})
            self.n_certified_ = len(results)
            self.n_comparisons_ = self._family_size(self.n_certified_)
            self.alpha_per_bound_ = alpha_test
            self.summary_ = float(results["epsilon"].max())
            self.ceiling_ = float(results["ceiling"].max())
        else:
            results = self._untested_results(pairs)
        self.results_ = results
        return self

    def certify(self, X, y, *, allow_seen_rows=False):
        """Certify held-out data with the fitted per-pair tests.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out embeddings, never seen by :meth:`fit`.
        y : array-like of shape (n_samples,)
            Their identity labels. Every fitted pair whose two identities
            occur (at least one row each) is certified; ``K`` is their number.
        allow_seen_rows : bool, default=False
            Rows identical to a row the per-pair tests were trained on in
            :meth:`fit` (exact match of the validated row) make this raise a
            ``ValueError``; ``True`` drops them instead, warns, and records
            their number in ``n_seen_rows_dropped_`` (the only attribute this
            method then sets) and in ``certificates.attrs``. The reserved-test
            rows of ``fit`` were never trained on and are not "seen".

        Returns
        -------
        certificates : pandas.DataFrame
            One row per certified pair, columns as ``results_``; empty (no pair
            certified, ε_LB = 0) when dropping seen rows left no fitted pair
            with both identities. ``certificates.attrs["n_seen_rows_dropped"]``
            is the number of rows dropped.

        Raises
        ------
        ValueError
            If ``X`` holds rows seen in fit and ``allow_seen_rows`` is False.

        Examples
        --------
        >>> import numpy as np
        >>> from skprivacy.datasets import make_identity_embeddings
        >>> from skprivacy import ROCHTCertifier
        >>> X, ids = make_identity_embeddings(4, 40, 16, random_state=0)
        >>> train = np.arange(len(ids)) % 2 == 0
        >>> cert = ROCHTCertifier(n_pairs=3, test_size=None).fit(X[train], ids[train])
        >>> cert.certify(X[~train], ids[~train]).shape[0]
        3
        """
        check_is_fitted(self)
        results, n_seen = self._certify_table(X, y, allow_seen_rows)
        if allow_seen_rows:
            self.n_seen_rows_dropped_ = n_seen
        return results

    def score(self, X=None, y=None, *, allow_seen_rows=False):
        """Return the largest simultaneous certified ε lower bound.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Held-out embeddings to certify on. ``None`` returns the reserved-test
            certificate of :meth:`fit`.
        y : array-like of shape (n_samples,), default=None
            Identity labels of ``X``.
        allow_seen_rows : bool, default=False
            See :meth:`certify`: rows seen in fit raise a ``ValueError``
            unless this is ``True``, which drops them and records their number
            in ``n_seen_rows_dropped_``.

        Returns
        -------
        epsilon_lb : float
            A certificate: with probability at least ``confidence``, every
            pair's ε is at least its certified value, so the true ε of the
            audited mechanism is at least this maximum. Higher = leakier. 0.0
            when no pair is left to certify. The per-pair table is returned
            by :meth:`certify`; ``score`` changes no attribute (except
            ``n_seen_rows_dropped_`` when ``allow_seen_rows=True``).

        Raises
        ------
        ValueError
            If ``X`` holds rows seen in fit and ``allow_seen_rows`` is False.
        """
        check_is_fitted(self)
        if X is None and y is None:
            if self.test_size is None:
                raise ValueError(
                    "ROCHTCertifier was fitted with test_size=None, so there is no "
                    "reserved test to report; call score(X_test, y_test) with "
                    "held-out data."
                )
            return float(self.summary_)
        if X is None or y is None:
            raise ValueError(
                "ROCHTCertifier.score needs both X and y (the identity labels), "
                "or neither (the reserved-test certificate of fit)."
            )
        results = self.certify(X, y, allow_seen_rows=allow_seen_rows)
        if len(results) == 0:
            return 0.0
        return float(results["epsilon"].max())

    @property
    def description_(self):
        """What the fitted audit reports (:class:`~skprivacy.auditors.AuditDescription`)."""
        return describe_certifier(self)


def _any_fitted_pair(certifier, present_labels):
    present = set(np.asarray(present_labels).tolist())
    return any(
        la in present and lb in present
        for la, lb in certifier.identities_[certifier.pairs_].tolist()
    )
