# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the audit found, in sentences, and what to do next.

The verdict is built from the result kinds (hypothesis tests, certificates,
point estimates) and from each result's own finding (its estimator's
``description_``), so it never names a method itself.
"""

import numpy as np

from skprivacy.auditors._description import format_value

__all__ = ["FAMILIES", "next_steps", "verdict"]

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
        The quick ISP sweep's suggestion (``suggest_isp_rank``).
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
