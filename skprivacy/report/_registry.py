# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The method registry: what the report alone knows about each method.

An entry names a method, builds its estimators by name (``random_state`` and
``n_jobs`` passed explicitly), gives the settings it reads under each
protocol, what it needs, when it cannot run on the data (a stated reason,
never a crash) and its figures, drawn by the Displays of
:mod:`skprivacy.plotting`. The rest -- summary entries, per-pair columns,
what each number says, the cost estimate -- is each fitted estimator's own
``description_`` and cost model. The order is
:data:`~skprivacy.report._names.METHOD_NAMES`.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from skprivacy.auditors import (
    CentroidClassifier,
    GaussMechAuditor,
    KDELRAuditor,
    MMDTVAuditor,
    ROCHTAuditor,
    ROCHTCertifier,
    compare_roc_audits,
    estimate_seconds,
    mmd_bandwidth_sweep,
    mmd_certificate_ceiling,
    mmd_rows_needed,
    permutation_p_value_floor,
    reserved_test_rows,
    residual_gaussianity,
    rocht_certificate_ceiling,
    rocht_rows_needed,
    split_half_controls,
)
from skprivacy.auditors._description import (
    describe_controls,
    describe_gaussianity,
    describe_roc_controls,
    describe_sensitivity,
    describe_sweep,
    describe_witness,
)
from skprivacy.auditors._mmd import CERTIFICATE_BANDWIDTH_GRID
from skprivacy.auditors._readings import describe_certificate, describe_permutation
from skprivacy.plotting import (
    BandwidthSweepDisplay,
    PairROCDisplay,
    PermutationPValueDisplay,
    ResidualQQDisplay,
)
from skprivacy.report._names import METHOD_NAMES, PROTOCOL_HELP, SHARED_SETTINGS
from skprivacy.utils import check_generator

__all__ = ["METHODS", "PROTOCOLS", "AuditContext", "Method", "available_methods"]

# Fixed cost of a stage (validation, tables) beside its estimators' own model.
_STAGE_SECONDS = 0.05


@dataclass
class AuditContext:
    """The cleaned data (every estimator gets these rows), settings and fits so far."""

    data: object
    settings: dict
    random_state: int
    n_jobs: object = None
    fitted: dict = field(default_factory=dict)

    @property
    def X(self):
        return self.data.X

    @property
    def y(self):
        return np.asarray(self.data.y)

    @property
    def counts(self):
        return self.data.counts

    @property
    def n_pairs_total(self):
        return self.data.n_identities * (self.data.n_identities - 1) // 2

    def n_pairs(self, key):
        """Pairs a protocol setting (``None`` = every pair) gives on these data."""
        requested = self.settings[key]
        total = self.n_pairs_total
        return total if requested is None else min(int(requested), total)


@dataclass(frozen=True)
class Figure:
    """A report figure: ``draw(fitted, ctx, figure)`` fills a bare matplotlib Figure."""

    name: str
    caption: str
    draw: object
    figsize: tuple = (6.4, 3.6)


@dataclass(frozen=True)
class Method:
    """One report method.

    ``sizes``: protocol -> the settings it reads (:data:`PROTOCOLS` is their
    union). ``estimators(ctx)``: ``{result key: (unfitted estimator, pairs.csv
    prefix)}``, fitted on the audit's rows and read through ``description_``
    (or ``describe(est, ctx)`` when the reading needs the data's sizes);
    their cost models plan the progress. ``run(ctx)``, for results composed
    from several fits, returns ``{result key: (fitted, AuditDescription,
    prefix)}`` instead; ``cost(ctx)`` adds seconds the estimators do not
    cover. ``kind``: its result's kind when skipped. ``epsilon_pairs``: the
    setting whose prefix carries its per-pair ε (raised to Table I's prefix).
    ``needs``: methods whose fits it reads. ``skip(ctx)``: why it cannot run
    on these data (None: it can). ``protocols``: those that run it by default
    (None: all).
    """

    name: str
    title: str
    sizes: dict
    estimators: object = None
    describe: object = None
    run: object = None
    cost: object = None
    kind: str = "point estimate"
    epsilon_pairs: str | None = None
    needs: tuple = ()
    skip: object = None
    figures: tuple = ()
    protocols: tuple | None = None

    def fit(self, ctx):
        """Return ``{result key: (fitted object, description, pairs.csv prefix)}``."""
        if self.run is not None:
            return self.run(ctx)
        out = {}
        for key, (est, prefix) in self.estimators(ctx).items():
            est.fit(ctx.X, ctx.y)
            if self.describe is None:
                out[key] = (est, est.description_, prefix)
            else:
                out[key] = (est, self.describe(est, ctx), prefix)
        return out

    def seconds(self, ctx):
        """Return the expected single-core seconds (the progress estimate)."""
        built = self.estimators(ctx).values() if self.estimators else ()
        return (
            _STAGE_SECONDS
            + sum(estimate_seconds(est, ctx.data) for est, _ in built)
            + (self.cost(ctx) if self.cost else 0.0)
        )

    def reason_to_skip(self, ctx, selected=()):
        """Why this method cannot run here (None: it can)."""
        absent = [m for m in self.needs if m not in ctx.fitted]
        if absent:
            why = "did not run" if set(absent) <= set(selected) else "were not selected"
            return f"needs the results of {' and '.join(absent)}, which {why}"
        return None if self.skip is None else self.skip(ctx)


def _sizes(**settings):
    """Return settings per protocol from ``name=[quick, paper, exhaustive]`` or one value."""
    rows = {k: v if isinstance(v, list) else [v] * 3 for k, v in settings.items()}
    return {p: {k: v[i] for k, v in rows.items()} for i, p in enumerate(PROTOCOL_HELP)}


def _classifier(name):
    """Per-pair classifier of a protocol setting (None: the paper's logistic)."""
    return {"logistic_regression": None, "centroid": CentroidClassifier()}[name]


def _common(ctx):
    return {"random_state": ctx.random_state, "n_jobs": ctx.n_jobs}


def _described(est, ctx, prefix=""):
    est.fit(ctx.X, ctx.y)
    return est, est.description_, prefix


# -- the estimators, built by name -----------------------------------------------------
def _rocht(ctx):
    s = ctx.settings
    return ROCHTAuditor(
        n_pairs=s["rocht_pairs"],
        classifier=_classifier(s["rocht_classifier"]),
        **_common(ctx),
    )


def _gaussmech(ctx):
    return GaussMechAuditor(n_pairs=ctx.settings["gaussmech_pairs"], **_common(ctx))


def _kdelr(ctx):
    s = ctx.settings
    return {
        f"kdelr_alpha={alpha:g}": (
            KDELRAuditor(alpha=alpha, n_pairs=s["kdelr_pairs"], **_common(ctx)),
            f"kdelr_a{alpha:g}_",
        )
        for alpha in s["kdelr_alphas"]
    }


def _mmdtv(ctx):
    s = ctx.settings
    return MMDTVAuditor(n_pairs=s["mmdtv_pairs"], **_common(ctx))


def _run_mmdtv(ctx):
    s = ctx.settings
    est, described, prefix = _described(_mmdtv(ctx), ctx, "mmdtv_")
    table = mmd_bandwidth_sweep(
        ctx.X,
        ctx.y,
        scales=s["bandwidth_scales"],
        n_pairs=s["sweep_pairs"],
        **_common(ctx),
    )
    sweep = describe_sweep(
        table,
        scales=s["bandwidth_scales"],
        n_pairs=ctx.n_pairs("sweep_pairs"),
        requested=s["sweep_pairs"],
        reading=described,
    )
    return {
        "mmdtv": (est, described, prefix),
        "mmdtv_bandwidth_sweep": (table, sweep, ""),
    }


def _sweep_cost(ctx):
    n = ctx.settings["sweep_pairs"]
    one = estimate_seconds(MMDTVAuditor(n_pairs=n), ctx.data)
    return one * len(ctx.settings["bandwidth_scales"])


# -- certificates ---------------------------------------------------------------------
def _mmdtv_certificate_skip(ctx):
    n_pairs = ctx.n_pairs("mmdtv_certified_pairs")
    ceiling = {
        "confidence": ctx.settings["confidence"],
        "n_comparisons": n_pairs,
        "n_bandwidths": len(CERTIFICATE_BANDWIDTH_GRID),
    }
    second = int(np.sort(ctx.counts)[-2])
    if mmd_certificate_ceiling(second, second, **ceiling) > 0:
        return None
    return (
        f"its ceiling is 0 on these data: with at most {second} rows per identity "
        f"(second largest identity), the Hoeffding margin over {n_pairs} pairs at "
        f"confidence {ceiling['confidence']:g} exceeds the largest possible MMD², "
        "so no epsilon > 0 can be certified; it needs at least "
        f"{max(mmd_rows_needed(0.0, **ceiling), 4)} rows per identity"
    )


def _certificate_skip(ctx):
    s = ctx.settings
    n_pairs = ctx.n_pairs("certificate_pairs")
    # The two largest identities give the best ceiling any pair can have.
    top = reserved_test_rows(np.sort(ctx.counts)[-2:], s["test_size"])
    family = {"confidence": s["confidence"], "n_comparisons": n_pairs}
    if rocht_certificate_ceiling(top[0], top[1], **family) > 0:
        return None
    need = rocht_rows_needed(0.0, **family)
    return (
        f"its ceiling is 0 on these data: test_size {s['test_size']:g} reserves at "
        f"most {top[0]} row(s) per identity, too few to certify any epsilon > 0 at "
        f"confidence {s['confidence']:g} over {n_pairs} pairs; it needs at least "
        f"{need} reserved rows per identity (about "
        f"{math.ceil(need / s['test_size'])} rows per identity at this test size)"
    )


def _certifier(ctx):
    s = ctx.settings
    return ROCHTCertifier(
        n_pairs=s["certificate_pairs"],
        confidence=s["confidence"],
        test_size=s["test_size"],
        classifier=_classifier(s["certificate_classifier"]),
        **_common(ctx),
    )


def _mmdtv_cert(ctx):
    s = ctx.settings
    return MMDTVAuditor(
        n_pairs=s["mmdtv_certified_pairs"], confidence=s["confidence"], **_common(ctx)
    )


# -- the permutation test and the split-half controls ----------------------------------
def _permutation_skip(ctx):
    counts = np.sort(ctx.counts)
    floor = float(permutation_p_value_floor(counts[-1], counts[-2]))
    if floor < 0.05:
        return None
    return (
        f"it cannot reject at level 0.05 on these data: the two largest identities "
        f"have {counts[-1]} and {counts[-2]} rows, whose pooled rows split only "
        f"{math.comb(int(counts[-1] + counts[-2]), int(counts[-2]))} ways, so the "
        f"smallest attainable p-value is {floor:.2g}; it needs at least 4 rows in "
        "each of two identities"
    )


def _permutation(ctx):
    s = ctx.settings
    return MMDTVAuditor(
        n_pairs=s["permutation_pairs"],
        n_permutations=s["n_permutations"],
        **_common(ctx),
    )


def _controls_skip(ctx):
    if (ctx.counts >= 4).any():
        return None
    return (
        "a split-half control needs an identity with at least 4 rows (two halves "
        f"of 2); the largest identity here has {int(ctx.counts.max())}"
    )


def _control_rows(ctx, n):
    """Rows of ``n`` seeded identities with at least 4 rows (all when fewer)."""
    eligible = ctx.data.identities[ctx.counts >= 4]
    if n is None or n >= len(eligible):
        return ctx.X, ctx.y
    chosen = check_generator(ctx.random_state).choice(eligible, n, replace=False)
    mask = np.isin(ctx.y, chosen)
    return ctx.X[mask], ctx.y[mask]


def _controls(ctx, template, n):
    X, y = _control_rows(ctx, n)
    return split_half_controls(template, X, y, random_state=ctx.random_state)


def _control_cost(template, key):
    def cost(ctx):
        n = min(len(ctx.counts), ctx.settings[key] or len(ctx.counts))
        return estimate_seconds(template(ctx).set_params(n_pairs=n), ctx.data)

    return cost


def _control_template(ctx):
    return MMDTVAuditor(n_permutations=ctx.settings["n_permutations"], **_common(ctx))


def _run_controls(ctx):
    s = ctx.settings
    ctl = _controls(ctx, _control_template(ctx), s["control_identities"])
    described = describe_controls(ctl, {"n_permutations": s["n_permutations"]})
    return {"split_half_controls": (ctl, described, "")}


def _rocht_template(ctx):
    # The paper's logistic regression under every protocol.
    return ROCHTAuditor(n_pairs=ctx.settings["rocht_pairs"], **_common(ctx))


def _run_rocht_controls(ctx):
    n = ctx.settings["rocht_control_identities"]
    ctl = _controls(ctx, _rocht_template(ctx), n)
    described = describe_roc_controls(ctl, {"rocht_control_identities": n})
    return {"rocht_split_half_controls": (ctl, described, "")}


# -- classifier sensitivity: random forest vs logistic regression ---------------------
def _sensitivity_pair(ctx):
    # The ROC-HT audit's first sensitivity_pairs pairs (a prefix of the shared
    # ordering) with the same folds, once per classifier; paper 000's forest
    # has 100 trees and scikit-learn's other defaults.
    n = ctx.settings["sensitivity_pairs"]
    forest = RandomForestClassifier(n_estimators=100, random_state=ctx.random_state)
    return {
        "logistic": (ROCHTAuditor(n_pairs=n, **_common(ctx)), ""),
        "forest": (ROCHTAuditor(n_pairs=n, classifier=forest, **_common(ctx)), ""),
    }


def _run_sensitivity(ctx):
    pair = _sensitivity_pair(ctx)
    lr, rf = (est.fit(ctx.X, ctx.y) for est, _ in pair.values())
    comparison = compare_roc_audits(lr, rf)
    described = describe_sensitivity(comparison, rf.classifier)
    return {"classifier_sensitivity": (comparison, described, "")}


# -- residual Gaussianity, classifier witness ratio --------------------------------------
def _run_gaussianity(ctx):
    diag = residual_gaussianity(ctx.X, ctx.y, random_state=ctx.random_state)
    return {"residual_gaussianity": (diag, describe_gaussianity(diag), "")}


def _run_witness(ctx):
    described = describe_witness(
        ctx.fitted["rocht"]["rocht"], ctx.fitted["mmdtv"]["mmdtv"]
    )
    return {} if described is None else {"classifier_witness": (None, described, "")}


# -- figures ----------------------------------------------------------------------------
def _draw_permutation(fitted, ctx, figure):
    controls = ctx.fitted.get("controls", {}).get("split_half_controls")
    PermutationPValueDisplay.from_estimator(
        fitted["mmd_permutation_test"], controls=controls, ax=figure.subplots()
    )


def _draw_qq(fitted, ctx, figure):
    # The least, a median and the most Gaussian dimension (the display's default).
    diag = fitted["residual_gaussianity"]
    order = np.argsort(diag.results["p_value"].to_numpy(), kind="stable")
    n_panels = len({int(order[0]), int(order[len(order) // 2]), int(order[-1])})
    axes = np.atleast_1d(figure.subplots(1, n_panels))
    ResidualQQDisplay.from_diagnostic(diag, ax=list(axes))
    figure.suptitle("Q-Q of pooled within-identity residuals", fontsize=10)


_LR = "logistic_regression"

_DECLARED = (
    Method(
        "rocht",
        "ROC-HT",
        _sizes(rocht_pairs=[30, 200, None], rocht_classifier=[_LR, _LR, "centroid"]),
        estimators=lambda ctx: {"rocht": (_rocht(ctx), "rocht_")},
        epsilon_pairs="rocht_pairs",
        figures=(
            Figure(
                "roc",
                "Out-of-fold ROC of the most separable pair (largest AUC) and the "
                "operating point that attains its KOV bound (the auditor's own "
                "folds).",
                lambda fitted, ctx, fig: PairROCDisplay.from_estimator(
                    fitted["rocht"], ctx.X, ctx.y, ax=fig.subplots()
                ),
                (4.4, 4.2),
            ),
        ),
    ),
    Method(
        "mmdtv",
        "MMD-TV",
        _sizes(
            mmdtv_pairs=[100, 500, None],
            sweep_pairs=[50, 500, 500],
            bandwidth_scales=(0.5, 0.75, 1.0, 1.5, 2.0),
        ),
        estimators=lambda ctx: {"mmdtv": (_mmdtv(ctx), "mmdtv_")},
        run=_run_mmdtv,
        cost=_sweep_cost,
        epsilon_pairs="mmdtv_pairs",
        figures=(
            Figure(
                "sweep",
                "MMD-TV epsilon as the RBF bandwidth is scaled around the median "
                "heuristic (dotted: the RBF ceiling).",
                lambda fitted, ctx, fig: BandwidthSweepDisplay.from_sweep(
                    fitted["mmdtv_bandwidth_sweep"], ax=fig.subplots()
                ),
                (4.8, 3.4),
            ),
        ),
    ),
    Method(
        "gaussmech",
        "GaussMech",
        _sizes(gaussmech_pairs=[100, 500, None]),
        estimators=lambda ctx: {"gaussmech": (_gaussmech(ctx), "gaussmech_")},
        epsilon_pairs="gaussmech_pairs",
    ),
    Method(
        "kdelr",
        "KDE-LR",
        _sizes(kdelr_pairs=[20, 100, 100], kdelr_alphas=(0.0, 1e-2)),
        estimators=_kdelr,
        epsilon_pairs="kdelr_pairs",
    ),
    Method(
        "rocht_certificate",
        "ROC-HT reserved-test certificate",
        _sizes(
            certificate_pairs=[30, 200, None],
            certificate_classifier=[_LR, _LR, "centroid"],
        ),
        estimators=lambda ctx: {"rocht_certificate": (_certifier(ctx), "cert_")},
        describe=lambda est, ctx: describe_certificate(est),
        kind="certificate",
        epsilon_pairs="certificate_pairs",
        skip=_certificate_skip,
    ),
    Method(
        "mmdtv_certificate",
        "MMD-TV certificate",
        # About 60% more per pair than the point estimate (a second kernel at
        # the snapped bandwidth): the paper's prefix, not every pair.
        _sizes(mmdtv_certified_pairs=[100, 500, 500]),
        estimators=lambda ctx: {"mmdtv_certificate": (_mmdtv_cert(ctx), "mmdtv_")},
        describe=lambda est, ctx: describe_certificate(est),
        kind="certificate",
        epsilon_pairs="mmdtv_certified_pairs",
        skip=_mmdtv_certificate_skip,
    ),
    Method(
        "permutation",
        "MMD permutation test",
        _sizes(permutation_pairs=[20, 100, 100], n_permutations=[1000, 10_000, 10_000]),
        estimators=lambda ctx: {"mmd_permutation_test": (_permutation(ctx), "perm_")},
        describe=lambda est, ctx: describe_permutation(
            est, ctx.data.identities, ctx.counts
        ),
        kind="hypothesis test",
        skip=_permutation_skip,
        figures=(
            Figure(
                "permutation",
                "Permutation p-values for identity pairs and for same-identity "
                "split-half controls (controls should look uniform).",
                _draw_permutation,
                (5.6, 3.4),
            ),
        ),
    ),
    Method(
        "controls",
        "Split-half controls",
        _sizes(control_identities=[10, 100, 100]),
        run=_run_controls,
        cost=_control_cost(_control_template, "control_identities"),
        kind="control",
        skip=_controls_skip,
    ),
    Method(
        "rocht_controls",
        "Split-half ROC-HT controls",
        _sizes(rocht_control_identities=[10, 100, 100]),
        run=_run_rocht_controls,
        cost=_control_cost(_rocht_template, "rocht_control_identities"),
        kind="control",
        skip=_controls_skip,
        protocols=("paper", "exhaustive"),
    ),
    Method(
        "classifier_sensitivity",
        "Classifier sensitivity (random forest vs logistic)",
        # Paper 000 compares its 200 ROC-tested pairs; a 100-tree forest per
        # pair and fold costs about 30 times logistic regression, so the paper
        # protocol checks the first 50 (set sensitivity_pairs=200 to match).
        _sizes(sensitivity_pairs=[10, 50, 200]),
        estimators=_sensitivity_pair,
        run=_run_sensitivity,
        kind="diagnostic",
        protocols=("paper", "exhaustive"),
    ),
    Method(
        "gaussianity",
        "Residual Gaussianity",
        _sizes(),
        run=_run_gaussianity,
        kind="diagnostic",
        figures=(
            Figure(
                "qq",
                "Residual Q-Q plots for the least, a median and the most Gaussian "
                "dimension.",
                _draw_qq,
                (7.8, 2.8),
            ),
        ),
    ),
    Method(
        "witness",
        "Classifier witness ratio",
        _sizes(),
        run=_run_witness,
        kind="diagnostic",
        needs=("rocht", "mmdtv"),
    ),
)

#: Registered methods by name, in the order of ``METHOD_NAMES``.
METHODS = {
    m.name: m for m in sorted(_DECLARED, key=lambda m: METHOD_NAMES.index(m.name))
}


def _assemble(protocol):
    settings = dict(SHARED_SETTINGS)
    for method in METHODS.values():
        settings.update(method.sizes[protocol])
    return settings


#: Protocol name -> settings (pair counts per method, permutations, confidence).
PROTOCOLS = {name: _assemble(name) for name in PROTOCOL_HELP}


def available_methods(protocol=None):
    """Return the registered methods a protocol runs by default.

    Parameters
    ----------
    protocol : str or None, default=None
        Only the methods this protocol runs by default (a custom protocol
        dict counts as ``"quick"``); None: every registered method.

    Returns
    -------
    names : list of str
        In the registry's order.

    Examples
    --------
    >>> from skprivacy.report import available_methods
    >>> available_methods("quick")[:3]
    ['rocht', 'mmdtv', 'gaussmech']
    """
    return [
        name
        for name, m in METHODS.items()
        if protocol is None or m.protocols is None or protocol in m.protocols
    ]
