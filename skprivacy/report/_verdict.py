# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the audit found, in sentences, and what to do next.

The verdict is built from the result kinds (hypothesis tests, certificates,
point estimates) and from each result's own finding (its estimator's
``description_``), so it never names a method itself.
"""

import math
import warnings

import numpy as np

from skprivacy.auditors import ROCHTAuditor
from skprivacy.auditors._description import format_value
from skprivacy.sanitize import ISP

__all__ = ["FAMILIES", "next_steps", "suggest_isp_rank", "verdict"]

#: Mean out-of-fold AUC regarded as "near chance" by the rank suggestion.
TARGET_AUC = 0.6
#: Pairs of the shared ordering the quick ISP sweep audits per rank.
SWEEP_PAIRS = 10
#: The verdict's line families, in order, by result kind.
FAMILIES = {
    "hypothesis test": "tests",
    "certificate": "certificates",
    "point estimate": "point estimates",
    "control": "calibration",
    "diagnostic": "calibration",
}
_ORDER = ["tests", "certificates", "point estimates", "calibration", "skipped"]


def _by_kind(results, kind):
    return {
        k: e for k, e in results.items() if e.get("kind") == kind and not e["skipped"]
    }


def _separability(results):
    """(share distinguished, sentence) from the hypothesis tests, if any ran."""
    tests = _by_kind(results, "hypothesis test")
    if not tests:
        return None, None
    e = next(iter(tests.values()))
    n, k = e["n_pairs"], e.get("n_rejected", round(e["value"] * e["n_pairs"]))
    powerless = e.get("n_pairs_without_power", 0)
    caveat = (
        f" ({powerless} of them too small to reach p < 0.05 whatever the data)"
        if powerless
        else ""
    )
    if k == n:
        return 1.0, f"every audited pair ({n}) is distinguished"
    if k == 0:
        return 0.0, f"none of {n} audited pairs is distinguished{caveat}"
    return k / n, f"{k} of {n} audited pairs are distinguished{caveat}"


def _best_certificate(results):
    certs = [e for e in _by_kind(results, "certificate").values() if e["value"] > 0]
    return max(certs, key=lambda e: e["value"]) if certs else None


def verdict(results, findings, confidence):
    """Build the verdict: a headline and one sentence per result, by family.

    Parameters
    ----------
    results : dict
        The result entries of the audit.
    findings : dict
        Result key -> the sentence its description gives (empty: none).
    confidence : float
        The certificates' confidence.

    Returns
    -------
    verdict : dict
        ``headline`` (str) and ``lines`` (list of ``{"family", "text"}``).
    """
    lines = []
    for key, e in results.items():
        if e["skipped"]:
            text = f"{e['title']} skipped: {e['reason']}"
            lines.append({"family": "skipped", "text": text})
        elif findings.get(key):
            lines.append({"family": FAMILIES[e["kind"]], "text": findings[key]})
    lines.sort(key=lambda line: _ORDER.index(line["family"]))
    share, separable = _separability(results)
    best = _best_certificate(results)
    conf = f"{100 * confidence:g}%"
    if best is not None:
        headline = "Identities leak: "
        if separable:
            headline += f"{separable}; "
        headline += f"certified epsilon >= {format_value(best['value'])} at {conf}"
        if best.get("at_ceiling"):
            headline += " (the ceiling this test size allows)"
        headline += "."
    elif share is not None and share >= 0.5:
        headline = (
            f"Identities are separable: {separable}; no epsilon > 0 could be "
            f"certified at {conf} with these test sizes (see the certificates)."
        )
    elif share is not None:
        headline = (
            f"Little evidence of leakage at this sample size: {separable}. This is "
            "not evidence of privacy; see the point estimates and certificates."
        )
    else:
        headline = (
            "No hypothesis test or certificate could run on these data; the "
            "results below are point estimates and diagnostics."
        )
        # Out-of-fold classifier AUCs are the strongest evidence left: say so
        # first rather than leave "nothing could run" as the message.
        classifier = next(
            (e for e in results.values() if not e["skipped"] and "mean_auc" in e),
            None,
        )
        if classifier is not None and classifier["mean_auc"] >= 0.9:
            headline = (
                "Identities look separable (a point estimate, not a test): "
                f"{classifier['title']} classifiers reach mean out-of-fold AUC "
                f"{classifier['mean_auc']:.3f} over {classifier['n_pairs']} pairs. "
                + headline
            )
    return {"headline": headline, "lines": lines}


def suggest_isp_rank(ctx):
    """Smallest ISP rank whose quick audit looks near chance, on these data.

    For ranks 1, 2, 4, ... up to ``min(n_features - 1, n_identities - 1)`` (at
    least one dimension must remain, or every sanitised row is 0), ISP is
    fitted on the audited rows and a :class:`~skprivacy.ROCHTAuditor` on the
    first :data:`SWEEP_PAIRS` pairs measures the mean out-of-fold AUC of the
    sanitised rows; the first rank at or below :data:`TARGET_AUC` is
    suggested. In-sample and on few pairs: a starting point for
    ``skprivacy sanitize``, to be checked by auditing its output.

    Returns
    -------
    suggestion : dict or None
        ``rank`` (None when no rank reaches the target), ``auc_before``,
        ``auc_after``, ``target_auc``, ``n_pairs`` and ``sweep`` (rank, AUC).
    """
    n_pairs = min(SWEEP_PAIRS, ctx.n_pairs_total)
    top = min(ctx.X.shape[1] - 1, ctx.data.n_identities - 1)

    def auc(Z):
        est = ROCHTAuditor(n_pairs=n_pairs, random_state=ctx.random_state)
        return float(est.set_params(n_jobs=ctx.n_jobs).fit(Z, ctx.y).auc_mean_)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = auc(ctx.X)
        sweep = [{"rank": 0, "auc": before}]
        rank = None
        if before > TARGET_AUC and top >= 1:
            ranks = sorted({2**j for j in range(int(math.log2(top)) + 1)} | {top})
            # Bisection over the ladder: removing more identity directions does
            # not raise the AUC (up to noise), so ~log2(len(ranks)) fits suffice.
            lo, hi = -1, len(ranks) - 1
            measured = {}

            def at(i):
                if i not in measured:
                    Z = ISP(n_components=ranks[i]).fit_transform(ctx.X, ctx.y)
                    measured[i] = auc(Z)
                return measured[i]

            if at(hi) <= TARGET_AUC:
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    lo, hi = (lo, mid) if at(mid) <= TARGET_AUC else (mid, hi)
                rank = ranks[hi]
            sweep += [{"rank": ranks[i], "auc": measured[i]} for i in sorted(measured)]
    after = next((s["auc"] for s in sweep if s["rank"] == rank), sweep[-1]["auc"])
    return {
        "rank": rank,
        "auc_before": before,
        "auc_after": after,
        "target_auc": TARGET_AUC,
        "n_pairs": n_pairs,
        "sweep": sweep,
    }


def next_steps(results, ctx, protocol, suggestion, source=None):
    """List what to do next: sanitise, the paper protocol, more rows per identity.

    Parameters
    ----------
    results : dict
        The result entries of the audit.
    ctx : AuditContext
        The audit's data and settings.
    protocol : str
        The protocol that ran (never recommended again).
    suggestion : dict or None
        :func:`suggest_isp_rank`'s output.
    source : str or None, default=None
        The input file, for the suggested commands.

    Returns
    -------
    steps : list of dict
        ``action``, ``text`` and ``command`` (None when there is none).
    """
    file = source or "FILE"
    steps = []
    share, _ = _separability(results)
    leaks = _best_certificate(results) is not None or (share or 0) >= 0.5
    if suggestion is not None and suggestion["rank"] is not None:
        r = suggestion["rank"]
        steps.append(
            {
                "action": "sanitize",
                "text": (
                    f"Remove identity directions with ISP: a quick in-sample sweep "
                    f"suggests rank {r} (mean ROC-HT AUC over {suggestion['n_pairs']} "
                    f"pairs falls from {suggestion['auc_before']:.3f} to "
                    f"{suggestion['auc_after']:.3f}); audit the sanitised file to "
                    "confirm."
                ),
                "command": f"skprivacy sanitize {file} --n-components {r} --out "
                "sanitized",
            }
        )
    elif suggestion is not None and leaks:
        steps.append(
            {
                "action": "sanitize",
                "text": (
                    "ISP alone did not bring the mean ROC-HT AUC near chance on these "
                    f"data (best {min(s['auc'] for s in suggestion['sweep']):.3f} "
                    f"at ranks up to {suggestion['sweep'][-1]['rank']}): identity is "
                    "not only in the class means; consider stronger sanitisation."
                ),
                "command": None,
            }
        )
    limited = any(
        ctx.n_pairs(k) < ctx.n_pairs_total for k in ctx.settings if k.endswith("_pairs")
    )
    if protocol not in ("paper", "exhaustive") and limited:
        steps.append(
            {
                "action": "protocol",
                "text": (
                    "Run paper 000's protocol for more pairs and 10,000 permutations "
                    "(or exhaustive for every pair)."
                ),
                "command": f"skprivacy audit {file} --protocol paper",
            }
        )
    counts = np.sort(ctx.counts)
    for e in _by_kind(results, "certificate").values():
        lift = e.get("lift") or {}
        if e.get("at_ceiling") and lift.get("test_size"):
            steps.append(
                {
                    "action": "test size",
                    "text": (
                        f"{e['title']} is at its ceiling ({format_value(e['ceiling'])}): the "
                        f"test size, not the data, limits it; test_size "
                        f"{lift['test_size']:g} lifts the ceiling to "
                        f"{format_value(lift['ceiling'])}."
                    ),
                    "command": f"skprivacy audit {file} --test-size "
                    f"{lift['test_size']:g}",
                }
            )
    skipped = [e for e in results.values() if e["skipped"]]
    if skipped or counts[0] < 10:
        steps.append(
            {
                "action": "more rows",
                "text": (
                    f"Collect more images per identity (now {counts[0]} to "
                    f"{counts[-1]}): certificates and controls need tens of rows per "
                    "identity"
                    + (
                        " ("
                        + "; ".join(f"{e['title']}: {e['reason']}" for e in skipped)
                        + ")"
                        if skipped
                        else ""
                    )
                    + "."
                ),
                "command": None,
            }
        )
    return steps
