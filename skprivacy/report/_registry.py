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

from dataclasses import dataclass, field

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from skprivacy.auditors import (
    CentroidClassifier,
    GaussMechAuditor,
    KDELRAuditor,
    MMDTVAuditor,
    ReidentificationAuditor,
    ROCHTAuditor,
    ROCHTCertifier,
    classifier_sensitivity,
    estimate_seconds,
    family_confidence,
    mmd_bandwidth_sweep,
    residual_gaussianity,
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
from skprivacy.auditors._readings import (
    describe_certificate,
    describe_permutation,
    why_no_mmd_certificate,
    why_no_permutation_rejection,
    why_no_reidentification,
    why_no_rocht_certificate,
    why_no_split_half_control,
)
from skprivacy.plotting import (
    BandwidthSweepDisplay,
    PairROCDisplay,
    PermutationPValueDisplay,
    ResidualQQDisplay,
)
from skprivacy.report._names import METHOD_NAMES, PROTOCOL_HELP, SHARED_SETTINGS
from skprivacy.utils import duplicate_groups

__all__ = ["METHODS", "PROTOCOLS", "AuditContext", "Method", "available_methods"]

# Fixed cost of a stage (validation, tables) beside its estimators' own model.
_STAGE_SECONDS = 0.05


@dataclass
class AuditContext:
    """The cleaned data (every estimator gets these rows), settings and fits so far.

    ``n_certificates``: the certificate methods the audit runs, fixed when it
    is planned (before the data are seen); each is issued at
    :attr:`certificate_confidence`, so the largest holds at ``confidence``.
    """

    data: object
    settings: dict
    random_state: int
    n_jobs: object = None
    fitted: dict = field(default_factory=dict)
    progress: object = None  # the audit's sink, for a method reporting its steps
    n_certificates: int = 1

    def __post_init__(self):
        self.X, self.y = self.data.X, np.asarray(self.data.y)
        self.counts = self.data.counts
        self.n_pairs_total = self.data.n_identities * (self.data.n_identities - 1) // 2
        self.duplicates = duplicate_groups(self.X, self.y)  # (groups, counts)

    @property
    def certificate_confidence(self):
        """Each certificate's level: ``family_confidence(confidence, n_certificates)``."""
        return family_confidence(
            self.settings["confidence"], max(1, self.n_certificates)
        )

    def n_pairs(self, key):
        """Pairs a protocol setting (``None`` = every pair) gives on these data."""
        requested = self.settings[key]
        return (
            self.n_pairs_total
            if requested is None
            else min(int(requested), self.n_pairs_total)
        )


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
            described = self.describe(est, ctx) if self.describe else est.description_
            out[key] = (est, described, prefix)
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


# -- the estimators, built by name -----------------------------------------------------
def _rocht(ctx):
    s = ctx.settings
    return ROCHTAuditor(
        n_pairs=s["rocht_pairs"],
        classifier=_classifier(s["rocht_classifier"]),
        **_common(ctx),
    )


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
    return MMDTVAuditor(n_pairs=ctx.settings["mmdtv_pairs"], **_common(ctx))


def _run_mmdtv(ctx):
    s, est = ctx.settings, _mmdtv(ctx).fit(ctx.X, ctx.y)
    described = est.description_
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
        "mmdtv": (est, described, "mmdtv_"),
        "mmdtv_bandwidth_sweep": (table, sweep, ""),
    }


def _sweep_cost(ctx):
    one = estimate_seconds(MMDTVAuditor(n_pairs=ctx.settings["sweep_pairs"]), ctx.data)
    return one * len(ctx.settings["bandwidth_scales"])


def _certifier(ctx):
    s = ctx.settings
    return ROCHTCertifier(
        n_pairs=s["certificate_pairs"],
        confidence=ctx.certificate_confidence,
        test_size=s["test_size"],
        classifier=_classifier(s["certificate_classifier"]),
        **_common(ctx),
    )


# -- the split-half controls ------------------------------------------------------------
def _split_half(template, key, describe, result, recorded):
    """Return ``Method.run`` and ``Method.cost`` of split-half controls.

    The controls of ``template(ctx)`` on ``ctx.settings[key]`` seeded
    identities with 4 rows or more (all when fewer), described with the
    settings named ``recorded``.
    """

    def run(ctx):
        ctl = split_half_controls(
            template(ctx),
            ctx.X,
            ctx.y,
            n_identities=ctx.settings[key],
            random_state=ctx.random_state,
        )
        return {result: (ctl, describe(ctl, {recorded: ctx.settings[recorded]}), "")}

    def cost(ctx):
        n = min(len(ctx.counts), ctx.settings[key] or len(ctx.counts))
        return estimate_seconds(template(ctx).set_params(n_pairs=n), ctx.data)

    return {"run": run, "cost": cost}


# -- classifier sensitivity: random forest vs logistic regression ---------------------
def _sensitivity_pair(ctx):
    # The first sensitivity_pairs pairs under sensitivity_folds folds, once per
    # classifier; a forest of sensitivity_trees trees, scikit-learn's defaults.
    s, seed = ctx.settings, ctx.random_state
    rf = RandomForestClassifier(n_estimators=s["sensitivity_trees"], random_state=seed)
    kw = {"n_pairs": s["sensitivity_pairs"], "cv": s["sensitivity_folds"]}
    kw.update(_common(ctx))
    return {
        "logistic": (ROCHTAuditor(**kw), ""),
        "forest": (ROCHTAuditor(rf, **kw), ""),
    }


def _run_sensitivity(ctx):
    rf = _sensitivity_pair(ctx)["forest"][0]
    kw = {"n_pairs": rf.n_pairs, "cv": rf.cv, "progress": ctx.progress}
    comparison = classifier_sensitivity(
        ctx.X, ctx.y, rf.classifier, **kw, **_common(ctx)
    )
    described = describe_sensitivity(comparison, rf.classifier, rf.cv)
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
    ResidualQQDisplay.from_diagnostic(
        fitted["residual_gaussianity"], ax=figure.subplots()
    )
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
        estimators=lambda ctx: {
            "gaussmech": (
                GaussMechAuditor(
                    n_pairs=ctx.settings["gaussmech_pairs"], **_common(ctx)
                ),
                "gaussmech_",
            )
        },
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
        "reid",
        "Re-identification",
        _sizes(reid_max_queries=[10_000, 10_000, None]),
        estimators=lambda ctx: {
            "reid": (
                ReidentificationAuditor(
                    max_queries=ctx.settings["reid_max_queries"], **_common(ctx)
                ),
                "",
            )
        },
        skip=lambda ctx: why_no_reidentification(ctx.y, ctx.duplicates[0]),
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
        skip=lambda ctx: why_no_rocht_certificate(
            ctx.counts,
            test_size=ctx.settings["test_size"],
            n_pairs=ctx.n_pairs("certificate_pairs"),
            confidence=ctx.certificate_confidence,
        ),
    ),
    Method(
        "mmdtv_certificate",
        "MMD-TV certificate",
        # About 60% more per pair than the point estimate (a second kernel at
        # the snapped bandwidth): the paper's prefix, not every pair.
        _sizes(mmdtv_certified_pairs=[100, 500, 500]),
        estimators=lambda ctx: {
            "mmdtv_certificate": (
                MMDTVAuditor(
                    n_pairs=ctx.settings["mmdtv_certified_pairs"],
                    confidence=ctx.certificate_confidence,
                    **_common(ctx),
                ),
                "mmdtv_",
            )
        },
        describe=lambda est, ctx: describe_certificate(est),
        kind="certificate",
        epsilon_pairs="mmdtv_certified_pairs",
        skip=lambda ctx: why_no_mmd_certificate(
            ctx.counts,
            n_pairs=ctx.n_pairs("mmdtv_certified_pairs"),
            confidence=ctx.certificate_confidence,
        ),
    ),
    Method(
        "permutation",
        "MMD permutation test",
        _sizes(permutation_pairs=[20, 100, 100], n_permutations=[1000, 10_000, 10_000]),
        estimators=lambda ctx: {
            "mmd_permutation_test": (
                MMDTVAuditor(
                    n_pairs=ctx.settings["permutation_pairs"],
                    n_permutations=ctx.settings["n_permutations"],
                    **_common(ctx),
                ),
                "perm_",
            )
        },
        describe=lambda est, ctx: describe_permutation(
            est, ctx.data.identities, ctx.counts
        ),
        kind="hypothesis test",
        skip=lambda ctx: why_no_permutation_rejection(ctx.counts),
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
        **_split_half(
            lambda ctx: MMDTVAuditor(
                n_permutations=ctx.settings["n_permutations"], **_common(ctx)
            ),
            "control_identities",
            describe_controls,
            "split_half_controls",
            "n_permutations",
        ),
        kind="control",
        skip=lambda ctx: why_no_split_half_control(ctx.counts),
    ),
    Method(
        "rocht_controls",
        "Split-half ROC-HT controls",
        _sizes(rocht_control_identities=[10, 100, 100]),
        **_split_half(
            # The paper's logistic regression under every protocol.
            lambda ctx: ROCHTAuditor(
                n_pairs=ctx.settings["rocht_pairs"], **_common(ctx)
            ),
            "rocht_control_identities",
            describe_roc_controls,
            "rocht_split_half_controls",
            "rocht_control_identities",
        ),
        kind="control",
        skip=lambda ctx: why_no_split_half_control(ctx.counts),
        protocols=("paper", "exhaustive"),
    ),
    Method(
        "classifier_sensitivity",
        "Classifier sensitivity (random forest vs logistic)",
        # Paper 000: 100 trees, 5 folds, 200 pairs (exhaustive). At ~1.5 ms a
        # tree per pair and fold, the paper protocol checks 50 pairs with 25
        # trees and 2 folds, a tenth of that (benchmarks/README.md).
        _sizes(
            sensitivity_pairs=[10, 50, 200],
            sensitivity_trees=[25, 25, 100],
            sensitivity_folds=[2, 2, 5],
        ),
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
