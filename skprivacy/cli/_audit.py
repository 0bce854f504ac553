# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""``skprivacy audit FILE ...``: one report, or one multi-condition report with Table I.

Imported when the command runs: it loads the scientific stack.
"""

import shlex
import sys
import warnings
from importlib import resources
from pathlib import Path

from skprivacy.cli._errors import UserError, audit_data_errors, user_errors
from skprivacy.cli._gates import EXIT_GATE, gate_failure
from skprivacy.datasets import read_embeddings
from skprivacy.report import AuditReport, ConditionsReport, audit, audit_conditions
from skprivacy.sanitize import ISP, sanitize_provenance
from skprivacy.utils import Progress

__all__ = ["run_audit"]

_BUNDLED = ("cropped-yale-b", "dlib_resnet128.csv.gz")
_SUFFIXES = (".gz", ".bz2", ".xz", ".zip", ".csv", ".tsv", ".parquet", ".npz", ".npy")
#: The default output directory: ``<stem>_skprivacy_report`` beside the working
#: directory (``skprivacy_report`` for the bundled data, audited without FILE).
DEFAULT_OUT = "skprivacy_report"


def _read(args, path):
    """Read one input file (the bundled data when ``path`` is None)."""
    if path is None:
        bundled = resources.files("skprivacy.datasets").joinpath("data", *_BUNDLED)
        with resources.as_file(bundled) as file:
            X, ids, info = read_embeddings(
                file, id_column="identity", features=r"^e\d+$"
            )
        info["name"] = "bundled Cropped Yale B (dlib ResNet, 128-d)"
        return X, ids, info
    path = Path(path)
    if not path.exists():
        raise UserError(f"input file not found: {path}")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with user_errors("reading input"):
            X, ids, info = read_embeddings(
                path,
                id_column=args.id_column,
                features=args.features,
                exclude=args.exclude,
                labels=args.labels,
            )
    for w in record if not args.quiet else ():
        # Excluded columns, rows without identity: said here and in provenance.
        print(f"skprivacy: warning: {w.message}", file=sys.stderr)
    info["name"] = path.name
    info["reader_warnings"] = [str(w.message) for w in record]
    given = getattr(args, "sanitize_provenance", None)
    with user_errors("reading the sanitize provenance"):
        info["sanitize_provenance"] = sanitize_provenance(given or path)
    if given and info["sanitize_provenance"] is None:
        raise UserError(f"sanitize provenance file not found: {given}")
    return X, ids, info


def _eraser(spec):
    """``--erase isp:RANK`` as an unfitted ISP (None without the option)."""
    if spec is None:
        return None
    kind, sep, rank = (part.strip() for part in spec.partition(":"))
    ok = kind.lower() == "isp" and sep and (rank == "full" or rank.isdigit())
    if not ok:
        raise UserError(
            f"--erase must be isp:RANK with RANK an int >= 0 or 'full' (e.g. "
            f"--erase isp:8); got {spec!r}"
        )
    return ISP(n_components=rank if rank == "full" else int(rank))


def _metadata(pairs):
    out = {}
    for key, value in pairs or ():
        if key in out:
            raise UserError(f"--meta {key} is given twice")
        out[key] = value
    return out


def _options(args, argv):
    """Return the audit options every input of one ``skprivacy audit`` run shares."""
    return {
        "protocol": args.protocol,
        "methods": args.methods,
        "confidence": args.confidence,
        "test_size": args.test_size,
        "random_state": args.seed,
        "n_jobs": args.n_jobs,
        "metadata": _metadata(args.meta),
        "eraser": _eraser(args.erase),
        "command_line": shlex.join(["skprivacy", *argv]),
    }


def _default_name(path):
    name = Path(path).name
    stripped = True
    while stripped:
        stripped = False
        for suffix in _SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, stripped = name[: -len(suffix)], True
    return name


def default_out(files, names=None):
    """Return the default output directory of ``skprivacy audit FILE ...``.

    ``<stem>_skprivacy_report`` after the input (its name without the format
    suffixes), so audits of different files do not meet in one directory;
    for several files the condition names joined by ``_``; for the bundled
    data (no FILE) ``skprivacy_report``.

    Examples
    --------
    >>> from skprivacy.cli._audit import default_out
    >>> default_out(["data/faces.csv.gz"]), default_out([])
    ('faces_skprivacy_report', 'skprivacy_report')
    >>> default_out(["a.csv", "b.csv"], ["before", "after"])
    'before_after_skprivacy_report'
    """
    if not files:
        return DEFAULT_OUT
    stems = list(names) if names else [_default_name(f) for f in files]
    if len(stems) > 1 and len("_".join(stems)) > 60:
        stems = [stems[0], f"and_{len(stems) - 1}_more"]
    return "_".join([*stems, DEFAULT_OUT])


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


def _write(args, staged, compute):
    """Compute the report with progress on stderr, then write it into ``staged``."""
    with staged, warnings.catch_warnings():
        if args.quiet:
            # Quiet means quiet: what the methods warn is recorded in the
            # provenance (the audit catches it), not printed.
            warnings.simplefilter("ignore")
        with Progress("skprivacy", not args.quiet, stream=sys.stderr) as progress:
            with audit_data_errors(progress):
                report = compute(progress)
            progress.start("writing report")
            with user_errors("writing output"):
                report.write(staged.path)
                staged.commit()
            progress.finish()
    return report


def run_audit(args, argv):
    """Run ``skprivacy audit`` from parsed arguments; return the exit status."""
    options = _options(args, argv)
    if len(args.file) > 1 or args.names is not None:
        return _run_conditions(args, options)
    path = args.file[0] if args.file else None
    if args.labels is not None and path is None:
        raise UserError("--labels needs the bare .npy FILE whose rows it labels")
    if args.labels is not None and not path.lower().endswith(".npy"):
        raise UserError(
            f"--labels gives the identities of a bare .npy matrix; {Path(path).name} "
            f"carries its own (column {args.id_column!r}, see --id-column): drop "
            "--labels"
        )
    inputs = [p for p in (path, args.labels) if p is not None]
    out = Path(args.out or default_out(args.file))
    # The destination is checked (and its staging directory created) before
    # any computation: an unwritable or refused --out fails at once.
    with user_errors("preparing output"):
        staged = AuditReport.staged(out, force=args.force, inputs=inputs)

    def compute(progress):
        X, ids, info = _read(args, path)
        return audit(X, ids.to_numpy(), **options, progress=progress, input_info=info)

    report = _write(args, staged, compute)
    if not args.quiet:
        lines = [report.verdict["headline"]]
        lines += [f"  - {line['text']}" for line in report.verdict["lines"]]
        for step in report.next_steps[:2]:
            # What erasure would (not) achieve is said, not only the command.
            if step["action"] in ("sanitize", "audit"):
                lines.append(f"  note: {step['text']}")
            if step.get("command"):
                lines.append(f"  next: {step['command']}")
        print("\n".join([*lines, f"report: {out / 'report.html'}"]))
    return _gate({None: _summary(report)}, args)


def _summary(report):
    return {"results": report.results, "verdict": report.verdict}


def _gate(summaries, args):
    """Return the exit status of the written report(s): 1 when a gate fails."""
    failure = gate_failure(summaries, args)
    if failure is None:
        return 0
    print(failure, file=sys.stderr)
    return EXIT_GATE


def _run_conditions(args, options):
    """Audit every FILE as one condition and write one report with Table I."""
    if not args.file:
        raise UserError("--names needs the input files it names (FILE ...)")
    if args.labels is not None:
        raise UserError(
            "--labels applies to one bare .npy file; with several files give each "
            "its identity column"
        )
    names = condition_names(args.file, args.names)
    out = Path(args.out or default_out(args.file, names))
    with user_errors("preparing output"):
        staged = ConditionsReport.staged(out, force=args.force, inputs=args.file)

    def compute(progress):
        data, infos = {}, {}
        for name, path in zip(names, args.file):
            X, ids, infos[name] = _read(args, path)
            data[name] = (X, ids.to_numpy())
        return audit_conditions(
            data,
            table_pairs=args.table_pairs,
            **options,
            progress=progress,
            input_info=infos,
        )

    report = _write(args, staged, compute)
    if not args.quiet:
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
        if len(report.comparison):
            lines.append(f"Comparison: {report.comparison_sentence}")
        print("\n".join([*lines, f"report: {out / 'report.html'}"]))
    return _gate({n: _summary(r) for n, r in report.reports.items()}, args)
