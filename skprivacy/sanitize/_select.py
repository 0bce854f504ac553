# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Erase to a target: the smallest rank whose cross-fitted leakage bound meets it."""

import math
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.stats import beta, binom
from sklearn.base import BaseEstimator, clone
from sklearn.utils import Bunch

from skprivacy.auditors import ReidentificationAuditor
from skprivacy.exceptions import FewDimensionsLeftWarning, UnresolvableRateWarning
from skprivacy.sanitize._cross_fit import _cross_fit, _identity_splits
from skprivacy.sanitize._verification import (
    _genuine_scores,
    _impostor_scores,
    tar_at_far,
)
from skprivacy.utils import (
    MIN_NORM,
    IdentityData,
    encode_identities,
    l2_normalize,
    row_norms,
    seed_from,
    validate_identity_data,
)
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    StrOptions,
    validate_params,
)

__all__ = ["select_rank"]


def _mean_upper(total, n, alpha):
    """One-sided upper bound on the mean of ``n`` independent rates in [0, 1].

    The Clopper-Pearson upper bound ``beta.ppf(1 - alpha, S + 1, n - S)``
    evaluated at the (possibly fractional) sum ``S`` of the rates. For rates
    that are 0 or 1 it is the exact Clopper-Pearson bound; a rate strictly
    between is less spread than a Bernoulli of the same mean, and the bound
    is checked by simulation in the tests.
    """
    if n == 0:
        return 1.0
    if total >= n:
        return 1.0
    return float(beta.ppf(1.0 - alpha, total + 1.0, n - total))


def _conservative_far(n_impostor, far, alpha):
    """FAR whose :func:`tar_at_far` threshold is below the population one.

    With ``j`` the ``1 - alpha`` quantile of ``Binomial(n_impostor, far)``,
    more than ``j`` impostor scores exceed the population threshold ``t*``
    (where the true FAR is ``far``) with probability at most ``alpha``; so the
    ``(j + 1)``-th largest impostor score is at most ``t*`` with probability
    at least ``1 - alpha``. Returns the ``far`` argument that makes
    :func:`tar_at_far` use that order statistic, or None when ``j`` reaches
    every impostor pair (no threshold is safe: accept everything).
    """
    j = int(binom.ppf(1.0 - alpha, n_impostor, far))
    if j + 0.5 >= n_impostor:
        return None
    return (j + 0.5) / n_impostor


def _rank_grid(top):
    """Default ranks: 0, 1, 2, 4, ... and ``top``, the largest allowed."""
    ranks = {0, top} | {2**j for j in range(int(math.log2(max(top, 1))) + 1)}
    return sorted(r for r in ranks if r <= top)


class _FoldScores:
    """Within-fold verification scores of one rank, pooled over folds."""

    def __init__(self, folds, max_pairs, seed):
        genuine, impostors = [], []
        totals = [_n_impostor_pairs(codes) for _, codes in folds]
        grand = sum(totals)
        for f, ((F, codes), total) in enumerate(zip(folds, totals)):
            data = _identity_data(F, codes)
            _, per_identity = _genuine_scores(F, data)
            genuine += [g for g in per_identity if g.size]
            # Impostor pairs from each fold in proportion to its share when
            # they must be sampled, so the pooled sample stays representative.
            cap = total
            if grand > max_pairs:
                cap = max(1, round(max_pairs * total / grand))
            fold_seed = int(np.random.SeedSequence([seed, f]).generate_state(1)[0])
            if total:
                impostors.append(_impostor_scores(F, codes, cap, fold_seed)[0])
        # Genuine scores of every identity with a pair, flat, with offsets.
        self.sizes = np.array([g.size for g in genuine])
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.genuine = np.concatenate(genuine)
        self.impostor = np.concatenate(impostors) if impostors else np.empty(0)

    def rates(self, threshold):
        """Genuine accept rate of each identity at ``threshold``."""
        accepted = (self.genuine > threshold).astype(np.float64)
        return np.add.reduceat(accepted, self.starts) / self.sizes


def _n_impostor_pairs(codes):
    counts = np.bincount(codes)
    n = codes.size
    return n * (n - 1) // 2 - int(np.sum(counts * (counts - 1) // 2))


def _identity_data(F, codes):
    counts = np.bincount(codes)
    return IdentityData(
        X=F,
        y=codes,
        codes=codes,
        identities=np.arange(counts.size),
        counts=counts,
        kept=np.ones(F.shape[0], dtype=bool),
    )


@validate_params(
    {
        "eraser": [HasMethods(["fit", "transform", "set_params"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "target": [Interval(Real, 0, 1, closed="neither")],
        "metric": [StrOptions({"tar_at_far", "reid"})],
        "far": [Interval(Real, 0, 1, closed="neither")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "cv": [Interval(Integral, 2, None, closed="left"), "cv_object"],
        "scoring": [callable, None],
        "ranks": ["array-like", None],
        "param_name": [str],
        "max_impostor_pairs": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=False,
)
def select_rank(
    eraser,
    X,
    y,
    *,
    target,
    metric="tar_at_far",
    far=1e-3,
    confidence=0.95,
    cv=5,
    scoring=None,
    ranks=None,
    param_name="n_components",
    max_impostor_pairs=1_000_000,
    random_state=None,
    n_jobs=None,
):
    """Smallest eraser rank whose cross-fitted leakage bound is at most a target.

    For each rank tried, the eraser is cross-fitted
    (:func:`cross_fit_transform`: every identity transformed by an eraser
    fitted on the other identities), the leakage of the output is measured
    with an upper confidence bound, and the smallest rank whose bound is at
    or below ``target`` is chosen. The bounds hold jointly over every rank
    tried (Bonferroni), so the chosen rank meets the target at the stated
    confidence. The utility of each rank, on a task the user names, sits in
    the same table.

    Read more in the :ref:`User Guide <select_rank>`.

    Parameters
    ----------
    eraser : estimator
        An identity eraser with a rank parameter (``param_name``), e.g.
        :class:`ISP`, :class:`LEACE` or :class:`INLP`, fitted as
        ``fit(X, y)``.
    X : array-like of shape (n_samples, n_features)
        Embeddings. Non-finite and zero rows are dropped (and reported) first.
    y : array-like of shape (n_samples,)
        Identity labels.
    target : float
        Largest acceptable leakage, in (0, 1): the TAR at ``far``
        (``metric="tar_at_far"``) or the re-identification rate
        (``metric="reid"``).
    metric : {"tar_at_far", "reid"}, default="tar_at_far"
        Leakage whose upper bound is compared with ``target``: open-set
        verification TAR at ``far``, or the leave-one-out top-1
        re-identification rate (:class:`~skprivacy.ReidentificationAuditor`).
        Both are reported.
    far : float, default=1e-3
        False-accept rate at which the TAR is read.
    confidence : float, default=0.95
        Joint confidence of the bounds over every rank tried.
    cv : int, cross-validation generator or iterable, default=5
        Identity folds, as in :func:`cross_fit_transform`. Every test fold
        needs at least two identities (impostor pairs are formed within a
        fold).
    scoring : callable, default=None
        Utility of a rank: called as ``scoring(X_cross)`` with the rank's
        cross-fitted output (rows in the order of ``X``; rows dropped by the
        input layer are NaN rows), returning a float, higher = more useful.
        A downstream task closes over its own labels, e.g.
        ``lambda Z: cross_val_score(LogisticRegression(), Z, task,
        groups=ids, cv=GroupKFold(3), scoring="balanced_accuracy").mean()``.
        None leaves the ``utility`` column NaN.
    ranks : array-like of int, default=None
        Ranks to try. None tries ``0, 1, 2, 4, ...`` up to the largest rank
        every training fold allows (``min(n_features, m_train - 1)`` with
        ``m_train`` the fewest training identities of a fold), and that
        largest rank. Fewer ranks give tighter bounds (the confidence is
        shared among them).
    param_name : str, default="n_components"
        The eraser's rank parameter (``"isp__n_components"`` for a step of a
        pipeline).
    max_impostor_pairs : int, default=1_000_000
        Impostor pairs are every within-fold pair of different identities
        when there are at most this many, otherwise a seeded sample of this
        many (drawn from each fold in proportion).
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the impostor sample and the re-identification query sample.
    n_jobs : int, default=None
        Folds fitted in parallel through joblib.

    Returns
    -------
    result : Bunch
        ``rank_`` (the chosen rank, or None when no rank meets the target),
        ``table_`` (one row per rank, see below), ``eraser_`` (a clone of
        ``eraser`` at ``rank_`` fitted on all of ``X``, or None),
        ``metric``, ``target``, ``far``, ``confidence``, ``alpha_per_rank``
        (the error level each rank's bound is computed at) and
        ``n_identities``.

        ``table_`` columns: ``rank``; ``tar`` (identity-averaged TAR at the
        threshold achieving ``far``, a point estimate) and ``tar_upper`` (its
        upper confidence bound); ``threshold``, ``far_achieved`` and
        ``resolvable`` (at least ``1 / far`` impostor pairs);
        ``n_genuine_identities``, ``n_impostor_pairs``; ``reid_rate``
        (identity-averaged leave-one-out top-1 rate within folds),
        ``reid_upper``, ``reid_chance``; ``utility``; ``meets_target``
        (the bound of ``metric`` at or below ``target``).

    Warns
    -----
    UnresolvableRateWarning
        When there are fewer than ``1 / far`` impostor pairs (once).
    UserWarning
        When no rank tried meets the target (with the smallest bound reached
        and the floor the number of identities imposes).

    See Also
    --------
    cross_fit_transform : The cross-fitted output each rank is measured on.
    OpenSetVerificationAuditor : TAR at FAR with a trained attacker's probe.

    Notes
    -----
    **What is measured.** For rank ``r`` the cross-fitted output of each fold
    comes from an eraser that never saw the fold's identities. Pairs are
    formed *within* a fold, so both rows of every compared pair went through
    the same fitted eraser, as they would in deployment. Genuine pairs are all
    same-identity pairs; impostor pairs are different-identity pairs of the
    fold. Scores are cosines (no trained probe: the attacker compares the
    released embeddings directly). The threshold is pooled over folds by the
    rule of :func:`tar_at_far`. The re-identification rate is that of
    :class:`~skprivacy.ReidentificationAuditor` run on each fold (its gallery
    is the fold's rows, so its chance level is that of a gallery of about
    ``n_identities / K`` people: see ``reid_chance``).

    **The statistical unit is the identity.** Rows of one person share that
    person; some people are much easier to verify than others. So the TAR is
    averaged over identities (each person's genuine accept rate, then the
    mean), and the bound treats people, not pairs, as the independent draws.
    Assumptions: the identities are an independent sample of the people the
    eraser will meet, and given the threshold their genuine accept rates are
    independent (the threshold depends on all identities' impostor scores;
    each identity's share of them is small).

    **Upper bound on the TAR at FAR** (level ``alpha = (1 - confidence) /
    n_ranks`` per rank, split in two halves):

    1. *Threshold.* The population threshold ``t*`` is where the true FAR
       equals ``far``. The number of impostor scores above ``t*`` is
       ``Binomial(n_impostor, far)`` when impostor pairs are independent (an
       approximation here: pairs share identities); with ``j`` its
       ``1 - alpha/2`` quantile, the ``(j + 1)``-th largest impostor score is
       at most ``t*`` with probability ``>= 1 - alpha/2``. A lower threshold
       accepts more, so the TAR read there is at least the TAR at ``t*``.
    2. *Genuine side.* At that threshold each of the ``m`` identities has a
       genuine accept rate ``a_i`` in [0, 1]; the bound is the one-sided
       Clopper-Pearson bound at level ``alpha/2`` evaluated at ``S = sum_i
       a_i`` successes in ``m`` trials (exact when every ``a_i`` is 0 or 1;
       conservative for rates in between, which are less spread).

    With zero accepts the bound is ``1 - (alpha/2)^(1/m)``: about
    ``5.3 / m`` at 95% over 5 ranks. A target below that cannot be met with
    ``m`` identities, however good the eraser; the warning says so.

    The re-identification bound applies step 2 to the per-identity
    re-identification rates at level ``alpha``.

    **Family over ranks.** The ranks are tried in increasing order and the
    first one whose bound is at or below the target is chosen. A wrong claim
    needs some rank with true leakage above the target to pass, so the error
    is bounded by the union over every rank tried: each bound is computed at
    ``(1 - confidence) / n_ranks`` (Bonferroni). A fixed-sequence test (from
    the largest rank down, each at the full level) would be tighter, but the
    leakage need not fall monotonically in the rank (it can rise again at the
    full rank), so a fixed sequence could stop at the top and miss every
    rank that meets the target.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import ISP, select_rank
    >>> X, ids = make_identity_embeddings(
    ...     60, 6, 16, n_identity_dims=4, separation=2.0, random_state=0)
    >>> result = select_rank(ISP(), X, ids, target=0.5, far=1e-2, cv=3,
    ...                      ranks=[0, 2, 4, 8], random_state=0)
    >>> result.rank_
    4
    >>> list(result.table_.columns[:3])
    ['rank', 'tar', 'tar_upper']
    """
    data = validate_identity_data(
        BaseEstimator(),
        X,
        y,
        min_samples_per_identity=1,
        min_identities=2,
        normalize=False,
        dtype=[np.float64, np.float32],
    )
    Xc, yc = data.X, data.y
    n_rows = Xc.shape[0]
    splits = _identity_splits(Xc, yc, cv=cv)
    for f, (_, te) in enumerate(splits):
        if pd.unique(yc[te]).size < 2:
            raise ValueError(
                f"Test fold {f} holds a single identity; select_rank forms "
                "impostor pairs within each fold, so every fold needs at least "
                "two identities. Use fewer folds."
            )
    n_train = min(pd.unique(yc[tr]).size for tr, _ in splits)
    if ranks is None:
        ranks = _rank_grid(min(Xc.shape[1], n_train - 1))
    ranks = [int(r) for r in np.unique(np.asarray(ranks))]
    alpha = (1.0 - confidence) / len(ranks)
    seed = seed_from(random_state)
    codes_all = encode_identities(yc)[1]
    rows = []
    unresolvable = None
    for r in ranks:
        est = clone(eraser).set_params(**{param_name: r})
        with warnings.catch_warnings():
            # Large ranks leave few dimensions by design of the sweep; the
            # table shows what they cost.
            warnings.simplefilter("ignore", FewDimensionsLeftWarning)
            Z = _cross_fit(est, Xc, yc, splits, n_jobs=n_jobs)
        Z = np.asarray(Z, dtype=np.float64)
        row = {"rank": r}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            row.update(
                _tar_row(Z, codes_all, splits, far, alpha, max_impostor_pairs, seed)
            )
        for w in caught:
            if issubclass(w.category, UnresolvableRateWarning):
                unresolvable = unresolvable or w.message
        row.update(_reid_row(Z, yc, splits, alpha, seed))
        if scoring is not None:
            full = np.full((data.kept.shape[0], Z.shape[1]), np.nan)
            full[data.kept] = Z
            row["utility"] = float(scoring(full))
        else:
            row["utility"] = np.nan
        bound = row["tar_upper"] if metric == "tar_at_far" else row["reid_upper"]
        row["meets_target"] = bool(bound <= target)
        rows.append(row)
    if unresolvable is not None:
        # stacklevel 3: the caller of select_rank, past validate_params.
        warnings.warn(str(unresolvable), UnresolvableRateWarning, stacklevel=3)
    table = pd.DataFrame(rows)
    table = table[
        [
            "rank",
            "tar",
            "tar_upper",
            "threshold",
            "far_achieved",
            "resolvable",
            "n_genuine_identities",
            "n_impostor_pairs",
            "reid_rate",
            "reid_upper",
            "reid_chance",
            "utility",
            "meets_target",
        ]
    ]
    met = table.loc[table["meets_target"], "rank"]
    rank = int(met.iloc[0]) if met.size else None
    column = "tar_upper" if metric == "tar_at_far" else "reid_upper"
    if rank is None:
        m = int(table["n_genuine_identities"].iloc[0])
        floor = 1.0 - (alpha / (2 if metric == "tar_at_far" else 1)) ** (1.0 / m)
        best = table.loc[table[column].idxmin()]
        warnings.warn(
            f"No rank tried meets {metric} <= {target:g} at {confidence:.0%} "
            f"confidence: the smallest upper bound is {best[column]:.3g} at rank "
            f"{int(best['rank'])}. With {m} identities and {len(ranks)} ranks "
            f"tried, no bound can fall below {floor:.3g}; audit more people or "
            "try fewer ranks.",
            UserWarning,
            stacklevel=3,
        )
    fitted = None
    if rank is not None:
        fitted = clone(eraser).set_params(**{param_name: rank}).fit(Xc, yc)
    return Bunch(
        rank_=rank,
        table_=table,
        eraser_=fitted,
        metric=metric,
        target=float(target),
        far=float(far),
        confidence=float(confidence),
        alpha_per_rank=alpha,
        n_identities=int(data.n_identities),
        n_rows=int(n_rows),
    )


def _tar_row(Z, codes, splits, far, alpha, max_pairs, seed):
    """TAR at FAR on within-fold pairs of cross-fitted output, with its bound."""
    folds = []
    for _, te in splits:
        F = l2_normalize(Z[te])
        _, fold_codes = np.unique(codes[te], return_inverse=True)
        folds.append((F, fold_codes.ravel().astype(np.intp)))
    scores = _FoldScores(folds, max_pairs, seed)
    genuine = scores.genuine
    point = tar_at_far(genuine, scores.impostor, far=far)
    rates = scores.rates(point.threshold)
    m = rates.size
    far_lo = _conservative_far(scores.impostor.size, far, alpha / 2)
    if far_lo is None:
        upper = 1.0
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnresolvableRateWarning)
            low = tar_at_far(genuine, scores.impostor, far=far_lo)
        upper = _mean_upper(float(scores.rates(low.threshold).sum()), m, alpha / 2)
    return {
        "tar": float(rates.mean()),
        "tar_upper": upper,
        "threshold": point.threshold,
        "far_achieved": point.far_achieved,
        "resolvable": point.resolvable,
        "n_genuine_identities": m,
        "n_impostor_pairs": int(scores.impostor.size),
    }


def _reid_row(Z, y, splits, alpha, seed):
    """Leave-one-out re-identification within folds, identity-averaged.

    Rows the eraser maps to zero (a full erasure) carry nothing to match:
    they count as failed queries of their identity, and the auditor runs on
    the other rows.
    """
    rates, chances = [], []
    for f, (_, te) in enumerate(splits):
        Zf, yf = Z[te], y[te]
        codes = encode_identities(yf)[1]
        live = row_norms(Zf) > MIN_NORM
        n_dead = np.bincount(codes[~live], minlength=codes.max() + 1)
        size = np.bincount(codes)
        succ = np.zeros(size.size)
        queries = np.where(size > 1, n_dead, 0).astype(float)
        chance = np.where(size > 1, (size - 1) / max(codes.size - 1, 1), 0.0)
        live_codes = codes[live]
        if np.unique(live_codes).size >= 2 and np.bincount(live_codes).max() >= 2:
            auditor = ReidentificationAuditor(
                top_k=1, n_bootstrap=0, random_state=seed + f
            )
            res = auditor.fit(Zf[live], live_codes).results_
            idx = res["identity"].to_numpy()
            succ[idx] = res["n_reidentified"].to_numpy()
            queries[idx] += res["n_queries"].to_numpy()
            audited = res["n_queries"].to_numpy() > 0
            chance[idx[audited]] = res["chance"].to_numpy()[audited]
        keep = queries > 0
        rates.append(succ[keep] / queries[keep])
        chances.append(chance[keep])
    rates, chances = np.concatenate(rates), np.concatenate(chances)
    return {
        "reid_rate": float(rates.mean()),
        "reid_upper": _mean_upper(float(rates.sum()), rates.size, alpha),
        "reid_chance": float(chances.mean()),
    }
