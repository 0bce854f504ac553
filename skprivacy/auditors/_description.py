# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fitted audit reports: one read-only description per auditor.

Each auditor's ``description_`` (next to its ``guarantee_``) is an
:class:`AuditDescription`: the summary entry of the fitted audit, the
per-pair columns worth reporting and which one holds ε, what the number says
and does not say, and one sentence of what was found. The unified audit
(:func:`skprivacy.audit`) reads these instead of restating them;
:func:`estimate_seconds` is the auditors' own cost model, before fitting.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from skprivacy.utils import IdentityData, identity_pairs
from skprivacy.utils._sklearn import check_is_fitted

__all__ = ["AuditDescription", "estimate_seconds", "format_value"]

# Fixed cost of one scikit-learn fit-and-predict call on a pair's few rows (the
# per-call overhead dominates at tens of rows), per tree for ensembles: the
# cost of the per-pair classifier paths, which have no product count to model.
_CLASSIFIER_CALL_SECONDS = 4e-3
_TREE_SECONDS = 1.5e-3

_RBF_CEILING_TEXT = "at most about 1.763 for an RBF kernel"


@dataclass(frozen=True)
class AuditDescription:
    """What a fitted audit reports, read from the fitted estimator.

    Parameters
    ----------
    title : str
        Human name of the result, e.g. ``"ROC-HT"``; also the label of its
        per-pair ε in figures and tables.
    kind : {"point estimate", "certificate", "hypothesis test", "control", \
"diagnostic"}
        What ``value`` is.
    value : float
        The headline number.
    statistic : str
        What ``value`` is, in words.
    says, does_not_say : str
        What the number says, and what it does not.
    finding : str
        One sentence: what this fit found.
    entry : dict
        The other fields of the summary entry: ``n_pairs``, ``estimator``,
        ``parameters`` and method-specific extras (``max``, ``median``, ...).
    pairs : pandas.DataFrame or None, default=None
        Per-pair columns worth reporting (``id_a``, ``id_b`` first).
    epsilon : str or None, default=None
        Column of ``pairs`` holding the per-pair ε.
    ceiling : str or None, default=None
        Column of ``pairs`` holding each pair's ceiling (certificates).
    companion : str or None, default=None
        Column of ``pairs`` holding a finite companion of ε, shown beside it
        where ε may be infinite (ROC-HT's ``epsilon_interior``).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import GaussMechAuditor
    >>> X, ids = make_identity_embeddings(5, 10, 8, random_state=0)
    >>> description = GaussMechAuditor(n_pairs=4).fit(X, ids).description_
    >>> description.kind, description.epsilon, len(description.pairs)
    ('point estimate', 'epsilon', 4)
    >>> sorted(description.summary())[:3]
    ['does_not_say', 'estimator', 'kind']
    """

    title: str
    kind: str
    value: float
    statistic: str
    says: str
    does_not_say: str
    finding: str
    entry: dict = field(default_factory=dict)
    pairs: object = None
    epsilon: str | None = None
    ceiling: str | None = None
    companion: str | None = None

    def summary(self, prefix=None):
        """Return the summary entry: value, kind, statistic, extras, what it says.

        Parameters
        ----------
        prefix : str or None, default=None
            With a prefix (that of the per-pair columns in a joined table, see
            :meth:`named_pairs`), the entry also names the columns holding ε
            (``epsilon_column``, labelled ``epsilon_label``), its ceiling
            (``ceiling_column``) and its finite companion
            (``companion_column``).

        Returns
        -------
        entry : dict
            The summary entry.
        """
        out = {
            "value": self.value,
            "kind": self.kind,
            "statistic": self.statistic,
            **self.entry,
            "says": self.says,
            "does_not_say": self.does_not_say,
        }
        if prefix is not None and self.pairs is not None:
            for field, column in (
                ("epsilon_column", self.epsilon),
                ("ceiling_column", self.ceiling),
                ("companion_column", self.companion),
            ):
                if column is not None:
                    out[field] = prefix + column
            if self.epsilon is not None:
                out["epsilon_label"] = self.title
        return out

    def named_pairs(self, prefix):
        """Return the per-pair columns with ``prefix`` on every name but the ids.

        Parameters
        ----------
        prefix : str
            Put before every column name except ``id_a`` and ``id_b``.

        Returns
        -------
        pairs : pandas.DataFrame
            A renamed copy of ``pairs``.
        """
        keep = ("id_a", "id_b")
        return self.pairs.rename(columns=lambda c: c if c in keep else prefix + c)


def format_value(v):
    """Format a number for a sentence: 3 significant digits, ``infinite``, ``n/a``.

    Parameters
    ----------
    v : float or None
        The number.

    Returns
    -------
    text : str
        E.g. ``"1.23"``, ``"1234"``, ``"infinite"``, ``"n/a"``.

    Examples
    --------
    >>> from skprivacy.auditors._description import format_value
    >>> format_value(1.23456), format_value(float("inf")), format_value(None)
    ('1.23', 'infinite', 'n/a')
    """
    if v is None or math.isnan(float(v)):
        return "n/a"
    v = float(v)
    if math.isinf(v):
        return "infinite"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def plain(value):
    """Return parameters as JSON-friendly values (estimators by their repr)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def estimate_seconds(estimator, data):
    """Return the auditor's own estimate of the single-core seconds of its fit.

    Parameters
    ----------
    estimator : estimator
        An auditor (fitted or not); its parameters are read.
    data : IdentityData
        The validated data it would be fitted on.

    Returns
    -------
    seconds : float
        A pair auditor's cost model for its pairs; for a per-pair classifier
        (no product count to model), the fixed cost of its fit-and-predict
        calls; 0 for an estimator without a cost model.

    Examples
    --------
    >>> from skprivacy.auditors import GaussMechAuditor, estimate_seconds
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.utils import validate_identity_data
    >>> X, ids = make_identity_embeddings(5, 10, 8, random_state=0)
    >>> data = validate_identity_data(GaussMechAuditor(), X, ids)
    >>> estimate_seconds(GaussMechAuditor(), data) < 1
    True
    """
    if not isinstance(data, IdentityData):
        raise TypeError(
            "data must be the IdentityData that validate_identity_data returns "
            f"for the audited rows; got {type(data).__name__}."
        )
    model = getattr(estimator, "_estimate_seconds", None)
    if model is None:
        return 0.0
    n_pairs = getattr(estimator, "n_pairs", None)
    pairs = identity_pairs(data.n_identities, n_pairs, random_state=0)
    seconds = model(data, pairs)
    if seconds is not None:
        return float(seconds)
    clf = getattr(estimator, "classifier", None)
    per_call = _CLASSIFIER_CALL_SECONDS + _TREE_SECONDS * getattr(
        clf, "n_estimators", 0
    )
    return per_call * getattr(estimator, "cv", 1) * len(pairs)


def _describe(est, *, title, statistic, says, does_not_say, finding, **options):
    """Build the description of a fitted pair auditor (the fields all share)."""
    check_is_fitted(est)
    columns = options.pop("columns", ())
    res = est.results_
    pairs = res[["id_a", "id_b", *columns]].copy()
    for name, values in options.pop("computed", {}).items():
        pairs[name] = values
    return AuditDescription(
        title=title,
        kind=options.pop("kind", est.guarantee_),
        value=float(options.pop("value", est.score())),
        statistic=statistic,
        says=says,
        does_not_say=does_not_say,
        finding=finding,
        entry={
            "n_pairs": len(res),
            "estimator": type(est).__name__,
            "parameters": plain(est.get_params(deep=False)),
            **options.pop("extras", {}),
        },
        pairs=pairs,
        epsilon=options.pop("epsilon", "epsilon"),
        ceiling=options.pop("ceiling", None),
        companion=options.pop("companion", None),
    )


def describe_gaussmech(est):
    """Describe a fitted :class:`~skprivacy.auditors.GaussMechAuditor`."""
    value, top = est.score(), float(est.results_["epsilon"].max())
    return _describe(
        est,
        title="GaussMech",
        statistic="median over pairs of the per-pair GaussMech epsilon",
        says=(
            "Nothing: it is the epsilon a Gaussian mechanism would need to hide "
            "the gap between two identities' mean embeddings, at delta."
        ),
        does_not_say=(
            "Not a differential-privacy guarantee or a lower bound; it assumes "
            "Gaussian, isotropic residuals (see the residual diagnostic)."
        ),
        finding=(
            f"median GaussMech epsilon {format_value(value)} (max {format_value(top)})"
        ),
        columns=("epsilon", "delta_mean", "sigma"),
        extras={"max": top},
    )


def describe_kdelr(est):
    """Describe a fitted :class:`~skprivacy.auditors.KDELRAuditor`."""
    value, top = est.score(), float(est.results_["epsilon"].max())
    return _describe(
        est,
        title=f"KDE-LR alpha={est.alpha:g}",
        statistic=(
            f"median over pairs of the composed KDE-LR epsilon (alpha={est.alpha:g})"
        ),
        says=(
            "Nothing: a plug-in estimate of the worst-case per-dimension log "
            "density ratio, composed over dimensions."
        ),
        does_not_say=(
            "Not a bound: it grows with the dimension by composition and depends "
            "on the bandwidth and on the floor/alpha smoothing."
        ),
        finding=(
            f"median KDE-LR epsilon (alpha={est.alpha:g}) {format_value(value)} "
            f"(max {format_value(top)})"
        ),
        columns=("epsilon",),
        extras={"max": top},
    )


def describe_mmdtv(est):
    """Describe a fitted :class:`~skprivacy.auditors.MMDTVAuditor`.

    Its mode decides what it reports: with ``confidence`` the certificate,
    else with ``n_permutations`` the share of pairs the permutation test
    rejects, else the ε point estimate.
    """
    res = est.results_
    if est.confidence is not None:
        value = est.score()
        return _describe(
            est,
            title="MMD-TV certificate",
            statistic=(
                "largest certified MMD-TV epsilon lower bound over the pairs "
                "(Hoeffding bound on MMD, simultaneous at confidence "
                f"{est.confidence:g})"
            ),
            says=(
                "A certificate: a lower confidence bound on the MMD (Hoeffding, "
                "simultaneous over pairs and bandwidths) mapped through the TV "
                "chain."
            ),
            does_not_say=(
                "Very conservative at tens of samples per identity (often 0); "
                f"{_RBF_CEILING_TEXT}."
            ),
            finding=f"MMD-TV certificate: certified epsilon >= {format_value(value)}",
            columns=("epsilon_lower", "mmd_lower"),
            extras={"confidence": float(est.confidence)},
            epsilon="epsilon_lower",
        )
    if est.n_permutations:
        p = res["p_value"].to_numpy(dtype=float)
        rejected = int((p < 0.05).sum())
        return _describe(
            est,
            title="MMD permutation test",
            kind="hypothesis test",
            value=np.mean(p < 0.05),
            statistic=(
                "share of audited pairs whose MMD permutation test rejects "
                "P_A = P_B at level 0.05"
            ),
            says=(
                "A rejection at level 0.05 says the two identities' embedding "
                "distributions differ (exact permutation p-value, (b+1)/(m+1))."
            ),
            does_not_say=(
                "Says nothing about how large epsilon is; rejection rates are not "
                "corrected for the number of pairs tested."
            ),
            finding=(
                "MMD permutation test at level 0.05: " + share_text(rejected, len(p))
            ),
            columns=("p_value",),
            epsilon=None,
            extras={
                "n_permutations": est.n_permutations,
                "n_rejected": rejected,
                "min_p_value": float(p.min()),
                "smallest_possible_p_value": 1.0 / (est.n_permutations + 1),
            },
        )
    return _describe(
        est,
        title="MMD-TV",
        statistic="maximum over pairs of the MMD-TV epsilon",
        says=(
            "Nothing by itself: the epsilon implied by the plug-in MMD through "
            "MMD <= 2 TV and TV <= tanh(epsilon/2)."
        ),
        does_not_say=(
            "Not a certificate (no confidence level); it can never exceed "
            f"{_RBF_CEILING_TEXT}, however separable the identities are."
        ),
        finding=(
            f"largest MMD-TV epsilon {format_value(est.score())} (median "
            f"{format_value(res['epsilon'].median())})"
        ),
        columns=("epsilon", "mmd", "mmd2_unbiased", "bandwidth"),
        extras={"median": float(res["epsilon"].median())},
    )


def share_text(k, n, powerless=0):
    """Say how many of ``n`` tested pairs are distinguished (and how many cannot be)."""
    caveat = (
        f" ({powerless} of them too small to reach p < 0.05 whatever the data)"
        if powerless and k < n
        else ""
    )
    if k == n:
        return f"every audited pair ({n}) is distinguished"
    if k == 0:
        return f"none of {n} audited pairs is distinguished{caveat}"
    return f"{k} of {n} audited pairs are distinguished{caveat}"


def classifier_name(est):
    """Return the per-pair classifier of a ROC-HT estimator, in words."""
    clf = est.classifier
    if clf is None:
        return "LogisticRegression (the paper's, per pair)"
    name = type(clf).__name__
    if name in ("CentroidClassifier", "PooledLDAClassifier"):
        return f"{name} (shared-product fast path)"
    return name


def auc_distinguished(results, level=0.05):
    """Count the pairs whose out-of-fold AUC differs from 0.5, on either side.

    Under exchangeable scores the rank sum ``U = AUC n_a n_b`` has mean
    ``n_a n_b / 2`` and variance ``n_a n_b (n_a + n_b + 1) / 12`` (no ties;
    ties only shrink it); a pair counts when the two-sided normal p-value,
    with continuity correction, is below ``level``. An AUC far below 0.5 is
    an inverted classifier: separation, not privacy.
    """
    na, nb = (results[c].to_numpy(dtype=float) for c in ("n_a", "n_b"))
    u = np.abs(results["auc"].to_numpy(dtype=float) - 0.5) * na * nb
    z = (u - 0.5) / np.sqrt(na * nb * (na + nb + 1) / 12)
    return int((2 * norm.sf(z) < level).sum())


def describe_rocht(est):
    """Describe a fitted :class:`~skprivacy.auditors.ROCHTAuditor`."""
    eps = est.results_["epsilon"].to_numpy(dtype=float)
    n, corners, auc = len(eps), int(est.n_corners_), est.auc_mean_
    far, n_inf = auc_distinguished(est.results_), int(est.n_infinite_)
    interior = format_value(est.epsilon_interior_median_)
    return _describe(
        est,
        title="ROC-HT",
        statistic=(
            "median over pairs of the ROC-HT (KOV) epsilon; per-pair classifier "
            + classifier_name(est)
        ),
        says=(
            "Nothing by itself: the KOV hypothesis-testing bound evaluated at the "
            "out-of-fold ROC points, without a confidence correction."
        ),
        does_not_say=(
            "A point estimate (maximised over thresholds after seeing the data). "
            "A pair's epsilon is infinite when its out-of-fold ROC reaches FPR 0 "
            "at TPR > 0 or TPR 1 at FPR < 1, which a few held-out rows do often, "
            "even on noise: the edge of what the sample can show, not infinite "
            "leakage proven; the interior median leaves those points out. See "
            "the reserved-test certificate."
        ),
        finding=(
            (
                f"ROC-HT classifiers separate the audited pairs with mean "
                f"out-of-fold AUC {auc:.3f} over {n} pairs"
                if auc >= 0.5
                else f"ROC-HT classifiers predict the audited pairs inversely "
                f"(mean out-of-fold AUC {auc:.3f} over {n} pairs, below 0.5: "
                "separation, not privacy)"
            )
            + (f" ({corners} perfectly)" if corners else "")
            + f"; {far} of {n} pairs away from AUC 0.5 at level 0.05 (either side)"
            + (
                f"; epsilon infinite for {n_inf} pairs ({est.n_infinite_fpr0_} "
                f"reach FPR 0, {est.n_infinite_tpr1_} TPR 1: the edge of what "
                f"the held-out rows can show, not proven infinite), interior "
                f"median {interior}"
                if n_inf
                else ""
            )
        ),
        columns=(
            "epsilon",
            "epsilon_interior",
            "auc",
            "tv",
            "corner",
            "infinite_fpr0",
            "infinite_tpr1",
            "fpr",
            "tpr",
            "threshold",
        ),
        extras={
            "classifier": classifier_name(est),
            "max": float(est.epsilon_max_),
            "epsilon_interior_median": float(est.epsilon_interior_median_),
            "mean_auc": float(auc),
            "n_auc_distinguished": far,
            "separates": 2 * far >= n,
            "n_infinite": n_inf,
            "n_infinite_fpr0": int(est.n_infinite_fpr0_),
            "n_infinite_tpr1": int(est.n_infinite_tpr1_),
            "n_corner": corners,
        },
        companion="epsilon_interior",
    )


def ceiling_fields(value, ceiling, epsilons, ceilings):
    """Return a certificate's ``ceiling``, ``at_ceiling`` and pair counts at it.

    Parameters
    ----------
    value : float
        The certified value (the largest over the pairs).
    ceiling : float
        The largest ceiling over the pairs.
    epsilons, ceilings : ndarray of shape (n_pairs,)
        Per-pair certified values and ceilings.

    Returns
    -------
    fields : dict
        ``ceiling``, ``at_ceiling`` (the value reaches its ceiling),
        ``n_at_ceiling`` and ``n_positive_certificates``.
    """
    at = np.isclose(epsilons, ceilings, rtol=1e-9, atol=1e-12) & (ceilings > 0)
    return {
        "ceiling": float(ceiling),
        "at_ceiling": bool(ceiling > 0 and math.isclose(value, ceiling, rel_tol=1e-9)),
        "n_at_ceiling": int(at.sum()),
        "n_positive_certificates": int((epsilons > 0).sum()),
    }


def certificate_finding(title, entry):
    """Return the sentence of a certificate: the value, its ceiling, what lifts it."""
    conf = f"{100 * entry['confidence']:g}%"
    if entry["value"] <= 0:
        return (
            f"{title}: nothing certified at {conf} (ceiling "
            f"{format_value(entry['ceiling'])}); 0 means not certifiable with these "
            "sample sizes, not private"
        )
    text = f"{title}: certified epsilon >= {format_value(entry['value'])} at {conf}"
    if not entry["at_ceiling"]:
        return text + f" (ceiling {format_value(entry['ceiling'])})"
    lift = entry.get("lift") or {}
    if lift.get("test_size"):
        how = f"; test_size {lift['test_size']:g} would lift it"
    elif lift.get("rows_per_identity"):
        how = f"; {lift['rows_per_identity']} rows per identity would lift it"
    else:
        return text + " (the ceiling this test size allows)"
    lifted = format_value(lift["ceiling"])
    return text + f" (the ceiling this test size allows{how} to {lifted})"


def describe_certifier(est):
    """Describe a fitted :class:`~skprivacy.auditors.ROCHTCertifier`.

    The ceiling is the certifier's own: what a perfect test certifies with its
    reserved rows, confidence and family size.
    """
    res = est.results_
    value = est.score()
    extras = {
        "classifier": classifier_name(est),
        "confidence": float(est.confidence),
        "test_size": float(est.test_size),
        "median": float(res["epsilon"].median()),
        **ceiling_fields(
            value,
            est.ceiling_,
            res["epsilon"].to_numpy(),
            res["ceiling"].to_numpy(),
        ),
    }
    return _describe(
        est,
        title="ROC-HT certificate",
        statistic=(
            "largest reserved-test ROC-HT certified epsilon lower bound over the "
            f"pairs, simultaneous at confidence {est.confidence:g}; per-pair "
            "classifier " + classifier_name(est)
        ),
        says=(
            "A certificate: if the embeddings came from an epsilon-DP mechanism, "
            "the chance that any certified value exceeds epsilon is at most "
            "1 - confidence, simultaneously over the certified pairs "
            "(threshold fixed on training rows, Clopper-Pearson on reserved rows)."
        ),
        does_not_say=(
            "A lower bound only: 0 means 'not certifiable with this test size', "
            "not 'private'; it cannot exceed the ceiling of the test size."
        ),
        finding=certificate_finding("ROC-HT certificate", {"value": value, **extras}),
        columns=("epsilon", "ceiling", "tp", "n_pos", "fp", "n_neg", "train_auc"),
        extras=extras,
        ceiling="ceiling",
    )


def describe_sweep(table, *, scales, n_pairs, requested, reading):
    """Describe a table of :func:`~skprivacy.auditors.mmd_bandwidth_sweep`.

    ``n_pairs`` pairs were audited (``requested``: the ``n_pairs`` asked
    for); ``reading`` is the MMD-TV description whose reading it shares.
    """
    return AuditDescription(
        title="MMD-TV bandwidth sweep",
        kind="point estimate",
        value=float(table["max_epsilon"].max()),
        statistic=(
            f"largest MMD-TV epsilon over the bandwidth scales {list(scales)} on "
            f"{n_pairs} pairs"
        ),
        says=reading.says,
        does_not_say=reading.does_not_say,
        finding="",
        entry={
            "n_pairs": n_pairs,
            "per_scale": table.to_dict(orient="records"),
            "estimator": "mmd_bandwidth_sweep",
            "parameters": {"scales": list(scales), "n_pairs": requested},
        },
    )


def _controls_entry(controls, estimator, parameters, **extras):
    return {
        "n_identities": int(controls.n_controls),
        **extras,
        "median_control_epsilon": float(controls.epsilon_median),
        "max_control_epsilon": float(controls.epsilon_max),
        "estimator": estimator,
        "parameters": parameters,
    }


def describe_controls(controls, parameters):
    """Describe :func:`~skprivacy.auditors.split_half_controls` of a permutation test."""
    calibrated = controls.rejection_rate <= 0.15
    return AuditDescription(
        title="Split-half controls",
        kind="control",
        value=float(controls.rejection_rate),
        statistic=(
            "share of same-identity split halves rejected at 0.05 (should be close "
            "to 0.05)"
        ),
        says=(
            "Calibration: both halves come from one identity, so a valid test "
            "rejects about 5% of them."
        ),
        does_not_say=(
            "A rate far above 0.05 means the permutation test (or the data, e.g. "
            "duplicated images) is not behaving as assumed."
        ),
        finding=(
            f"split-half controls (same identity) rejected {controls.n_rejected} of "
            f"{controls.n_controls} at 0.05"
            + (
                " — close to the nominal 5%, so the test behaves as assumed"
                if calibrated
                else " — far above 5%: the test or the data (e.g. duplicated images)"
                " do not behave as assumed"
            )
        ),
        entry=_controls_entry(
            controls,
            "split_half_controls",
            parameters,
            n_rejected=int(controls.n_rejected),
        ),
    )


def describe_roc_controls(controls, parameters):
    """Describe :func:`~skprivacy.auditors.split_half_controls` of ROC-HT."""
    auc = controls.results["auc"].to_numpy(dtype=float)
    corners = int(controls.results["corner"].sum())
    chance = auc.mean() <= 0.6 and corners == 0
    return AuditDescription(
        title="Split-half ROC-HT controls",
        kind="control",
        value=float(auc.mean()),
        statistic=(
            "mean out-of-fold ROC-HT AUC of same-identity split halves (should be "
            "close to 0.5)"
        ),
        says=(
            "Calibration: both halves come from one identity, so the ROC-HT "
            "classifier should score near chance (AUC about 0.5, no exact corners)."
        ),
        does_not_say=(
            "An AUC well above 0.5 means the classifier separates halves of one "
            "identity (duplicates, artefacts), so the pair AUCs overstate identity "
            "signal; near 0.5 does not validate the pair epsilons as bounds."
        ),
        finding=(
            f"split-half ROC-HT controls (same identity): mean AUC {auc.mean():.3f} "
            f"over {controls.n_controls} identities, {corners} exact corners"
            + (
                " — not above chance, so the classifier does not separate one "
                "identity (out-of-fold AUCs of identical distributions fall below "
                "0.5 at small sizes)"
                if chance
                else " — above chance: the classifier separates halves of one "
                "identity (e.g. duplicated images or a recording artefact)"
            )
        ),
        entry=_controls_entry(
            controls,
            "split_half_controls(ROCHTAuditor)",
            parameters,
            n_corners=corners,
            max_auc=float(auc.max()),
        ),
    )


def describe_sensitivity(comparison, forest, cv):
    """Describe :func:`~skprivacy.auditors.classifier_sensitivity` of logistic vs forest."""
    diff = comparison.results["auc_difference"].to_numpy(dtype=float)
    more = comparison.mean_auc_b > comparison.mean_auc_a + 0.02
    trees = int(forest.get_params()["n_estimators"])
    smaller = trees < 100 or cv < 5
    return AuditDescription(
        title="Classifier sensitivity (random forest vs logistic)",
        kind="diagnostic",
        value=float(comparison.mean_auc_difference),
        statistic=(
            "mean over the ROC-HT pairs of the out-of-fold AUC of logistic "
            f"regression minus that of a {trees}-tree random forest (same pairs and "
            f"the same {cv} folds)"
        ),
        says=(
            "Whether the ROC-HT signal depends on the linear classifier: a random "
            "forest on the same pairs and folds; similar AUCs mean either scorer "
            "extracts the same distinguishability."
        ),
        does_not_say=(
            "Not a confidence statement about epsilon; a robustness diagnostic for "
            "the classifier choice (paper 000, Section ROC-HT), on the first "
            f"{diff.size} pairs with a {trees}-tree forest under {cv} folds, where "
            "paper 000 used 100 trees under 5 folds on 200 pairs."
            + (
                " With fewer folds both classifiers train on fewer rows and a "
                "smaller forest gives coarser, noisier scores, so both AUCs can "
                "fall, either one more: the statistic moves by a few hundredths "
                "on average, in either direction, and a single pair's AUCs can "
                "move by more than a tenth. A difference of that size is no "
                "evidence for or against either classifier; a forest clearly "
                "above logistic regression over many pairs still points to "
                "signal the linear scorer misses. sensitivity_trees=100 and "
                "sensitivity_folds=5 run the paper's check."
                if smaller
                else ""
            )
        ),
        finding=(
            f"classifier sensitivity: mean AUC {comparison.mean_auc_a:.3f} "
            f"(logistic) vs {comparison.mean_auc_b:.3f} ({trees}-tree random "
            f"forest) over {diff.size} pairs and {cv} folds"
            + (
                " — the forest separates more: logistic regression under-fits the "
                "signal"
                if more
                else " — a more flexible classifier finds no signal the linear one "
                "missed"
            )
        ),
        entry={
            "mean_auc_logistic": float(comparison.mean_auc_a),
            "mean_auc_forest": float(comparison.mean_auc_b),
            "max_abs_auc_difference": float(np.abs(diff).max()),
            "n_pairs": int(diff.size),
            "n_trees": trees,
            "n_folds": int(cv),
            "estimator": "classifier_sensitivity",
            "parameters": {"classifier_b": plain(forest)},
        },
        pairs=comparison.results[["id_a", "id_b", "auc_b", "auc_difference"]].rename(
            columns={"auc_b": "forest_auc", "auc_difference": "auc_lr_minus_forest"}
        ),
    )


def describe_gaussianity(diagnostic):
    """Describe :func:`~skprivacy.auditors.residual_gaussianity`."""
    p = diagnostic.results["p_value"].to_numpy()
    return AuditDescription(
        title="Residual Gaussianity",
        kind="diagnostic",
        value=int(diagnostic.n_rejected),
        statistic=(
            "number of embedding dimensions whose pooled within-identity residuals "
            f"fail Shapiro-Wilk at p < {diagnostic.threshold:g}"
        ),
        says=(
            "Which embedding dimensions have clearly non-Gaussian within-identity "
            "residuals (the GaussMech model's assumption)."
        ),
        does_not_say=(
            "Passing the test does not make GaussMech a guarantee; failing it "
            "means GaussMech's model is wrong for those dimensions."
        ),
        finding="",
        entry={
            "n_dimensions": int(diagnostic.n_dimensions),
            "n_residuals": int(diagnostic.n_residuals),
            "median_p_value": float(np.median(p)),
            "estimator": "residual_gaussianity",
            "parameters": {"threshold": diagnostic.threshold},
        },
    )


def describe_witness(roc, mmd):
    """Describe the classifier witness ratio of a fitted ROC-HT and MMD-TV audit.

    Per pair audited by both, ROC-HT's TV witness ``max(TPR - FPR)`` over
    ``MMD / 2``; None when no pair has a positive MMD.
    """
    both = roc.results_[["id_a", "id_b", "tv"]].merge(
        mmd.results_[["id_a", "id_b", "mmd"]], on=["id_a", "id_b"]
    )
    half = both["mmd"] / 2
    both["witness_ratio"] = both["tv"] / half.where(half > 0)
    ratio = both["witness_ratio"].dropna()
    if ratio.empty:
        return None
    return AuditDescription(
        title="Classifier witness ratio",
        kind="diagnostic",
        value=float(ratio.median()),
        statistic=(
            "median over pairs audited by both ROC-HT and MMD-TV of the classifier "
            "TV witness divided by MMD/2"
        ),
        says=(
            "Nothing: it compares two point estimates of the total variation "
            "distance between the identities' embedding distributions."
        ),
        does_not_say=(
            "Not a bound; a ratio far above 1 says the kernel (MMD) chain is loose "
            "for these embeddings, not that either number is wrong."
        ),
        finding="",
        entry={
            "max": float(ratio.max()),
            "n_pairs": int(ratio.size),
            "estimator": "ROCHTAuditor and MMDTVAuditor",
            "parameters": {},
        },
        pairs=both[["id_a", "id_b", "witness_ratio"]],
    )


def skipped_summary(kind, reason):
    """Return the summary entry of a result that could not run here."""
    entry = {
        "skipped": True,
        "reason": reason,
        "value": None,
        "kind": kind,
        "statistic": "not computed",
        "says": "",
        "does_not_say": "",
    }
    if kind == "certificate":
        # Skipped because its ceiling is 0: nothing is certifiable here.
        entry.update(value=0.0, ceiling=0.0, at_ceiling=False)
    return entry
