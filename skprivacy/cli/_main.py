# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The ``skprivacy`` command line (``skprivacy audit``, ``skprivacy sanitize``)."""

import argparse
import shlex
import sys
import warnings
from importlib import resources
from pathlib import Path

__all__ = ["main"]

from skprivacy.cli._errors import (
    EXIT_USAGE,
    UserError,
    audit_data_errors,
    run_command,
    user_errors,
)

_BUNDLED = ("cropped-yale-b", "dlib_resnet128.csv.gz")


class _Parser(argparse.ArgumentParser):
    # argparse prints the full usage block before its message; a one-line error
    # (with a pointer to --help) is easier to read in logs and to test.
    def error(self, message):
        raise UserError(f"{message} (see '{self.prog} --help')")


def _bundled_path():
    return resources.files("skprivacy.datasets").joinpath("data", *_BUNDLED)


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


def _metadata(pairs):
    out = {}
    for key, value in pairs or ():
        if key in out:
            raise UserError(f"--meta {key} is given twice")
        out[key] = value
    return out


def _build_parser():
    from skprivacy import __version__
    from skprivacy.report import METHOD_NAMES, PROTOCOL_HELP, PROTOCOLS

    defaults = PROTOCOLS["quick"]

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
        "--labels", metavar="FILE", help="identity labels for a bare .npy matrix"
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
        choices=sorted(PROTOCOLS),
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
        help="simultaneous confidence of the certificates (default: "
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
        default="skprivacy_report",
        metavar="DIR",
        help="output directory (default: skprivacy_report)",
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

    if _has_isp():
        from skprivacy.cli._sanitize import add_sanitize_parser

        add_sanitize_parser(sub)
    return parser


def _has_isp():
    from importlib.util import find_spec

    return find_spec("skprivacy.sanitize") is not None


def _read(args):
    from skprivacy.datasets import read_embeddings

    if args.file is None:
        with resources.as_file(_bundled_path()) as path:
            X, ids, info = read_embeddings(
                path, id_column="identity", features=r"^e\d+$"
            )
        info["name"] = "bundled Cropped Yale B (dlib ResNet, 128-d)"
        return X, ids, info
    path = Path(args.file)
    if not path.exists():
        raise UserError(f"input file not found: {path}")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with user_errors("reading input"):
            X, ids, info = read_embeddings(
                path,
                id_column=args.id_column,
                features=args.features,
                exclude=getattr(args, "exclude", None),
                labels=args.labels,
            )
    for w in record if not args.quiet else ():
        # Excluded columns, rows without identity: said here and in provenance.
        print(f"skprivacy: warning: {w.message}", file=sys.stderr)
    info["name"] = path.name
    info["reader_warnings"] = [str(w.message) for w in record]
    return X, ids, info


def audit_options(args):
    """Return the audit options every input of one ``skprivacy audit`` run shares."""
    return {
        "protocol": args.protocol,
        "methods": args.methods,
        "confidence": args.confidence,
        "test_size": args.test_size,
        "random_state": args.seed,
        "n_jobs": args.n_jobs,
    }


def _audit(args, argv):
    from skprivacy.cli._conditions import is_multi_condition, run_conditions
    from skprivacy.cli._progress import Progress
    from skprivacy.report import AuditReport, audit

    if is_multi_condition(args):
        return run_conditions(args, argv, _read, _metadata(args.meta))
    args.file = args.file[0] if args.file else None
    inputs = [p for p in (args.file, args.labels) if p is not None]
    # The destination is checked (and its staging directory created) before
    # any computation: an unwritable or refused --out fails at once.
    metadata = _metadata(args.meta)
    with user_errors("preparing output"):
        staged = AuditReport.staged(args.out, force=args.force, inputs=inputs)
    with staged:
        X, ids, info = _read(args)
        with Progress(None, quiet=args.quiet) as progress:
            with audit_data_errors(progress):
                report = audit(
                    X,
                    ids.to_numpy(),
                    **audit_options(args),
                    progress=progress,
                    input_info=info,
                    metadata=metadata,
                )
            progress.start("writing report", 1.0)
            report.provenance["command_line"] = shlex.join(["skprivacy", *argv])
            with user_errors("writing output"):
                report.write(staged.path)
                staged.commit()
            progress.finish()
    if not args.quiet:
        _print_summary(report, Path(args.out))
    return 0


def _print_summary(report, out):
    lines = [report.verdict["headline"]]
    lines += [f"  - {line['text']}" for line in report.verdict["lines"]]
    for step in report.next_steps[:2]:
        if step.get("command"):
            lines.append(f"  next: {step['command']}")
    lines.append(f"report: {out / 'report.html'}")
    print("\n".join(lines))


def main(argv=None):
    """Run the ``skprivacy`` command line and return its exit status.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments without the program name; ``sys.argv[1:]`` if None.

    Returns
    -------
    status : int
        0 on success, 2 on a user error (reported as one line on stderr).

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
        return _audit(args, argv)
    from skprivacy.cli._sanitize import run_sanitize

    return run_sanitize(args, argv)
