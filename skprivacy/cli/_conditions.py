# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy audit A.csv B.csv ... --names a,b,...``: one multi-condition report."""

import argparse
import shlex
import sys
from pathlib import Path

from skprivacy.cli._errors import UserError, audit_data_errors, user_errors

__all__ = ["is_multi_condition", "run_conditions"]

_SUFFIXES = (".gz", ".bz2", ".xz", ".zip", ".csv", ".tsv", ".parquet", ".npz", ".npy")


def is_multi_condition(args):
    """Whether ``skprivacy audit`` was given several files or ``--names``."""
    return len(args.file) > 1 or args.names is not None


def _default_name(path):
    name = Path(path).name
    stripped = True
    while stripped:
        stripped = False
        for suffix in _SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, stripped = name[: -len(suffix)], True
    return name


def condition_names(files, names):
    """Return the condition names (``--names`` or the file names), checked."""
    if names is None:
        out = [_default_name(f) for f in files]
        repeated = sorted({n for n in out if out.count(n) > 1})
        if repeated:
            raise UserError(
                f"two input files give the condition name {repeated[0]!r}; name the "
                "conditions with --names a,b,..."
            )
        return out
    out = [n.strip() for n in names.split(",")]
    if len(out) != len(files):
        raise UserError(
            f"--names gives {len(out)} name(s) for {len(files)} file(s); give one "
            "comma-separated name per FILE, in order"
        )
    if any(not n for n in out):
        raise UserError(f"--names {names!r} has an empty name")
    repeated = sorted({n for n in out if out.count(n) > 1})
    if repeated:
        raise UserError(f"--names repeats the condition name {repeated[0]!r}")
    return out


def run_conditions(args, argv, read, metadata=None):
    """Audit every FILE as one condition and write one report with Table I.

    ``read(args)`` is the single-file reader of ``skprivacy audit`` (same
    column selection, warnings and errors), called once per file; ``metadata``
    (``--meta``) is recorded in every condition's provenance.
    """
    from skprivacy.cli._main import audit_options
    from skprivacy.cli._progress import Progress
    from skprivacy.report import ConditionsReport, audit_conditions

    if not args.file:
        raise UserError("--names needs the input files it names (FILE ...)")
    if args.labels is not None:
        raise UserError(
            "--labels applies to one bare .npy file; with several files give each "
            "its identity column"
        )
    names = condition_names(args.file, args.names)
    with user_errors("preparing output"):
        staged = ConditionsReport.staged(args.out, force=args.force, inputs=args.file)
    with staged:
        data, infos = {}, {}
        for name, path in zip(names, args.file):
            X, ids, info = read(argparse.Namespace(**{**vars(args), "file": path}))
            data[name] = (X, ids.to_numpy())
            infos[name] = info
        with Progress(None, quiet=args.quiet) as progress:
            with audit_data_errors(progress):
                report = audit_conditions(
                    data,
                    table_pairs=args.table_pairs,
                    **audit_options(args),
                    progress=progress,
                    input_info=infos,
                    metadata=metadata,
                )
            progress.start("writing report", 1.0)
            command = shlex.join(["skprivacy", *argv])
            report.provenance["command_line"] = command
            for sub in report.reports.values():
                sub.provenance["command_line"] = command
            with user_errors("writing output"):
                report.write(staged.path)
                staged.commit()
            progress.finish()
    if not args.quiet:
        _print_summary(report, Path(args.out))
    return 0


def _print_summary(report, out):
    lines = [f"{len(report.reports)} conditions audited"]
    lines += [f"  {n}: {r.verdict['headline']}" for n, r in report.reports.items()]
    medians = [c for c in report.table_i.columns if c.endswith(" median")]
    if medians:
        n_pairs = report.provenance["table_pairs"]
        lines.append(f"Table I (medians on the first {n_pairs} pairs):")
        lines += [
            "  " + line.rstrip()
            for line in report.table_i[medians]
            .to_string(float_format="{:.4g}".format)
            .splitlines()
        ]
    lines.append(f"report: {out / 'report.html'}")
    print("\n".join(lines), file=sys.stdout)
