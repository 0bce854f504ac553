# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The method registry of the unified audit: one :class:`Method` per report method.

A declaration says everything the audit, the protocols, the command line, the
progress estimate and the HTML need to know about a method: its estimator, its
pair and permutation counts per protocol, the per-pair columns it contributes,
where it ranks when ordering the most leaky pairs, its figures, the summary
entries it builds from the fitted estimator's own attributes, what its number
says and does not say, and when it cannot run on the data (a stated reason,
never a crash). Adding a method is one declaration here plus its estimator.

Method-name strings appear in this module only; everything else iterates over
:data:`METHODS`.
"""

import importlib
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "METHODS",
    "METHOD_NAMES",
    "AuditContext",
    "Method",
    "Plot",
    "available_methods",
]


# -- the data every method receives --------------------------------------------------
@dataclass
class AuditContext:
    """The cleaned data, settings and already fitted methods of one audit.

    ``X`` is the output of the shared input layer (finite, L2-normalised rows;
    identities with fewer than two rows removed): every estimator is fitted on
    these same rows, so no method cleans the data differently.
    """

    X: np.ndarray
    y: np.ndarray
    identities: np.ndarray
    counts: np.ndarray
    settings: dict
    random_state: int
    n_jobs: object = None
    fitted: dict = field(default_factory=dict)

    @property
    def n_identities(self):
        return len(self.identities)

    @property
    def n_pairs_total(self):
        return self.n_identities * (self.n_identities - 1) // 2

    def n_pairs(self, key):
        """Pairs a protocol entry (``None`` = every pair) gives on these data."""
        return _n_pairs(self.settings[key], self.n_identities)


def _n_pairs(requested, n_identities):
    total = n_identities * (n_identities - 1) // 2
    return total if requested is None else min(int(requested), total)


@dataclass(frozen=True)
class Plot:
    """A report figure: ``draw(fitted, ctx, figure)`` fills a bare matplotlib Figure."""

    name: str
    caption: str
    draw: object
    figsize: tuple = (6.4, 3.6)


@dataclass(frozen=True)
class Method:
    """One report method.

    Parameters
    ----------
    name : str
        Registry key, CLI choice (``--methods``) and ``method`` field of its
        summary entries.
    title : str
        Human name (progress, HTML).
    requires : tuple of str
        ``"module:attribute"`` of the estimators it needs; a method whose
        estimator cannot be imported is reported as unavailable.
    sizes : dict
        Protocol name to the protocol entries it reads (pair counts,
        permutations, ...); :data:`~skprivacy.report.PROTOCOLS` is assembled
        from these.
    fit : callable
        ``fit(ctx) -> dict`` of fitted objects (each with ``results_`` when it
        contributes per-pair columns).
    summarize : callable
        ``summarize(fitted, ctx) -> {key: entry}`` built from the fitted
        objects' own attributes.
    says, does_not_say : str
        What the number says, and what it does not.
    pair_columns : dict
        ``{fitted key: {results_ column: pairs.csv column}}``.
    epsilon_columns : dict
        ``{pairs.csv column: label}`` of per-pair ε (figures, most-leaky table).
    ceiling_columns : dict
        ``{pairs.csv ε column: pairs.csv ceiling column}`` of a certificate:
        the report shows each certified value next to its pair's ceiling.
    eps_rank : int or None
        Position of this method's ε when ordering the most leaky pairs
        (point estimates first, certificates after them); None: not used.
    plots : tuple of Plot
        Figures it draws.
    skip_reason : callable
        ``skip_reason(ctx) -> str or None``: why it cannot run on these data.
    cost : callable
        ``cost(n_identities, settings) -> float``: expected relative run time
        (the progress bar's ETA).
    needs : tuple of str
        Methods whose fitted objects it reads (run before it).
    verdict : callable or None
        ``verdict(entries) -> (family, sentence)`` for the report's verdict.
    frame : callable or None
        ``frame(fitted) -> DataFrame`` of per-pair columns when they cannot be
        a fixed ``pair_columns`` mapping (e.g. one column per protocol alpha).
    kind : str
        What its main result is: ``"point estimate"``, ``"certificate"``,
        ``"hypothesis test"``, ``"control"`` or ``"diagnostic"``.
    protocols : tuple of str or None
        Protocols that run it by default (None: every protocol). Any method
        can still be selected explicitly under any protocol.
    """

    name: str
    title: str
    requires: tuple
    sizes: dict
    fit: object
    summarize: object
    says: str
    does_not_say: str
    pair_columns: dict = field(default_factory=dict)
    epsilon_columns: dict = field(default_factory=dict)
    ceiling_columns: dict = field(default_factory=dict)
    eps_rank: int | None = None
    plots: tuple = ()
    skip_reason: object = None
    cost: object = None
    needs: tuple = ()
    verdict: object = None
    frame: object = None
    kind: str = "point estimate"
    protocols: tuple | None = None

    def missing(self):
        """Names of required estimators that cannot be imported."""
        return [path for path in self.requires if _resolve(path) is None]

    def reason_to_skip(self, ctx, selected=()):
        """Why this method cannot run here (None: it can)."""
        absent = [m for m in self.needs if m not in ctx.fitted]
        if absent:
            why = "did not run" if set(absent) <= set(selected) else "were not selected"
            return f"needs the results of {' and '.join(absent)}, which {why}"
        return None if self.skip_reason is None else self.skip_reason(ctx)

    def weight(self, n_identities, settings):
        """Return the expected relative cost (the progress estimate)."""
        return 0.5 if self.cost is None else float(self.cost(n_identities, settings))

    def pair_frame(self, fitted):
        """Per-pair columns of the fitted objects, keyed by ``id_a``, ``id_b``."""
        if self.frame is not None:
            return self.frame(fitted)
        frame = None
        for key, columns in self.pair_columns.items():
            res = fitted[key].results_
            cols = {c: new for c, new in columns.items() if c in res.columns}
            part = res[["id_a", "id_b", *cols]].rename(columns=cols)
            frame = (
                part
                if frame is None
                else frame.merge(part, on=["id_a", "id_b"], how="outer")
            )
        return frame


def _resolve(path):
    module, _, name = path.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _make(path, ctx, **params):
    """Instantiate ``path`` with the params it accepts (seed and n_jobs included)."""
    cls = _resolve(path)
    accepted = cls().get_params(deep=False)
    params.setdefault("random_state", ctx.random_state)
    params.setdefault("n_jobs", ctx.n_jobs)
    return cls(**{k: v for k, v in params.items() if k in accepted})


def _fit(path, ctx, **params):
    return _make(path, ctx, **params).fit(ctx.X, ctx.y)


def _plain(value):
    """Parameters as JSON-friendly values (estimators by their repr)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def _entry(est, value, statistic, **extra):
    """Build the summary entry of a fitted estimator (the fields all entries share).

    ``kind`` is the estimator's own ``guarantee_`` (point estimate or
    certificate) and ``n_pairs`` the length of its ``results_``.
    """
    return {
        "value": float(value),
        "kind": est.guarantee_,
        "statistic": statistic,
        "n_pairs": len(est.results_),
        "estimator": type(est).__name__,
        "parameters": _plain(est.get_params(deep=False)),
        **extra,
    }


def _sizes(**per_protocol):
    return per_protocol


# -- GaussMech -------------------------------------------------------------------
def _fit_gaussmech(ctx):
    est = _fit(
        "skprivacy.auditors:GaussMechAuditor",
        ctx,
        n_pairs=ctx.settings["gaussmech_pairs"],
    )
    return {"audit": est}


def _summarize_gaussmech(fitted, ctx):
    est = fitted["audit"]
    return {
        "gaussmech": _entry(
            est,
            est.score(),
            "median over pairs of the per-pair GaussMech epsilon",
            max=float(est.results_["epsilon"].max()),
        )
    }


def _verdict_point(label):
    def verdict(entries):
        parts = [
            f"{label} {_fmt(e['value'])}"
            + (f" (max {_fmt(e['max'])})" if "max" in e else "")
            for e in entries.values()
        ]
        return "point estimates", "; ".join(parts)

    return verdict


# -- KDE-LR ----------------------------------------------------------------------
def _fit_kdelr(ctx):
    return {
        f"alpha={alpha:g}": _fit(
            "skprivacy.auditors:KDELRAuditor",
            ctx,
            alpha=alpha,
            n_pairs=ctx.settings["kdelr_pairs"],
        )
        for alpha in ctx.settings["kdelr_alphas"]
    }


def _summarize_kdelr(fitted, ctx):
    return {
        f"kdelr_{key}": _entry(
            est,
            est.score(),
            f"median over pairs of the composed KDE-LR epsilon ({key})",
            max=float(est.results_["epsilon"].max()),
        )
        for key, est in fitted.items()
    }


def _kdelr_pair_frame(fitted):
    frame = None
    for key, est in fitted.items():
        alpha = key.split("=", 1)[1]
        part = est.results_[["id_a", "id_b", "epsilon"]].rename(
            columns={"epsilon": f"kdelr_a{alpha}_epsilon"}
        )
        frame = (
            part
            if frame is None
            else frame.merge(part, on=["id_a", "id_b"], how="outer")
        )
    return frame


# -- MMD-TV ----------------------------------------------------------------------
def _fit_mmdtv(ctx):
    from sklearn.utils import Bunch

    from skprivacy.auditors import mmd_bandwidth_sweep

    s = ctx.settings
    est = _fit("skprivacy.auditors:MMDTVAuditor", ctx, n_pairs=s["mmdtv_pairs"])
    sweep = mmd_bandwidth_sweep(
        ctx.X,
        ctx.y,
        scales=s["bandwidth_scales"],
        n_pairs=s["sweep_pairs"],
        n_jobs=ctx.n_jobs,
        random_state=ctx.random_state,
    )
    return {
        "audit": est,
        "sweep": Bunch(table=sweep, n_pairs=ctx.n_pairs("sweep_pairs")),
    }


def _summarize_mmdtv(fitted, ctx):
    est, sweep = fitted["audit"], fitted["sweep"]
    scales = list(ctx.settings["bandwidth_scales"])
    return {
        "mmdtv": _entry(
            est,
            est.score(),
            "maximum over pairs of the MMD-TV epsilon",
            median=float(est.results_["epsilon"].median()),
        ),
        "mmdtv_bandwidth_sweep": {
            "value": float(sweep.table["max_epsilon"].max()),
            "kind": "point estimate",
            "statistic": (
                f"largest MMD-TV epsilon over the bandwidth scales {scales} on "
                f"{sweep.n_pairs} pairs"
            ),
            "n_pairs": sweep.n_pairs,
            "per_scale": sweep.table.to_dict(orient="records"),
            "estimator": "mmd_bandwidth_sweep",
            "parameters": {"scales": scales, "n_pairs": ctx.settings["sweep_pairs"]},
        },
    }


def _draw_sweep(fitted, ctx, figure):
    from skprivacy.plotting import BandwidthSweepDisplay

    BandwidthSweepDisplay.from_sweep(fitted["sweep"].table, ax=figure.subplots())


# -- certificates: ceilings and what would lift them ----------------------------------
def _mmd_ceiling(margin):
    """Largest MMD-TV ε lower bound a pair with this MMD² margin can certify."""
    from skprivacy.auditors import mmd_margin_ceiling

    return mmd_margin_ceiling(margin)


def _mmd_margin(k, n_pairs, confidence, n_grid):
    from skprivacy.auditors import mmd_certificate_margin

    return mmd_certificate_margin(
        2 * k, 2 * k, confidence=confidence, n_comparisons=n_pairs, n_bandwidths=n_grid
    )


def _mmd_rows_to_lift(n_pairs, confidence, n_grid, current):
    """Rows per identity at which the MMD-TV ceiling doubles (or first exceeds 0)."""
    from skprivacy.auditors import mmd_certificate_ceiling, mmd_rows_needed

    kwargs = {
        "confidence": confidence,
        "n_comparisons": n_pairs,
        "n_bandwidths": n_grid,
    }
    target = min(2 * current if current > 0 else 0.0, 0.95 * float(_mmd_ceiling(0.0)))
    rows = max(mmd_rows_needed(target, **kwargs), 4)
    return rows, float(mmd_certificate_ceiling(rows, rows, **kwargs))


def _fit_mmdtv_certificate(ctx):
    est = _fit(
        "skprivacy.auditors:MMDTVAuditor",
        ctx,
        n_pairs=ctx.settings["mmdtv_certified_pairs"],
        confidence=ctx.settings["confidence"],
    )
    return {"audit": est}


def _summarize_mmdtv_certificate(fitted, ctx):
    from skprivacy.auditors._mmd import CERTIFICATE_BANDWIDTH_GRID

    est = fitted["audit"]
    res = est.results_
    ceilings = _mmd_ceiling(res["mmd2_margin"].to_numpy())
    eps = res["epsilon_lower"].to_numpy()
    ceiling = float(ceilings.max())
    value = float(est.score())
    n_grid = 1 if est.bandwidth != "median" else len(CERTIFICATE_BANDWIDTH_GRID)
    rows, lifted = _mmd_rows_to_lift(len(res), est.confidence, n_grid, ceiling)
    return {
        "mmdtv_certificate": _entry(
            est,
            value,
            "largest certified MMD-TV epsilon lower bound over the pairs (Hoeffding "
            f"bound on MMD, simultaneous at confidence {est.confidence:g})",
            confidence=float(est.confidence),
            **_ceiling_fields(value, ceiling, eps, ceilings),
            lift={"rows_per_identity": rows, "ceiling": lifted},
        )
    }


def _mmdtv_certificate_frame(fitted):
    """Per-pair certified ε, MMD lower bound and the pair's ceiling."""
    res = fitted["audit"].results_
    frame = res[["id_a", "id_b", "epsilon_lower", "mmd_lower"]].rename(
        columns={
            "epsilon_lower": "mmdtv_epsilon_lower",
            "mmd_lower": "mmdtv_mmd_lower",
        }
    )
    frame["mmdtv_ceiling"] = _mmd_ceiling(res["mmd2_margin"].to_numpy())
    return frame


def _ceiling_fields(value, ceiling, eps, ceilings):
    at = np.isclose(eps, ceilings, rtol=1e-9, atol=1e-12) & (ceilings > 0)
    return {
        "ceiling": ceiling,
        "at_ceiling": bool(ceiling > 0 and math.isclose(value, ceiling, rel_tol=1e-9)),
        "n_at_ceiling": int(at.sum()),
        "n_positive_certificates": int((eps > 0).sum()),
    }


def _mmdtv_certificate_skip(ctx):
    from skprivacy.auditors._mmd import CERTIFICATE_BANDWIDTH_GRID

    counts = np.sort(ctx.counts)
    n_pairs = ctx.n_pairs("mmdtv_certified_pairs")
    n_grid = len(CERTIFICATE_BANDWIDTH_GRID)
    conf = ctx.settings["confidence"]
    best = float(_mmd_ceiling(_mmd_margin(counts[-2] // 2, n_pairs, conf, n_grid)))
    if best > 0:
        return None
    rows, _ = _mmd_rows_to_lift(n_pairs, conf, n_grid, 0.0)
    return (
        f"its ceiling is 0 on these data: with at most {counts[-2]} rows per "
        f"identity (second largest identity), the Hoeffding margin over {n_pairs} "
        f"pairs at confidence {conf:g} exceeds the largest possible MMD², so no "
        f"epsilon > 0 can be certified; it needs at least {rows} rows per identity"
    )


# -- permutation test, split-half controls -------------------------------------------
def _fit_permutation(ctx):
    est = _fit(
        "skprivacy.auditors:MMDTVAuditor",
        ctx,
        n_pairs=ctx.settings["permutation_pairs"],
        n_permutations=ctx.settings["n_permutations"],
    )
    return {"audit": est}


def _permutation_p_floor(n_a, n_b):
    """Smallest p-value a permutation test of n_a vs n_b rows can reach."""
    from skprivacy.auditors import permutation_p_value_floor

    return np.atleast_1d(permutation_p_value_floor(n_a, n_b))


def _permutation_skip(ctx):
    counts = np.sort(ctx.counts)
    if len(counts) < 2:
        return None
    floor = float(_permutation_p_floor([counts[-1]], [counts[-2]])[0])
    if floor < 0.05:
        return None
    return (
        f"it cannot reject at level 0.05 on these data: the two largest identities "
        f"have {counts[-1]} and {counts[-2]} rows, whose pooled rows split only "
        f"{math.comb(int(counts[-1] + counts[-2]), int(counts[-2]))} ways, so the "
        f"smallest attainable p-value is {floor:.2g}; it needs at least 4 rows in "
        "each of two identities"
    )


def _summarize_permutation(fitted, ctx):
    est = fitted["audit"]
    pvals = est.results_["p_value"].to_numpy(dtype=float)
    m = est.n_permutations
    size = dict(zip(ctx.identities, ctx.counts))
    floors = _permutation_p_floor(
        [size[a] for a in est.results_["id_a"]], [size[b] for b in est.results_["id_b"]]
    )
    entry = _entry(
        est,
        np.mean(pvals < 0.05),
        "share of audited pairs whose MMD permutation test rejects P_A = P_B at "
        "level 0.05",
        n_permutations=m,
        n_rejected=int((pvals < 0.05).sum()),
        min_p_value=float(pvals.min()),
        smallest_possible_p_value=1.0 / (m + 1),
        n_pairs_without_power=int((floors >= 0.05).sum()),
    )
    entry["kind"] = "hypothesis test"
    return {"mmd_permutation_test": entry}


def _verdict_permutation(entries):
    e = entries["mmd_permutation_test"]
    n, k = e["n_pairs"], e["n_rejected"]
    if k == n:
        text = f"every audited pair ({n}) is distinguished"
    elif k == 0:
        text = f"no audited pair of {n} is distinguished"
    else:
        text = f"{k} of {n} audited pairs are distinguished"
    if e.get("n_pairs_without_power"):
        text += (
            f" ({e['n_pairs_without_power']} pair(s) have too few rows to reach "
            "p < 0.05 whatever the data)"
        )
    return "tests", f"MMD permutation test at level 0.05: {text}"


def _fit_controls(ctx):
    from skprivacy.auditors import split_half_controls

    s = ctx.settings
    template = _make(
        "skprivacy.auditors:MMDTVAuditor", ctx, n_permutations=s["n_permutations"]
    )
    X, y = ctx.X, ctx.y
    eligible = ctx.identities[ctx.counts >= 4]
    n = s["control_identities"]
    if n is not None and n < len(eligible):
        rng = np.random.default_rng(ctx.random_state)
        chosen = rng.choice(eligible, n, replace=False)
        mask = np.isin(y, chosen)
        X, y = X[mask], y[mask]
    return {
        "controls": split_half_controls(template, X, y, random_state=ctx.random_state)
    }


def _summarize_controls(fitted, ctx):
    ctl = fitted["controls"]
    return {
        "split_half_controls": {
            "value": float(ctl.rejection_rate),
            "kind": "control",
            "statistic": (
                "share of same-identity split halves rejected at 0.05 (should be "
                "close to 0.05)"
            ),
            "n_identities": int(ctl.n_controls),
            "n_rejected": int(ctl.n_rejected),
            "median_control_epsilon": float(ctl.epsilon_median),
            "max_control_epsilon": float(ctl.epsilon_max),
            "estimator": "split_half_controls",
            "parameters": {"n_permutations": ctx.settings["n_permutations"]},
        }
    }


def _controls_skip(ctx):
    if (ctx.counts >= 4).any():
        return None
    return (
        "a split-half control needs an identity with at least 4 rows (two halves "
        f"of 2); the largest identity here has {int(ctx.counts.max())}"
    )


def _verdict_controls(entries):
    e = entries["split_half_controls"]
    return "calibration", (
        f"split-half controls (same identity) rejected {e['n_rejected']} of "
        f"{e['n_identities']} at 0.05"
        + (
            " — close to the nominal 5%, so the test behaves as assumed"
            if e["value"] <= 0.15
            else " — far above 5%: the test or the data (e.g. duplicated images) do "
            "not behave as assumed"
        )
    )


def _draw_permutation(fitted, ctx, figure):
    from skprivacy.plotting import PermutationPValueDisplay

    controls = ctx.fitted.get("controls", {}).get("controls")
    PermutationPValueDisplay.from_estimator(
        fitted["audit"], controls=controls, ax=figure.subplots()
    )


# -- ROC-HT ----------------------------------------------------------------------
# Per-pair classifiers of ROC-HT and its certificate, by protocol setting. The
# estimators' default stays the paper's logistic regression; the exhaustive
# protocol uses the nearest-centroid classifier, whose shared-product fast path
# makes every pair affordable.
_ROC_CLASSIFIERS = {
    "logistic_regression": None,
    "centroid": "skprivacy.auditors:CentroidClassifier",
}
# Relative cost per pair (the cost model's units) of the generic per-pair path
# and of the shared-product fast path.
_ROC_PAIR_COST = {"logistic_regression": 0.05, "centroid": 2e-4}


def _roc_classifier(ctx, key):
    path = _ROC_CLASSIFIERS[ctx.settings.get(key, "logistic_regression")]
    if path is None:
        return None
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)()


def _classifier_name(est):
    clf = est.classifier
    if clf is None:
        return "LogisticRegression (the paper's, per pair)"
    name = type(clf).__name__
    if name in ("CentroidClassifier", "PooledLDAClassifier"):
        return f"{name} (shared-product fast path)"
    return name


def _roc_cost(pairs_key, classifier_key):
    def cost(n_identities, settings):
        per_pair = _ROC_PAIR_COST[settings.get(classifier_key, "logistic_regression")]
        return per_pair * _n_pairs(settings[pairs_key], n_identities) + 0.5

    return cost


def _fit_rocht(ctx):
    est = _fit(
        "skprivacy.auditors:ROCHTAuditor",
        ctx,
        n_pairs=ctx.settings["rocht_pairs"],
        classifier=_roc_classifier(ctx, "rocht_classifier"),
    )
    return {"audit": est}


def _summarize_rocht(fitted, ctx):
    est = fitted["audit"]
    eps = est.results_["epsilon"].to_numpy(dtype=float)
    return {
        "rocht": _entry(
            est,
            est.score(),
            "median over pairs of the ROC-HT (KOV) epsilon; per-pair classifier "
            + _classifier_name(est),
            classifier=_classifier_name(est),
            max=float(est.epsilon_max_),
            mean_auc=float(est.auc_mean_),
            n_infinite=int(np.isinf(eps).sum()),
            n_corner=int(est.n_corners_),
        )
    }


def _verdict_rocht(entries):
    e = entries["rocht"]
    return "tests", (
        f"ROC-HT classifiers separate the audited pairs with mean out-of-fold AUC "
        f"{e['mean_auc']:.3f} over {e['n_pairs']} pairs"
        + (f" ({e['n_corner']} perfectly)" if e["n_corner"] else "")
    )


def _draw_roc(fitted, ctx, figure):
    from skprivacy.plotting import PairROCDisplay

    # The auditor's own folds and classifier seed (pair_scores): the curve
    # behind the most separable pair's row of results_.
    PairROCDisplay.from_estimator(fitted["audit"], ctx.X, ctx.y, ax=figure.subplots())


# -- ROC-HT reserved-test certificate ------------------------------------------------
def _test_rows(counts, test_size):
    """Reserved-test rows per identity (ROCHTCertifier's ``reserved_test_mask`` rule)."""
    from skprivacy.auditors import reserved_test_rows

    return np.atleast_1d(reserved_test_rows(counts, test_size))


def _cert_ceiling(counts_a, counts_b, test_size, confidence, n_pairs):
    """Largest ceiling over pairs with these row counts, at this test size."""
    from skprivacy.auditors import rocht_certificate_ceiling

    n_neg = _test_rows(counts_a, test_size)
    n_pos = _test_rows(counts_b, test_size)
    if len(n_pos) == 0 or min(n_pos.max(), n_neg.max()) < 1:
        return 0.0
    ceilings = rocht_certificate_ceiling(
        n_neg, n_pos, confidence=confidence, n_comparisons=n_pairs
    )
    return float(np.max(ceilings))


def _cert_lift(est, ctx):
    """Find the smallest larger test size that lifts the ceiling by at least 10%.

    Evaluated on the certified pairs' row counts with the same rule, confidence
    and number of pairs as the fitted certifier (at the fitted test size it
    reproduces ``ceiling_``).
    """
    count = dict(zip(ctx.identities.tolist(), ctx.counts.tolist()))
    a = [count[i] for i in est.results_["id_a"]]
    b = [count[i] for i in est.results_["id_b"]]
    current = float(est.ceiling_)
    for candidate in (0.4, 0.5, 0.6, 0.7, 0.8):
        if candidate <= est.test_size:
            continue
        c = _cert_ceiling(a, b, candidate, est.confidence, est.n_certified_)
        if c > max(1.1 * current, current + 1e-9):
            return {"test_size": candidate, "ceiling": c}
    return {"test_size": None, "ceiling": None}


def _fit_certificate(ctx):
    s = ctx.settings
    est = _fit(
        "skprivacy.auditors:ROCHTCertifier",
        ctx,
        n_pairs=s["certificate_pairs"],
        confidence=s["confidence"],
        test_size=s["test_size"],
        classifier=_roc_classifier(ctx, "certificate_classifier"),
    )
    return {"audit": est}


def _summarize_certificate(fitted, ctx):
    est = fitted["audit"]
    res = est.results_
    value = float(est.score())
    return {
        "rocht_certificate": _entry(
            est,
            value,
            "largest reserved-test ROC-HT certified epsilon lower bound over the "
            f"pairs, simultaneous at confidence {est.confidence:g}; per-pair "
            "classifier " + _classifier_name(est),
            classifier=_classifier_name(est),
            confidence=float(est.confidence),
            test_size=float(est.test_size),
            median=float(res["epsilon"].median()),
            **_ceiling_fields(
                value,
                float(est.ceiling_),
                res["epsilon"].to_numpy(),
                res["ceiling"].to_numpy(),
            ),
            lift=_cert_lift(est, ctx),
        )
    }


def _certificate_skip(ctx):
    from skprivacy.auditors import rocht_rows_needed

    s = ctx.settings
    n_pairs = ctx.n_pairs("certificate_pairs")
    # The two largest identities give the best ceiling any pair can have.
    top = np.sort(ctx.counts)[-2:]
    if _cert_ceiling(top[:1], top[1:], s["test_size"], s["confidence"], n_pairs) > 0:
        return None
    rows = int(_test_rows(top[:1], s["test_size"])[0])
    need = rocht_rows_needed(0.0, confidence=s["confidence"], n_comparisons=n_pairs)
    return (
        f"its ceiling is 0 on these data: test_size {s['test_size']:g} reserves at "
        f"most {rows} row(s) per identity, too few to certify any epsilon > 0 at "
        f"confidence {s['confidence']:g} over {n_pairs} pairs; it needs at least "
        f"{need} reserved rows per identity (about {math.ceil(need / s['test_size'])} "
        "rows per identity at this test size)"
    )


def _verdict_certificate(title):
    def verdict(entries):
        (e,) = entries.values()
        conf = f"{100 * e['confidence']:g}%"
        if e["value"] > 0:
            text = f"{title}: certified epsilon >= {_fmt(e['value'])} at {conf}"
            if e["at_ceiling"]:
                text += " (the ceiling this test size allows"
                lift = e.get("lift") or {}
                if lift.get("test_size"):
                    text += (
                        f"; test_size {lift['test_size']:g} would lift it to "
                        f"{_fmt(lift['ceiling'])}"
                    )
                elif lift.get("rows_per_identity"):
                    text += (
                        f"; {lift['rows_per_identity']} rows per identity would lift "
                        f"it to {_fmt(lift['ceiling'])}"
                    )
                text += ")"
            else:
                text += f" (ceiling {_fmt(e['ceiling'])})"
        else:
            text = (
                f"{title}: nothing certified at {conf} (ceiling {_fmt(e['ceiling'])}); "
                "0 means not certifiable with these sample sizes, not private"
            )
        return "certificates", text

    return verdict


# -- residual Gaussianity ----------------------------------------------------------
def _fit_gaussianity(ctx):
    from skprivacy.auditors import residual_gaussianity

    return {
        "diagnostic": residual_gaussianity(ctx.X, ctx.y, random_state=ctx.random_state)
    }


def _summarize_gaussianity(fitted, ctx):
    diag = fitted["diagnostic"]
    pvals = diag.results["p_value"].to_numpy()
    return {
        "residual_gaussianity": {
            "value": int(diag.n_rejected),
            "kind": "diagnostic",
            "statistic": (
                "number of embedding dimensions whose pooled within-identity "
                f"residuals fail Shapiro-Wilk at p < {diag.threshold:g}"
            ),
            "n_dimensions": int(diag.n_dimensions),
            "n_residuals": int(diag.n_residuals),
            "median_p_value": float(np.median(pvals)),
            "estimator": "residual_gaussianity",
            "parameters": {"threshold": diag.threshold},
        }
    }


def _draw_qq(fitted, ctx, figure):
    from skprivacy.plotting import ResidualQQDisplay

    # The least, a median and the most Gaussian dimension (the display's default).
    p = fitted["diagnostic"].results["p_value"].to_numpy()
    order = np.argsort(p, kind="stable")
    n_panels = len({int(order[0]), int(order[len(order) // 2]), int(order[-1])})
    axes = np.atleast_1d(figure.subplots(1, n_panels))
    ResidualQQDisplay.from_diagnostic(fitted["diagnostic"], ax=list(axes))
    figure.suptitle("Q-Q of pooled within-identity residuals", fontsize=10)


# -- classifier witness ratio ------------------------------------------------------
def _fit_witness(ctx):
    from sklearn.utils import Bunch

    roc = next(iter(ctx.fitted[_ROC].values())).results_
    mmd = next(iter(ctx.fitted[_MMD].values())).results_
    both = roc[["id_a", "id_b", "tv"]].merge(
        mmd[["id_a", "id_b", "mmd"]], on=["id_a", "id_b"]
    )
    half = both["mmd"] / 2
    both["ratio"] = both["tv"] / half.where(half > 0)
    return {"ratio": Bunch(results_=both)}


def _summarize_witness(fitted, ctx):
    ratio = fitted["ratio"].results_["ratio"].dropna()
    if ratio.empty:
        return {}
    return {
        "classifier_witness": {
            "value": float(ratio.median()),
            "kind": "diagnostic",
            "statistic": (
                "median over pairs audited by both ROC-HT and MMD-TV of the "
                "classifier TV witness divided by MMD/2"
            ),
            "max": float(ratio.max()),
            "n_pairs": int(ratio.size),
            "estimator": "ROCHTAuditor and MMDTVAuditor",
            "parameters": {},
        }
    }


# -- split-half ROC-HT controls ------------------------------------------------------
def _fit_rocht_controls(ctx):
    from skprivacy.auditors import split_half_controls

    template = _make(
        "skprivacy.auditors:ROCHTAuditor", ctx, n_pairs=ctx.settings["rocht_pairs"]
    )
    X, y = _control_subset(ctx, ctx.settings["rocht_control_identities"])
    return {
        "controls": split_half_controls(template, X, y, random_state=ctx.random_state)
    }


def _control_subset(ctx, n):
    """Rows of ``n`` seeded identities with at least 4 rows (all when fewer)."""
    eligible = ctx.identities[ctx.counts >= 4]
    if n is None or n >= len(eligible):
        return ctx.X, ctx.y
    chosen = np.random.default_rng(ctx.random_state).choice(eligible, n, replace=False)
    mask = np.isin(ctx.y, chosen)
    return ctx.X[mask], ctx.y[mask]


def _summarize_rocht_controls(fitted, ctx):
    ctl = fitted["controls"]
    res = ctl.results
    auc = res["auc"].to_numpy(dtype=float)
    return {
        "rocht_split_half_controls": {
            "value": float(auc.mean()),
            "kind": "control",
            "statistic": (
                "mean out-of-fold ROC-HT AUC of same-identity split halves (should "
                "be close to 0.5)"
            ),
            "n_identities": int(ctl.n_controls),
            "n_corners": int(res["corner"].sum()),
            "max_auc": float(auc.max()),
            "median_control_epsilon": float(ctl.epsilon_median),
            "max_control_epsilon": float(ctl.epsilon_max),
            "estimator": "split_half_controls(ROCHTAuditor)",
            "parameters": {
                "rocht_control_identities": ctx.settings["rocht_control_identities"]
            },
        }
    }


def _verdict_rocht_controls(entries):
    e = entries["rocht_split_half_controls"]
    text = (
        f"split-half ROC-HT controls (same identity): mean AUC {e['value']:.3f} over "
        f"{e['n_identities']} identities, {e['n_corners']} exact corners"
    )
    if e["value"] <= 0.6 and e["n_corners"] == 0:
        text += (
            " — not above chance, so the classifier does not separate one identity "
            "(out-of-fold AUCs of identical distributions fall below 0.5 at small "
            "sizes)"
        )
    else:
        text += (
            " — above chance: the classifier separates halves of one identity "
            "(e.g. duplicated images or a recording artefact)"
        )
    return "calibration", text


# -- classifier sensitivity: random forest vs logistic regression ---------------------
def _sensitivity_classifier(random_state):
    from sklearn.ensemble import RandomForestClassifier

    # Paper 000: 100 trees, otherwise scikit-learn's defaults.
    return RandomForestClassifier(n_estimators=100, random_state=random_state)


def _fit_sensitivity(ctx):
    from skprivacy.auditors import compare_roc_audits

    # The ROC-HT audit's first sensitivity_pairs pairs (a prefix of the shared
    # ordering) with the same folds, once per classifier.
    n_pairs = ctx.settings["sensitivity_pairs"]
    lr = _fit("skprivacy.auditors:ROCHTAuditor", ctx, n_pairs=n_pairs)
    rf = _fit(
        "skprivacy.auditors:ROCHTAuditor",
        ctx,
        n_pairs=n_pairs,
        classifier=_sensitivity_classifier(ctx.random_state),
    )
    return {"forest": rf, "comparison": compare_roc_audits(lr, rf)}


def _summarize_sensitivity(fitted, ctx):
    cmp = fitted["comparison"]
    diff = cmp.results["auc_difference"].to_numpy(dtype=float)
    rf = fitted["forest"]
    return {
        "classifier_sensitivity": {
            "value": float(cmp.mean_auc_difference),
            "kind": "diagnostic",
            "statistic": (
                "mean over the ROC-HT pairs of the out-of-fold AUC of logistic "
                "regression minus that of a 100-tree random forest (same pairs and "
                "folds)"
            ),
            "mean_auc_logistic": float(cmp.mean_auc_a),
            "mean_auc_forest": float(cmp.mean_auc_b),
            "max_abs_auc_difference": float(np.abs(diff).max()),
            "n_pairs": int(diff.size),
            "estimator": "compare_roc_audits(ROCHTAuditor, ROCHTAuditor)",
            "parameters": {"classifier_b": _plain(rf.classifier)},
        }
    }


def _sensitivity_pair_frame(fitted):
    res = fitted["comparison"].results
    return res[["id_a", "id_b", "auc_b", "auc_difference"]].rename(
        columns={"auc_b": "forest_auc", "auc_difference": "auc_lr_minus_forest"}
    )


def _verdict_sensitivity(entries):
    e = entries["classifier_sensitivity"]
    text = (
        f"classifier sensitivity: mean AUC {e['mean_auc_logistic']:.3f} (logistic) "
        f"vs {e['mean_auc_forest']:.3f} (random forest) over {e['n_pairs']} pairs"
    )
    if e["mean_auc_forest"] > e["mean_auc_logistic"] + 0.02:
        text += (
            " — the forest separates more: logistic regression under-fits the signal"
        )
    else:
        text += " — a more flexible classifier finds no signal the linear one missed"
    return "calibration", text


# -- formatting shared by the verdict sentences -----------------------------------------
def _fmt(v):
    if v is None:
        return "n/a"
    v = float(v)
    if math.isinf(v):
        return "infinite"
    if math.isnan(v):
        return "n/a"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def _pairs_cost(key, per_pair, fixed=0.5):
    def cost(n_identities, settings):
        return per_pair * _n_pairs(settings[key], n_identities) + fixed

    return cost


_ROC = "rocht"
_MMD = "mmdtv"

_RBF_CEILING_TEXT = "at most about 1.763 for an RBF kernel"

#: Every report method, in run order (cheap point estimates first, certificates
#: after, derived diagnostics last).
_DECLARATIONS = (
    Method(
        name="gaussmech",
        title="GaussMech",
        requires=("skprivacy.auditors:GaussMechAuditor",),
        sizes=_sizes(
            quick={"gaussmech_pairs": 100},
            paper={"gaussmech_pairs": 500},
            exhaustive={"gaussmech_pairs": None},
        ),
        fit=_fit_gaussmech,
        summarize=_summarize_gaussmech,
        pair_columns={
            "audit": {
                "epsilon": "gaussmech_epsilon",
                "delta_mean": "gaussmech_delta_mean",
                "sigma": "gaussmech_sigma",
            }
        },
        epsilon_columns={"gaussmech_epsilon": "GaussMech"},
        eps_rank=2,
        cost=_pairs_cost("gaussmech_pairs", 0.0005),
        verdict=_verdict_point("median GaussMech epsilon"),
        says=(
            "Nothing: it is the epsilon a Gaussian mechanism would need to hide "
            "the gap between two identities' mean embeddings, at delta."
        ),
        does_not_say=(
            "Not a differential-privacy guarantee or a lower bound; it assumes "
            "Gaussian, isotropic residuals (see the residual diagnostic)."
        ),
    ),
    Method(
        name="kdelr",
        title="KDE-LR",
        requires=("skprivacy.auditors:KDELRAuditor",),
        sizes=_sizes(
            quick={"kdelr_pairs": 20, "kdelr_alphas": (0.0, 1e-2)},
            paper={"kdelr_pairs": 100, "kdelr_alphas": (0.0, 1e-2)},
            exhaustive={"kdelr_pairs": 100, "kdelr_alphas": (0.0, 1e-2)},
        ),
        fit=_fit_kdelr,
        summarize=_summarize_kdelr,
        frame=_kdelr_pair_frame,
        epsilon_columns={
            "kdelr_a0_epsilon": "KDE-LR alpha=0",
            "kdelr_a0.01_epsilon": "KDE-LR alpha=0.01",
        },
        eps_rank=3,
        cost=_pairs_cost("kdelr_pairs", 0.05),
        says=(
            "Nothing: a plug-in estimate of the worst-case per-dimension log "
            "density ratio, composed over dimensions."
        ),
        does_not_say=(
            "Not a bound: it grows with the dimension by composition and depends "
            "on the bandwidth and on the floor/alpha smoothing."
        ),
    ),
    Method(
        name="mmdtv",
        title="MMD-TV",
        requires=("skprivacy.auditors:MMDTVAuditor",),
        sizes=_sizes(
            quick={
                "mmdtv_pairs": 100,
                "sweep_pairs": 50,
                "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
            },
            paper={
                "mmdtv_pairs": 500,
                "sweep_pairs": 500,
                "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
            },
            exhaustive={
                "mmdtv_pairs": None,
                "sweep_pairs": 500,
                "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
            },
        ),
        fit=_fit_mmdtv,
        summarize=_summarize_mmdtv,
        pair_columns={
            "audit": {
                "epsilon": "mmdtv_epsilon",
                "mmd": "mmdtv_mmd",
                "mmd2_unbiased": "mmdtv_mmd2_unbiased",
                "bandwidth": "mmdtv_bandwidth",
            }
        },
        epsilon_columns={"mmdtv_epsilon": "MMD-TV"},
        eps_rank=1,
        plots=(
            Plot(
                "sweep",
                "MMD-TV epsilon as the RBF bandwidth is scaled around the median "
                "heuristic (dotted: the RBF ceiling).",
                _draw_sweep,
                (4.8, 3.4),
            ),
        ),
        cost=lambda n, s: (
            0.003 * _n_pairs(s["mmdtv_pairs"], n)
            + 0.001 * _n_pairs(s["sweep_pairs"], n)
            + 0.5
        ),
        says=(
            "Nothing by itself: the epsilon implied by the plug-in MMD through "
            "MMD <= 2 TV and TV <= tanh(epsilon/2)."
        ),
        does_not_say=(
            "Not a certificate (no confidence level); it can never exceed "
            f"{_RBF_CEILING_TEXT}, however separable the identities are."
        ),
    ),
    Method(
        name="mmdtv_certificate",
        kind="certificate",
        title="MMD-TV certificate",
        requires=("skprivacy.auditors:MMDTVAuditor",),
        sizes=_sizes(
            quick={"mmdtv_certified_pairs": 100},
            paper={"mmdtv_certified_pairs": 500},
            # About 60% more per pair than the point estimate (a second kernel
            # at the snapped bandwidth): the paper's prefix, not every pair.
            exhaustive={"mmdtv_certified_pairs": 500},
        ),
        fit=_fit_mmdtv_certificate,
        summarize=_summarize_mmdtv_certificate,
        frame=_mmdtv_certificate_frame,
        epsilon_columns={"mmdtv_epsilon_lower": "MMD-TV certificate"},
        ceiling_columns={"mmdtv_epsilon_lower": "mmdtv_ceiling"},
        eps_rank=11,
        skip_reason=_mmdtv_certificate_skip,
        cost=_pairs_cost("mmdtv_certified_pairs", 0.005),
        verdict=_verdict_certificate("MMD-TV"),
        says=(
            "A certificate: a lower confidence bound on the MMD (Hoeffding, "
            "simultaneous over pairs and bandwidths) mapped through the TV chain."
        ),
        does_not_say=(
            "Very conservative at tens of samples per identity (often 0); "
            f"{_RBF_CEILING_TEXT}."
        ),
    ),
    Method(
        name="permutation",
        kind="hypothesis test",
        title="MMD permutation test",
        requires=("skprivacy.auditors:MMDTVAuditor",),
        sizes=_sizes(
            quick={"permutation_pairs": 20, "n_permutations": 1000},
            paper={"permutation_pairs": 100, "n_permutations": 10_000},
            exhaustive={"permutation_pairs": 100, "n_permutations": 10_000},
        ),
        fit=_fit_permutation,
        summarize=_summarize_permutation,
        skip_reason=_permutation_skip,
        pair_columns={"audit": {"p_value": "perm_p_value"}},
        plots=(
            Plot(
                "permutation",
                "Permutation p-values for identity pairs and for same-identity "
                "split-half controls (controls should look uniform).",
                _draw_permutation,
                (5.6, 3.4),
            ),
        ),
        cost=lambda n, s: (
            2e-6 * s["n_permutations"] * _n_pairs(s["permutation_pairs"], n) + 0.5
        ),
        verdict=_verdict_permutation,
        says=(
            "A rejection at level 0.05 says the two identities' embedding "
            "distributions differ (exact permutation p-value, (b+1)/(m+1))."
        ),
        does_not_say=(
            "Says nothing about how large epsilon is; rejection rates are not "
            "corrected for the number of pairs tested."
        ),
    ),
    Method(
        name="controls",
        kind="control",
        title="Split-half controls",
        requires=("skprivacy.auditors:split_half_controls",),
        sizes=_sizes(
            quick={"control_identities": 10},
            paper={"control_identities": 100},
            exhaustive={"control_identities": 100},
        ),
        fit=_fit_controls,
        summarize=_summarize_controls,
        skip_reason=_controls_skip,
        cost=lambda n, s: (
            2e-6 * s["n_permutations"] * min(n, s["control_identities"] or n) + 0.5
        ),
        verdict=_verdict_controls,
        says=(
            "Calibration: both halves come from one identity, so a valid test "
            "rejects about 5% of them."
        ),
        does_not_say=(
            "A rate far above 0.05 means the permutation test (or the data, e.g. "
            "duplicated images) is not behaving as assumed."
        ),
    ),
    Method(
        name="rocht",
        title="ROC-HT",
        requires=("skprivacy.auditors:ROCHTAuditor",),
        sizes=_sizes(
            quick={"rocht_pairs": 30, "rocht_classifier": "logistic_regression"},
            paper={"rocht_pairs": 200, "rocht_classifier": "logistic_regression"},
            exhaustive={"rocht_pairs": None, "rocht_classifier": "centroid"},
        ),
        fit=_fit_rocht,
        summarize=_summarize_rocht,
        pair_columns={
            "audit": {
                "epsilon": "rocht_epsilon",
                "auc": "rocht_auc",
                "tv": "rocht_tv",
                "corner": "rocht_corner",
                "fpr": "rocht_fpr",
                "tpr": "rocht_tpr",
                "threshold": "rocht_threshold",
            }
        },
        epsilon_columns={"rocht_epsilon": "ROC-HT"},
        eps_rank=0,
        plots=(
            Plot(
                "roc",
                "Out-of-fold ROC of the most separable pair (largest AUC) and the "
                "operating point that attains its KOV bound (the auditor's own "
                "folds).",
                _draw_roc,
                (4.4, 4.2),
            ),
        ),
        cost=_roc_cost("rocht_pairs", "rocht_classifier"),
        verdict=_verdict_rocht,
        says=(
            "Nothing by itself: the KOV hypothesis-testing bound evaluated at the "
            "out-of-fold ROC points, without a confidence correction."
        ),
        does_not_say=(
            "A point estimate (maximised over thresholds after seeing the data); "
            "an exact ROC corner gives infinity. See the reserved-test certificate."
        ),
    ),
    Method(
        name="rocht_certificate",
        kind="certificate",
        title="ROC-HT reserved-test certificate",
        requires=("skprivacy.auditors:ROCHTCertifier",),
        sizes=_sizes(
            quick={
                "certificate_pairs": 30,
                "certificate_classifier": "logistic_regression",
            },
            paper={
                "certificate_pairs": 200,
                "certificate_classifier": "logistic_regression",
            },
            exhaustive={
                "certificate_pairs": None,
                "certificate_classifier": "centroid",
            },
        ),
        fit=_fit_certificate,
        summarize=_summarize_certificate,
        pair_columns={
            "audit": {
                c: f"cert_{c}"
                for c in (
                    "epsilon",
                    "ceiling",
                    "tp",
                    "n_pos",
                    "fp",
                    "n_neg",
                    "train_auc",
                )
            }
        },
        epsilon_columns={"cert_epsilon": "ROC-HT certificate"},
        ceiling_columns={"cert_epsilon": "cert_ceiling"},
        eps_rank=10,
        skip_reason=_certificate_skip,
        cost=_roc_cost("certificate_pairs", "certificate_classifier"),
        verdict=_verdict_certificate("ROC-HT"),
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
    ),
    Method(
        name="rocht_controls",
        kind="control",
        title="Split-half ROC-HT controls",
        requires=(
            "skprivacy.auditors:ROCHTAuditor",
            "skprivacy.auditors:split_half_controls",
        ),
        sizes=_sizes(
            quick={"rocht_control_identities": 10},
            paper={"rocht_control_identities": 100},
            exhaustive={"rocht_control_identities": 100},
        ),
        protocols=("paper", "exhaustive"),
        fit=_fit_rocht_controls,
        summarize=_summarize_rocht_controls,
        skip_reason=_controls_skip,
        cost=lambda n, s: 0.05 * min(n, s["rocht_control_identities"] or n) + 0.5,
        verdict=_verdict_rocht_controls,
        says=(
            "Calibration: both halves come from one identity, so the ROC-HT "
            "classifier should score near chance (AUC about 0.5, no exact corners)."
        ),
        does_not_say=(
            "An AUC well above 0.5 means the classifier separates halves of one "
            "identity (duplicates, artefacts), so the pair AUCs overstate identity "
            "signal; near 0.5 does not validate the pair epsilons as bounds."
        ),
    ),
    Method(
        name="classifier_sensitivity",
        kind="diagnostic",
        title="Classifier sensitivity (random forest vs logistic)",
        requires=(
            "skprivacy.auditors:ROCHTAuditor",
            "skprivacy.auditors:compare_roc_audits",
        ),
        # Paper 000 compares its 200 ROC-tested pairs; a 100-tree forest per
        # pair and fold costs about 30 times logistic regression, so the paper
        # protocol checks the first 50 (set sensitivity_pairs=200 to match).
        sizes=_sizes(
            quick={"sensitivity_pairs": 10},
            paper={"sensitivity_pairs": 50},
            exhaustive={"sensitivity_pairs": 200},
        ),
        protocols=("paper", "exhaustive"),
        fit=_fit_sensitivity,
        summarize=_summarize_sensitivity,
        frame=_sensitivity_pair_frame,
        cost=_pairs_cost("sensitivity_pairs", 1.5),
        verdict=_verdict_sensitivity,
        says=(
            "Whether the ROC-HT signal depends on the linear classifier: a random "
            "forest on the same pairs and folds; similar AUCs mean either scorer "
            "extracts the same distinguishability."
        ),
        does_not_say=(
            "Not a confidence statement about epsilon; a robustness diagnostic for "
            "the classifier choice (paper 000, Section ROC-HT), on the first "
            "sensitivity_pairs pairs (50 in the paper protocol, where paper 000 "
            "used 200)."
        ),
    ),
    Method(
        name="gaussianity",
        kind="diagnostic",
        title="Residual Gaussianity",
        requires=("skprivacy.auditors:residual_gaussianity",),
        sizes=_sizes(quick={}, paper={}, exhaustive={}),
        fit=_fit_gaussianity,
        summarize=_summarize_gaussianity,
        plots=(
            Plot(
                "qq",
                "Residual Q-Q plots for the least, a median and the most Gaussian "
                "dimension.",
                _draw_qq,
                (7.8, 2.8),
            ),
        ),
        says=(
            "Which embedding dimensions have clearly non-Gaussian within-identity "
            "residuals (the GaussMech model's assumption)."
        ),
        does_not_say=(
            "Passing the test does not make GaussMech a guarantee; failing it "
            "means GaussMech's model is wrong for those dimensions."
        ),
    ),
    Method(
        name="witness",
        kind="diagnostic",
        title="Classifier witness ratio",
        requires=(
            "skprivacy.auditors:ROCHTAuditor",
            "skprivacy.auditors:MMDTVAuditor",
        ),
        sizes=_sizes(quick={}, paper={}, exhaustive={}),
        fit=_fit_witness,
        summarize=_summarize_witness,
        pair_columns={"ratio": {"ratio": "witness_ratio"}},
        needs=(_ROC, _MMD),
        says=(
            "Nothing: it compares two point estimates of the total variation "
            "distance between the identities' embedding distributions."
        ),
        does_not_say=(
            "Not a bound; a ratio far above 1 says the kernel (MMD) chain is loose "
            "for these embeddings, not that either number is wrong."
        ),
    ),
)

#: Registered methods by name, in run order.
METHODS = {m.name: m for m in _DECLARATIONS}
#: Registered method names, in run order.
METHOD_NAMES = tuple(METHODS)


def available_methods(protocol=None):
    """Return the registered methods whose estimators can be imported.

    Parameters
    ----------
    protocol : str or None, default=None
        Only the methods this protocol runs by default (a custom protocol
        dict counts as ``"quick"``); None: every available method.

    Returns
    -------
    names : list of str
        In run order.

    Examples
    --------
    >>> from skprivacy.report import available_methods
    >>> available_methods()[0]
    'gaussmech'
    """
    return [
        name
        for name, m in METHODS.items()
        if not m.missing()
        and (protocol is None or m.protocols is None or protocol in m.protocols)
    ]
