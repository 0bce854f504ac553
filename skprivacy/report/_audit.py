# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit: every registered method on one cleaned dataset and pair list."""

import sys
import uuid
import warnings
from datetime import datetime, timezone

import pandas as pd

from skprivacy.auditors._description import skipped_summary
from skprivacy.datasets import select_features
from skprivacy.exceptions import NoAuditablePairsError
from skprivacy.report._html import render_html
from skprivacy.report._persist import SavedReport, read_audit_files
from skprivacy.report._plots import figures
from skprivacy.report._registry import (
    METHODS,
    PROTOCOLS,
    AuditContext,
    available_methods,
)
from skprivacy.report._verdict import next_steps, verdict
from skprivacy.sanitize._rank import (
    erased_audit_data,
    erasure_notes,
    in_sample_note,
    kept_rows,
    suggest_isp_rank,
)
from skprivacy.utils import (
    Progress,
    RunProvenance,
    array_fingerprint,
    identity_pair_table,
    seed_from,
)
from skprivacy.utils._duplicates import describe_duplicates
from skprivacy.utils._json import dumps, strict, strict_record
from skprivacy.utils._validation import validate_audit_data, warning_texts

__all__ = ["AuditReport", "NoAuditablePairsError", "audit", "run_audit"]

#: Version of the ``summary.json`` layout (see :func:`summary_schema`).
SCHEMA_VERSION = "2"
#: The files :meth:`AuditReport.save` writes.
OUTPUT_FILES = ("summary.json", "pairs.csv", "provenance.json", "report.html")
#: Scalar fields of a result entry shown as columns of ``AuditReport.summary``.
_SUMMARY_COLUMNS = tuple(
    "method title kind value statistic n_pairs ceiling at_ceiling skipped reason "
    "says does_not_say".split()
)


class AuditReport(SavedReport):
    """Result of :func:`audit`: verdict, per-result summary, per-pair table, provenance.

    Parameters
    ----------
    results : dict
        One entry per result (key = result name): ``value``, ``kind``
        (``"point estimate"``, ``"certificate"``, ``"hypothesis test"``,
        ``"control"`` or ``"diagnostic"``), ``statistic`` (what the value is,
        in words), ``method``, ``skipped`` (with a ``reason`` when true),
        ``says`` / ``does_not_say``, certificates' ``ceiling`` and
        ``at_ceiling``, per-pair ε's ``epsilon_column`` (in ``pairs``) and
        ``epsilon_label``, ``parameters`` and method-specific extras.
    pairs : DataFrame
        One row per audited identity pair (``id_a``, ``id_b``, ``pair_rank``
        = position in the shared seeded ordering), one column per method output.
    provenance : dict
        Input (feature columns, excluded columns, hash), cleaning counts and
        drop reasons, seed, pair list, software versions, start and end time,
        command line.
    run_id : str
        Identifier shared by the three output files of one run.
    verdict : dict
        ``headline`` and ``lines`` (``family``, ``text``): what was found.
    next_steps : list of dict
        ``action``, ``text`` and, when there is one, ``command``.
    figures : dict, default=None
        ``{name: (caption, base64 PNG)}`` drawn from the fitted estimators.
    fitted : dict, default=None
        The fitted estimators by method name (not saved).
    duplicates : dict, default=None
        Exact and near-duplicate rows of the audited data: ``n_rows``,
        ``n_groups``, ``n_cross_identity_groups`` (groups spanning several
        identities), ``tolerance`` and ``groups`` (the first 100, each with
        its ``rows``, positions in the audited arrays, and ``identities``)
        and ``text``, a sentence naming them.

    Attributes
    ----------
    summary : DataFrame
        One row per result, indexed by result name: ``method``, ``title``,
        ``kind``, ``value``, ``statistic``, ``n_pairs``, ``ceiling``,
        ``at_ceiling``, ``skipped``, ``reason``, ``says``, ``does_not_say``.

    Examples
    --------
    >>> import tempfile
    >>> from skprivacy import audit, AuditReport
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(5, 8, 8, random_state=0)
    >>> report = audit(X, ids, methods=["gaussianity"])
    >>> out = tempfile.mkdtemp() + "/out"
    >>> sorted(report.save(out))
    ['pairs', 'provenance', 'report', 'summary']
    >>> AuditReport.load(out).run_id == report.run_id
    True
    >>> report.to_html().startswith("<!DOCTYPE html>")
    True
    """

    FILES = OUTPUT_FILES

    def __init__(
        self,
        *,
        results,
        pairs,
        provenance,
        run_id,
        verdict,
        next_steps,
        figures=None,
        fitted=None,
        duplicates=None,
    ):
        self.results = results
        self.pairs = pairs
        self.provenance = provenance
        self.run_id = run_id
        self.verdict = verdict
        self.next_steps = next_steps
        self.figures = {} if figures is None else figures
        self.fitted = {} if fitted is None else fitted
        self.duplicates = duplicates
        self._html = None

    def __repr__(self):
        return (
            f"AuditReport(run_id={self.run_id!r}, {len(self.results)} results, "
            f"{len(self.pairs)} pairs)\n" + self.verdict["headline"]
        )

    @property
    def summary(self):
        """One row per result (see the class docstring)."""
        rows = {
            key: {c: entry.get(c) for c in _SUMMARY_COLUMNS}
            for key, entry in self.results.items()
        }
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=_SUMMARY_COLUMNS)
        frame.index.name = "result"
        return frame

    def to_dict(self):
        """Return the content of ``summary.json`` (strict JSON; see ``summary_schema()``)."""
        settings = self.provenance.get("protocol_settings", {})
        head = {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "protocol": self.provenance.get("protocol"),
            "confidence": settings.get("confidence"),
            "certificate_confidence": self.provenance.get("certificate_confidence"),
        }
        body = {
            "results": self.results,
            "duplicates": self.duplicates,
            "verdict": self.verdict,
            "next_steps": self.next_steps,
            "erasure": self.provenance.get("erasure"),
        }
        return strict_record(head, body)

    def _renderer(self):
        return render_html(self)

    def files(self):
        """Return the text of ``summary.json``, ``pairs.csv``, ``provenance.json``, ``report.html``."""
        provenance = {"run_id": self.run_id, **self.provenance}
        return {
            "summary.json": dumps(self.to_dict()),
            "pairs.csv": self.pairs.to_csv(index=False),
            "provenance.json": dumps(strict(provenance, [])),
            "report.html": self.to_html(),
        }

    @classmethod
    def _read(cls, path):
        summary, pairs, provenance, html = read_audit_files(path, SCHEMA_VERSION)
        return cls._from_saved(summary, pairs, provenance), html

    @classmethod
    def _from_saved(cls, summary, pairs, provenance, *, figures=None):
        provenance = dict(provenance)
        return cls(
            results=summary["results"],
            pairs=pairs,
            provenance=provenance,
            run_id=provenance.pop("run_id", summary["run_id"]),
            verdict=summary["verdict"],
            next_steps=summary["next_steps"],
            figures=figures,
            duplicates=summary.get("duplicates"),
        )


# -- the audit's inputs ------------------------------------------------------------------
def _settings(protocol, confidence, test_size):
    if isinstance(protocol, str):
        if protocol not in PROTOCOLS:
            raise ValueError(
                f"Unknown protocol {protocol!r}; choose from {sorted(PROTOCOLS)}."
            )
        name, settings = protocol, dict(PROTOCOLS[protocol])
    else:
        unknown = sorted(set(protocol) - set(PROTOCOLS["quick"]))
        if unknown:
            raise ValueError(
                f"Unknown protocol setting(s) {unknown}; known: "
                f"{sorted(PROTOCOLS['quick'])}."
            )
        name, settings = "custom", {**PROTOCOLS["quick"], **dict(protocol)}
    for key, value in (("confidence", confidence), ("test_size", test_size)):
        if value is not None:
            if not 0 < value < 1:
                raise ValueError(f"{key} must be in (0, 1); got {value!r}.")
            settings[key] = float(value)
    return name, settings


def _select(methods, protocol=None):
    if methods is None:
        return available_methods(protocol)
    methods = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(
            f"Unknown method(s) {unknown}; registered methods: {list(METHODS)}."
        )
    # Run order is the registry's (a derived method runs after its inputs).
    return [m for m in METHODS if m in methods]


# -- running the methods -------------------------------------------------------------------
def _run(ctx, selected, weights, sink, caught):
    """Fit every selected method; return results, findings, per-pair frames, timings."""
    results, findings, frames, timings = {}, {}, [], {}
    seen = set(caught)
    for name in selected:
        method = METHODS[name]
        reason = method.reason_to_skip(ctx, selected)
        if reason is not None:
            entry = {"method": name, "title": method.title}
            results[name] = {**entry, **skipped_summary(method.kind, reason)}
            continue
        sink.start(method.title, weights.get(name, 0.0))
        t0 = datetime.now(timezone.utc)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            parts = method.fit(ctx)
        timings[name] = (datetime.now(timezone.utc) - t0).total_seconds()
        for text in warning_texts(record):
            if text not in seen:
                seen.add(text)
                caught.append(f"{name}: {text}")
        ctx.fitted[name] = {key: fitted for key, (fitted, _, _) in parts.items()}
        for key, (_, described, prefix) in parts.items():
            entry = {"method": name, "title": method.title, "skipped": False}
            results[key] = {**entry, **described.summary(prefix)}
            findings[key] = described.finding
            if described.pairs is not None:
                frames.append(described.named_pairs(prefix))
        sink.finish()
    return results, findings, frames, timings


def _pairs(frames, rank):
    """One row per audited pair: the methods' columns joined on the shared ordering."""
    if not frames:
        return rank.iloc[:0]
    pairs = frames[0]
    for frame in frames[1:]:
        pairs = pairs.merge(frame, on=["id_a", "id_b"], how="outer")
    pairs = rank.merge(pairs, on=["id_a", "id_b"], how="right")
    return pairs.sort_values("pair_rank", kind="stable").reset_index(drop=True)


def audit(
    X,
    ids,
    *,
    protocol="quick",
    methods=None,
    confidence=None,
    test_size=None,
    features=None,
    exclude=None,
    random_state=0,
    n_jobs=None,
    eraser=None,
    suggest_rank=True,
    verbose=False,
    progress=None,
    input_info=None,
    metadata=None,
    command_line=None,
):
    """Audit identity leakage with every registered method; return a report.

    The data go through the shared input layer once (non-finite and
    near-zero rows dropped, rows L2-normalised, identities with fewer than two
    rows excluded; every drop counted), and the same cleaned rows go to every
    method's public skprivacy estimator with the same ``random_state``, so all
    methods audit prefixes of the same seeded pair ordering. A method that
    cannot run on these data (e.g. split-half controls without an identity of
    4 rows, a certificate whose ceiling is 0) is skipped with a stated reason.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Embeddings. For a DataFrame, the feature columns follow the rule of
        :func:`~skprivacy.datasets.select_feature_columns` (float columns;
        integer, boolean, index-like, low-cardinality and text columns are
        left out and named in a warning and in the provenance).
    ids : array-like of shape (n_samples,)
        Identity label of each row.
    protocol : {"quick", "paper", "exhaustive"} or dict, default="quick"
        Pair counts and permutation counts per method (see the user guide);
        a dict overrides entries of ``"quick"``.
    methods : list of str or None, default=None
        Registered method names (``skprivacy.report.METHOD_NAMES``); None runs
        every method the protocol runs by default.
    confidence : float in (0, 1) or None, default=None
        Joint confidence of the certificates (None: the protocol's, 0.95):
        each of the ``k`` certificate methods selected is issued at
        :func:`~skprivacy.auditors.family_confidence` ``(confidence, k)``, so
        the largest, which the headline quotes, holds at ``confidence``.
    test_size : float in (0, 1) or None, default=None
        Share of each identity's rows reserved to certify ROC-HT (None: 0.3).
    features, exclude : str or None, default=None
        Regular expressions choosing / excluding DataFrame columns by name.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering and of every estimator (a RandomState, a
        Generator or None is drawn from once for one integer seed).
    n_jobs : int or None, default=None
        Passed to every estimator.
    eraser : estimator or None, default=None
        An unfitted eraser (e.g. ``ISP(n_components=8)``): the audit reads its
        *cross-fitted* output (:func:`~skprivacy.sanitize.cross_fit_transform`
        over up to 5 identity folds: every row erased by a clone fitted on the
        other folds' identities), which is what erasure does to people it
        never saw. The provenance's and summary.json's ``erasure`` record the
        eraser and the 1-NN re-identification before and after.
    suggest_rank : bool, default=True
        Suggest an ISP rank for the report's "what next" section from a
        cross-fitted sweep (:func:`~skprivacy.sanitize.select_rank`: TAR at a
        low FAR on identities held out of the projector's fit).
    verbose : bool, default=False
        Print stage progress and an ETA on stderr.
    progress : object or None, default=None
        Progress sink with ``plan(total)``, ``start(stage, weight)``,
        ``finish()`` and ``message(text)`` (the protocol of
        :class:`~skprivacy.utils.Progress`); overrides ``verbose``.
    input_info : dict or None, default=None
        Description of the input file (path, hash, columns) recorded as the
        provenance's ``input`` (the command line passes
        :func:`~skprivacy.datasets.read_embeddings`' ``info``). Its
        ``sanitize_provenance`` (:func:`~skprivacy.sanitize.sanitize_provenance`
        of the file) makes the report say when the file's projector was
        fitted on the audited identities (an in-sample audit). In every case
        the provenance's ``input`` also holds ``arrays``: the SHA-256, shape
        and dtype of the audited matrix (after column selection, before
        cleaning) and of the labels.
    metadata : dict or None, default=None
        What the data cannot say about themselves (encoder, generator and its
        revision, prompts, seeds, checkpoint hashes, ...): str keys, values
        str, numbers, bools or lists of these. Recorded as the provenance's
        ``metadata``; the fields of ``GENERATION_FIELDS`` not supplied are
        listed in ``missing_generation_fields`` and in the report.
    command_line : str or None, default=None
        The command that started the audit, recorded in the provenance (the
        command line passes its own).

    Returns
    -------
    report : AuditReport
        Verdict, summary, per-pair table, provenance and figures.

    Raises
    ------
    NoAuditablePairsError
        If fewer than two identities have at least two usable rows.
    ValueError
        For an unknown protocol or method, or invalid data.

    Examples
    --------
    >>> from skprivacy import audit
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(6, 10, 16, random_state=0)
    >>> report = audit(X, ids, methods=["gaussianity"])
    >>> report.summary.loc["residual_gaussianity", "kind"]
    'diagnostic'
    >>> report.provenance["n_identities_after"]
    6
    >>> report = audit(X, ids, methods=["gaussianity"], metadata={"seeds": "0-9"})
    >>> report.provenance["input"]["arrays"]["X"]["shape"]
    [60, 16]
    >>> "generator_revision" in report.provenance["missing_generation_fields"]
    True
    """
    run = RunProvenance(command_line, metadata=metadata)
    run_id = uuid.uuid4().hex
    name, settings = _settings(protocol, confidence, test_size)
    selected = _select(methods, "quick" if name == "custom" else name)
    if progress is None:
        progress = Progress(verbose=verbose, stream=sys.stderr)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        X, feature_columns, excluded = select_features(
            X, features=features, exclude=exclude
        )
    for w in record:  # the caller sees them too
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    data, cleaning, caught = validate_audit_data(X, ids)
    caught = [f"{w.category.__name__}: {w.message}" for w in record] + caught
    original, erasure = data, None
    if eraser is not None:
        data, cleaning, caught, erasure = erased_audit_data(
            eraser, data, cleaning, caught, seed_from(random_state), n_jobs
        )
    arrays = {"X": array_fingerprint(X), "ids": array_fingerprint(ids)}
    # The certificates that feed the headline, counted from the plan (not the data).
    n_certificates = sum(METHODS[m].kind == "certificate" for m in selected)
    ctx = AuditContext(
        data,
        settings,
        seed_from(random_state),
        n_jobs,
        progress=progress,
        n_certificates=n_certificates,
    )
    # Methods the data already rule out are not planned.
    weights = {
        m: METHODS[m].seconds(ctx)
        for m in selected
        if METHODS[m].skip is None or METHODS[m].skip(ctx) is None
    }
    # The rank suggestion and the figures: planned as one second each.
    progress.plan(sum(weights.values()) + float(suggest_rank) + 1.0)
    progress.message(
        f"{data.X.shape[0]} of {cleaning['n_rows_before']} rows, "
        f"{data.n_identities} of {cleaning['n_identities_before']} "
        f"identities and {data.X.shape[1]} dimensions after cleaning; protocol "
        f"{name}: {', '.join(selected)}"
    )
    # The shared ordering, long enough for the largest prefix any method uses.
    longest = max((ctx.n_pairs(k) for k in settings if k.endswith("_pairs")), default=0)
    rank = identity_pair_table(data.identities, longest, random_state=random_state)
    results, findings, frames, timings = _run(ctx, selected, weights, progress, caught)
    pairs = _pairs(frames, rank)
    info = dict(input_info or {})
    if not info:
        info = {"source": "in-memory arrays", "sha256": arrays["X"]["sha256"]}
    source = info.get("path") or "FILE"
    record = info.pop("sanitize_provenance", None)
    note = in_sample_note(record, ctx.X, ctx.y, source, ctx.random_state)
    suggestion = None
    if suggest_rank and note is None:
        progress.start("suggesting a sanitisation rank (cross-fitted ISP sweep)")
        suggestion = suggest_isp_rank(
            original.X,
            original.y,
            source=source,
            random_state=ctx.random_state,
            n_jobs=n_jobs,
        )
        progress.finish()
    info["arrays"] = arrays
    info.setdefault("feature_columns", feature_columns)
    info.setdefault("excluded_columns", excluded)
    provenance = {
        "input": info,
        "feature_columns": list(info["feature_columns"]),
        "excluded_columns": dict(info["excluded_columns"]),
        **run.metadata_record(),
        "protocol": name,
        "protocol_settings": settings,
        "n_certificates": n_certificates,
        "certificate_confidence": ctx.certificate_confidence,
        "methods": selected,
        "skipped_methods": {k: e["reason"] for k, e in results.items() if e["skipped"]},
        **cleaning,
        "warnings": caught,
        "seed": random_state,
        "pair_ordering": (
            "skprivacy.utils.identity_pairs(n_identities, n_pairs, "
            "random_state=seed) over the sorted auditable identities; every method "
            "uses a prefix"
        ),
        "n_pairs_total": ctx.n_pairs_total,
        "pairs": rank[["id_a", "id_b"]].to_numpy().tolist(),
        "n_jobs": n_jobs,
        "method_seconds": timings,
        "erasure": erasure or note,
    }
    progress.start("drawing figures")
    figs = figures(ctx, selected, pairs, results)
    progress.finish()
    provenance.update(run.record())
    found = verdict(results, findings, settings["confidence"], n_certificates)
    steps = next_steps(results, ctx, name, suggestion, info.get("path"))
    return AuditReport(
        results=results,
        pairs=pairs,
        provenance=provenance,
        run_id=run_id,
        verdict=erasure_notes(found, steps, erasure, note),
        next_steps=steps,
        figures=figs,
        fitted=ctx.fitted,
        duplicates=describe_duplicates(
            *ctx.duplicates, ctx.y, kept_rows(original, data)
        ),
    )


def run_audit(X, y, **options):
    """Alias of :func:`audit` (the name used before version 0.1).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity labels.
    **options : dict
        Passed to :func:`audit`.

    Returns
    -------
    report : AuditReport
        See :func:`audit`.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.report import run_audit
    >>> X, ids = make_identity_embeddings(4, 6, 8, random_state=0)
    >>> run_audit(X, ids, methods=["gaussmech"], suggest_rank=False).run_id != ""
    True
    """
    return audit(X, y, **options)
