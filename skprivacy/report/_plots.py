# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Report figures, rendered with matplotlib's Agg backend into base64 PNG."""

import base64
import io

import numpy as np

from skprivacy.utils._constants import MMD_TV_CEILING

__all__ = ["figures"]


def _new(figsize=(6.4, 3.6)):
    # A bare Figure (no pyplot): rendered by the Agg canvas, no GUI backend, no
    # global figure registry to leak into.
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _save(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _eps_distributions(extra):
    series = {}
    if "gaussmech" in extra:
        series["GaussMech"] = extra["gaussmech"]["eps"]
    if "kdelr" in extra:
        for key, eps in extra["kdelr"]["eps"].items():
            series["KDE-LR " + key.split("_", 1)[1]] = eps
    if "mmdtv" in extra:
        series["MMD-TV"] = extra["mmdtv"]["eps"]
    if "rocht" in extra:
        series["ROC-HT"] = extra["rocht"]["eps"]
    if "certificate" in extra:
        series["ROC-HT certificate"] = extra["certificate"]["eps"]
    if "mmdtv" in extra and "eps_lower" in extra["mmdtv"]:
        series["MMD-TV certificate"] = extra["mmdtv"]["eps_lower"]
    if not series:
        return None
    fig = _new((6.8, 0.6 + 0.75 * len(series)))
    ax = fig.subplots()
    labels, data, n_inf = [], [], []
    for label, eps in series.items():
        eps = np.asarray(eps, dtype=float)
        finite = eps[np.isfinite(eps)]
        n_inf.append(int(np.isinf(eps).sum()))
        labels.append(f"{label} (n={len(eps)})")
        data.append(finite if len(finite) else np.array([np.nan]))
    ax.boxplot(data, orientation="horizontal", showfliers=True)
    ax.set_yticks(np.arange(1, len(labels) + 1), labels)
    for i, k in enumerate(n_inf, start=1):
        if k:
            ax.annotate(
                f"+{k} infinite",
                (1.0, i),
                xycoords=("axes fraction", "data"),
                ha="right",
                va="bottom",
                fontsize=8,
            )
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(left=-0.05)  # epsilon is never negative
    ax.set_xlabel("per-pair epsilon (symlog scale)")
    ax.set_title("Epsilon across audited identity pairs")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig)


def _roc(extra):
    roc = extra.get("rocht", {}).get("roc")
    if roc is None:
        return None
    fig = _new((4.4, 4.2))
    ax = fig.subplots()
    ax.plot(roc["fpr"], roc["tpr"], drawstyle="steps-post", label="out-of-fold ROC")
    ax.plot([0, 1], [0, 1], ls=":", c="grey", label="chance")
    eps = roc["kov_epsilon"]
    eps_txt = "inf" if np.isinf(eps) else f"{eps:.2f}"
    ax.scatter(
        [roc["kov_fpr"]],
        [roc["kov_tpr"]],
        c="crimson",
        zorder=3,
        label=f"KOV point (epsilon {eps_txt})",
    )
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(
        f"Most separable pair {roc['id_a']} vs {roc['id_b']}\nAUC {roc['auc']:.3f}",
        fontsize=10,
    )
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig)


def _sweep(extra):
    sweep = extra.get("mmdtv", {}).get("sweep")
    if sweep is None or not len(sweep):
        return None
    fig = _new((4.8, 3.4))
    ax = fig.subplots()
    ax.plot(sweep["bandwidth_scale"], sweep["max_epsilon"], "o-", label="max")
    ax.plot(sweep["bandwidth_scale"], sweep["median_epsilon"], "s--", label="median")
    ax.axhline(MMD_TV_CEILING, c="grey", ls=":", label="RBF ceiling")
    ax.set_xlabel("bandwidth scale (x median heuristic)")
    ax.set_ylabel("MMD-TV epsilon")
    ax.set_title("MMD bandwidth sweep")
    ax.legend(fontsize=8)
    return _save(fig)


def _permutation(extra):
    perm = extra.get("permutation")
    if perm is None:
        return None
    fig = _new((5.6, 3.4))
    ax = fig.subplots()
    bins = np.linspace(0, 1, 21)
    ax.hist(perm["p_values"], bins=bins, alpha=0.7, label="identity pairs")
    controls = perm["controls"]
    if len(controls):
        ax.hist(
            controls["p_value"],
            bins=bins,
            alpha=0.7,
            label="split-half controls (same identity)",
        )
    ax.axvline(0.05, c="k", ls=":", lw=1)
    ax.set_xlabel(f"permutation p-value (m = {perm['m']})")
    ax.set_ylabel("count")
    ax.set_title("MMD permutation tests")
    ax.legend(fontsize=8)
    return _save(fig)


def _qq(extra):
    g = extra.get("gaussianity")
    if g is None:
        return None
    qq = g["qq"]
    fig = _new((2.6 * len(qq), 2.8))
    axes = np.atleast_1d(fig.subplots(1, len(qq)))
    for ax, (dim, (theory, empirical)) in zip(axes, qq.items()):
        ax.plot(theory, empirical, ".", ms=3)
        ax.plot(theory, theory, c="crimson", lw=1)  # standardised: y = x
        ax.set_title(f"dim {dim}: p={g['p_values'][dim]:.1e}", fontsize=9)
        ax.set_xlabel("normal quantile", fontsize=8)
    axes[0].set_ylabel("standardised residual quantile", fontsize=8)
    fig.suptitle("Q-Q of pooled within-identity residuals", fontsize=10)
    return _save(fig)


def figures(extra):
    """Return ``{name: (caption, base64 PNG)}`` for every plot the data allow."""
    specs = [
        (
            "epsilon",
            "Per-method epsilon distributions across the audited pairs.",
            _eps_distributions,
        ),
        (
            "roc",
            "Out-of-fold ROC of the most separable pair (largest AUC) and the "
            "operating point that attains its KOV bound.",
            _roc,
        ),
        (
            "sweep",
            "MMD-TV epsilon as the RBF bandwidth is scaled around the median "
            "heuristic.",
            _sweep,
        ),
        (
            "permutation",
            "Permutation p-values for identity pairs and for same-identity split-half "
            "controls (controls should look uniform).",
            _permutation,
        ),
        (
            "qq",
            "Residual Q-Q plots for the least, a median and the most Gaussian "
            "dimension.",
            _qq,
        ),
    ]
    out = {}
    for name, caption, fn in specs:
        png = fn(extra)
        if png is not None:
            out[name] = (caption, png)
    return out
