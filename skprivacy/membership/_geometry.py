# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""MembershipGeometry: member/non-member separability of identity clusters."""

import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import stats as sstats
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, check_cv, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.metaestimators import available_if

from skprivacy.membership._statistics import (
    HEADS,
    _check_statistics,
    _compute_table,
    _Segments,
)
from skprivacy.utils import validate_identity_data
from skprivacy.utils._sklearn import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["MembershipGeometry", "membership_auc"]


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
    member = np.asarray(member)
    if member.ndim != 1:
        raise ValueError(f"member must be 1-D; got an array of shape {member.shape}.")
    if member.dtype.kind not in "biuf" or not np.isin(member, [0, 1]).all():
        raise ValueError(
            "member must hold 1 (or True) for members and 0 (or False) for "
            f"non-members; got values {np.unique(member.astype(str))[:5].tolist()}."
        )
    score = np.asarray(score)
    if score.dtype.kind not in "biuf" or score.ndim != 1:
        raise ValueError(
            "score must be a 1-D numeric array, one value per identity; got an "
            f"array of shape {score.shape} and dtype {score.dtype}."
        )
    if score.shape[0] != member.shape[0]:
        raise ValueError(
            f"member has {member.shape[0]} entries but score has {score.shape[0]}; "
            "they must have the same length."
        )
    nan = np.flatnonzero(np.isnan(score.astype(np.float64)))
    if nan.size:
        shown = ", ".join(map(str, nan[:10].tolist()))
        raise ValueError(
            f"score has {nan.size} NaN value(s) at row(s) {shown}; a NaN cannot be "
            "ranked. Drop those identities first (infinite scores are ranked)."
        )
    if member.all() or not member.any():
        raise ValueError(
            "member must contain both members (1) and non-members (0); the AUC is "
            "undefined with only one group."
        )
    return _auc_ignoring_nan(member, score)


def _auc_ignoring_nan(member, score):
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


def _auc_se(auc, n1, n0):
    # Hanley & McNeil (1982) standard error of an AUC.
    q1 = auc / (2.0 - auc)
    q2 = 2.0 * auc * auc / (1.0 + auc)
    var = (
        auc * (1 - auc) + (n1 - 1) * (q1 - auc * auc) + (n0 - 1) * (q2 - auc * auc)
    ) / (n1 * n0)
    return float(np.sqrt(max(var, 0.0)))


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
    head : {"arcface", "cosface", "sphereface"} or callable, default="arcface"
        Margin head ``g(cos theta, m)`` of the audited model (see
        :func:`~skprivacy.membership.penalised_logit`).
    scale : float, default=64.0
        Loss scale ``s``.
    margin : float, default=0.5
        Margin ``m`` (multiplicative for ``"sphereface"``).
    classifier : estimator or None, default=None
        Fusion classifier over the statistics (one row per identity). None
        means ``make_pipeline(StandardScaler(),
        LogisticRegression(solver="newton-cholesky"))``.
    cv : int, cross-validation generator or iterable, default=5
        Folds over *identities* for ``fusion_auc_``. An int means
        ``StratifiedKFold(cv, shuffle=True, random_state=random_state)`` on the
        member labels of the identities, so no identity is on both sides.
    leave_one_out : bool, default=False
        ProtoCE convention: False includes the query in its own prototype (as
        in the paper), True uses the other ``k - 1`` probes (see
        :func:`~skprivacy.membership.prototype_ce`).
    n_jobs : int, default=None
        Parallel jobs (threads) for the ProtoCE blocks and the fusion folds,
        through joblib.
    random_state : int, RandomState instance or None, default=None
        Seeds the fusion folds (and the classifier, if it is random).

    Attributes
    ----------
    statistics_ : pandas.DataFrame
        One row per audited identity: ``identity``, ``member`` (nullable
        boolean; missing when fitted without membership), ``k`` and one column
        per statistic.
    auc_ : pandas.Series
        Member-vs-non-member AUC per statistic, oriented so that > 0.5 means
        members score higher (never flipped after seeing the data; < 0.5 is
        reported as is). Only when fitted with membership. Point estimates.
    separability_ : pandas.DataFrame
        Per statistic: ``auc``, ``members_higher`` (the recorded orientation,
        ``auc > 0.5``), ``auc_se`` (Hanley-McNeil standard error),
        ``n_members``, ``n_nonmembers``. Only when fitted with membership.
    fusion_auc_ : float
        Mean over the identity folds of the held-out AUC of ``classifier``
        fitted on the statistics. A cross-validated point estimate.
    fusion_cv_auc_ : ndarray of shape (n_splits,)
        The per-fold AUCs behind ``fusion_auc_``.
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
    selects the strongest attack, i.e. the tightest lower bound. Because the
    statistics see only cluster geometry, every AUC here is a lower bound on
    the membership information in the embeddings, and each is a point
    estimate; compare against a same-domain non-member reference only.

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
    0.92
    """

    _parameter_constraints: dict = {
        "statistics": [StrOptions({"all"}), list, tuple],
        "head": [StrOptions(set(HEADS)), callable],
        "scale": [Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, None, None, closed="neither")],
        "classifier": [HasMethods(["fit"]), None],
        "cv": ["cv_object"],
        "leave_one_out": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
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
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _table(self, X, ids, *, reset, min_identities):
        data = validate_identity_data(
            self, X, ids, reset=reset, min_identities=min_identities
        )
        seg = _Segments(data.X, data.codes, data.identities, data.drop_report)
        table = _compute_table(
            seg,
            self._statistics,
            head=self.head,
            scale=self.scale,
            margin=self.margin,
            leave_one_out=self.leave_one_out,
            n_jobs=self.n_jobs,
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
            "separability_",
            "fusion_auc_",
            "fusion_cv_auc_",
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

        aucs = {
            s: _auc_ignoring_nan(m_id, table[s].to_numpy()) for s in self._statistics
        }
        self.auc_ = pd.Series(aucs, name="auc").rename_axis("statistic")
        self.separability_ = pd.DataFrame(
            {
                "auc": self.auc_,
                "members_higher": self.auc_ > 0.5,
                "auc_se": [_auc_se(a, n1, n0) for a in self.auc_],
                "n_members": n1,
                "n_nonmembers": n0,
            }
        )

        classifier = (
            make_pipeline(
                StandardScaler(), LogisticRegression(solver="newton-cholesky")
            )
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
            cv = StratifiedKFold(cv, shuffle=True, random_state=self.random_state)
        cv = check_cv(cv, m_id, classifier=True)
        # Rows are identities: each is its own group (so GroupKFold-like
        # splitters work too). Splits are materialised here so that no groups
        # argument meets a routing-enabled cross_val_score.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The groups parameter")
            splits = list(cv.split(F, m_id, groups=np.arange(len(m_id))))
        self.fusion_cv_auc_ = cross_val_score(
            clone(classifier), F, m_id, cv=splits, scoring="roc_auc", n_jobs=self.n_jobs
        )
        self.fusion_auc_ = float(np.mean(self.fusion_cv_auc_))
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
            for members against non-members: a point estimate and a lower
            bound on the membership information in the embeddings.
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
        return _auc_ignoring_nan(m_id, self._fused(table))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        return tags
