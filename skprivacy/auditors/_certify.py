# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reserved-test ROC-HT certificates: simultaneous ε lower bounds with confidence.

Per identity pair a classifier, its score direction and its threshold(s) are
fixed on training rows only; on reserved test rows the true/false positives
are counted, and exact Clopper–Pearson bounds on TPR and FPR give an ε lower
bound through the Kairouz–Oh–Viswanath inequalities. A Bonferroni correction
over every certified pair, both bounds and every pre-declared threshold makes
the statement simultaneous: if every pair's mechanism is ε-DP, the
probability that *any* certified lower bound exceeds its pair's true ε is at
most ``1 - confidence``. The maths lives in
:mod:`skprivacy.auditors._roc_core`; the two engines in
:mod:`skprivacy.auditors._roc` (per pair) and
:mod:`skprivacy.auditors._roc_fast` (shared products).
"""

import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone
from sklearn.metrics import auc

from skprivacy.auditors._base import (
    _IN_PROCESS_SECONDS,
    FLOP_RATE,
    BasePairAuditor,
    PairAuditContext,
)
from skprivacy.auditors._description import describe_certifier
from skprivacy.auditors._roc import (
    _check_classifier,
    _seeded,
    out_of_fold_scores,
    pair_fit_context,
    pair_rows,
    positive_scores,
    resolve_solver,
)
from skprivacy.auditors._roc_core import (
    alpha_per_bound,
    certified_from_counts,
    grid_thresholds,
    n_folds_for,
    reserved_test_mask,
    roc_operating_points,
    select_threshold,
)
from skprivacy.auditors._roc_fast import (
    PairEstimators,
    certify_held_out,
    certify_pairs,
    chunk_plan,
    held_out_products,
    identity_means,
    shared_rows,
    with_shared_covariance,
)
from skprivacy.utils import (
    IdentityData,
    duplicate_groups,
    near_duplicates_of,
    seed_from,
    validate_identity_data,
)
from skprivacy.utils._sklearn import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from skprivacy.utils._threads import limit_blas_threads

__all__ = ["ROCHTCertifier"]

#: Columns of a certificate table after ``id_a``, ``id_b``.
_CERT_COLUMNS = (
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
                t = grid_thresholds(s, thresholds)
            out.append((estimator, t, direction, train_auc, na, nb))
    return out


def _shared_train_chunk(Z_train, train_index, pairs, cv, seed, thresholds, alpha):
    with limit_blas_threads():
        return certify_pairs(Z_train, train_index, pairs, cv, seed, thresholds, alpha)


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


def _first_of_groups(groups):
    """Rows to count: those outside every duplicate group and each group's first."""
    keep = groups < 0
    grouped = np.flatnonzero(~keep)
    _, first = np.unique(groups[grouped], return_index=True)
    keep[grouped[first]] = True
    return keep


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
    family size fixed in :meth:`fit` (``n_comparisons_``: the declared
    ``n_comparisons``, or the number of fitted pairs) and ``m`` the number of
    pre-declared thresholds, so with probability at least ``confidence``
    **every** reported ε_LB is below its pair's true ε. This is a
    certificate, not a point estimate.

    Two ways to use it:

    * **Reserved test inside the data** (``test_size`` a float, the default):
      ``fit(X, y)`` splits every identity's rows (stratified, seeded, every
      group of duplicate rows on one side) into train and reserved test,
      trains on the former and certifies on the latter; ``score()`` returns
      the largest certified ε_LB.
    * **scikit-learn shape** (any ``test_size``; use ``test_size=None`` to
      train on all of ``X_train``): ``fit(X_train, y_train)`` then
      ``score(X_test, y_test)`` certifies on held-out data and returns the
      largest simultaneous ε_LB; :meth:`certify` returns the per-pair table.
      Held-out rows that copy a training row (exactly or nearly: see
      ``allow_seen_rows``) are refused.

    Parameters
    ----------
    classifier : estimator or None, default=None
        Binary classifier with ``predict_proba`` or ``decision_function``;
        ``None`` means ``LogisticRegression(C=1.0, solver="lbfgs",
        max_iter=1000)``. A ``random_state=None`` is replaced by a per-pair
        seed derived from ``random_state``. A
        :class:`~skprivacy.CentroidClassifier` or
        :class:`~skprivacy.PooledLDAClassifier` can take the shared-product
        engine (see ``solver``); its ``estimators_`` are then built on access.
    cv : int, default=5
        Folds of the out-of-fold scores on the training rows that fix the
        direction and threshold(s) (fewer if an identity has fewer training
        rows; in-sample scores if it has one).
    test_size : float in (0, 1) or None, default=0.3
        Fraction of each identity's rows reserved for the test in ``fit``
        (``ceil``; at least one train and one test row; approximately when
        duplicate groups must stay whole). ``None``: train on everything and
        certify only through ``score(X_test, y_test)``.
    confidence : float in (0, 1), default=0.95
        Simultaneous confidence over all pairs of the family, both bounds and
        all thresholds.
    thresholds : "train" or int >= 2, default="train"
        ``"train"``: one threshold per pair, chosen on the training rows (the
        out-of-fold cut with the best anticipated certificate). An int ``m``:
        a pre-declared set of ``m`` thresholds per pair (quantiles of the
        training out-of-fold scores at levels ``1/(m+1), ..., m/(m+1)``); the
        best one on the reserved test is reported and the search is paid for
        with ``m`` in the Bonferroni correction.
    solver : {"auto", "shared", "per_pair"}, default="auto"
        The engine, as in :class:`ROCHTAuditor`: ``"shared"`` (only for
        :class:`~skprivacy.CentroidClassifier` and
        :class:`~skprivacy.PooledLDAClassifier`) trains every pair's test and
        counts every held-out row from products shared by all pairs;
        ``"per_pair"`` fits and scores each pair's classifier; ``"auto"``
        takes ``"shared"`` when the classifier has it. Same certificates.
    n_pairs : int or None, default=200
        Pairs of the seeded pair ordering to train (``None``: all). Ignored
        when ``pairs`` is given.
    pairs : sequence of (id_a, id_b) or None, default=None
        Train exactly these identity pairs (labels as in ``y``; ``id_b`` is
        the positive class) instead of a prefix of the seeded ordering, e.g. a
        paper's selected pairs.
    select_top : int or None, default=None
        Keep only the ``select_top`` trained pairs with the highest training
        AUC (out-of-fold, on training rows, in the fixed direction) and
        certify those: the selection uses training rows only, so the family
        is the selected pairs and ``K = select_top``. ``None``: every trained
        pair is in the family.
    n_comparisons : int or None, default=None
        ``K`` of the Bonferroni correction, fixed in ``fit``. ``None``: the
        number of pairs in the family (fitted, after ``select_top``). An int
        declares a larger family (e.g. 20 selected pairs reported under the
        40-pair correction shared with other conditions); it must be at least
        the number of pairs in the family (``ValueError`` otherwise) and, for
        the guarantee to hold, **fixed before the test data are seen**, as
        must ``pairs``.
    random_state : int, RandomState instance, Generator or None, default=0
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
        ``K``, fixed in ``fit``: ``n_comparisons``, or the number of pairs in
        the family (``len(pairs_)``). Every later :meth:`certify` or
        :meth:`score`, on any subset of the pairs, certifies at this ``K``.
    n_candidate_pairs_ : int
        Pairs trained before ``select_top`` (``len(pairs_)`` without it).
    alpha_per_bound_ : float
        ``(1 - confidence) / (2 K m)``.
    ceiling_ : float
        Largest ``ceiling`` over the pairs.
    estimators_ : sequence of estimators
        The fitted per-pair classifiers, aligned with ``pairs_`` (a list; on
        the shared engine a sequence that builds each one on access).
    thresholds_ : ndarray of shape (n_pairs, m)
        Pre-declared thresholds per pair (on ``direction * score``).
    directions_ : ndarray of shape (n_pairs,)
        Score direction per pair.
    seen_rows_ : ndarray of shape (n_train_rows, n_features), dtype float32
        The validated (L2-normalised) rows the per-pair tests were trained on;
        :meth:`certify` and :meth:`score` refuse held-out rows that
        near-duplicate one of them.
    n_seen_rows_dropped_ : int
        Held-out rows that the last ``certify``/``score`` call with
        ``allow_seen_rows=True`` dropped as copies of training rows (0 after
        ``fit``).
    n_duplicate_groups_ : int
        Groups of duplicate rows among the fitted rows
        (:func:`~skprivacy.utils.duplicate_groups`), each kept on one side of
        the reserved-test split.
    n_test_duplicates_dropped_ : int
        Reserved-test rows not counted because they duplicate another
        reserved-test row (each duplicate group is counted once).
    solver_ : {"shared", "per_pair"}
        The engine that ran.
    pairs_, identities_, drop_report_, summary_kind_, guarantee_, \
pair_details_, n_features_in_, feature_names_in_ :
        See :class:`~skprivacy.auditors.BasePairAuditor`.

    See Also
    --------
    ROCHTAuditor : The out-of-fold point estimate.
    certified_epsilon_lb : The bound from counts.
    certifiable_epsilon_ceiling : The best a test of a given size can do.
    family_confidence : The per-certificate confidence of a family.

    Notes
    -----
    Soundness rests on four facts: the classifier, direction and thresholds
    depend on training rows only; the reserved-test rows are independent
    draws from the two identities' distributions; the family of ``K`` pairs
    is fixed before any reserved-test row is looked at; and Clopper–Pearson
    bounds are exact. The union bound then needs no independence between
    pairs (an identity's test rows are reused by all of its pairs).

    Copies break the second fact. A row and its duplicate (exact, recast,
    rescaled, rounded or slightly perturbed: cosine distance at most
    :data:`~skprivacy.utils.DUPLICATE_TOL`) are not independent draws: one
    on each side of the split lets a memorising classifier (1-NN) certify
    any pair, and two in the test count one draw twice. So the split keeps
    every duplicate group on one side, a group in the test is counted once,
    and held-out rows that copy a training row are refused.

    Choosing which pairs to report breaks the third fact unless the choice
    uses training rows only. ``select_top`` ranks by training AUC and
    certifies the chosen pairs at ``K = select_top``: sound. The
    **reserved-row trap** is to look at the reserved rows first: picking the
    pair with the largest certificate on the reserved test (or on held-out
    data), then certifying that pair alone at ``K = 1`` — with a fresh
    certifier, or by passing only that pair's rows to :meth:`certify`. The
    selection then used the test rows, and the family it was chosen from
    had ``K`` members: false certificates far above ``1 - confidence``. This
    estimator certifies every later call at the ``K`` fixed in ``fit``;
    a new certifier fitted for a pair chosen on reserved rows must be given
    ``n_comparisons`` equal to the family the choice was made from.

    Reporting the larger of several certificates (e.g. of ROC-HT and of the
    MMD-TV certificate) is such a choice too: issue each at
    :func:`family_confidence` ``(confidence, n_certificates)``.

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
        "solver": [StrOptions({"auto", "shared", "per_pair"})],
        "pairs": ["array-like", None],
        "select_top": [Interval(Integral, 1, None, closed="left"), None],
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
        solver="auto",
        n_pairs=200,
        pairs=None,
        select_top=None,
        n_comparisons=None,
        random_state=0,
        n_jobs=None,
    ):
        self.classifier = classifier
        self.cv = cv
        self.test_size = test_size
        self.confidence = confidence
        self.thresholds = thresholds
        self.solver = solver
        self.n_pairs = n_pairs
        self.pairs = pairs
        self.select_top = select_top
        self.n_comparisons = n_comparisons
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _n_thresholds(self):
        return 1 if self.thresholds == "train" else int(self.thresholds)

    def _family_size(self, n_family):
        """``K`` of the Bonferroni correction: declared, or the family's pairs."""
        if self.n_comparisons is None:
            return int(n_family)
        if self.n_comparisons < n_family:
            raise ValueError(
                f"n_comparisons={self.n_comparisons} is smaller than the "
                f"{n_family} pairs certified; the declared family must contain "
                "every certified pair."
            )
        return int(self.n_comparisons)

    def _fit_pairs(self, data):
        """Identity codes of the pairs to train (``pairs`` or the protocol)."""
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
        index = self._pair_index()
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
        # The family size was fixed in fit: a subset of the pairs (even one
        # pair's rows) is certified at that K, never fewer.
        alpha = alpha_per_bound(
            self.confidence, self.n_comparisons_ * self._n_thresholds()
        )
        cols = {k: [] for k in _CERT_COLUMNS}
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
                eps, lo, hi = certified_from_counts(tp, n_pos, fp, n_neg, alpha)
                j = int(np.argmax(eps))
                ceiling = certified_from_counts(n_pos, n_pos, 0, n_neg, alpha)[0]
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

    def _pair_index(self):
        return {
            (la, lb): i
            for i, (la, lb) in enumerate(self.identities_[self.pairs_].tolist())
        }

    def _present_pairs(self, data):
        """Fitted pairs whose two identities have rows in ``data`` (its codes)."""
        code_of = {
            label: c
            for c, label in enumerate(data.identities.tolist())
            if data.counts[c] > 0
        }
        return np.asarray(
            [
                (code_of[la], code_of[lb])
                for la, lb in self.identities_[self.pairs_].tolist()
                if la in code_of and lb in code_of
            ],
            dtype=np.intp,
        ).reshape(-1, 2)

    def _audit(self, data, random_state):
        # Certify held-out `data` with the fitted per-pair tests: every fitted
        # pair whose two identities are present, in the fitted orientation.
        pairs = self._present_pairs(data)
        if not len(pairs):
            raise ValueError(
                "None of the fitted identity pairs has both identities in the "
                "held-out data; nothing can be certified."
            )
        if self.solver_ == "shared":
            results = self._certify_shared(data, pairs)
        else:
            results, _ = self._audit_table(data, pairs, seed_from(random_state))
        return pairs, results, {}

    def _certify_shared(self, data, pairs):
        """Certificates of the held-out ``data`` through shared products."""
        index = self._pair_index()
        fitted = np.asarray(
            [index[tuple(p)] for p in data.identities[pairs].tolist()], dtype=np.intp
        )
        estimators = self.estimators_
        Z = shared_rows(estimators.template, data.X)
        alpha = alpha_per_bound(
            self.confidence, self.n_comparisons_ * self._n_thresholds()
        )
        # The held-out identities are coded like the fitted ones: map the
        # training means onto the held-out codes.
        # (identities never fitted belong to no pair: any row of means does).
        code_of = {label: c for c, label in enumerate(self.identities_.tolist())}
        fit_codes = np.asarray(
            [code_of.get(label, 0) for label in data.identities.tolist()], dtype=np.intp
        )
        with limit_blas_threads():
            T, sq = held_out_products(Z, estimators.means[fit_codes])
            cols = certify_held_out(
                T,
                sq,
                data.order(),
                pairs,
                self.directions_[fitted],
                self.thresholds_[fitted],
                alpha,
            )
        cols.update(
            direction=self.directions_[fitted],
            train_auc=self.train_auc_[fitted],
            n_train_a=self.train_counts_[fitted, 0],
            n_train_b=self.train_counts_[fitted, 1],
        )
        head = {
            "id_a": data.identities[pairs[:, 0]],
            "id_b": data.identities[pairs[:, 1]],
        }
        return pd.DataFrame({**head, **{k: cols[k] for k in _CERT_COLUMNS}})

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
        solver = resolve_solver(self.solver, clf, type(self).__name__)
        data = self._validate(X, y, reset=True)
        candidates = self._fit_pairs(data)
        n_family = len(candidates)
        if self.select_top is not None:
            n_family = min(int(self.select_top), n_family)
        n_comparisons = self._family_size(n_family)
        seed = seed_from(self.random_state)
        m = self._n_thresholds()
        alpha = alpha_per_bound(self.confidence, n_comparisons * m)
        if self.test_size is not None:
            test_mask, groups = reserved_test_mask(data, self.test_size, seed)
            train = _subset(data, ~test_mask)
            counted = test_mask & _first_of_groups(groups)
            test = _subset(data, counted)
            self.n_test_duplicates_dropped_ = int(test_mask.sum() - counted.sum())
            self.n_duplicate_groups_ = int(groups.max() + 1) if groups.size else 0
        else:
            groups, counts = duplicate_groups(data.X)
            train, test = data, None
            self.n_test_duplicates_dropped_ = 0
            self.n_duplicate_groups_ = counts["n_groups"]
        # An LDA whitens by the pooled covariance of the training rows only.
        clf = with_shared_covariance(clf, train.X, train.codes, train.n_identities)
        self.solver_ = solver
        self.identities_ = data.identities
        self.drop_report_ = data.drop_report
        # The rows the per-pair tests were trained on: certify/score refuse
        # held-out copies of them (a certificate from training rows is no
        # certificate).
        self.seen_rows_ = train.X.astype(np.float32)
        self.n_seen_rows_dropped_ = 0
        if solver == "shared":
            self._train_shared(clf, train, candidates, seed, alpha)
        else:
            self._train_per_pair(clf, train, candidates, seed, alpha)
        self.n_candidate_pairs_ = len(candidates)
        self._select(n_family)
        self.n_comparisons_ = n_comparisons
        self.summary_kind_ = self._summary_kind()
        self.guarantee_ = self._guarantee_kind()
        self.pair_details_ = {}
        if test is not None and not len(self._present_pairs(test)):
            warnings.warn(
                "No fitted pair has reserved-test rows of both identities (every "
                "identity's rows are copies of one another, or too few); nothing "
                "is certified.",
                UserWarning,
                stacklevel=2,
            )
            results = self._empty_table()
            self.n_certified_ = 0
            self.alpha_per_bound_ = alpha
            self.summary_ = 0.0
            self.ceiling_ = 0.0
        elif test is not None:
            _, results, _ = self._audit(test, self.random_state)
            self.n_certified_ = len(results)
            self.alpha_per_bound_ = alpha
            self.summary_ = float(results["epsilon"].max())
            self.ceiling_ = float(results["ceiling"].max())
        else:
            results = self._untested_results()
        self.results_ = results
        return self

    def _train_per_pair(self, clf, train, pairs, seed, alpha):
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
        self.pairs_ = pairs
        self.estimators_ = [f[0] for f in fitted]
        self.thresholds_ = np.vstack([f[1] for f in fitted])
        self.directions_ = np.array([f[2] for f in fitted], dtype=np.intp)
        self.train_auc_ = np.array([f[3] for f in fitted])
        self.train_counts_ = np.array([[f[4], f[5]] for f in fitted], dtype=np.intp)

    def _train_shared(self, clf, train, pairs, seed, alpha):
        Z_train = shared_rows(clf, train.X)
        order_tr, starts_tr = train.order()
        train_index = (order_tr, starts_tr, train.counts)
        chunks = chunk_plan(train.counts, pairs, self.cv)
        seconds = float(train.counts[pairs].sum()) * 8.0 * Z_train.shape[1] / FLOP_RATE
        settings = (self.cv, seed, self.thresholds, alpha)
        if effective_n_jobs(self.n_jobs) == 1 or seconds < _IN_PROCESS_SECONDS:
            outs = [
                _shared_train_chunk(Z_train, train_index, pairs[c], *settings)
                for c in chunks
            ]
        else:
            outs = Parallel(n_jobs=self.n_jobs)(
                delayed(_shared_train_chunk)(Z_train, train_index, pairs[c], *settings)
                for c in chunks
            )
        order = np.concatenate(chunks)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        cols = {k: np.concatenate([o[k] for o in outs])[inverse] for k in outs[0]}
        means = identity_means(Z_train, order_tr, starts_tr)
        self.pairs_ = pairs
        self.estimators_ = PairEstimators(clf, means, pairs, train.X.shape[1])
        self.thresholds_ = cols["thresholds"]
        self.directions_ = cols["direction"]
        self.train_auc_ = cols["train_auc"]
        self.train_counts_ = np.stack([cols["n_train_a"], cols["n_train_b"]], 1)

    def _select(self, n_family):
        """Keep the ``n_family`` pairs of highest oriented training AUC (select_top)."""
        if self.select_top is None:
            return
        oriented = np.where(
            self.directions_ > 0, self.train_auc_, 1.0 - self.train_auc_
        )
        keep = np.sort(np.argsort(-oriented, kind="stable")[:n_family])
        self.pairs_ = self.pairs_[keep]
        if isinstance(self.estimators_, PairEstimators):
            self.estimators_ = self.estimators_.subset(keep)
        else:
            self.estimators_ = [self.estimators_[i] for i in keep.tolist()]
        self.thresholds_ = self.thresholds_[keep]
        self.directions_ = self.directions_[keep]
        self.train_auc_ = self.train_auc_[keep]
        self.train_counts_ = self.train_counts_[keep]

    @staticmethod
    def _empty_table():
        return pd.DataFrame({c: [] for c in ("id_a", "id_b", *_CERT_COLUMNS)})

    def _untested_results(self):
        """Per-pair table of the fitted tests when no rows were reserved to certify."""
        pairs = self.pairs_
        nan = np.full(len(pairs), np.nan)
        self.n_certified_ = 0
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

    def _held_out_data(self, X, y, allow_seen_rows):
        """Validate held-out rows; drop copies of training rows and of each other.

        Returns ``(data, n_seen, n_duplicates)``.
        """
        data = self._validate_test(X, y)
        seen = near_duplicates_of(data.X, self.seen_rows_)
        n_seen = int(seen.sum())
        if n_seen and not allow_seen_rows:
            raise ValueError(
                f"{n_seen} of the {seen.size} rows passed to certify/score copy a "
                "row used to train the per-pair tests in fit (exactly, or up to "
                "a cast, a rescaling, rounding or tiny noise); a certificate "
                "computed on training rows is not a certificate. Certify on "
                "held-out rows, or pass allow_seen_rows=True to drop them (the "
                "count is recorded in n_seen_rows_dropped_)."
            )
        if n_seen:
            warnings.warn(
                f"Dropped {n_seen} of {seen.size} rows seen in fit before "
                "certifying (allow_seen_rows=True).",
                UserWarning,
                stacklevel=4,
            )
        keep = ~seen
        if keep.any():
            # Copies within the held-out rows are one draw, counted once.
            first = np.zeros_like(keep)
            first[keep] = _first_of_groups(duplicate_groups(data.X[keep])[0])
            n_duplicates = int(keep.sum() - first.sum())
            keep = first
        else:
            n_duplicates = 0
        if not keep.all():
            data = _subset(data, keep)
        return data, n_seen, n_duplicates

    def _certify_table(self, X, y, allow_seen_rows):
        data, n_seen, n_duplicates = self._held_out_data(X, y, allow_seen_rows)
        if n_seen and not len(self._present_pairs(data)):
            # Everything certifiable was dropped: the trivial certificate.
            results = self._empty_table()
        else:
            _, results, _ = self._audit(data, self.random_state)
        results.attrs["n_seen_rows_dropped"] = n_seen
        results.attrs["n_test_duplicates_dropped"] = n_duplicates
        return results, n_seen

    def certify(self, X, y, *, allow_seen_rows=False):
        """Certify held-out data with the fitted per-pair tests.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out embeddings, never seen by :meth:`fit`.
        y : array-like of shape (n_samples,)
            Their identity labels. Every fitted pair whose two identities
            occur (at least one row each) is certified, at the family size
            ``n_comparisons_`` fixed in :meth:`fit` whatever the number of
            pairs present.
        allow_seen_rows : bool, default=False
            Rows that copy a row the per-pair tests were trained on in
            :meth:`fit` — the same direction up to a cosine distance of
            :data:`~skprivacy.utils.DUPLICATE_TOL` after L2 normalisation, so
            exact copies and copies recast to float32, rescaled, rounded or
            slightly perturbed — make this raise a ``ValueError``; ``True``
            drops them instead, warns, and records their number in
            ``n_seen_rows_dropped_`` (the only attribute this method then
            sets) and in ``certificates.attrs``. The reserved-test rows of
            ``fit`` were never trained on and are not "seen".

        Returns
        -------
        certificates : pandas.DataFrame
            One row per certified pair, columns as ``results_``; empty (no pair
            certified, ε_LB = 0) when dropping seen rows left no fitted pair
            with both identities. ``certificates.attrs`` holds
            ``n_seen_rows_dropped`` and ``n_test_duplicates_dropped`` (held-out
            rows that duplicate another held-out row: each group is counted
            once).

        Raises
        ------
        ValueError
            If ``X`` holds copies of rows seen in fit and ``allow_seen_rows``
            is False.

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
            See :meth:`certify`: copies of rows seen in fit raise a
            ``ValueError`` unless this is ``True``, which drops them and
            records their number in ``n_seen_rows_dropped_``.

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
            If ``X`` holds copies of rows seen in fit and ``allow_seen_rows``
            is False.
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
