# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy plan``: what an audit of a given size can show, before collecting data.

Only argument parsing and printing live here; the table is
:func:`skprivacy.plan_audit`'s.
"""

import json

from skprivacy.cli._errors import user_errors

__all__ = ["add_plan_parser", "run_plan"]


def add_plan_parser(sub, positive_int, open_unit):
    """Add the ``plan`` subcommand to an argparse subparsers object."""
    plan = sub.add_parser(
        "plan",
        help="what an audit of N identities x R rows can certify or resolve, and "
        "the rows needed for more (no input file)",
        description=(
            "Print, for each audit method, what a study of this size can show: "
            "the ceiling of each certificate (largest epsilon it can certify), "
            "the smallest p-value of the permutation test, the smallest FAR a "
            "TAR can be read at, and the rows per identity needed to certify "
            "--epsilon or resolve --far. No data are read: run it before "
            "collecting images."
        ),
    )
    plan.add_argument(
        "--identities", type=positive_int, required=True, metavar="N", help="identities"
    )
    plan.add_argument(
        "--rows",
        type=positive_int,
        required=True,
        metavar="R",
        help="rows per identity",
    )
    plan.add_argument(
        "--confidence",
        type=open_unit,
        default=0.95,
        metavar="C",
        help="joint confidence of the certificates (default: 0.95)",
    )
    plan.add_argument(
        "--test-size",
        type=open_unit,
        default=0.3,
        metavar="T",
        help="share of rows the ROC-HT certificate reserves (default: 0.3)",
    )
    plan.add_argument(
        "--pairs",
        type=positive_int,
        default=None,
        metavar="K",
        help="identity pairs certified together (default: every pair)",
    )
    plan.add_argument(
        "--epsilon",
        type=float,
        default=1.0,
        metavar="E",
        help="target epsilon of the rows_needed column (default: 1)",
    )
    plan.add_argument(
        "--far",
        type=open_unit,
        default=1e-3,
        metavar="F",
        help="target false-accept rate of the rows_needed column (default: 0.001)",
    )
    plan.add_argument(
        "--json", action="store_true", help="print the plan as JSON (one object)"
    )


def _cell(value, missing):
    """Return a plan cell for JSON (``missing`` for NA) or text (``.4g``)."""
    import pandas as pd  # the scientific stack loads only when the command runs

    if isinstance(value, str):
        return value
    if pd.isna(value):
        return missing
    value = value.item() if hasattr(value, "item") else value
    if missing is None:  # JSON: exact values
        return value
    integral = isinstance(value, float) and value.is_integer() and abs(value) < 1e15
    return str(int(value)) if integral else format(value, ".4g")


def run_plan(args):
    """Run ``skprivacy plan`` from parsed arguments; return the exit status."""
    # The scientific stack loads only when the command runs.
    from skprivacy import plan_audit

    settings = {
        "n_identities": args.identities,
        "rows_per_identity": args.rows,
        "confidence": args.confidence,
        "test_size": args.test_size,
        "n_pairs": args.pairs,
        "epsilon": args.epsilon,
        "far": args.far,
    }
    with user_errors(None):
        plan = plan_audit(
            args.identities, args.rows, **dict(list(settings.items())[2:])
        )
    if args.json:
        records = [
            {k: _cell(v, None) for k, v in row.items()}
            for row in plan.astype(object).to_dict("records")
        ]
        print(json.dumps({**settings, "plan": records}, indent=2, allow_nan=False))
        return 0
    pairs = "every pair" if args.pairs is None else f"{args.pairs} pairs"
    print(
        f"Plan for {args.identities} identities x {args.rows} rows per identity "
        f"(confidence {args.confidence:g}, test size {args.test_size:g}, {pairs} "
        "certified together):"
    )
    table = plan.drop(columns="rows_per_identity").astype(object)
    print(table.map(lambda v: _cell(v, "-")).to_string(index=False))
    return 0
