# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Open-set verification audit: TAR at a fixed FAR on unseen identities."""

import math
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone, is_regressor
from sklearn.linear_model import Ridge
from sklearn.metrics import auc, roc_curve
from sklearn.neural_network import MLPClassifier
from sklearn.utils import Bunch

from skprivacy.auditors import clopper_pearson_bound
from skprivacy.exceptions import UnresolvableRateWarning
from skprivacy.metrics._eer import equal_error_rate
from skprivacy.utils import (
    check_legacy_rng,
    check_scores,
    l2_normalize,
    sklearn_random_state,
    validate_identity_data,
)
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_params,
)

__all__ = ["OpenSetVerificationAuditor", "tar_at_far"]


def _clopper_pearson(k, n, confidence):
    """Two-sided Clopper-Pearson interval for a binomial proportion ``k / n``."""
    if n == 0:
        return (0.0, 1.0)
    half = (1.0 - confidence) / 2
    return (
        clopper_pearson_bound(k, n, half, side="lower"),
        clopper_pearson_bound(k, n, half, side="upper"),
    )


def _clopper_pearson_upper(k, n, confidence):
    """One-sided Clopper-Pearson upper bound for ``k / n`` at ``confidence``."""
    if n == 0:
        return 1.0
    return clopper_pearson_bound(k, n, 1.0 - confidence, side="upper")


@validate_params(
    {
        "genuine_scores": ["array-like"],
        "impostor_scores": ["array-like"],
        "far": [Interval(Real, 0, 1, closed="neither")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def tar_at_far(genuine_scores, impostor_scores, *, far=1e-4, confidence=0.95):
    """True-accept rate at the threshold that achieves a false-accept rate.

    The threshold is the ``(k + 1)``-th largest impostor score with
    ``k = floor(far * n_impostor)``, and a pair is accepted when its score is
    *strictly* greater. At most ``k`` impostor pairs are accepted, so the
    achieved FAR never exceeds ``far`` (ties can make it smaller).

    Parameters
    ----------
    genuine_scores : array-like of shape (n_genuine,)
        Similarity scores of same-identity pairs.
    impostor_scores : array-like of shape (n_impostor,)
        Similarity scores of different-identity pairs.
    far : float, default=1e-4
        Target false-accept rate.
    confidence : float, default=0.95
        Level of the Clopper-Pearson intervals.

    Returns
    -------
    result : Bunch
        ``tar`` (point estimate), ``tar_interval`` (two-sided Clopper-Pearson
        interval of the TAR at this threshold), ``threshold``,
        ``n_false_accepts``, ``far_achieved``, ``far_upper`` (one-sided
        Clopper-Pearson upper bound on the FAR at this threshold),
        ``n_genuine``, ``n_impostor`` and ``resolvable`` (``n_impostor >=
        1 / far``).

    Warns
    -----
    UnresolvableRateWarning
        If there are fewer than ``1 / far`` impostor scores: the threshold is
        then the largest impostor score (no false accept allowed), and the
        reported TAR is that of a FAR of 0 on this sample, not of ``far``.

    Notes
    -----
    For i.i.d. scores both intervals are exact: the true FAR at the
    ``(k + 1)``-th largest of ``n`` impostor scores is ``Beta(k + 1, n - k)``
    distributed, whose ``confidence`` quantile is the one-sided
    Clopper-Pearson bound, and given the threshold the genuine accepts are
    binomial. Pairs that share a sample are not independent, so for
    enumerated pairs read them as nominal; they still show how few impostor
    pairs a low FAR rests on (0 false accepts in ``n`` pairs only bounds the
    FAR by about ``3 / n`` at 95%).

    Examples
    --------
    >>> from skprivacy.sanitize import tar_at_far
    >>> res = tar_at_far([0.9, 0.8, 0.3], [0.1, 0.2, 0.5, 0.4], far=0.25)
    >>> float(res.threshold), float(res.tar)
    (0.4, 0.666...)
    """
    gen = check_scores(genuine_scores, name="genuine_scores", allow_empty=True)
    imp = check_scores(impostor_scores, name="impostor_scores", allow_empty=True)
    if gen.size == 0 or imp.size == 0:
        raise ValueError(
            f"Need at least one genuine and one impostor score; got {gen.size} "
            f"genuine and {imp.size} impostor score(s)."
        )
    n_imp = imp.size
    # floor with a tolerance: far * n can land a hair below an integer.
    k = int(math.floor(far * n_imp + 1e-9))
    resolvable = n_imp * far >= 1 - 1e-9
    if not resolvable:
        warnings.warn(
            f"FAR={far:g} is not resolvable with {n_imp} impostor pair(s): at "
            f"least {math.ceil(1 / far)} are needed. The threshold is the largest "
            "impostor score (no false accept allowed), so the reported TAR is "
            f"that of an observed FAR of 0 on {n_imp} pairs (one-sided "
            f"{confidence:.0%} upper bound on that FAR: "
            f"{_clopper_pearson_upper(0, n_imp, confidence):.2g}).",
            UnresolvableRateWarning,
            stacklevel=2,
        )
    # (k+1)-th largest impostor score = (n - k)-th smallest (1-based).
    threshold = float(np.partition(imp, n_imp - 1 - k)[n_imp - 1 - k])
    n_fa = int(np.count_nonzero(imp > threshold))
    n_ta = int(np.count_nonzero(gen > threshold))
    return Bunch(
        tar=n_ta / gen.size,
        tar_interval=_clopper_pearson(n_ta, gen.size, confidence),
        threshold=threshold,
        n_false_accepts=n_fa,
        far_achieved=n_fa / n_imp,
        far_upper=_clopper_pearson_upper(n_fa, n_imp, confidence),
        n_genuine=int(gen.size),
        n_impostor=int(n_imp),
        resolvable=bool(resolvable),
    )


def _genuine_scores(F, data):
    """Cosine scores of every same-identity pair, grouped by identity.

    ``F`` holds the probe-space rows of ``data`` (an ``IdentityData``), in its
    row order.
    """
    order, starts = data.order()
    scores, per_identity = [], []
    for i in range(data.n_identities):
        rows = F[order[starts[i] : starts[i + 1]]]
        if rows.shape[0] < 2:
            per_identity.append(np.empty(0))
            continue
        iu = np.triu_indices(rows.shape[0], k=1)
        s = (rows @ rows.T)[iu]
        per_identity.append(s)
        scores.append(s)
    flat = np.concatenate(scores) if scores else np.empty(0)
    return flat, per_identity


def _impostor_scores(F, codes, max_pairs, random_state):
    """Cosine scores of all different-identity pairs, or a seeded sample of them.

    Returns ``(scores, n_total, sampled)``.
    """
    n = F.shape[0]
    counts = np.bincount(codes)
    n_total = n * (n - 1) // 2 - int(np.sum(counts * (counts - 1) // 2))
    if n_total <= max_pairs:
        out = []
        block = max(1, (1 << 22) // max(n, 1))
        for s in range(0, n, block):
            e = min(s + block, n)
            S = F[s:e] @ F[s:].T
            rows = np.arange(s, e)[:, None]
            cols = np.arange(s, n)[None, :]
            mask = (cols > rows) & (codes[s:e, None] != codes[None, s:])
            out.append(S[mask])
        return np.concatenate(out), n_total, False
    # Uniform sample with replacement over unordered impostor pairs: draw
    # ordered index pairs and reject same-identity ones (each unordered pair
    # has two ordered versions, so the accepted draws are uniform).
    rng = check_legacy_rng(random_state)
    scores = np.empty(max_pairs)
    filled = 0
    # Index draws per chunk fixed at 2^24 / d (this sets the random stream);
    # the rows are gathered in sub-blocks of a quarter of that, so the gathered
    # copies of both sides stay around 2 x 32 MB whatever the width (a 2,000-row
    # audit inside `skprivacy sanitize` no longer adds 270 MB to its peak).
    chunk = max(1024, (1 << 24) // max(F.shape[1], 1))
    sub = max(256, chunk // 4)
    while filled < max_pairs:
        i = rng.randint(n, size=chunk)
        j = rng.randint(n, size=chunk)
        ok = codes[i] != codes[j]
        i, j = i[ok], j[ok]
        take = min(i.size, max_pairs - filled)
        for s in range(0, take, sub):
            e = min(s + sub, take)
            scores[filled + s : filled + e] = np.einsum(
                "ij,ij->i", F[i[s:e]], F[j[s:e]]
            )
        filled += take
    return scores, n_total, True


class OpenSetVerificationAuditor(BaseEstimator):
    """Attacker-calibrated open-set verification audit: TAR at a low FAR.

    ``fit`` trains the attacker's probe on the identities it is given (the
    attacker's own labelled data); ``score`` evaluates one-to-one verification
    on *other* identities: every genuine pair and the impostor pairs are
    compared by cosine similarity in the probe's space, the threshold is set at
    the requested false-accept rate, and the true-accept rate at that threshold
    is the audited leakage (higher = leakier). This is the audit of paper 003:
    run it on embeddings before and after :class:`ISP`.

    Read more in the :ref:`User Guide <sanitize>`.

    Parameters
    ----------
    probe : {"ridge", "mlp", "raw"} or estimator, default="ridge"
        The attacker's feature map, trained on the fit identities.

        - ``"ridge"``: ``Ridge(alpha=1.0)`` onto the centred identity one-hot;
          the probe space is the predicted score vector (a linear attacker).
        - ``"mlp"``: ``MLPClassifier(hidden_layer_sizes=(128,))`` on the
          identities; the probe space is the hidden ReLU layer (a small
          non-linear projection).
        - ``"raw"``: no training; cosine of the embeddings themselves.
        - an estimator: a regressor is fitted onto the centred identity
          one-hot and its ``predict`` output is the probe space; a classifier
          is fitted on the identities and its ``transform``,
          ``decision_function`` or ``predict_proba`` output (first available)
          is the probe space (an ``MLPClassifier`` uses its hidden layer).
    far : float, default=1e-4
        False-accept rate at which the TAR is read.
    max_impostor_pairs : int, default=1_000_000
        If the scored data has at most this many impostor pairs, all are used;
        otherwise a seeded uniform sample (with replacement) of this many. The
        default gives about 100 false accepts at ``far=1e-4``, enough to
        resolve the FAR.
    confidence : float, default=0.95
        Level of the Clopper-Pearson intervals reported beside the TAR.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the MLP probe and the impostor sample.

    Attributes
    ----------
    probe_ : estimator or None
        The fitted probe (None for ``probe="raw"``).
    identities_ : ndarray of shape (n_identities,)
        Identity labels the probe was trained on.
    drop_report_ : dict
        Rows dropped during fit (non-finite, low norm), by reason.
    eer_ : float
        Equal error rate of verification among the fit identities in the
        probe's space (:func:`~skprivacy.metrics.equal_error_rate`; NaN without
        a genuine pair). Closed-set, hence optimistic for the attacker: the
        open-set EER of held-out identities is ``audit(X, y).eer``. A point
        estimate.
    eer_threshold_ : float
        Cosine threshold at which ``eer_`` is reached.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    ISP : The identity eraser this audit is designed to evaluate.
    tar_at_far : The thresholding rule, on precomputed scores.

    Notes
    -----
    Threat model: the attacker holds labelled embeddings of some identities
    (the fit data) and wants to decide whether two embeddings of *new*
    identities show the same person. Identity-disjoint splits make this
    open-set; :func:`~sklearn.model_selection.cross_validate` with
    ``GroupKFold`` and ``groups=ids`` over
    ``make_pipeline(ISP(16), OpenSetVerificationAuditor())`` runs exactly that
    protocol, fitting both ISP and the probe on the training identities.

    The threshold rule is that of :func:`tar_at_far`. TAR at ``FAR = 1e-4``
    needs at least 10,000 impostor pairs to mean anything (and ~30,000 before
    zero false accepts bounds the FAR below 1e-4 at 95%); with fewer the audit
    warns (:class:`~skprivacy.exceptions.UnresolvableRateWarning`) and
    ``resolvable_`` is False. The TAR is a point estimate, not a certificate.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import OpenSetVerificationAuditor
    >>> X, ids = make_identity_embeddings(60, 10, 32, random_state=0)
    >>> train, test = ids < 30, ids >= 30
    >>> auditor = OpenSetVerificationAuditor(far=1e-3).fit(X[train], ids[train])
    >>> tar = auditor.score(X[test], ids[test])
    >>> auditor.audit(X[test], ids[test]).n_impostor_pairs
    43500
    >>> 0.0 <= tar <= 1.0
    True
    """

    _parameter_constraints: dict = {
        "probe": [StrOptions({"ridge", "mlp", "raw"}), HasMethods(["fit"])],
        "far": [Interval(Real, 0, 1, closed="neither")],
        "max_impostor_pairs": [Interval(Integral, 1, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        probe="ridge",
        *,
        far=1e-4,
        max_impostor_pairs=1_000_000,
        confidence=0.95,
        random_state=None,
    ):
        self.probe = probe
        self.far = far
        self.max_impostor_pairs = max_impostor_pairs
        self.confidence = confidence
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Train the attacker's probe on labelled embeddings.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The attacker's embeddings (L2-normalised first; unusable rows are
            dropped with a warning).
        y : array-like of shape (n_samples,)
            Their identity labels.

        Returns
        -------
        self : OpenSetVerificationAuditor
            Fitted auditor.
        """
        data = validate_identity_data(
            self, X, y, reset=True, min_samples_per_identity=1, min_identities=2
        )
        self.drop_report_ = data.drop_report
        self.identities_ = data.identities
        probe = self.probe
        Z, codes = data.X, data.codes
        if probe == "raw":
            self.probe_ = None
            self._set_training_eer(data)
            return self
        if isinstance(probe, str):
            if probe == "ridge":
                probe = Ridge(alpha=1.0)
            else:
                probe = MLPClassifier(
                    hidden_layer_sizes=(128,),
                    max_iter=300,
                    random_state=sklearn_random_state(self.random_state),
                )
        else:
            probe = clone(probe)
        if is_regressor(probe):
            onehot = np.zeros((Z.shape[0], data.n_identities))
            onehot[np.arange(Z.shape[0]), codes] = 1.0
            # Centred targets: the probe output carries no constant offset, so
            # cosines in probe space are not inflated by the intercept.
            probe.fit(Z, onehot - onehot.mean(axis=0))
        else:
            probe.fit(Z, codes)
        self.probe_ = probe
        self._set_training_eer(data)
        return self

    def _verification_scores(self, data):
        """Genuine and impostor cosine scores of cleaned data, in probe space."""
        F = l2_normalize(self._embed(data.X))
        genuine, per_identity = _genuine_scores(F, data)
        impostor, n_total, sampled = _impostor_scores(
            F, data.codes, self.max_impostor_pairs, self.random_state
        )
        return genuine, per_identity, impostor, n_total, sampled

    def _set_training_eer(self, data):
        # The EER among the fit identities themselves: closed-set, so
        # optimistic for the attacker's probe; audit() gives the open-set one.
        genuine, _, impostor, _, _ = self._verification_scores(data)
        if genuine.size and impostor.size:
            labels = np.r_[np.ones(genuine.size), np.zeros(impostor.size)]
            self.eer_, self.eer_threshold_ = equal_error_rate(
                labels, np.r_[genuine, impostor]
            )
        else:
            self.eer_, self.eer_threshold_ = math.nan, math.nan

    def _embed(self, Z):
        probe = self.probe_
        if probe is None:
            return Z
        if isinstance(probe, MLPClassifier):
            # Hidden layers only: the "projection" part of the MLP.
            H = Z
            for W, b in zip(probe.coefs_[:-1], probe.intercepts_[:-1]):
                H = H @ W + b
                if probe.activation == "relu":
                    np.maximum(H, 0, out=H)
                elif probe.activation == "tanh":
                    np.tanh(H, out=H)
                elif probe.activation == "logistic":
                    H = 1 / (1 + np.exp(-H))
            return H
        if is_regressor(probe):
            F = probe.predict(Z)
        else:
            for method in ("transform", "decision_function", "predict_proba"):
                if hasattr(probe, method):
                    F = getattr(probe, method)(Z)
                    break
            else:
                raise TypeError(
                    f"The probe {type(probe).__name__} has none of transform, "
                    "decision_function or predict_proba; cannot embed queries."
                )
        F = np.asarray(F, dtype=np.float64)
        return F.reshape(F.shape[0], -1)

    def audit(self, X, y):
        """Audit open-set verification on held-out identities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings of identities the probe was not trained on.
        y : array-like of shape (n_samples,)
            Their identity labels (at least two identities, and at least one
            identity with two rows).

        Returns
        -------
        audit : Bunch
            ``tar`` (TAR at ``far``, a point estimate), ``tar_interval``
            (two-sided Clopper-Pearson interval, nominal: pairs sharing a sample
            are not independent), ``threshold`` (cosine, accept if greater),
            ``far_achieved`` (at most ``far``), ``far_upper`` (one-sided
            Clopper-Pearson bound on the FAR), ``resolvable`` (at least
            ``1 / far`` impostor pairs), ``n_genuine_pairs``,
            ``n_impostor_pairs`` (the sample size if sampled),
            ``n_impostor_pairs_total``, ``impostor_pairs_sampled``, ``auc``,
            ``eer`` and ``eer_threshold`` (equal error rate and its cosine
            threshold, :func:`~skprivacy.metrics.equal_error_rate`), ``roc`` (DataFrame ``far``, ``tar``, ``threshold``) and ``results``
            (one row per scored identity: ``identity``, ``n_samples``,
            ``n_genuine_pairs``, ``genuine_accept_rate`` at ``threshold``).

        Examples
        --------
        >>> from skprivacy.datasets import make_identity_embeddings
        >>> from skprivacy.sanitize import OpenSetVerificationAuditor
        >>> X, ids = make_identity_embeddings(10, 6, 16, random_state=0)
        >>> auditor = OpenSetVerificationAuditor("raw", far=0.05).fit(X[:30], ids[:30])
        >>> audit = auditor.audit(X[30:], ids[30:])
        >>> audit.tar == auditor.score(X[30:], ids[30:])
        True
        """
        check_is_fitted(self)
        data = validate_identity_data(
            self, X, y, reset=False, min_samples_per_identity=1, min_identities=2
        )
        seen = np.intersect1d(
            np.asarray(data.identities, dtype=object).astype(str),
            np.asarray(self.identities_, dtype=object).astype(str),
        )
        if seen.size:
            warnings.warn(
                f"{seen.size} of {data.n_identities} scored identities were also "
                "used to fit the probe; open-set verification assumes disjoint "
                "identities (split with GroupKFold(groups=ids)).",
                UserWarning,
                stacklevel=2,
            )
        genuine, per_identity, impostor, n_total, sampled = self._verification_scores(
            data
        )
        if genuine.size == 0:
            raise ValueError(
                "No genuine pair: every scored identity has a single usable row; "
                "verification needs at least one identity with two rows."
            )
        res = tar_at_far(genuine, impostor, far=self.far, confidence=self.confidence)
        labels = np.r_[np.ones(genuine.size), np.zeros(impostor.size)]
        scores = np.r_[genuine, impostor]
        fpr, tpr, thr = roc_curve(labels, scores, drop_intermediate=True)
        roc = pd.DataFrame({"far": fpr, "tar": tpr, "threshold": thr})
        # What roc_auc_score computes, without sorting the scores a second time.
        auc_value = float(auc(fpr, tpr))
        eer, eer_threshold = equal_error_rate(labels, scores)
        results = pd.DataFrame(
            {
                "identity": data.identities,
                "n_samples": data.counts,
                "n_genuine_pairs": [s.size for s in per_identity],
                "genuine_accept_rate": [
                    float(np.mean(s > res.threshold)) if s.size else np.nan
                    for s in per_identity
                ],
            }
        )
        return Bunch(
            tar=float(res.tar),
            tar_interval=res.tar_interval,
            threshold=res.threshold,
            far_achieved=res.far_achieved,
            far_upper=res.far_upper,
            resolvable=res.resolvable,
            n_genuine_pairs=res.n_genuine,
            n_impostor_pairs=res.n_impostor,
            n_impostor_pairs_total=int(n_total),
            impostor_pairs_sampled=bool(sampled),
            auc=auc_value,
            eer=eer,
            eer_threshold=eer_threshold,
            roc=roc,
            results=results,
        )

    def score(self, X, y):
        """Return the TAR at ``far`` on held-out identities (higher = leakier).

        Has no side effects; :meth:`audit` returns the full audit (intervals,
        threshold, ROC, per-identity table).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings of identities the probe was not trained on.
        y : array-like of shape (n_samples,)
            Their identity labels.

        Returns
        -------
        tar : float
            True-accept rate at the threshold achieving ``far``; a point
            estimate.
        """
        return self.audit(X, y).tar

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = True
        return tags
