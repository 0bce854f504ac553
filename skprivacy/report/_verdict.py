# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the audit found, in sentences, and what to do next.

The verdict is built from the result kinds (hypothesis tests, certificates,
point estimates) and from each result's own finding (its estimator's
``description_``), so it never names a method itself.
"""

import numpy as np

from skprivacy.auditors import family_confidence
from skprivacy.auditors._description import format_value

__all__ = ["FAMILIES", "LEVELS", "next_steps", "verdict"]

#: Verdict levels (``verdict.level`` in ``summary.json``), strongest first.
LEVELS = ("leak", "separable", "inconclusive", "little evidence")

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
    return [e for e in results.values() if e.get("kind") == kind and not e["skipped"]]


def _separability(results):
    """Return (share distinguished, sentence) of the first hypothesis test, if any ran."""
    tests = _by_kind(results, "hypothesis test")
    return (tests[0]["value"], tests[0]["distinguished"]) if tests else (None, None)


def _best_certificate(results):
    certs = [e for e in _by_kind(results, "certificate") if e["value"] > 0]
    return max(certs, key=lambda e: e["value"]) if certs else None


def _joint(confidence, n_certificates):
    """Return the level of the largest certificate, in words.

    Each of the ``n_certificates`` the audit planned was issued at
    ``family_confidence(confidence, n_certificates)``, so the largest holds
    jointly at ``confidence`` (the union bound).
    """
    conf = f"{100 * confidence:g}%"
    if n_certificates < 2:
        return f"at {conf}"
    each = f"{100 * family_confidence(confidence, n_certificates):.4g}%"
    return f"at {conf} jointly: each of the {n_certificates} certificates at {each}"


def _resolved(results):
    """Whether a rate ran and each rules out separation (``rules_out_separation``)."""
    rates = [e for e in _by_kind(results, "point estimate") if "chance" in e]
    return bool(rates) and all(e["rules_out_separation"] for e in rates)


def verdict(results, findings, confidence, n_certificates=1):
    """Return the ``level``, the headline and one line per finding (``family``, ``text``).

    ``confidence`` is the joint level of the certificates: each of the
    ``n_certificates`` planned was issued at
    ``family_confidence(confidence, n_certificates)``.

    ``level`` is one of :data:`LEVELS`: ``"leak"`` when a certificate is
    positive; else ``"separable"`` when at least half of the tested pairs are
    distinguished or a point estimate ``separates`` (re-identification far
    above chance, out-of-fold AUCs away from 0.5 on either side: see their
    descriptions); else ``"little evidence"`` when a re-identification rate
    ran and ``rules_out_separation``; else ``"inconclusive"``.
    """
    lines = [
        {"family": "skipped", "text": f"{e['title']} skipped: {e['reason']}"}
        if e["skipped"]
        else {"family": FAMILIES[e["kind"]], "text": findings[key]}
        for key, e in results.items()
        if e["skipped"] or findings.get(key)
    ]
    lines.sort(key=lambda line: _ORDER.index(line["family"]))
    share, separable = _separability(results)
    best = _best_certificate(results)
    evidence = [separable] if (share or 0) >= 0.5 else []
    evidence += [
        findings[k]
        for k, e in results.items()
        if e.get("separates") and e["kind"] == "point estimate" and not e["skipped"]
    ]
    if best is not None:
        level = "leak"
        headline = "Identities leak: " + (f"{separable}; " if separable else "")
        headline += f"certified epsilon >= {format_value(best['value'])}"
        if best.get("at_ceiling"):
            headline += ", the ceiling this test size allows,"
        headline += f" {_joint(confidence, n_certificates)}."
    elif evidence:
        level = "separable"
        headline = (
            f"Identities are separable: {'; '.join(evidence)}; no epsilon > 0 "
            f"could be certified at {100 * confidence:g}% with these test sizes "
            "(see the certificates)."
        )
    elif _resolved(results):
        level = "little evidence"
        found = [separable] if separable else []
        found += [findings[k] for k, e in results.items() if "chance" in e]
        headline = (
            f"Little evidence of leakage at this sample size: {'; '.join(found)}. "
            "This is not evidence of privacy; see the point estimates and "
            "certificates."
        )
    elif share is not None:
        level = "inconclusive"
        headline = (
            f"Inconclusive at this sample size: {separable}, and too few rows to "
            "rule out a leak; see the point estimates and certificates."
        )
    else:
        level = "inconclusive"
        # Said of the tests and certificates that were asked for, not of the
        # methods a run simply did not select.
        requested = any(
            e.get("kind") in ("hypothesis test", "certificate")
            for e in results.values()
        )
        headline = (
            "No hypothesis test or certificate could run on these data"
            if requested
            else "No hypothesis test or certificate was requested"
        ) + "; the results below are point estimates and diagnostics."
    return {"level": level, "headline": headline, "lines": lines}


def _step(action, text, command=None):
    return {"action": action, "text": text, "command": command}


def next_steps(results, ctx, protocol, suggestion, source=None):
    """Return what to do next: sanitise, the paper protocol, test size, more rows.

    ``suggestion`` is ``skprivacy.sanitize._rank.suggest_isp_rank``'s (or
    None), ``source`` the input file named in the suggested commands.
    """
    file = source or "FILE"
    steps = []
    share, _ = _separability(results)
    if suggestion is not None and suggestion["text"] is not None:
        # Cross-fitted: measured on identities held out of the projector's fit.
        steps.append(_step("sanitize", suggestion["text"], suggestion["command"]))
    limited = any(
        ctx.n_pairs(k) < ctx.n_pairs_total for k in ctx.settings if k.endswith("_pairs")
    )
    if protocol not in ("paper", "exhaustive") and limited:
        steps.append(
            _step(
                "protocol",
                "Run the protocol of the paper these auditors come from (\u201cPicture "
                "the Epsilon\u201d): more pairs and 10,000 permutations (or "
                "--protocol exhaustive for every pair).",
                f"skprivacy audit {file} --protocol paper",
            )
        )
    for e in _by_kind(results, "certificate"):
        lift = e.get("lift") or {}
        if e.get("at_ceiling") and lift.get("test_size"):
            steps.append(
                _step(
                    "test size",
                    f"{e['title']} is at its ceiling ({format_value(e['ceiling'])}): "
                    f"the test size, not the data, limits it; test_size "
                    f"{lift['test_size']:g} lifts the ceiling to "
                    f"{format_value(lift['ceiling'])}.",
                    f"skprivacy audit {file} --test-size {lift['test_size']:g}",
                )
            )
    counts = np.sort(ctx.counts)
    # The skipped results by name only: their reasons are said once, above.
    skipped = [e["title"] for e in results.values() if e["skipped"]]
    if skipped or counts[0] < 10:
        now = (
            f"{counts[0]}"
            if counts[0] == counts[-1]
            else f"{counts[0]} to {counts[-1]}"
        )
        why = (
            f"; skipped here: {', '.join(skipped)} (the reasons are above)"
            if skipped
            else ""
        )
        steps.append(
            _step(
                "more rows",
                f"Collect more images per identity (now {now}): certificates and "
                f"controls need tens of rows per identity{why}.",
            )
        )
    return steps
