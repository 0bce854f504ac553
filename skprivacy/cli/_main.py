# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The ``skprivacy`` command line (``skprivacy audit``, ``sanitize``, ``plan``).

The parser is built from plain data (the method and protocol names), so
``skprivacy --help`` loads nothing heavy; a command imports what it runs.
"""

import argparse
import sys

from skprivacy import __version__
from skprivacy.cli._errors import EXIT_USAGE, UserError, run_command
from skprivacy.cli._gates import add_gate_options
from skprivacy.cli._plan import add_plan_parser
from skprivacy.cli._sanitize import add_sanitize_parser, run_sanitize
from skprivacy.report import METHOD_NAMES, PROTOCOL_HELP
from skprivacy.report._names import SHARED_SETTINGS

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    # argparse prints the full usage block before its message; a one-line error
    # (with a pointer to --help) is easier to read in logs and to test.
    def error(self, message):
        raise UserError(f"{message} (see '{self.prog} --help')")


def _positive_jobs(text):
    value = int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 is not a number of jobs; use a positive count, or -1 for all cores"
        )
    return value


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _seed(text):
    value = int(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{value} is outside 0 .. 2**32 - 1")
    return value


def _open_unit(text):
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def _meta(text):
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not KEY=VALUE (e.g. --meta generator_revision=abc123)"
        )
    return key.strip(), value


def _build_parser():
    defaults = SHARED_SETTINGS
    parser = _Parser(
        prog="skprivacy",
        description="Audit identity leakage in face/image embeddings.",
    )

    parser.add_argument(
        "--version", action="version", version=f"skprivacy {__version__}"
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    audit = sub.add_parser(
        "audit",
        help="run every audit method and write report.html, summary.json, "
        "pairs.csv and provenance.json",
        description=(
            "Audit identity leakage in a file of precomputed embeddings (CSV, gzip "
            "CSV, Parquet, .npz, or .npy with --labels). Without FILE, audits the "
            "bundled Cropped Yale B face-recognition embeddings (38 identities)."
        ),
    )
    audit.add_argument(
        "file",
        nargs="*",
        metavar="FILE",
        help="embeddings file; several files are audited as conditions of one report "
        "with Table I (see --names)",
    )
    audit.add_argument(
        "--names",
        metavar="A,B,...",
        help="comma-separated condition names, one per FILE (default: the file "
        "names); the report compares the conditions in Table I",
    )
    audit.add_argument(
        "--table-pairs",
        type=_positive_int,
        default=100,
        metavar="N",
        help="with several files: Table I's medians and maxima are over the first N "
        "pairs of each condition's ordering (default: 100)",
    )
    audit.add_argument(
        "--id-column", default="identity", help="identity column (default: identity)"
    )
    audit.add_argument(
        "--labels",
        metavar="FILE",
        help="identity labels of a bare .npy matrix (.npy array or one label per "
        "line); only with a .npy FILE, whose rows they label",
    )
    audit.add_argument(
        "--features",
        metavar="REGEX",
        help="regular expression selecting the embedding columns (default: the "
        "float columns; integer, boolean, index-like, low-cardinality and text "
        "columns are left out and named)",
    )
    audit.add_argument(
        "--exclude",
        metavar="REGEX",
        help="regular expression of columns never audited (e.g. '^(shot|pose)$')",
    )
    audit.add_argument(
        "--protocol",
        choices=sorted(PROTOCOL_HELP),
        default="quick",
        help="; ".join(f"{k}: {v}" for k, v in PROTOCOL_HELP.items())
        + ". Default: quick",
    )
    audit.add_argument(
        "--methods",
        nargs="+",
        metavar="METHOD",
        choices=METHOD_NAMES,
        help=f"subset of methods to run: {', '.join(METHOD_NAMES)} (default: all "
        "available)",
    )
    audit.add_argument(
        "--confidence",
        type=_open_unit,
        metavar="FLOAT",
        default=None,
        help="joint confidence of the certificates: each is issued at the "
        "level that keeps their largest at it (default: "
        f"{defaults['confidence']:g})",
    )
    audit.add_argument(
        "--test-size",
        type=_open_unit,
        metavar="FLOAT",
        default=None,
        help="share of each identity's rows reserved to certify ROC-HT (default: "
        f"{defaults['test_size']:g}); larger lifts the certificate's ceiling",
    )
    audit.add_argument(
        "--erase",
        metavar="isp:RANK",
        help="audit the cross-fitted output of ISP at RANK (an int or 'full'): "
        "every row erased by a projector fitted on the other identity folds only, "
        "which is what erasure does to people it never saw",
    )
    audit.add_argument(
        "--sanitize-provenance",
        metavar="FILE",
        help="the .provenance.json of a file written by 'skprivacy sanitize' "
        "(found next to FILE by default); the report says when its projector saw "
        "the audited identities",
    )
    audit.add_argument(
        "--meta",
        type=_meta,
        action="append",
        metavar="KEY=VALUE",
        help="provenance the file cannot carry (repeatable), e.g. --meta "
        "generator_revision=abc123 --meta seeds=0-99; the expected generation "
        "fields not given are listed as missing in provenance.json and the report",
    )
    audit.add_argument(
        "--n-jobs", type=_positive_jobs, default=None, help="parallel jobs"
    )
    audit.add_argument("--seed", type=_seed, default=0, help="seed (default: 0)")
    audit.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default: <stem>_skprivacy_report, after FILE's "
        "name without its suffixes, e.g. faces_skprivacy_report for "
        "faces.csv.gz; with several files the condition names joined by '_'; "
        "skprivacy_report for the bundled data)",
    )
    audit.add_argument(
        "--force",
        action="store_true",
        help="replace an existing report directory (only one holding a previous "
        "report's files)",
    )
    audit.add_argument(
        "--quiet", action="store_true", help="no progress output and no summary"
    )
    add_gate_options(audit)

    add_sanitize_parser(sub)
    add_plan_parser(sub, _positive_int, _open_unit)
    return parser


def main(argv=None):
    """Run the ``skprivacy`` command line and return its exit status.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments without the program name; ``sys.argv[1:]`` if None.

    Returns
    -------
    status : int
        0 on success, 1 when the report was written but a release gate of
        ``skprivacy audit`` failed (``--fail-on``, ``--max-certified-epsilon``),
        2 on a user error (each reported as one line on stderr).

    Examples
    --------
    >>> from skprivacy.cli import main
    >>> main(["audit", "no_such_file.csv"])
    2
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    return run_command(_dispatch, argv)


def _dispatch(argv):
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "audit":
        # The scientific stack loads only when a command runs (--help stays fast).
        from skprivacy.cli._audit import run_audit

        return run_audit(args, argv)
    if args.command == "plan":
        from skprivacy.cli._plan import run_plan  # loads plan_audit when run

        return run_plan(args)
    return run_sanitize(args, argv)
