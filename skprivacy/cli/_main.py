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

from skprivacy.cli._errors import EXIT_USAGE, UserError, run_command

_BUNDLED = ("cropped-yale-b", "dlib_resnet128.csv.gz")


class _Parser(argparse.ArgumentParser):
    # argparse prints the full usage block before its message; a one-line error
    # (with a pointer to --help) is easier to read in logs and to test.
    def error(self, message):
        raise UserError(f"{message} (see '{self.prog} --help')")


def _bundled_path():
    return resources.files("skprivacy.datasets").joinpath("data", *_BUNDLED)


def _build_parser():
    # Import-light: user errors (missing file, existing output) are reported
    # before scikit-learn and pandas are imported.
    from skprivacy import __version__
    from skprivacy.report._protocols import METHOD_NAMES, PROTOCOLS

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
    audit.add_argument("file", nargs="?", metavar="FILE", help="embeddings file")
    audit.add_argument(
        "--id-column", default="identity", help="identity column (default: identity)"
    )
    audit.add_argument(
        "--labels", metavar="FILE", help="identity labels for a bare .npy matrix"
    )
    audit.add_argument(
        "--features",
        metavar="REGEX",
        help="regular expression selecting the embedding columns (default: every "
        "numeric column except the identity column)",
    )
    audit.add_argument(
        "--protocol",
        choices=sorted(PROTOCOLS),
        default="quick",
        help="quick (first look, < 30 s on the bundled data), paper (paper 000's "
        "pair counts), exhaustive (every pair where supported). Default: quick",
    )
    audit.add_argument(
        "--methods",
        nargs="+",
        metavar="METHOD",
        choices=METHOD_NAMES,
        help=f"subset of methods to run: {', '.join(METHOD_NAMES)} (default: all "
        "available)",
    )
    audit.add_argument("--n-jobs", type=int, default=None, help="parallel jobs")
    audit.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    audit.add_argument(
        "--out",
        default="skprivacy_report",
        metavar="DIR",
        help="output directory (default: skprivacy_report)",
    )
    audit.add_argument(
        "--force", action="store_true", help="overwrite an existing output directory"
    )
    audit.add_argument("--quiet", action="store_true", help="no progress output")

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
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            X, ids, info = read_embeddings(
                path,
                id_column=args.id_column,
                features=args.features,
                labels=args.labels,
            )
    except FileNotFoundError as exc:
        raise UserError(str(exc)) from exc
    except (ValueError, OSError, UnicodeDecodeError, ImportError) as exc:
        msg = " ".join(str(exc).split())
        if "not found" in msg and args.id_column in msg:
            raise UserError(f"missing identity column: {msg}") from exc
        raise UserError(f"unreadable data: {msg}") from exc
    info["name"] = path.name
    info["reader_warnings"] = [str(w.message) for w in record]
    return X, ids, info


def _audit(args, argv):
    import numpy as np

    from skprivacy.cli._progress import Progress
    from skprivacy.report import NoAuditablePairsError, run_audit
    from skprivacy.report._audit import _Context
    from skprivacy.report._methods import METHODS, available_methods
    from skprivacy.report._protocols import PROTOCOLS

    out = Path(args.out)
    if out.exists() and not args.force:
        raise UserError(
            f"output directory {out} already exists; use --force to overwrite it"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"output path {out} exists and is not a directory")
    methods = args.methods
    if methods:
        missing = [m for m in methods if METHODS[m].missing()]
        if missing:
            raise UserError(
                f"method(s) not available in this installation: {', '.join(missing)}"
            )
    X, ids, info = _read(args)
    selected = methods or available_methods()

    # Weights for the progress bar's ETA come from a cheap look at the data
    # (identity counts) before the methods run.
    n_ids = int(ids.nunique())
    probe = _Context(
        X=None,
        y=None,
        codes=None,
        identities=np.arange(n_ids),
        counts=None,
        protocol=PROTOCOLS[args.protocol],
        random_state=args.seed,
        n_jobs=args.n_jobs,
    )
    total = sum(METHODS[m].weight(probe) for m in selected) + 1.0
    with Progress(total, quiet=args.quiet) as progress:
        try:
            report = run_audit(
                X,
                ids.to_numpy(),
                protocol=args.protocol,
                methods=selected,
                random_state=args.seed,
                n_jobs=args.n_jobs,
                progress=progress,
            )
        except NoAuditablePairsError as exc:
            raise UserError(" ".join(str(exc).split())) from exc
        except ValueError as exc:
            if progress.stage:  # a method failed: a bug, not the user's input
                raise
            raise UserError(f"unreadable data: {' '.join(str(exc).split())}") from exc
        progress.start("writing report", 1.0)
        info["n_feature_columns"] = len(info.get("feature_columns", []))
        report.provenance = {
            "input": info,
            **report.provenance,
            "command_line": shlex.join(["skprivacy", *argv]),
        }
        report.provenance["input"]["n_rows_missing_id"] = info.get(
            "n_rows_missing_id", 0
        )
        paths = report.save(out, force=args.force)
        progress.finish()
        progress.message(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


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
