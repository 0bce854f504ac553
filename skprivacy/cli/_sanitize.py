# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy sanitize``: the command line of :func:`skprivacy.sanitize.sanitize_file`.

Only argument parsing and error mapping live here; the streaming, fitting,
writing and provenance are the library's.
"""

import shlex
import sys
from pathlib import Path

from skprivacy.cli._errors import UserError, user_errors

__all__ = ["add_sanitize_parser", "run_sanitize"]

#: Output formats (``sanitize_file``'s ``output_format``; a test checks they agree).
FORMATS = ("csv", "csv.gz", "parquet")
#: Name of the column sanitize_file adds (for the help text).
SOURCE_ROW = "source_row"


def add_sanitize_parser(sub):
    """Add the ``sanitize`` subcommand to an argparse subparsers object."""
    san = sub.add_parser(
        "sanitize",
        help="remove identity directions from an embedding file (ISP), streaming",
        description=(
            "Fit an Identity Sanitization Projection (ISP) on FILE and write the "
            "sanitised embeddings, streaming: FILE (CSV, gzip CSV or Parquet) is "
            "read twice in chunks of rows (fit, then transform), so files larger "
            "than memory work. The output keeps every input row in order, every "
            f"non-feature column unchanged, and a '{SOURCE_ROW}' column with the "
            "row's position in FILE; DIR also holds projector.npz and "
            "sanitize.json (rank, projector hash, rows not used by reason, and a "
            "before/after leakage summary). With --projector, a saved projector "
            "is applied instead (one pass, no identity column needed)."
        ),
    )
    san.add_argument(
        "file", metavar="FILE", help="embeddings: .csv, .csv.gz or .parquet"
    )
    san.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output directory (created; written completely or not at all)",
    )
    san.add_argument(
        "--n-components",
        default="auto",
        metavar="R",
        help="identity directions to remove: an int r, a float in (0, 1) (share "
        "of between-identity energy), 'auto' (default: directions with identity "
        "signal beyond chance, keeping at least half the dimensions) or 'full'",
    )
    san.add_argument(
        "--target-tar",
        type=float,
        metavar="T",
        help="choose the rank instead: the smallest whose upper 95%% confidence "
        "bound on the TAR at --far, on identities held out of the projector's fit "
        "(5-fold cross-fitting, corrected over the ranks tried), is at most T; "
        "reads FILE into memory and writes rank_selection.csv",
    )
    san.add_argument(
        "--far",
        type=float,
        default=1e-3,
        metavar="F",
        help="false-accept rate of --target-tar (default: 0.001)",
    )
    san.add_argument(
        "--id-column",
        default="identity",
        metavar="C",
        help="identity column (default: identity); rows without an identity are "
        "sanitised but not used to fit, and counted",
    )
    san.add_argument(
        "--projector",
        metavar="P.npz",
        help="apply this saved projector (from a previous run's projector.npz or "
        "ISP.to_npz) instead of fitting one",
    )
    san.add_argument(
        "--format",
        choices=FORMATS,
        help="output format (default: parquet for Parquet input, else csv.gz)",
    )
    san.add_argument(
        "--features",
        metavar="REGEX",
        help="regular expression selecting the embedding columns (default: every "
        "float column that does not look like metadata)",
    )
    san.add_argument(
        "--exclude",
        metavar="REGEX",
        help="regular expression of columns never used as embedding dimensions",
    )
    san.add_argument(
        "--chunk-rows",
        type=int,
        default=100_000,
        metavar="N",
        help="rows per chunk (default: 100000); memory grows with it",
    )
    san.add_argument(
        "--no-audit",
        action="store_true",
        help="skip the before/after leakage summary",
    )
    san.add_argument(
        "--force",
        action="store_true",
        help="replace an existing DIR written by a previous sanitize run",
    )
    san.add_argument("--quiet", action="store_true", help="no progress output")
    return san


def _parse_rank(text):
    text = text.strip()
    if text in ("auto", "full"):
        return text
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is not None and not 0 < value < 1:
            value = None
    else:
        if value < 0:
            value = None
    if value is None:
        raise UserError(
            "--n-components must be an int >= 0, a float in (0, 1), 'auto' or "
            f"'full'; got {text!r}"
        )
    return value


def run_sanitize(args, argv):
    """Run ``skprivacy sanitize`` from parsed arguments; return the exit status."""
    # The scientific stack loads only when a command runs (--help stays fast).
    from skprivacy.sanitize import sanitize_file
    from skprivacy.utils import Progress

    rank = _parse_rank(args.n_components)
    if args.projector is not None and args.n_components != "auto":
        raise UserError("give either --projector or --n-components, not both")
    if args.target_tar is not None:
        if args.n_components != "auto" or args.projector is not None:
            raise UserError(
                "--target-tar chooses the rank: give it without --n-components "
                "and --projector"
            )
        for name, value in (("--target-tar", args.target_tar), ("--far", args.far)):
            if not 0 < value < 1:
                raise UserError(f"{name} must be strictly between 0 and 1; got {value}")
    if args.chunk_rows < 1:
        raise UserError(f"--chunk-rows must be >= 1; got {args.chunk_rows}")
    progress = Progress("skprivacy", not args.quiet, stream=sys.stderr)
    with user_errors(None):
        record = sanitize_file(
            args.file,
            args.out,
            n_components=rank,
            target_tar=args.target_tar,
            far=args.far,
            id_column=args.id_column,
            projector=args.projector,
            output_format=args.format,
            features=args.features,
            exclude=args.exclude,
            chunk_rows=args.chunk_rows,
            leakage_summary=not args.no_audit,
            force=args.force,
            progress=progress,
            command_line=shlex.join(["skprivacy", *argv]),
        )
    leakage, out = record["leakage"] or {}, Path(args.out)
    chosen = record["rank_selection"]
    if chosen is not None:
        progress.message(
            f"chose rank {chosen['rank']}: cross-fitted TAR@FAR={chosen['far']:g} on "
            f"identities held out of the projector's fit {chosen['tar']:.3f} (point "
            f"estimate), upper {chosen['confidence']:.0%} bound {chosen['tar_upper']:.3f}"
            f" <= target {chosen['target_tar']:g} (one-sided, corrected over "
            f"{chosen['n_ranks_tried']} ranks; table in {out / 'rank_selection.csv'})"
        )
    summary = ""
    if "tar_before" in leakage:
        summary = (
            f"; held-out TAR@FAR={leakage['far']:g} (identities the projector did "
            f"not see): {leakage['tar_before']:.3f} -> {leakage['tar_after']:.3f}, "
            "i.e. the share of a new person's image pairs still matched at that "
            "false-accept rate"
        )
    written = ", ".join(str(out / name) for name in record["outputs"][:2])
    progress.message(
        f"removed {record['rank']} identity direction(s) from "
        f"{record['rows']['n_input']} row(s){summary}; wrote {written} and "
        f"{out / 'sanitize.json'}"
    )
    return 0
