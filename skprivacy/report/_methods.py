# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The method registry of the unified audit.

Each entry wraps one public skprivacy estimator (or helper) behind the same
small interface: given the cleaned data, the protocol's sizes, the seed and
``n_jobs``, fit it through its public API (``fit(X, ids)``, ``score()``,
``results_``) and return its summary entries, its per-pair columns and the data
its report plot needs. A method whose estimator is not importable is listed as
unavailable instead of failing the audit.
"""

import importlib
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from skprivacy.report._protocols import METHOD_NAMES

__all__ = ["METHODS", "MethodResult", "MethodSpec", "available_methods"]


@dataclass
class MethodResult:
    """What one method contributes to the audit."""

    summaries: dict
    pairs: pd.DataFrame | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class MethodSpec:
    """One entry of the registry."""

    name: str
    title: str
    requires: tuple
    run: object
    weight: object
    certifies: str
    does_not_certify: str
    default: bool = True

    def missing(self):
        """Names of required estimators that cannot be imported."""
        return [path for path in self.requires if _resolve(path) is None]


def _resolve(path):
    module, _, name = path.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return repr(value)


def _make(path, ctx, **params):
    """Instantiate ``path`` with the params it accepts (seed and n_jobs included)."""
    cls = _resolve(path)
    accepted = cls().get_params(deep=False)
    params.setdefault("random_state", ctx.random_state)
    params.setdefault("n_jobs", ctx.n_jobs)
    return cls(**{k: v for k, v in params.items() if k in accepted})


def _params(est):
    return _jsonable(est.get_params(deep=False))


def _prefixed(results, prefix, columns):
    cols = [c for c in columns if c in results.columns]
    out = results[["id_a", "id_b", *cols]].copy()
    return out.rename(columns={c: f"{prefix}_{c}" for c in cols})


def _n(n_pairs, ctx):
    total = ctx.n_identities * (ctx.n_identities - 1) // 2
    return total if n_pairs is None else min(int(n_pairs), total)


# -- GaussMech -------------------------------------------------------------------
def _run_gaussmech(ctx):
    p = ctx.protocol
    est = _make(
        "skprivacy.auditors:GaussMechAuditor", ctx, n_pairs=p["gaussmech_pairs"]
    )
    est.fit(ctx.X_input, ctx.y_input)
    res = est.results_
    summary = {
        "value": float(est.score()),
        "kind": est.guarantee_,
        "statistic": "median over pairs of the per-pair GaussMech epsilon",
        "max": float(res["epsilon"].max()),
        "n_pairs": len(res),
        "estimator": "GaussMechAuditor",
        "parameters": _params(est),
    }
    pairs = _prefixed(res, "gaussmech", ["epsilon", "delta_mean", "sigma"])
    return MethodResult({"gaussmech": summary}, pairs, {"eps": res["epsilon"]})


# -- KDE-LR ----------------------------------------------------------------------
def _run_kdelr(ctx):
    p = ctx.protocol
    summaries, frames, eps = {}, [], {}
    for alpha in p["kdelr_alphas"]:
        est = _make(
            "skprivacy.auditors:KDELRAuditor",
            ctx,
            alpha=alpha,
            n_pairs=p["kdelr_pairs"],
        )
        est.fit(ctx.X_input, ctx.y_input)
        res = est.results_
        key = f"kdelr_alpha={alpha:g}"
        summaries[key] = {
            "value": float(est.score()),
            "kind": est.guarantee_,
            "statistic": (
                f"median over pairs of the composed KDE-LR epsilon (alpha={alpha:g})"
            ),
            "max": float(res["epsilon"].max()),
            "n_pairs": len(res),
            "estimator": "KDELRAuditor",
            "parameters": _params(est),
        }
        frames.append(_prefixed(res, f"kdelr_a{alpha:g}", ["epsilon"]))
        eps[key] = res["epsilon"]
    pairs = frames[0]
    for f in frames[1:]:
        pairs = pairs.merge(f, on=["id_a", "id_b"], how="outer")
    return MethodResult(summaries, pairs, {"eps": eps})


# -- MMD-TV ----------------------------------------------------------------------
def _run_mmdtv(ctx):
    p = ctx.protocol
    confidence = p["confidence"]
    est = _make("skprivacy.auditors:MMDTVAuditor", ctx, n_pairs=p["mmdtv_pairs"])
    est.fit(ctx.X_input, ctx.y_input)
    res = est.results_
    params = _params(est)
    # The certificate costs about 60% more per pair (a second kernel at the
    # snapped bandwidth), so the exhaustive protocol certifies the paper's
    # 500-pair prefix rather than every pair.
    cert = _make(
        "skprivacy.auditors:MMDTVAuditor",
        ctx,
        n_pairs=p["mmdtv_certified_pairs"],
        confidence=confidence,
    )
    cert.fit(ctx.X_input, ctx.y_input)
    cres = cert.results_
    summary = {
        "value": float(est.score()),
        "kind": est.guarantee_,
        "statistic": "maximum over pairs of the MMD-TV epsilon",
        "median": float(res["epsilon"].median()),
        "n_pairs": len(res),
        "estimator": "MMDTVAuditor",
        "parameters": params,
    }
    certified = {
        "value": float(cert.score()),
        "kind": cert.guarantee_,
        "statistic": (
            "largest certified MMD-TV epsilon lower bound over the pairs "
            f"(Hoeffding bound on MMD, simultaneous at confidence {confidence:g})"
        ),
        "confidence": float(confidence),
        "n_positive_certificates": int((cres["epsilon_lower"] > 0).sum()),
        "n_pairs": len(cres),
        "estimator": "MMDTVAuditor",
        "parameters": _params(cert),
        "certifies": (
            "A certificate: a lower confidence bound on the MMD (Hoeffding, "
            "simultaneous over pairs and bandwidths) mapped through the TV chain."
        ),
        "does_not_certify": (
            "Very conservative at tens of samples per identity (often 0); at most "
            "about 1.763 for an RBF kernel."
        ),
    }
    pairs = _prefixed(res, "mmdtv", ["epsilon", "mmd", "mmd2_unbiased", "bandwidth"])
    pairs = pairs.merge(
        _prefixed(cres, "mmdtv", ["epsilon_lower", "mmd_lower"]),
        on=["id_a", "id_b"],
        how="left",
    )
    # Bandwidth sweep on a prefix of the same pairs: max epsilon per scale.
    from skprivacy.auditors import mmd_bandwidth_sweep

    sweep = mmd_bandwidth_sweep(
        ctx.X_input,
        ctx.y_input,
        scales=p["bandwidth_scales"],
        n_pairs=p["sweep_pairs"],
        n_jobs=ctx.n_jobs,
        random_state=ctx.random_state,
    )
    summaries = {
        "mmdtv": summary,
        "mmdtv_certified": certified,
        "mmdtv_bandwidth_sweep": {
            "value": float(sweep["max_epsilon"].max()),
            "kind": "point estimate",
            "statistic": (
                "largest MMD-TV epsilon over the bandwidth scales "
                f"{list(p['bandwidth_scales'])} on {_n(p['sweep_pairs'], ctx)} pairs"
            ),
            "per_scale": _jsonable(sweep.to_dict(orient="records")),
            "n_pairs": _n(p["sweep_pairs"], ctx),
            "estimator": "mmd_bandwidth_sweep",
            "parameters": {
                "scales": list(p["bandwidth_scales"]),
                "n_pairs": p["sweep_pairs"],
                "random_state": ctx.random_state,
            },
        },
    }
    return MethodResult(
        summaries,
        pairs,
        {"eps": res["epsilon"], "eps_lower": cres["epsilon_lower"], "sweep": sweep},
    )


# -- permutation tests and split-half controls ---------------------------------------
def _control_subset(ctx, n_identities):
    """Rows of a seeded choice of up to ``n_identities`` identities."""
    if n_identities is None or n_identities >= ctx.n_identities:
        return ctx.X, ctx.y
    rng = np.random.default_rng(ctx.random_state)
    chosen = rng.choice(ctx.n_identities, n_identities, replace=False)
    mask = np.isin(ctx.codes, chosen)
    return ctx.X[mask], ctx.y[mask]


def _run_permutation(ctx):
    from skprivacy.auditors import split_half_controls

    p = ctx.protocol
    est = _make(
        "skprivacy.auditors:MMDTVAuditor",
        ctx,
        n_pairs=p["permutation_pairs"],
        n_permutations=p["n_permutations"],
    )
    est.fit(ctx.X_input, ctx.y_input)
    res = est.results_
    pvals = res["p_value"].to_numpy(dtype=float)
    Xc, yc = _control_subset(ctx, p["control_identities"])
    ctl = split_half_controls(est, Xc, yc, random_state=ctx.random_state)
    controls = ctl.results
    m = p["n_permutations"]
    summaries = {
        "mmd_permutation_test": {
            "value": float(np.mean(pvals < 0.05)),
            "kind": "hypothesis test",
            "statistic": (
                "share of audited pairs whose MMD permutation test rejects P_A = P_B "
                "at level 0.05"
            ),
            "n_pairs": len(res),
            "n_permutations": m,
            "min_p_value": float(pvals.min()),
            "smallest_possible_p_value": 1.0 / (m + 1),
            "estimator": "MMDTVAuditor",
            "parameters": _params(est),
        },
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
            "estimator": "MMDTVAuditor via split_half_controls",
            "certifies": (
                "Calibration: both halves come from one identity, so a valid test "
                "rejects about 5% of them."
            ),
            "does_not_certify": (
                "A rate far above 0.05 means the permutation test (or the data, e.g. "
                "duplicated images) is not behaving as assumed."
            ),
            "parameters": {"n_permutations": m},
        },
    }
    pairs = _prefixed(res, "perm", ["p_value"])
    return MethodResult(
        summaries, pairs, {"p_values": pvals, "controls": controls, "m": m}
    )


# -- ROC-HT ----------------------------------------------------------------------
def _run_rocht(ctx):
    p = ctx.protocol
    est = _make("skprivacy.auditors:ROCHTAuditor", ctx, n_pairs=p["rocht_pairs"])
    est.fit(ctx.X_input, ctx.y_input)
    res = est.results_
    eps = res["epsilon"].to_numpy(dtype=float)
    summary = {
        "value": float(est.score()),
        "kind": est.guarantee_,
        "statistic": "median over pairs of the ROC-HT (KOV) epsilon",
        "max": float(np.max(eps)),
        "mean_auc": float(res["auc"].mean()),
        "n_infinite": int(np.isinf(eps).sum()),
        "n_corner": int(res["corner"].sum()),
        "n_pairs": len(res),
        "estimator": "ROCHTAuditor",
        "parameters": _params(est),
    }
    op_cols = [c for c in res.columns if c in {"fpr", "tpr", "threshold"}]
    pairs = _prefixed(res, "rocht", ["epsilon", "auc", "tv", "corner", *op_cols])
    roc = _most_separable_roc(ctx, est, res)
    return MethodResult({"rocht": summary}, pairs, {"eps": res["epsilon"], "roc": roc})


def _most_separable_roc(ctx, est, res):
    """Out-of-fold ROC of the pair with the largest AUC, with its KOV point.

    Recomputed with the auditor's own folds (rows of A then B in input order,
    ``StratifiedKFold(n_folds, shuffle=True, random_state=fold_seed_)``), so the
    curve is the one behind that pair's row of ``results_``.
    """
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score, roc_curve
    from sklearn.model_selection import StratifiedKFold

    row = res.sort_values(["auc", "epsilon"], ascending=False).iloc[0]
    rows_a = np.flatnonzero(ctx.y == row["id_a"])
    rows_b = np.flatnonzero(ctx.y == row["id_b"])
    Xp = ctx.X[np.r_[rows_a, rows_b]]
    yp = np.r_[np.zeros(len(rows_a), int), np.ones(len(rows_b), int)]
    clf = getattr(est, "classifier", None)
    clf = (
        LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000) if clf is None else clf
    )
    n_folds = int(row["n_folds"]) if "n_folds" in row else min(est.cv, *np.bincount(yp))
    seed = getattr(est, "fold_seed_", ctx.random_state)
    scores = np.empty(len(yp))
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    for train, test in folds.split(Xp, yp):
        fitted = clone(clf).fit(Xp[train], yp[train])
        if hasattr(fitted, "predict_proba"):
            scores[test] = fitted.predict_proba(Xp[test])[:, 1]
        else:
            scores[test] = fitted.decision_function(Xp[test])
    fpr, tpr, _ = roc_curve(yp, scores)
    return {
        "id_a": row["id_a"],
        "id_b": row["id_b"],
        "fpr": fpr,
        "tpr": tpr,
        "auc": float(roc_auc_score(yp, scores)),
        "auc_table": float(row["auc"]),
        "kov_fpr": float(row.get("fpr", np.nan)),
        "kov_tpr": float(row.get("tpr", np.nan)),
        "kov_epsilon": float(row["epsilon"]),
    }


# -- certificates --------------------------------------------------------------------
def _run_certificate(ctx):
    p = ctx.protocol
    est = _make(
        "skprivacy.auditors:ROCHTCertifier", ctx, n_pairs=p["certificate_pairs"]
    )
    est.fit(ctx.X_input, ctx.y_input)
    res = est.results_
    summary = {
        "value": float(est.score()),
        "kind": est.guarantee_,
        "statistic": (
            "largest reserved-test ROC-HT certified epsilon lower bound over the "
            f"pairs, simultaneous at confidence {est.confidence:g}"
        ),
        "confidence": float(est.confidence),
        "n_certified": int(est.n_certified_),
        "n_positive_certificates": int((res["epsilon"] > 0).sum()),
        "ceiling": float(est.ceiling_),
        "median": float(res["epsilon"].median()),
        "n_pairs": len(res),
        "estimator": "ROCHTCertifier",
        "parameters": _params(est),
    }
    if est.ceiling_ <= 0:
        summary["note"] = (
            "the reserved test sets are too small to certify any epsilon > 0 at "
            "this confidence and number of pairs"
        )
    pairs = _prefixed(
        res, "cert", ["epsilon", "ceiling", "tp", "n_pos", "fp", "n_neg", "train_auc"]
    )
    return MethodResult({"rocht_certificate": summary}, pairs, {"eps": res["epsilon"]})


# -- residual Gaussianity ----------------------------------------------------------
def _run_gaussianity(ctx):
    from skprivacy.auditors import residual_gaussianity

    diag = residual_gaussianity(ctx.X_input, ctx.y_input, random_state=ctx.random_state)
    res = diag.results
    pvals = res["p_value"].to_numpy()
    order = np.argsort(pvals, kind="stable")
    k = ctx.protocol["gaussianity_dims"]
    # The least, a median and the most Gaussian dimension.
    picks = [order[0], order[len(order) // 2], order[-1]]
    dims = list(dict.fromkeys(int(res["dimension"].iloc[i]) for i in picks))[:k]
    summary = {
        "value": int(diag.n_rejected),
        "kind": "diagnostic",
        "statistic": (
            "number of embedding dimensions whose pooled within-identity residuals "
            f"fail Shapiro-Wilk at p < {diag.threshold:g}"
        ),
        "n_dimensions": int(diag.n_dimensions),
        "n_residuals": int(diag.n_residuals),
        "median_p_value": float(np.median(pvals)),
        "estimator": "residual_gaussianity",
        "parameters": {"threshold": diag.threshold, "random_state": ctx.random_state},
    }
    qq = {d: (diag.qq["theoretical"].to_numpy(), diag.qq[d].to_numpy()) for d in dims}
    p_by_dim = dict(zip(res["dimension"].astype(int), pvals))
    return MethodResult(
        {"residual_gaussianity": summary}, None, {"p_values": p_by_dim, "qq": qq}
    )


def _w_pairs(key, cost):
    def weight(ctx):
        return cost * _n(ctx.protocol[key], ctx) + 0.5

    return weight


_SPECS = {
    spec.name: spec
    for spec in [
        MethodSpec(
            name="gaussmech",
            title="GaussMech",
            requires=("skprivacy.auditors:GaussMechAuditor",),
            run=_run_gaussmech,
            weight=_w_pairs("gaussmech_pairs", 0.0005),
            certifies=(
                "Nothing: it is the epsilon a Gaussian mechanism would need to hide "
                "the gap between two identities' mean embeddings, at delta."
            ),
            does_not_certify=(
                "Not a differential-privacy guarantee or a lower bound; it assumes "
                "Gaussian, isotropic residuals (see the residual diagnostic)."
            ),
        ),
        MethodSpec(
            name="kdelr",
            title="KDE-LR",
            requires=("skprivacy.auditors:KDELRAuditor",),
            run=_run_kdelr,
            weight=_w_pairs("kdelr_pairs", 0.05),
            certifies=(
                "Nothing: a plug-in estimate of the worst-case per-dimension log "
                "density ratio, composed over dimensions."
            ),
            does_not_certify=(
                "Not a bound: it grows with the dimension by composition and depends "
                "on the bandwidth and on the floor/alpha smoothing."
            ),
        ),
        MethodSpec(
            name="mmdtv",
            title="MMD-TV",
            requires=("skprivacy.auditors:MMDTVAuditor",),
            run=_run_mmdtv,
            weight=lambda ctx: (
                0.003 * _n(ctx.protocol["mmdtv_pairs"], ctx)
                + 0.005 * _n(ctx.protocol["mmdtv_certified_pairs"], ctx)
                + 0.001 * _n(ctx.protocol["sweep_pairs"], ctx)
                + 0.5
            ),
            certifies=(
                "Nothing by itself: the epsilon implied by the plug-in MMD through "
                "MMD <= 2 TV and TV <= tanh(epsilon/2)."
            ),
            does_not_certify=(
                "Not a certificate (no confidence level); it can never exceed about "
                "1.763 for an RBF kernel, however separable the identities are."
            ),
        ),
        MethodSpec(
            name="permutation",
            title="MMD permutation test and split-half controls",
            requires=("skprivacy.auditors:MMDTVAuditor",),
            run=_run_permutation,
            weight=lambda ctx: (
                0.0002
                * ctx.protocol["n_permutations"]
                / 100
                * (
                    _n(ctx.protocol["permutation_pairs"], ctx)
                    + ctx.protocol["control_identities"]
                )
                + 1
            ),
            certifies=(
                "A rejection at level 0.05 says the two identities' embedding "
                "distributions differ (exact permutation p-value, (b+1)/(m+1))."
            ),
            does_not_certify=(
                "Says nothing about how large epsilon is; rejection rates are not "
                "corrected for the number of pairs tested."
            ),
        ),
        MethodSpec(
            name="rocht",
            title="ROC-HT",
            requires=("skprivacy.auditors:ROCHTAuditor",),
            run=_run_rocht,
            weight=_w_pairs("rocht_pairs", 0.05),
            certifies=(
                "Nothing by itself: the KOV hypothesis-testing bound evaluated at the "
                "out-of-fold ROC points, without a confidence correction."
            ),
            does_not_certify=(
                "A point estimate (maximised over thresholds after seeing the data); "
                "an exact ROC corner gives infinity. See the reserved-test certificate."
            ),
        ),
        MethodSpec(
            name="certificate",
            title="ROC-HT reserved-test certificate",
            requires=("skprivacy.auditors:ROCHTCertifier",),
            run=_run_certificate,
            weight=_w_pairs("certificate_pairs", 0.04),
            certifies=(
                "A certificate: if the embeddings came from an epsilon-DP mechanism, "
                "the chance that any certified value exceeds epsilon is at most "
                "1 - confidence, simultaneously over the certified pairs "
                "(threshold fixed on training rows, Clopper-Pearson on reserved rows)."
            ),
            does_not_certify=(
                "A lower bound only: 0 means 'not certifiable with this test size', "
                "not 'private'; it cannot exceed the reported ceiling of the test size."
            ),
        ),
        MethodSpec(
            name="gaussianity",
            title="Residual Gaussianity",
            requires=("skprivacy.auditors:residual_gaussianity",),
            run=_run_gaussianity,
            weight=lambda ctx: 0.5,
            certifies=(
                "Which embedding dimensions have clearly non-Gaussian within-identity "
                "residuals (the GaussMech model's assumption)."
            ),
            does_not_certify=(
                "Passing the test does not make GaussMech a guarantee; failing it "
                "means GaussMech's model is wrong for those dimensions."
            ),
        ),
    ]
}


# Run order = METHOD_NAMES (cheap point estimates first, certificates after).
METHODS = {name: _SPECS[name] for name in METHOD_NAMES}
assert set(METHODS) == set(_SPECS), "METHOD_NAMES and the registry disagree"


def available_methods():
    """Names of the registered methods whose estimators can be imported."""
    return [name for name, spec in METHODS.items() if not spec.missing()]
