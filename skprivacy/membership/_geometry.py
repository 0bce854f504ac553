# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MembershipGeometry: member/non-member separability of identity clusters."""

import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats as sstats
from sklearn.base import BaseEstimator, clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.model_selection import StratifiedKFold, check_cv, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.metaestimators import available_if

from skprivacy.auditors import clopper_pearson_bound
from skprivacy.exceptions import ProbeCountWarning
from skprivacy.membership._statistics import (
    _WORKING_DTYPES,
    HEADS,
    _check_statistics,
    _compute_table,
    _matched_rows,
    _segments,
)
from skprivacy.utils import (
    check_binary_labels,
    check_generator,
    check_scores,
    validate_identity_data,
)
from skprivacy.utils._random import seed_from
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["MembershipGeometry", "membership_auc", "membership_roc_curve"]


def membership_auc(member, score):
    """AUC of ``score`` for members against non-members, never flipped.

    The probability that a randomly chosen member identity scores higher than
    a randomly chosen non-member (ties count one half): the Mann-Whitney form
    of ``sklearn.metrics.roc_auc_score(member, score)``. Values are not
    re-oriented after seeing the data, so a value below 0.5 means members
    score *lower*. Infinite scores are ranked (e.g. ``vmf_kappa = inf`` when
    all probes coincide); a NaN score is an error naming its row.

    Parameters
    ----------
    member : array-like of shape (n_identities,)
        1 (or True) for identities in the training set, 0 otherwise.
    score : array-like of shape (n_identities,)
        One statistic per identity, higher = member-like.

    Returns
    -------
    auc : float
        In [0, 1].

    Raises
    ------
    ValueError
        If the lengths differ, ``member`` is not binary or has one group only,
        or a score is NaN (the message names the rows).

    Examples
    --------
    >>> from skprivacy.membership import membership_auc
    >>> membership_auc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1])
    0.75
    """
    member, score = _check_member_score(member, score)
    return auc_ignoring_nan(member, score)


def _check_member_score(member, score):
    """Binary ``member`` and real ``score`` of one length (infinity ranked, no NaN)."""
    n_member = len(member) if hasattr(member, "__len__") else None
    n_score = len(score) if hasattr(score, "__len__") else None
    if n_member is not None and n_score is not None and n_member != n_score:
        raise ValueError(
            f"member has {n_member} entries but score has {n_score}; they must "
            "have the same length."
        )
    member = check_binary_labels(
        member, name="member", positive="members", negative="non-members"
    )
    score = check_scores(
        score, name="score", n_samples=member.shape[0], allow_infinite=True
    )
    return member, score


def auc_ignoring_nan(member, score):
    """Return the Mann-Whitney AUC over the identities whose score is not NaN."""
    member = np.asarray(member, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    ok = ~np.isnan(score)
    member, score = member[ok], score[ok]
    n1 = int(member.sum())
    n0 = member.size - n1
    if n1 == 0 or n0 == 0:
        return float("nan")
    ranks = sstats.rankdata(score)  # average ranks for ties; inf is ranked
    return float((ranks[member].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def _delong(member, score):
    """DeLong (1988) AUC and its standard error, from midranks (Sun & Xu 2014).

    ``member`` is boolean, ``score`` finite-or-inf without NaN. Returns
    ``(auc, se)``; NaN when either group is empty.
    """
    member = np.asarray(member, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    n1 = int(member.sum())
    n0 = member.size - n1
    if n1 == 0 or n0 == 0:
        return float("nan"), float("nan")
    r_all = sstats.rankdata(score)
    r_pos = sstats.rankdata(score[member])
    r_neg = sstats.rankdata(score[~member])
    # Placement values: share of the other group that each identity beats
    # (ties one half).
    v10 = (r_all[member] - r_pos) / n0
    v01 = 1.0 - (r_all[~member] - r_neg) / n1
    auc = float(v10.mean())
    var = 0.0
    if n1 > 1:
        var += v10.var(ddof=1) / n1
    if n0 > 1:
        var += v01.var(ddof=1) / n0
    return auc, float(np.sqrt(var))


def _permutations(rng, n, n_permutations):
    """``n_permutations`` seeded permutations of ``range(n)``, one per row."""
    return rng.permuted(np.broadcast_to(np.arange(n), (n_permutations, n)), axis=1)


def _auc_permutation_p_value(member, score, n_permutations, rng, block=256):
    """One-sided permutation p-value of the AUC over identity labels.

    The member labels are permuted among the identities; the AUC of each
    relabelling is its member rank sum, so a block of relabellings is one
    matrix product of 0/1 labels with the ranks. Rank sums are multiples of
    one half, exact in float64, so ``>=`` has no rounding slack.
    """
    member = np.asarray(member, dtype=bool)
    ok = ~np.isnan(score)
    member, score = member[ok], score[ok]
    if member.all() or not member.any() or n_permutations == 0:
        return float("nan")
    ranks = sstats.rankdata(score)
    observed = ranks[member].sum()
    labels = member.astype(np.float64)
    n_ge = 0
    for start in range(0, n_permutations, block):
        size = min(block, n_permutations - start)
        perm = rng.permuted(np.broadcast_to(labels, (size, labels.size)), axis=1)
        n_ge += int(np.count_nonzero(perm @ ranks >= observed))
    return (1.0 + n_ge) / (1.0 + n_permutations)


def _lda_fold_aucs(F, member, splits, perms):
    """Held-out AUC of linear discriminant analysis per fold and permutation.

    Row ``p`` of ``perms`` gives identity slot ``i`` the statistics
    ``F[perms[p, i]]`` while the labels and the folds stay fixed: under no
    signal the identities are exchangeable, so this is the permutation null
    of the whole cross-validated procedure. Two-class LDA scores along
    ``W^{-1} (mu_1 - mu_0)`` with ``W`` the within-class scatter of the
    training fold; since ``W = T - c delta delta^T`` with ``T`` the total
    scatter and ``c > 0``, Sherman-Morrison gives the same direction (up to a
    positive factor) as ``T^{-1} delta``. The held-out AUC depends only on
    that direction, so every fit is a small batched solve.

    Returns an array of shape ``(n_permutations, n_folds)``.
    """
    n, p = F.shape
    P = perms.shape[0]
    out = np.empty((P, len(splits)))
    block = max(1, 2**21 // max(n * p, 1))
    eye = np.eye(p)
    for f, (train, test) in enumerate(splits):
        m_tr, m_te = member[train], member[test]
        n1, n0 = int(m_te.sum()), int((~m_te).sum())
        if n1 == 0 or n0 == 0 or m_tr.all() or not m_tr.any():
            out[:, f] = np.nan
            continue
        for start in range(0, P, block):
            pb = perms[start : start + block]
            Ftr = F[pb[:, train]]  # (b, n_train, p)
            delta = Ftr[:, m_tr].mean(axis=1) - Ftr[:, ~m_tr].mean(axis=1)
            Xc = Ftr - Ftr.mean(axis=1, keepdims=True)
            T = np.einsum("bni,bnj->bij", Xc, Xc)
            # A vanishing ridge keeps a constant statistic from making T singular.
            tr = np.trace(T, axis1=1, axis2=2)[:, None, None]
            T += (1e-10 * tr / p + 1e-300) * eye
            w = np.linalg.solve(T, delta[..., None])[..., 0]
            scores = np.einsum("bni,bi->bn", F[pb[:, test]], w)
            ranks = sstats.rankdata(scores, axis=1)
            out[start : start + len(pb), f] = (
                ranks[:, m_te].sum(axis=1) - n1 * (n1 + 1) / 2.0
            ) / (n1 * n0)
    return out


def _classifier_fold_aucs(classifier, F, member, splits, perm):
    # Same null as _lda_fold_aucs for any classifier: refit on F[perm].
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return cross_val_score(
            clone(classifier), F[perm], member, cv=splits, scoring="roc_auc"
        )


def _split_targets(y, member, *, caller):
    """Return ``(identity labels, membership labels or None)`` from y/member."""
    if y is None:
        raise ValueError(
            f"{caller} requires y to be passed, but the target y is None; pass the "
            "identity label of each row (or a 2-column array [identity, member])."
        )
    y_arr = np.asarray(y.to_numpy() if isinstance(y, pd.DataFrame | pd.Series) else y)
    if y_arr.ndim == 2 and y_arr.shape[1] == 2:
        if member is not None:
            raise ValueError(
                f"{caller}: membership was given twice, as the second column of "
                "y and as member=; pass one of them."
            )
        return y_arr[:, 0], y_arr[:, 1]
    if y_arr.ndim == 2 and y_arr.shape[1] == 1:
        y_arr = y_arr[:, 0]
    return y_arr, member


def _check_member(member, n_rows, *, caller):
    m = np.asarray(member)
    if m.ndim != 1 or m.shape[0] != n_rows:
        raise ValueError(
            f"{caller}: member must be 1-D with one label per row of X "
            f"({n_rows}); got shape {m.shape}."
        )
    if m.dtype.kind in "USO":
        # e.g. np.column_stack([string ids, bool member]) turns True into "True"
        words = {"true": "1", "false": "0"}
        m = np.array([words.get(str(v).strip().lower(), v) for v in m], dtype=object)
    try:
        values = m.astype(np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or not np.isin(values, (0.0, 1.0)).all():
        shown = pd.unique(m.ravel())[:5].tolist()
        raise ValueError(
            f"{caller}: member labels must be 0/1 or boolean (1 = the identity was "
            f"in the training set); got values such as {shown}."
        )
    return values


def _identity_member(values, data, *, caller):
    """Collapse per-row membership to one label per identity; must be constant.

    ``values`` has one 0/1 label per *input* row; ``data`` is the
    ``IdentityData`` of the same rows (only its kept rows count).
    """
    k = data.counts
    n_member = np.bincount(
        data.codes, weights=values[data.kept], minlength=data.n_identities
    )
    mixed = (n_member > 0) & (n_member < k)
    if mixed.any():
        shown = ", ".join(repr(i) for i in data.identities[mixed][:10].tolist())
        raise ValueError(
            f"{caller}: membership must be constant within an identity (it is a "
            f"property of the identity, not of a probe); {int(mixed.sum())} "
            f"identity(ies) mix member and non-member rows: {shown}."
        )
    return (n_member == k).astype(np.int64)


def _finite_features(F):
    # Rank-preserving replacement of non-finite statistic values for the fused
    # classifier (e.g. vmf_kappa = inf when all probes coincide).
    F = np.array(F, dtype=np.float64)
    for j in range(F.shape[1]):
        col = F[:, j]
        finite = np.isfinite(col)
        if finite.all():
            continue
        if not finite.any():
            F[:, j] = 0.0
            continue
        lo, hi = col[finite].min(), col[finite].max()
        span = max(hi - lo, 1.0)
        col[np.isposinf(col)] = hi + span
        col[np.isneginf(col)] = lo - span
        col[np.isnan(col)] = np.median(col[finite])
    return F


#: False-positive rates of ``MembershipGeometry.tpr_at_fpr_``.
LOW_FPRS = (1e-3, 1e-2, 1e-1)


def membership_roc_curve(member, score):
    """Compute every operating point of a membership score (member at ``score >= t``).

    Unlike :func:`sklearn.metrics.roc_curve`, infinite scores are accepted
    (``vmf_kappa`` is infinite when all probes coincide), no point is dropped
    and the score is never re-oriented. A NaN score is an error naming its
    row, as in :func:`membership_auc`.

    Parameters
    ----------
    member : array-like of shape (n_identities,)
        1 (or True) for identities in the training set, 0 otherwise.
    score : array-like of shape (n_identities,)
        One statistic per identity, higher = member-like.

    Returns
    -------
    fpr, tpr : ndarray of shape (n_thresholds,)
        Share of non-members and of members scoring ``>= thresholds``.
    thresholds : ndarray of shape (n_thresholds,)
        ``+inf`` (nobody accepted), then the distinct scores in decreasing
        order.

    Raises
    ------
    ValueError
        If the lengths differ, ``member`` is not binary or has one group only,
        or a score is NaN (the message names the rows).

    Examples
    --------
    >>> from skprivacy.membership import membership_roc_curve
    >>> fpr, tpr, thr = membership_roc_curve([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    member, score = _check_member_score(member, score)
    return roc_curve_ignoring_nan(member, score)


def roc_curve_ignoring_nan(member, score):
    """:func:`membership_roc_curve` over the identities whose score is not NaN."""
    member = np.asarray(member, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    ok = ~np.isnan(score)
    member, score = member[ok], score[ok]
    pos = np.sort(score[member])
    neg = np.sort(score[~member])
    if pos.size == 0 or neg.size == 0:
        raise ValueError(
            "membership_roc_curve needs member and non-member identities with a "
            f"score; got {pos.size} and {neg.size}."
        )
    thresholds = np.r_[np.inf, np.unique(score)[::-1]]
    # Counts of scores >= t: n - (number of scores < t).
    tp = pos.size - np.searchsorted(pos, thresholds, side="left")
    fp = neg.size - np.searchsorted(neg, thresholds, side="left")
    tp[0] = fp[0] = 0  # +inf accepts nobody, even an infinite score
    return fp / neg.size, tp / pos.size, thresholds


def _tpr_at_fpr_sweep(member, score, fprs):
    """Count hits at the lowest threshold whose empirical FPR is at most each target.

    Among the thresholds of :func:`membership_roc_curve` (members called at
    ``score >= t``), the false-positive count never decreases as ``t``
    falls, so the last one with at most ``floor(target * n_nonmembers)``
    false positives has the largest TPR; the highest threshold with that TPR
    (fewest false positives) is reported.
    """
    member = np.asarray(member, dtype=bool)
    ok = ~np.isnan(np.asarray(score, dtype=np.float64))
    n1, n0 = int(member[ok].sum()), int((~member[ok]).sum())
    fpr, tpr, thresholds = roc_curve_ignoring_nan(member, score)
    fp = np.rint(fpr * n0).astype(np.int64)
    tp = np.rint(tpr * n1).astype(np.int64)
    out = []
    for target in fprs:
        k = int(np.searchsorted(fp, np.floor(target * n0 + 1e-9), side="right")) - 1
        # Of the thresholds with that TPR, the highest (fewest false positives).
        k = int(np.searchsorted(tp, tp[k], side="left"))
        out.append(
            {
                "threshold": float(thresholds[k]),
                "n_tp": int(tp[k]),
                "n_fp": int(fp[k]),
                "n_members": n1,
                "n_nonmembers": n0,
            }
        )
    return out


_TPR_COLUMNS = (
    "statistic",
    "fpr",
    "tpr",
    "tpr_ci_low",
    "tpr_ci_high",
    "fpr_achieved",
    "fpr_ci_high",
    "threshold",
    "n_members",
    "n_nonmembers",
    "resolvable",
)


def _tpr_at_fpr_table(scores, member, fprs, confidence_level):
    """``tpr_at_fpr_``: one row per (statistic, target FPR), exact intervals."""
    half = (1.0 - confidence_level) / 2.0
    rows = []
    for name, score in scores.items():
        scored = ~np.isnan(score)
        if member[scored].all() or not member[scored].any():
            # No member or no non-member with a score (e.g. every fold of a
            # tiny fusion was unfittable): nothing to sweep.
            rows += [{"statistic": name, "fpr": target} for target in fprs]
            continue
        for target, r in zip(fprs, _tpr_at_fpr_sweep(member, score, fprs)):
            n1, n0 = r["n_members"], r["n_nonmembers"]
            rows.append(
                {
                    "statistic": name,
                    "fpr": target,
                    "tpr": r["n_tp"] / n1,
                    "tpr_ci_low": clopper_pearson_bound(r["n_tp"], n1, half),
                    "tpr_ci_high": clopper_pearson_bound(
                        r["n_tp"], n1, half, side="upper"
                    ),
                    "fpr_achieved": r["n_fp"] / n0,
                    "fpr_ci_high": clopper_pearson_bound(
                        r["n_fp"], n0, half, side="upper"
                    ),
                    "threshold": r["threshold"],
                    "n_members": n1,
                    "n_nonmembers": n0,
                    "resolvable": n0 >= 1.0 / target,
                }
            )
    table = pd.DataFrame(rows, columns=[*_TPR_COLUMNS])
    table["resolvable"] = table["resolvable"].astype("boolean")
    return table.set_index(["statistic", "fpr"])


def _out_of_fold_scores(classifier, F, member, splits):
    """Pooled held-out fused scores: each identity scored by a model fitted without it."""
    scores = np.full(len(member), np.nan)
    for train, test in splits:
        m_tr = member[train].astype(bool)
        if m_tr.all() or not m_tr.any() or len(train) <= 2:
            continue  # no fit possible on this fold (as for fusion_cv_auc_): NaN
        est = clone(classifier).fit(F[train], member[train])
        if hasattr(est, "decision_function"):
            scores[test] = est.decision_function(F[test])
        else:
            scores[test] = est.predict_proba(F[test])[:, 1]
    return scores


def _has_fused_method(name):
    def check(self):
        return hasattr(self, "classifier_") and hasattr(self.classifier_, name)

    return check


class MembershipGeometry(BaseEstimator):
    """Measure training-membership signal in the geometry of identity clusters.

    For every identity with ``k >= 2`` probe embeddings the auditor computes the
    four statistics of paper 001 (PairCos, vMF-kappa, PenLogit, ProtoCE; all
    higher = member-like), and, when membership labels are given, how well each
    separates members (identities in the model's training set) from
    non-members (threshold AUC), plus the cross-validated AUC of a classifier
    fusing them. Read more in the :ref:`User Guide <membership>`.

    Parameters
    ----------
    statistics : "all" or list of str, default="all"
        Statistics to compute and fuse, from ``("pair_cos", "vmf_kappa",
        "penalised_logit", "prototype_ce")``. PairCos and vMF-kappa need only
        the embeddings (black box); PenLogit and ProtoCE also use the loss
        head, ``scale`` and ``margin`` (grey box).
    head : str or callable, default="arcface"
        Margin head ``g(cos theta, m)`` of the audited model: ``"arcface"``,
        ``"cosface"``, ``"sphereface"``, ``"magface"`` (magnitude-aware,
        needs ``keep_norms=True``) or a callable (see
        :func:`~skprivacy.membership.penalised_logit` and
        :class:`~skprivacy.membership.MagFaceHead`).
    scale : float, default=64.0
        Loss scale ``s``.
    margin : float, default=0.5
        Margin ``m`` (multiplicative for ``"sphereface"``).
    classifier : estimator or None, default=None
        Fusion classifier over the statistics (one row per identity). None
        means ``make_pipeline(StandardScaler(), LinearDiscriminantAnalysis())``,
        whose out-of-fold AUC and permutation null are computed in closed form
        (one small batched solve per fold). Any other classifier is refitted
        on every fold of every relabelling: ``n_permutations x n_splits`` fits.
    cv : int, cross-validation generator or iterable, default=5
        Folds over *identities* for ``fusion_auc_``. An int means
        ``StratifiedKFold(cv, shuffle=True, random_state=random_state)`` on the
        member labels of the identities, so no identity is on both sides.
    leave_one_out : bool, default=False
        ProtoCE convention: False includes the query in its own prototype (as
        in the paper), True uses the other ``k - 1`` probes (see
        :func:`~skprivacy.membership.prototype_ce`).
    match_k : bool, default=True
        Compare identities at the same number of probes: vMF-kappa, PenLogit
        and ProtoCE are computed on a seeded uniform subsample of
        ``k_matched_`` probes per identity (the smallest ``k`` among the
        audited identities), because their values depend on ``k`` (at d =
        512 the mean vMF-kappa of ``k`` probes overstates the true kappa
        about 1.5 times at k = 10 and 2 times at k = 5 when kappa = 200, 3.8
        and 5.9 times when kappa = 50: the smaller kappa, the larger the
        inflation). PairCos,
        unbiased for every ``k``, uses all probes. A no-op when every identity
        has the same ``k``. With False, a :class:`~skprivacy.exceptions.
        ProbeCountWarning` is raised when members and non-members differ in
        ``k``.
    keep_norms : bool, default=False
        Keep each row's L2 norm (before normalisation) for a magnitude-aware
        head (``head="magface"`` or a
        :class:`~skprivacy.membership.MagFaceHead`): pass the model's
        *unnormalised* features then. Every statistic uses the normalised
        rows; the norms only set each probe's margin in PenLogit and ProtoCE.
    n_permutations : int, default=999
        Relabellings of member/non-member among the identities for the
        permutation p-values (``auc_p_values_``, ``fusion_p_value_``); 0
        skips them (p-values NaN). The smallest attainable p-value is
        ``1 / (n_permutations + 1)``.
    confidence_level : float, default=0.95
        Level of the DeLong intervals in ``separability_`` and of the exact
        intervals in ``tpr_at_fpr_``.
    n_jobs : int, default=None
        Parallel jobs (threads) for the ProtoCE blocks and, with a
        non-default classifier, the permutation refits, through joblib.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the fusion folds and the permutations (and the classifier, if
        it is random). An int gives identical results on every run.

    Attributes
    ----------
    statistics_ : pandas.DataFrame
        One row per audited identity: ``identity``, ``member`` (nullable
        boolean; missing when fitted without membership), ``k`` and one column
        per statistic.
    auc_ : pandas.Series
        Member-vs-non-member AUC per statistic, oriented so that > 0.5 means
        members score higher (never flipped after seeing the data; < 0.5 is
        reported as is). Only when fitted with membership. Sample AUCs (point
        estimates): read them with ``auc_p_values_`` and the intervals.
    auc_p_values_ : pandas.Series
        One-sided permutation p-value of each AUC (indexed like ``auc_``):
        ``(1 + #{relabellings with AUC >= observed}) / (1 + n_permutations)``
        over seeded relabellings of member/non-member among the identities.
        Valid at every sample size under the null of no membership signal
        (exchangeable identities); not corrected across statistics.
    separability_ : pandas.DataFrame
        Per statistic: ``auc``, ``members_higher`` (the recorded orientation,
        ``auc > 0.5``), ``auc_se`` (DeLong standard error), ``ci_low`` and
        ``ci_high`` (DeLong interval at ``confidence_level``, clipped to
        [0, 1]; asymptotic, degenerate at an AUC of 0 or 1), ``p_value`` (as
        ``auc_p_values_``), ``n_members``, ``n_nonmembers``. Only when fitted
        with membership.
    fusion_auc_ : float
        Out-of-fold fused AUC: mean over the identity folds of the held-out
        AUC of ``classifier`` fitted on the other folds' identities. Centred
        on 0.5 under no signal; a point estimate.
    fusion_p_value_ : float
        Permutation p-value of ``fusion_auc_``: the whole cross-validated
        fit repeated on ``n_permutations`` relabellings of the identities
        (same folds), counted as for ``auc_p_values_``.
    fusion_cv_auc_ : ndarray of shape (n_splits,)
        The per-fold AUCs behind ``fusion_auc_``.
    fusion_scores_ : ndarray of shape (n_identities,)
        Out-of-fold fused score of each audited identity (rows of
        ``statistics_``): the decision value of ``classifier`` fitted on the
        other folds' identities. The scores behind the ``"fusion"`` rows of
        ``tpr_at_fpr_``; pooled over folds, so their ROC mixes the folds'
        scales (``fusion_auc_`` averages per-fold AUCs instead). NaN for the
        identities of a fold whose training identities lack a class or are
        two or fewer.
    tpr_at_fpr_ : pandas.DataFrame
        Membership detection at low false-positive rates, indexed by
        (``statistic``, ``fpr``) for every statistic and ``"fusion"`` (the
        fused classifier's out-of-fold scores, pooled over the identity
        folds) at ``fpr`` in 1e-3, 1e-2 and 1e-1: ``tpr`` (largest TPR at a
        threshold whose empirical FPR over the non-member identities is at
        most ``fpr``; members are identities scoring at or above it; of the
        thresholds with that TPR, the highest),
        ``tpr_ci_low``, ``tpr_ci_high`` (exact Clopper–Pearson interval at
        ``confidence_level`` for the TPR at that threshold), ``fpr_achieved``
        and ``fpr_ci_high`` (its upper Clopper–Pearson bound), ``threshold``,
        ``n_members``, ``n_nonmembers`` and ``resolvable`` (at least ``1 /
        fpr`` non-members; otherwise the row reports the TPR at no false
        positive at all). Point estimates with intervals; only when fitted
        with membership.
    k_matched_ : int or None
        Probes per identity used by the k-dependent statistics (None when
        ``match_k=False``). New identities in :meth:`score_identities`,
        :meth:`predict_proba` and :meth:`score` are matched to the same count.
    classifier_ : estimator
        ``classifier`` refitted on all identities; used by
        :meth:`decision_function`, :meth:`predict_proba` and :meth:`score`.
    identities_ : ndarray of shape (n_identities,)
        Audited identity labels.
    drop_report_ : dict
        Rows and identities left out, by reason.
    n_features_in_ : int
        Number of embedding dimensions seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    skprivacy.membership.audit_reference_sets : One member set against
        several non-member references.
    skprivacy.membership.membership_statistics : The statistics as a function.

    Notes
    -----
    **How identity and membership labels reach fit.** As every skprivacy
    auditor, ``fit(X, y)`` takes the identity label of each row as ``y``.
    Membership is a property of an identity but arrives per row (it must be
    constant within an identity; a mixed identity is an error). It can be
    passed in either of two ways:

    1. ``fit(X, y, member=member)``: ``member`` is fit metadata. Inside
       scikit-learn's model selection tools, enable metadata routing and
       request it::

           sklearn.set_config(enable_metadata_routing=True)
           mg = (MembershipGeometry().set_fit_request(member=True)
                 .set_score_request(member=True))
           cross_validate(mg, X, ids, cv=GroupKFold(5),
                          params={"member": member, "groups": ids})

    2. ``fit(X, Y)`` with ``Y`` of shape (n_samples, 2): column 0 the identity,
       column 1 the membership. The labels then travel with their rows through
       any splitter, so no routing is needed::

           cross_validate(MembershipGeometry(), X, np.column_stack([ids, member]),
                          groups=ids, cv=GroupKFold(5))

    Always split by identity (``GroupKFold``/``StratifiedGroupKFold`` with
    ``groups=ids``): a row-wise splitter would put probes of one identity on
    both sides and cut every identity's probe set. Without ``member``,
    :meth:`fit` only computes ``statistics_`` (an unsupervised geometry table).

    This is not a ``ClassifierMixin``: the classified objects are identities,
    not rows, and its ``y`` are identity labels. :meth:`score` is the held-out
    membership AUC (higher = leakier), so ``GridSearchCV`` without ``scoring``
    selects the strongest attack. Because the statistics see only cluster
    geometry, the *population* AUC of each is a lower bound on the
    membership information in the embeddings. The sample AUC reported here
    is not: with 20 + 20 identities and no signal at all, the best of four
    statistics exceeds 0.5 by two standard errors in about 5% of audits.
    The sample AUC carries its permutation p-value (``auc_p_values_``,
    ``fusion_p_value_``) and its DeLong interval (``separability_``); claim a
    membership signal only when the p-value says so. Compare against a
    same-domain non-member reference only.

    ProtoCE on new data uses the identities of that new data as negatives,
    so its level depends on how many identities are audited together; AUCs
    (rank-based, within one set) are unaffected, probabilities are not
    calibrated across set sizes.

    Examples
    --------
    >>> from skprivacy.datasets import make_membership_embeddings
    >>> from skprivacy.membership import MembershipGeometry
    >>> X, ids, member = make_membership_embeddings(
    ...     n_members=30, n_nonmembers=30, concentration_gap=0.5, random_state=0)
    >>> mg = MembershipGeometry(random_state=0).fit(X, ids, member=member)
    >>> mg.auc_.round(2)
    statistic
    pair_cos           0.93
    vmf_kappa          0.93
    penalised_logit    0.93
    prototype_ce       0.82
    Name: auc, dtype: float64
    >>> round(mg.fusion_auc_, 2)
    0.93
    >>> mg.auc_p_values_.round(3).tolist()  # at most 1/(n_permutations + 1)
    [0.001, 0.001, 0.001, 0.001]
    """

    _parameter_constraints: dict = {
        "statistics": [StrOptions({"all"}), list, tuple],
        "head": [StrOptions(set(HEADS)), callable],
        "scale": [Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, None, None, closed="neither")],
        "classifier": [HasMethods(["fit"]), None],
        "cv": ["cv_object"],
        "leave_one_out": ["boolean"],
        "match_k": ["boolean"],
        "keep_norms": ["boolean"],
        "n_permutations": [Interval(Integral, 0, None, closed="left")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        *,
        statistics="all",
        head="arcface",
        scale=64.0,
        margin=0.5,
        classifier=None,
        cv=5,
        leave_one_out=False,
        match_k=True,
        keep_norms=False,
        n_permutations=999,
        confidence_level=0.95,
        n_jobs=None,
        random_state=None,
    ):
        self.statistics = statistics
        self.head = head
        self.scale = scale
        self.margin = margin
        self.classifier = classifier
        self.cv = cv
        self.leave_one_out = leave_one_out
        self.match_k = match_k
        self.keep_norms = keep_norms
        self.n_permutations = n_permutations
        self.confidence_level = confidence_level
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _table(self, X, ids, *, reset, min_identities):
        data = validate_identity_data(
            self,
            X,
            ids,
            reset=reset,
            min_identities=min_identities,
            normalize="defer" if self.keep_norms else True,
            dtype=_WORKING_DTYPES,
        )
        seg = _segments(data, keep_norms=self.keep_norms, head=self.head)
        if reset:
            self.k_matched_ = int(seg.k.min()) if self.match_k else None
        k_target = self.k_matched_
        matched = None
        if k_target is not None:
            if not reset and (seg.k < k_target).any():
                warnings.warn(
                    f"{int((seg.k < k_target).sum())} identity(ies) have fewer "
                    f"probes than the {k_target} every identity was matched to at "
                    "fit; their k-dependent statistics (vmf_kappa, "
                    "penalised_logit, prototype_ce) are not comparable.",
                    ProbeCountWarning,
                    stacklevel=3,
                )
            if (seg.k > k_target).any():
                keep = _matched_rows(
                    seg.codes,
                    len(seg.identities),
                    k_target,
                    seed_from(self.random_state),
                )
                matched = seg.subset(keep)
        table = _compute_table(
            seg,
            self._statistics,
            head=self.head,
            scale=self.scale,
            margin=self.margin,
            leave_one_out=self.leave_one_out,
            n_jobs=self.n_jobs,
            matched=matched,
        )
        return data, table

    def _fused(self, table):
        F = _finite_features(table[self._statistics].to_numpy())
        if hasattr(self.classifier_, "decision_function"):
            return self.classifier_.decision_function(F)
        return self.classifier_.predict_proba(F)[:, 1]

    # ---------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, member=None):
        """Compute the statistics per identity and, given membership, the AUCs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Probe embeddings (any encoder). Non-finite or (near-)zero rows are
            dropped with a warning; the rest are L2-normalised.
        y : array-like of shape (n_samples,) or (n_samples, 2)
            Identity label of each row, or ``[identity, member]`` columns.
        member : array-like of shape (n_samples,), default=None
            1/True if the row's identity was in the model's training set,
            else 0/False; constant within an identity. Routable metadata.

        Returns
        -------
        self : object
            Fitted auditor.
        """
        ids, member = _split_targets(y, member, caller="MembershipGeometry.fit")
        self._statistics = _check_statistics(self.statistics)
        if member is not None:
            member = _check_member(member, len(ids), caller="MembershipGeometry.fit")
        data, table = self._table(X, ids, reset=True, min_identities=2)
        self.drop_report_ = data.drop_report
        self.identities_ = data.identities
        for attr in (
            "auc_",
            "auc_p_values_",
            "separability_",
            "fusion_auc_",
            "fusion_p_value_",
            "fusion_cv_auc_",
            "tpr_at_fpr_",
            "fusion_scores_",
            "classifier_",
        ):
            if hasattr(self, attr):
                delattr(self, attr)
        if member is None:
            table.insert(1, "member", pd.array([pd.NA] * len(table), "boolean"))
            self.statistics_ = table
            return self

        m_id = _identity_member(member, data, caller="fit")
        n1, n0 = int(m_id.sum()), int((1 - m_id).sum())
        if n1 == 0 or n0 == 0:
            raise ValueError(
                "MembershipGeometry.fit needs both member and non-member identities "
                f"to measure separability; got {n1} member and {n0} non-member "
                "identity(ies)."
            )
        table.insert(1, "member", pd.array(m_id.astype(bool), "boolean"))
        self.statistics_ = table
        k_id = table["k"].to_numpy()
        if not self.match_k and np.unique(k_id).size > 1:
            k_auc = auc_ignoring_nan(m_id, k_id.astype(np.float64))
            if k_auc != 0.5:
                warnings.warn(
                    "Members and non-members have different probe counts (median "
                    f"k {np.median(k_id[m_id == 1]):g} vs "
                    f"{np.median(k_id[m_id == 0]):g}; k alone separates them with "
                    f"AUC {k_auc:.2f}) and match_k=False: vmf_kappa, "
                    "penalised_logit and prototype_ce depend on k, so their AUCs "
                    "mix the probe counts with membership. Use match_k=True.",
                    ProbeCountWarning,
                    stacklevel=2,
                )

        seed = seed_from(self.random_state)
        rng = check_generator(seed)
        n_perm = self.n_permutations
        z = sstats.norm.ppf(0.5 + self.confidence_level / 2.0)
        rows = {}
        for stat in self._statistics:
            score = table[stat].to_numpy(dtype=np.float64)
            ok = ~np.isnan(score)
            auc, se = _delong(m_id[ok].astype(bool), score[ok])
            rows[stat] = {
                "auc": auc_ignoring_nan(m_id, score),
                "members_higher": auc > 0.5,
                "auc_se": se,
                "ci_low": max(auc - z * se, 0.0),
                "ci_high": min(auc + z * se, 1.0),
                "p_value": _auc_permutation_p_value(m_id, score, n_perm, rng),
                "n_members": int(m_id[ok].sum()),
                "n_nonmembers": int((1 - m_id[ok]).sum()),
            }
        self.separability_ = pd.DataFrame.from_dict(rows, orient="index")
        self.separability_.index.name = "statistic"
        self.auc_ = self.separability_["auc"].copy()
        self.auc_p_values_ = self.separability_["p_value"].rename("p_value")

        classifier = (
            make_pipeline(StandardScaler(), LinearDiscriminantAnalysis())
            if self.classifier is None
            else self.classifier
        )
        F = _finite_features(table[self._statistics].to_numpy())
        cv = self.cv
        if isinstance(cv, Integral):
            if min(n1, n0) < cv:
                raise ValueError(
                    f"cv={cv} folds over identities need at least {cv} member and "
                    f"{cv} non-member identities; got {n1} and {n0}. Lower cv or "
                    "audit more identities."
                )
            cv = StratifiedKFold(cv, shuffle=True, random_state=seed)
        cv = check_cv(cv, m_id, classifier=True)
        # Rows are identities: each is its own group (so GroupKFold-like
        # splitters work too). Splits are materialised here so that no groups
        # argument meets a routing-enabled cross_val_score, and so that every
        # relabelling of the permutation null uses the very same folds.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The groups parameter")
            splits = list(cv.split(F, m_id, groups=np.arange(len(m_id))))
        n = len(m_id)
        perms = np.vstack([np.arange(n), _permutations(rng, n, n_perm)])
        is_member = m_id.astype(bool)
        if self.classifier is None:
            # Standardising is affine, so it leaves LDA's held-out ranking
            # unchanged; it only conditions the small solves.
            Fs = (F - F.mean(axis=0)) / np.where(F.std(axis=0) > 0, F.std(axis=0), 1)
            fold_aucs = _lda_fold_aucs(Fs, is_member, splits, perms)
        else:
            fold_aucs = np.vstack(
                Parallel(n_jobs=self.n_jobs)(
                    delayed(_classifier_fold_aucs)(classifier, F, m_id, splits, perm)
                    for perm in perms
                )
            )
        self.fusion_cv_auc_ = fold_aucs[0]
        self.fusion_auc_ = float(np.mean(fold_aucs[0]))
        null = fold_aucs[1:].mean(axis=1)
        self.fusion_p_value_ = (
            float((1.0 + np.sum(null >= self.fusion_auc_ - 1e-12)) / (1.0 + n_perm))
            if n_perm > 0 and np.isfinite(self.fusion_auc_)
            else float("nan")
        )
        self.fusion_scores_ = _out_of_fold_scores(classifier, F, m_id, splits)
        scores = {
            stat: table[stat].to_numpy(dtype=np.float64) for stat in self._statistics
        }
        scores["fusion"] = self.fusion_scores_
        self.tpr_at_fpr_ = _tpr_at_fpr_table(
            scores, is_member, LOW_FPRS, self.confidence_level
        )
        self.classifier_ = clone(classifier).fit(F, m_id)
        return self

    # ------------------------------------------------------------ new identities
    def score_identities(self, X, y):
        """Return the statistics and fused membership score of new identities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Probe embeddings of the identities to assess.
        y : array-like of shape (n_samples,)
            Their identity labels (a single identity is allowed).

        Returns
        -------
        table : pandas.DataFrame
            One row per identity: ``identity``, ``k``, the statistics and,
            when fitted with membership, ``membership_score`` (the fused
            classifier's decision value, higher = member-like).
        """
        check_is_fitted(self, "statistics_")
        ids, _ = _split_targets(y, None, caller="score_identities")
        _, table = self._table(X, ids, reset=False, min_identities=1)
        if hasattr(self, "classifier_"):
            table["membership_score"] = self._fused(table)
        return table

    def _per_row(self, X, y, method):
        check_is_fitted(self, "classifier_")
        ids, _ = _split_targets(y, None, caller=method)
        data, table = self._table(X, ids, reset=False, min_identities=1)
        F = _finite_features(table[self._statistics].to_numpy())
        out = getattr(self.classifier_, method)(F)
        n = len(data.kept)
        full = np.full((n,) + out.shape[1:], np.nan)
        full[data.kept] = out[data.codes]
        return full

    @available_if(_has_fused_method("decision_function"))
    def decision_function(self, X, y):
        """Fused membership score of each row's identity (higher = member-like).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Probe embeddings of new identities.
        y : array-like of shape (n_samples,)
            Their identity labels: the statistics are computed per identity.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            The identity's score, repeated on each of its rows; NaN on rows
            that were dropped or whose identity has fewer than 2 usable rows.
        """
        return self._per_row(X, y, "decision_function")

    @available_if(_has_fused_method("predict_proba"))
    def predict_proba(self, X, y):
        """Membership probability of each row's identity.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Probe embeddings of new identities.
        y : array-like of shape (n_samples,)
            Their identity labels.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            ``[P(non-member), P(member)]`` of the row's identity (NaN rows as
            in :meth:`decision_function`). Calibrated only for audited sets
            like the fitted one (ProtoCE depends on the set's size).
        """
        return self._per_row(X, y, "predict_proba")

    def score(self, X=None, y=None, member=None):
        """Membership AUC of the fused statistics (higher = leakier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Held-out probe embeddings. None returns ``fusion_auc_``.
        y : array-like of shape (n_samples,) or (n_samples, 2), default=None
            Identity labels, or ``[identity, member]`` columns.
        member : array-like of shape (n_samples,), default=None
            Membership labels of the rows (routable metadata).

        Returns
        -------
        auc : float
            AUC, over the held-out identities, of the fitted fusion classifier
            for members against non-members: a sample AUC (point estimate);
            its population value is a lower bound on the membership
            information in the embeddings.
        """
        check_is_fitted(self, "statistics_")
        if X is None and y is None:
            if not hasattr(self, "fusion_auc_"):
                raise ValueError(
                    "score() summarises a membership audit; fit with member labels "
                    "first."
                )
            return self.fusion_auc_
        ids, member = _split_targets(y, member, caller="MembershipGeometry.score")
        data, table = self._table(X, ids, reset=False, min_identities=2)
        if member is None or not hasattr(self, "classifier_"):
            raise ValueError(
                "MembershipGeometry.score needs membership labels both at fit and "
                "at score time (member=... or a 2-column y)."
            )
        member = _check_member(member, len(ids), caller="MembershipGeometry.score")
        m_id = _identity_member(member, data, caller="score")
        return auc_ignoring_nan(m_id, self._fused(table))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        return tags
