# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""ROC-HT: the Kairouz–Oh–Viswanath ε bound over out-of-fold ROC operating points.

Paper 000, "ROC-HT". Per identity pair a classifier is cross-validated, the
out-of-fold scores are pooled into one ROC, and the KOV hypothesis-testing
characterisation of (ε, δ)-DP is evaluated at every operating point. The
result is a *point estimate* (the threshold is chosen on the same out-of-fold
scores); the confidence-carrying version is
:class:`~skprivacy.auditors.ROCHTCertifier`.
"""

from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn import config_context
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import Bunch

from skprivacy.auditors._base import (
    FLOP_RATE,
    STREAM_RATE,
    BasePairAuditor,
    PairAuditContext,
)
from skprivacy.auditors._description import describe_rocht, estimate_seconds
from skprivacy.auditors._roc_core import n_folds_for, roc_summary, stratified_folds
from skprivacy.auditors._roc_fast import (
    audit_pairs,
    chunk_plan,
    has_shared_path,
    shared_rows,
    with_shared_covariance,
)
from skprivacy.utils._random import seed_from
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    StrOptions,
    check_is_fitted,
    validate_params,
)
from skprivacy.utils._threads import limit_blas_threads

__all__ = [
    "ROCHTAuditor",
    "classifier_sensitivity",
    "compare_roc_audits",
    "resolve_solver",
]

#: Per-pair columns of ROC-HT after ``epsilon``, in the order of ``results_``.
ROC_COLUMNS = (
    "auc",
    "tv",
    "corner",
    "fpr",
    "tpr",
    "threshold",
    "n_a",
    "n_b",
    "n_folds",
    "epsilon_interior",
    "infinite_fpr0",
    "infinite_tpr1",
)


# ---------------------------------------------------------- classifier plumbing
@contextmanager
def pair_fit_context():
    """One BLAS thread and no repeated input checks inside the per-pair loop.

    The pair's rows were validated once by the input layer and the
    classifier's parameters once by :func:`_check_classifier`, so skipping
    scikit-learn's per-fit finiteness and parameter checks changes no number,
    only the overhead (a large share of a small per-fold fit).
    """
    with (
        limit_blas_threads(),
        config_context(assume_finite=True, skip_parameter_validation=True),
    ):
        yield


def default_classifier():
    """Return the paper's per-pair classifier (a fresh instance)."""
    return LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)


def _check_classifier(classifier, owner):
    clf = default_classifier() if classifier is None else classifier
    if not (hasattr(clf, "predict_proba") or hasattr(clf, "decision_function")):
        raise ValueError(
            f"{owner}'s classifier must implement predict_proba or "
            f"decision_function; {type(clf).__name__} has neither."
        )
    if hasattr(clf, "_validate_params") and hasattr(clf, "_parameter_constraints"):
        # Validated here once: the per-pair loop skips per-fit validation.
        clf._validate_params()
    return clf


def resolve_solver(solver, clf, owner):
    """Resolve the engine of a ROC-HT estimator: ``"shared"`` or ``"per_pair"``.

    ``"auto"`` takes the shared-product engine when the classifier has one
    (:class:`~skprivacy.CentroidClassifier`,
    :class:`~skprivacy.PooledLDAClassifier`) and the per-pair engine
    otherwise; ``"shared"`` with any other classifier is an error.
    """
    if solver == "auto":
        return "shared" if has_shared_path(clf) else "per_pair"
    if solver == "shared" and not has_shared_path(clf):
        raise ValueError(
            f"{owner}(solver='shared') needs a classifier with a shared-product "
            f"path (CentroidClassifier or PooledLDAClassifier); "
            f"{type(clf).__name__} has none. Use solver='auto' or 'per_pair'."
        )
    return solver


def _seeded(clf, rng):
    # A classifier with random_state=None would make the audit irreproducible
    # (and differ between n_jobs settings); seed it from the pair's generator,
    # as scikit-learn's ensembles seed their sub-estimators.
    est = clone(clf)
    params = est.get_params(deep=False)
    if "random_state" in params and params["random_state"] is None:
        est.set_params(random_state=int(rng.integers(np.iinfo(np.int32).max)))
    return est


def positive_scores(estimator, X):
    """Score of the positive class (label 1) of a fitted binary classifier."""
    # The linear shared-product classifiers rank by their linear score, which
    # does not saturate like its softmax (and is what their fast path computes).
    method = getattr(estimator, "_pair_score_method", None)
    if method != "decision_function" and hasattr(estimator, "predict_proba"):
        proba = estimator.predict_proba(X)
        return proba[:, list(estimator.classes_).index(1)]
    score = np.asarray(estimator.decision_function(X), dtype=np.float64)
    # Binary decision_function is oriented towards classes_[1].
    return score if estimator.classes_[1] == 1 else -score


def out_of_fold_scores(template, X, y, n_folds, fold_seed):
    """Pooled out-of-fold positive-class scores (``cross_val_predict`` semantics).

    One clone of ``template`` per fold of ``StratifiedKFold(n_folds,
    shuffle=True, random_state=fold_seed)``; ``y`` is ``n_a`` zeros followed by
    ``n_b`` ones.
    """
    n_b = int(y.sum())
    scores = np.empty(y.shape[0], dtype=np.float64)
    folds = stratified_folds(y.shape[0] - n_b, n_b, n_folds, fold_seed)
    for train, test in folds:
        est = clone(template).fit(X[train], y[train])
        scores[test] = positive_scores(est, X[test])
    return scores


def pair_rows(data, state, a, b):
    """Rows of identities ``a`` then ``b`` and labels 0 / 1 (original row order)."""
    order, starts = state
    rows_a = order[starts[a] : starts[a + 1]]
    rows_b = order[starts[b] : starts[b + 1]]
    X = np.concatenate([data.X[rows_a], data.X[rows_b]])
    y = np.r_[np.zeros(len(rows_a), dtype=np.intp), np.ones(len(rows_b), np.intp)]
    return X, y


# --------------------------------------------------------------------- auditor
class ROCHTAuditor(BasePairAuditor):
    """ROC hypothesis-test ε audit of identity pairs (paper 000, ROC-HT).

    For each identity pair ``(A, B)`` a classifier learns to tell A's
    embeddings (label 0) from B's (label 1) under stratified ``cv``-fold
    cross-validation; the pooled out-of-fold probabilities give one ROC, and
    the Kairouz–Oh–Viswanath bound :func:`kov_epsilon` is maximised over its
    operating points. The per-pair value and its median (``score()``) are
    **point estimates, not certificates**: the maximising threshold is chosen
    on the same out-of-fold scores. For a confidence statement use
    :class:`ROCHTCertifier`.

    Parameters
    ----------
    classifier : estimator or None, default=None
        Any binary classifier with ``predict_proba`` or ``decision_function``.
        ``None`` means ``LogisticRegression(C=1.0, solver="lbfgs",
        max_iter=1000)`` (the paper's). It is cloned per fold; if it has a
        ``random_state`` left at ``None``, a per-pair seed derived from
        ``random_state`` is set so the audit is reproducible. A
        :class:`~skprivacy.CentroidClassifier` or
        :class:`~skprivacy.PooledLDAClassifier` can take the shared-product
        engine (see ``solver``).
    cv : int, default=5
        Folds of ``StratifiedKFold(cv, shuffle=True, random_state=...)``.
        A pair in which an identity has fewer than ``cv`` rows uses that many
        folds instead (at least 2).
    delta : float, default=0.0
        δ of the (ε, δ)-DP statement tested.
    solver : {"auto", "shared", "per_pair"}, default="auto"
        The engine. ``"per_pair"`` fits the classifier on every fold of every
        pair (any classifier). ``"shared"`` computes every pair's
        out-of-fold scores from matrix products shared by all pairs (same
        folds and formulas, results equal up to floating-point rounding of
        the scores); only :class:`~skprivacy.CentroidClassifier` and
        :class:`~skprivacy.PooledLDAClassifier` have it, other classifiers
        raise a ``ValueError``. ``"auto"`` takes ``"shared"`` when the
        classifier has it, ``"per_pair"`` otherwise.
    n_pairs : int or None, default=200
        Audit the first ``n_pairs`` pairs of the seeded pair ordering
        (``None``: every pair).
    random_state : int, RandomState instance, Generator or None, default=0
        Seeds the pair ordering and the folds (an int is passed as is to
        ``StratifiedKFold``, so two auditors with the same seed use identical
        folds on identical pairs).
    n_jobs : int or None, default=None
        Parallel jobs over chunks of pairs (joblib).

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per audited pair: ``id_a``, ``id_b``, ``epsilon`` (may be
        ``inf``), ``auc``, ``tv`` (= max TPR − FPR, the classifier TV
        witness), ``corner`` (the exact point (FPR, TPR) = (0, 1) occurs),
        ``fpr``, ``tpr``, ``threshold`` (the operating point maximising ε),
        ``n_a``, ``n_b`` (rows), ``n_folds``, ``epsilon_interior`` (the
        largest finite KOV term, see Notes), ``infinite_fpr0`` (ε is infinite
        through a point with FPR = 0 and TPR > δ) and ``infinite_tpr1``
        (through a point with TPR = 1 and FPR < 1 − δ).
    summary_ : float
        Median per-pair ε (returned by ``score()``); ``inf`` when more than
        half the pairs have an infinite ε.
    epsilon_interior_median_ : float
        Median per-pair ``epsilon_interior``: the finite companion of
        ``summary_``, also a point estimate.
    epsilon_max_ : float
        Maximum per-pair ε.
    auc_mean_ : float
        Mean per-pair AUC.
    n_infinite_ : int
        Pairs with an infinite ε.
    n_infinite_fpr0_, n_infinite_tpr1_ : int
        Pairs whose ε is infinite through a point with FPR = 0, and through a
        point with TPR = 1 (a pair can have both).
    n_corners_ : int
        Number of pairs whose ROC has the exact (0, 1) corner (zero-error
        separation; every such pair is also counted in both counts above).
    solver_ : {"shared", "per_pair"}
        The engine that ran (``solver`` resolved).
    fold_seed_ : int or None
        ``random_state`` of the ``StratifiedKFold`` of every pair (``None``
        unless ``random_state`` is an int).
    pairs_, identities_, drop_report_, summary_kind_, guarantee_, \
pair_details_, n_features_in_, feature_names_in_ :
        See :class:`~skprivacy.auditors.BasePairAuditor`.

    See Also
    --------
    ROCHTCertifier : Reserved-test certificates (confidence-carrying ε lower
        bounds).
    compare_roc_audits : Per-pair AUC differences of two audits (classifier
        sensitivity).

    Notes
    -----
    At each operating point ``ε >= max{log((TPR − δ)/FPR),
    log((1 − FPR − δ)/(1 − TPR))}`` (positive class = B). The value is
    ``+inf`` whenever the ROC has a point with ``FPR = 0`` and ``TPR > δ``
    (``infinite_fpr0``: the top-scored rows are all B's, even a single one)
    or ``TPR = 1`` and ``FPR < 1 − δ`` (``infinite_tpr1``: the lowest-scored
    rows are all A's). This is algebraically correct but does not by itself
    mean zero-error separation: on pure noise most pairs have such a point.
    ``corner`` records the stricter exact (0, 1) point.

    ``epsilon_interior`` leaves out the KOV terms whose denominator is 0
    and keeps the largest remaining one (at least 0). A positive denominator
    is at least ``1/n``, so it is at most ``log(max(n_a, n_b))``: finite, so
    two audits whose medians are both ``inf`` still compare, and growing
    with the sample size for perfectly separated pairs. Like ``epsilon`` it
    is a point estimate.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy import ROCHTAuditor
    >>> X, ids = make_identity_embeddings(4, 20, 16, noise=2.0, random_state=0)
    >>> audit = ROCHTAuditor(n_pairs=3).fit(X, ids)
    >>> audit.results_.columns.tolist()[:6]
    ['id_a', 'id_b', 'epsilon', 'auc', 'tv', 'corner']
    >>> audit.score() == float(audit.results_["epsilon"].median())
    True
    """

    _summary = "median"
    _guarantee = "point estimate"

    _parameter_constraints: dict = {
        **BasePairAuditor._parameter_constraints,
        "classifier": [HasMethods(["fit"]), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "solver": [StrOptions({"auto", "shared", "per_pair"})],
    }

    def __init__(
        self,
        classifier=None,
        *,
        cv=5,
        delta=0.0,
        solver="auto",
        n_pairs=200,
        random_state=0,
        n_jobs=None,
    ):
        self.classifier = classifier
        self.cv = cv
        self.delta = delta
        self.solver = solver
        self.n_pairs = n_pairs
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _classifier_for(self, data):
        """Return the classifier of every pair (an LDA gets the pooled covariance)."""
        clf = _check_classifier(self.classifier, type(self).__name__)
        return with_shared_covariance(clf, data.X, data.codes, data.n_identities)

    def _solver(self):
        clf = _check_classifier(self.classifier, type(self).__name__)
        return resolve_solver(self.solver, clf, type(self).__name__)

    def _prepare_audit(self, data, pairs):
        clf = self._classifier_for(data)
        order, starts = data.order()
        if self._solver() == "per_pair":
            return {"order": order, "starts": starts, "clf": clf, "Z": None}
        # Shared products: rows (whitened once for the LDA) travel to the
        # workers once, as arrays.
        Z = shared_rows(clf, data.X)
        return {"order": order, "starts": starts, "clf": None, "Z": Z}

    def _make_chunks(self, data, pairs):
        if self._solver() == "per_pair":
            return super()._make_chunks(data, pairs)
        return chunk_plan(data.counts, pairs, self.cv)

    def _estimate_seconds(self, data, pairs):
        if self._solver() == "per_pair":
            return None
        pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        rows = float(data.counts[pairs].sum())
        d = data.X.shape[1]
        return rows * (4.0 * d / FLOP_RATE + 60.0 / STREAM_RATE)

    def _audit_pairs(self, data, pairs, context):
        state = context.state
        if state["Z"] is not None:
            with limit_blas_threads():
                out = audit_pairs(
                    state["Z"],
                    state["order"],
                    state["starts"],
                    data.counts,
                    pairs,
                    self.cv,
                    context.seed,
                    self.delta,
                )
            return {"epsilon": out["epsilon"], **{k: out[k] for k in ROC_COLUMNS}}
        clf = state["clf"]
        out = {k: [] for k in ("epsilon", *ROC_COLUMNS)}
        with pair_fit_context():
            for a, b in pairs:
                X, y = pair_rows(data, (state["order"], state["starts"]), a, b)
                na, nb = int((y == 0).sum()), int((y == 1).sum())
                k = n_folds_for(self.cv, na, nb)
                template = _seeded(clf, context.pair_rng(a, b))
                scores = out_of_fold_scores(template, X, y, k, context.seed)
                summary = roc_summary(y, scores, self.delta)
                summary.update(n_a=na, n_b=nb, n_folds=k)
                for key in out:
                    out[key].append(summary[key])
        return {k: np.asarray(v) for k, v in out.items()}

    def fit(self, X, y):
        """Audit the identity pairs of ``(X, y)`` with cross-validated ROCs.

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
            The fitted auditor.
        """
        super().fit(X, y)
        self.solver_ = self._solver()
        r = self.results_
        eps = r["epsilon"].to_numpy()
        self.epsilon_max_ = float(np.max(eps))
        self.epsilon_interior_median_ = float(r["epsilon_interior"].median())
        self.auc_mean_ = float(r["auc"].mean())
        self.n_infinite_ = int(np.isinf(eps).sum())
        self.n_infinite_fpr0_ = int(r["infinite_fpr0"].sum())
        self.n_infinite_tpr1_ = int(r["infinite_tpr1"].sum())
        self.n_corners_ = int(r["corner"].sum())
        # Folds are reproducible (and comparable across audits) only for an
        # integer seed; a RandomState/None seed is consumed by the audit.
        integer = isinstance(self.random_state, Integral) and not isinstance(
            self.random_state, bool
        )
        self.fold_seed_ = int(self.random_state) if integer else None
        return self

    # Public accessor for skprivacy.plotting.PairROCDisplay: it must keep
    # reproducing the scores of _audit_pairs.
    def pair_scores(self, X, y, pair):
        """Recompute the pooled out-of-fold scores behind one pair's ROC.

        The same rows, folds and classifier seed as :meth:`fit`, so the ROC
        of these scores gives that pair's ``epsilon`` and ``auc`` in
        ``results_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The embeddings the auditor was fitted on.
        y : array-like of shape (n_samples,)
            Their identity labels.
        pair : tuple of two identity labels
            The pair; its order does not matter (the identity listed second
            in the audit order, ``id_b`` of ``results_``, is the positive
            class).

        Returns
        -------
        y_true : ndarray of shape (n_a + n_b,)
            0 for the rows of ``id_a``, 1 for those of ``id_b``.
        y_score : ndarray of shape (n_a + n_b,)
            Out-of-fold positive-class scores.

        Examples
        --------
        >>> from skprivacy.datasets import make_identity_embeddings
        >>> from skprivacy import ROCHTAuditor
        >>> from skprivacy.auditors import kov_epsilon, roc_operating_points
        >>> X, ids = make_identity_embeddings(4, 20, 16, noise=2.0, random_state=0)
        >>> audit = ROCHTAuditor(n_pairs=3).fit(X, ids)
        >>> row = audit.results_.iloc[0]
        >>> y_true, y_score = audit.pair_scores(X, ids, (row.id_a, row.id_b))
        >>> fpr, tpr, _ = roc_operating_points(y_true, y_score)
        >>> bool(kov_epsilon(fpr, tpr) == row.epsilon)
        True
        """
        check_is_fitted(self)
        if self.fold_seed_ is None:
            raise ValueError(
                "pair_scores needs the folds of the fit, which are reproducible "
                "only for an integer random_state; refit with random_state=<int>."
            )
        data = self._validate(X, y, reset=False)
        codes = []
        for label in pair:
            code = np.flatnonzero(data.identities == label)
            if code.size != 1:
                raise ValueError(f"Identity {label!r} is not among the audited ones.")
            codes.append(int(code[0]))
        a, b = sorted(codes)
        if a == b:
            raise ValueError(f"A pair needs two different identities; got {pair!r}.")
        Xp, yp = pair_rows(data, data.order(), a, b)
        k = n_folds_for(self.cv, int((yp == 0).sum()), int(yp.sum()))
        rng = PairAuditContext(n_pairs_total=1, seed=self.fold_seed_).pair_rng(a, b)
        template = _seeded(self._classifier_for(data), rng)
        with pair_fit_context():
            return yp, out_of_fold_scores(template, Xp, yp, k, self.fold_seed_)

    @property
    def description_(self):
        """What the fitted audit reports (:class:`~skprivacy.auditors.AuditDescription`)."""
        return describe_rocht(self)


@validate_params(
    {
        "auditor_a": [ROCHTAuditor],
        "auditor_b": [ROCHTAuditor],
    },
    prefer_skip_nested_validation=True,
)
def compare_roc_audits(auditor_a, auditor_b):
    """Compare two fitted ROC-HT audits pair by pair (classifier sensitivity).

    The paper's random-forest check: run :class:`ROCHTAuditor` twice on the
    same data with different ``classifier`` and compare per-pair AUCs. This
    helper verifies that both audits used identical pairs and identical folds
    (same pairs in the same order, same per-identity row counts, same ``cv``
    and fold seed) and returns the per-pair differences.

    Parameters
    ----------
    auditor_a, auditor_b : ROCHTAuditor
        Fitted on the same ``(X, y)``.

    Returns
    -------
    comparison : :class:`~sklearn.utils.Bunch`
        ``results`` (DataFrame: ``id_a``, ``id_b``, ``auc_a``, ``auc_b``,
        ``auc_difference`` = a − b, ``epsilon_a``, ``epsilon_b``),
        ``mean_auc_difference``, ``mean_auc_a``, ``mean_auc_b``.

    Raises
    ------
    ValueError
        If the audits did not use identical pairs and folds.

    Examples
    --------
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy import ROCHTAuditor
    >>> from skprivacy.auditors import compare_roc_audits
    >>> X, ids = make_identity_embeddings(4, 20, 16, noise=2.0, random_state=0)
    >>> lr = ROCHTAuditor(n_pairs=3).fit(X, ids)
    >>> knn = ROCHTAuditor(KNeighborsClassifier(), n_pairs=3).fit(X, ids)
    >>> cmp = compare_roc_audits(lr, knn)
    >>> cmp.results.shape
    (3, 7)
    """
    check_is_fitted(auditor_a)
    check_is_fitted(auditor_b)
    ra, rb = auditor_a.results_, auditor_b.results_
    problems = []
    if len(ra) != len(rb) or not (
        np.array_equal(ra["id_a"].to_numpy(), rb["id_a"].to_numpy())
        and np.array_equal(ra["id_b"].to_numpy(), rb["id_b"].to_numpy())
    ):
        problems.append("different identity pairs")
    elif not (
        np.array_equal(ra["n_a"].to_numpy(), rb["n_a"].to_numpy())
        and np.array_equal(ra["n_b"].to_numpy(), rb["n_b"].to_numpy())
    ):
        problems.append("different rows per identity (different data)")
    if auditor_a.cv != auditor_b.cv:
        problems.append(f"different cv ({auditor_a.cv} vs {auditor_b.cv})")
    if auditor_a.fold_seed_ is None or auditor_b.fold_seed_ is None:
        problems.append("folds not reproducible (random_state is not an int)")
    elif auditor_a.fold_seed_ != auditor_b.fold_seed_:
        problems.append(
            f"different fold seeds ({auditor_a.fold_seed_} vs {auditor_b.fold_seed_})"
        )
    if auditor_a.n_features_in_ != auditor_b.n_features_in_:
        problems.append("different numbers of features")
    if problems:
        raise ValueError(
            "The two audits are not comparable pair by pair: "
            + "; ".join(problems)
            + ". Fit both on the same data with the same n_pairs, cv and an "
            "integer random_state."
        )
    return _auc_comparison(ra, rb)


def _auc_comparison(ra, rb):
    """Compare two ROC-HT result tables on the same pairs, pair by pair."""
    table = pd.DataFrame(
        {
            "id_a": ra["id_a"].to_numpy(),
            "id_b": ra["id_b"].to_numpy(),
            "auc_a": ra["auc"].to_numpy(),
            "auc_b": rb["auc"].to_numpy(),
            "auc_difference": ra["auc"].to_numpy() - rb["auc"].to_numpy(),
            "epsilon_a": ra["epsilon"].to_numpy(),
            "epsilon_b": rb["epsilon"].to_numpy(),
        }
    )
    return Bunch(
        results=table,
        mean_auc_difference=float(table["auc_difference"].mean()),
        mean_auc_a=float(table["auc_a"].mean()),
        mean_auc_b=float(table["auc_b"].mean()),
    )


#: Pairs of the second classifier audited per progress stage.
_SENSITIVITY_BLOCK = 10


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "classifier": [HasMethods(["fit"])],
        "n_pairs": [Interval(Integral, 1, None, closed="left"), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": RANDOM_STATE,
        "n_jobs": [Integral, None],
        "progress": [HasMethods(["start", "finish"]), None],
    },
    prefer_skip_nested_validation=True,
)
def classifier_sensitivity(
    X,
    y,
    classifier,
    *,
    n_pairs=50,
    cv=5,
    random_state=0,
    n_jobs=None,
    progress=None,
):
    """ROC-HT with logistic regression and with another classifier, pair by pair.

    Paper 000's robustness check of ROC-HT to its classifier: the paper's
    logistic-regression audit (:class:`ROCHTAuditor`) and the same audit with
    ``classifier`` (paper 000's is scikit-learn's
    :class:`~sklearn.ensemble.RandomForestClassifier` with 100 trees) on the
    same pairs and folds, compared as :func:`compare_roc_audits` compares two
    fitted audits. The second classifier's pairs are audited in blocks of 10,
    each a stage of ``progress``, so a progress bar moves while a slow
    classifier runs.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity label of each row.
    classifier : estimator
        The classifier compared with logistic regression (cloned per pair and
        fold, seeded per pair as :class:`ROCHTAuditor` seeds it).
    n_pairs : int or None, default=50
        The first ``n_pairs`` pairs of the seeded ordering (None: every pair).
    cv : int, default=5
        Folds per pair, as in :class:`ROCHTAuditor`.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering, the folds and the classifiers; one integer
        seed is drawn from it for both audits, so they share pairs and folds.
    n_jobs : int or None, default=None
        Parallel jobs over pairs.
    progress : object or None, default=None
        A sink of the :class:`~skprivacy.utils.Progress` protocol: the
        logistic audit and each block of pairs are started and finished as
        stages weighted by their estimated seconds (the units of an audit's
        plan). None reports nothing.

    Returns
    -------
    comparison : :class:`~sklearn.utils.Bunch`
        As :func:`compare_roc_audits` with audit ``a`` the logistic regression
        and ``b`` the classifier: ``results`` (``id_a``, ``id_b``, ``auc_a``,
        ``auc_b``, ``auc_difference`` = a − b, ``epsilon_a``, ``epsilon_b``),
        ``mean_auc_difference``, ``mean_auc_a``, ``mean_auc_b``; and
        ``classifier``, the template used.

    See Also
    --------
    compare_roc_audits : The same comparison of two audits fitted separately.

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import classifier_sensitivity
    >>> X, ids = make_identity_embeddings(4, 20, 16, noise=2.0, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0)
    >>> cmp = classifier_sensitivity(X, ids, forest, n_pairs=3)
    >>> cmp.results.shape
    (3, 7)
    """
    seed = seed_from(random_state)
    common = {"n_pairs": n_pairs, "cv": cv, "random_state": seed}
    logistic = ROCHTAuditor(n_jobs=n_jobs, **common)
    other = ROCHTAuditor(classifier, n_jobs=n_jobs, **common)
    data = other._validate(X, y, reset=True)
    pairs = other._protocol_pairs(data, seed)
    per_pair = estimate_seconds(other, data) / max(len(pairs), 1)
    with _stage(progress, "logistic regression", estimate_seconds(logistic, data)):
        logistic.fit(X, y)
    tables = []
    name = type(classifier).__name__
    for lo in range(0, len(pairs), _SENSITIVITY_BLOCK):
        block = pairs[lo : lo + _SENSITIVITY_BLOCK]
        text = f"{name} {lo + 1}-{lo + len(block)}/{len(pairs)} pairs"
        with _stage(progress, text, per_pair * len(block)):
            tables.append(other._audit_table(data, block, seed)[0])
    comparison = _auc_comparison(logistic.results_, pd.concat(tables))
    comparison.classifier = classifier
    return comparison


@contextmanager
def _stage(progress, text, weight):
    """Start and finish one stage of a progress sink (None: nothing)."""
    if progress is not None:
        progress.start(text, weight)
    yield
    if progress is not None:
        progress.finish()
