# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Release gates of ``skprivacy audit``: exit status 1 when the audit finds too much.

A gate reads what the written report says (each summary's ``verdict.level`` and
its certificates' lower bounds), so a pipeline's decision can be traced to the
report it kept.
"""

import argparse

from skprivacy.cli._errors import UserError

__all__ = ["EXIT_GATE", "LEVELS", "add_gate_options", "gate_failure"]

#: Exit status of a run whose report was written but failed a gate.
EXIT_GATE = 1
#: ``verdict.level`` of summary.json, from the weakest finding to the strongest.
LEVELS = ("little evidence", "inconclusive", "separable", "leak")


def _epsilon(text):
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text} is not an epsilon >= 0")
    return value


def add_gate_options(parser):
    """Add ``--fail-on`` and ``--max-certified-epsilon`` to ``skprivacy audit``."""
    parser.add_argument(
        "--fail-on",
        choices=LEVELS[2:],
        metavar="{separable,leak}",
        help="exit with status 1 (after writing the report) when the verdict "
        "level of summary.json is at or above this one (little evidence < "
        "inconclusive < separable < leak); with several files, of any condition",
    )
    parser.add_argument(
        "--max-certified-epsilon",
        type=_epsilon,
        metavar="E",
        help="exit with status 1 (after writing the report) when a certificate "
        "proves epsilon above E (a certified lower bound exceeds E)",
    )


def _reasons(summary, args):
    """Return why one report's summary fails the gates of ``args`` (may be empty)."""
    reasons = []
    if args.fail_on is not None:
        level = summary["verdict"].get("level")
        if level not in LEVELS:
            raise UserError(
                f"--fail-on: the report's verdict has no level ({level!r}); "
                f"expected one of {', '.join(LEVELS)}"
            )
        if LEVELS.index(level) >= LEVELS.index(args.fail_on):
            reasons.append(f"--fail-on {args.fail_on}: the verdict level is '{level}'")
    if args.max_certified_epsilon is not None:
        certified = [
            (e["value"], e.get("title", key))
            for key, e in summary["results"].items()
            if e.get("kind") == "certificate"
            and not e["skipped"]
            and e["value"] > args.max_certified_epsilon
        ]
        if certified:
            value, title = max(certified)
            reasons.append(
                f"--max-certified-epsilon {args.max_certified_epsilon:g}: {title} "
                f"certifies epsilon >= {value:.4g}"
            )
    return reasons


def gate_failure(summaries, args):
    """Return the one line that says which gate failed and why, or None.

    Parameters
    ----------
    summaries : dict of str or None to dict
        Each report's ``results`` and ``verdict`` (summary.json), by condition
        name (None for a single-file audit).
    args : argparse.Namespace
        With ``fail_on`` and ``max_certified_epsilon`` (None: no gate).
    """
    reasons = [
        (f"condition {name!r}: " if name is not None else "") + reason
        for name, summary in summaries.items()
        for reason in _reasons(summary, args)
    ]
    if not reasons:
        return None
    return "skprivacy: release gate failed: " + "; ".join(reasons)
