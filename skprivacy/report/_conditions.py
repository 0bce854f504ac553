# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-condition audits: one report and one Table I across several embedding sets.

Paper 000 audits eight conditions (encoder x dataset x generator) and compares
the methods in its Table I by their medians on exactly the same first 100 pairs
of each condition's seeded pair ordering. :func:`audit_conditions` runs
:func:`~skprivacy.audit` on each condition with the same options, makes sure
every per-pair ε method audits at least that prefix, and builds the table from
the per-condition ``pairs`` tables (no number is recomputed). The same tables
give the identity-bootstrap intervals of Table I and of the differences between
conditions (:func:`skprivacy.stats.compare_conditions`).
"""

import io
import uuid
import warnings

import pandas as pd

from skprivacy.datasets import select_features
from skprivacy.plotting import ConditionsEpsilonDisplay, figure_png
from skprivacy.report._audit import AuditReport, _select, _settings, audit
from skprivacy.report._html import render_conditions_html
from skprivacy.report._persist import SavedReport, read_conditions_files
from skprivacy.report._registry import METHODS
from skprivacy.stats import (
    ConditionComparison,
    compare_conditions,
    comparison_sentence,
    table_i,
)
from skprivacy.utils import RunProvenance, check_conditions
from skprivacy.utils._json import (
    dumps,
    strict,
    strict_record,
)
from skprivacy.utils._progress import SharedPlan
from skprivacy.utils._validation import validate_audit_data

__all__ = ["ConditionsReport", "audit_conditions"]

#: Layout version of ``conditions.json``.
CONDITIONS_SCHEMA_VERSION = "1"


def _prefix_settings(protocol, methods, table_pairs, confidence, test_size):
    """Return the protocol with every per-pair ε count raised to ``table_pairs``.

    The protocol is returned unchanged (its name) when no count needed raising,
    with ``{setting: (old, new)}`` of the raised counts.
    """
    _, settings = _settings(protocol, confidence, test_size)
    raised = {}
    for key in (METHODS[m].epsilon_pairs for m in methods):
        value = settings.get(key)
        if key is not None and value is not None and value < table_pairs:
            raised[key] = (value, table_pairs)
            settings[key] = table_pairs
    if not raised and isinstance(protocol, str):
        return protocol, raised
    return settings, raised


def _check_data(conditions, features, exclude):
    """Run every condition's data through the input layer before any audit.

    A condition that cannot be audited fails at once, not after the audits
    of the conditions before it. (Its warnings are said by the audit itself.)
    """
    for name, (X, ids) in conditions.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Xf, _, _ = select_features(X, features=features, exclude=exclude)
                validate_audit_data(Xf, ids)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"condition {name!r}: {exc}") from exc


def _prefix_pairs(report, table_pairs):
    """Return the pairs ranked below ``table_pairs``: ids, per-pair ε by label.

    A finite companion of ε (ROC-HT's interior ε) follows its ε as
    ``"<label> interior"``, so Table I never compares a bare ∞ with ∞.
    """
    prefix = report.pairs[report.pairs["pair_rank"] < table_pairs]
    labels = {}
    for e in report.results.values():
        if e.get("epsilon_column") in prefix:
            labels[e["epsilon_column"]] = e["epsilon_label"]
            if e.get("companion_column") in prefix:
                labels[e["companion_column"]] = f"{e['epsilon_label']} interior"
    return prefix[["id_a", "id_b", *labels]].rename(columns=labels)


def _table_i(reports, table_pairs):
    """Return Table I: each condition's counts, then :func:`skprivacy.stats.table_i`."""
    prov = [r.provenance for r in reports.values()]
    counts = pd.DataFrame(
        {
            "n_rows": [int(p["n_rows_after"]) for p in prov],
            "n_identities": [int(p["n_identities_after"]) for p in prov],
            "n_pairs": [min(table_pairs, int(p["n_pairs_total"])) for p in prov],
        },
        index=pd.Index(list(reports), name="condition"),
    )
    prefix = {name: _prefix_pairs(r, table_pairs) for name, r in reports.items()}
    return counts.join(table_i(prefix))


class ConditionsReport(SavedReport):
    """Result of :func:`audit_conditions`: Table I, a cross-condition figure, one report each.

    Parameters
    ----------
    reports : dict of str to AuditReport
        The per-condition audits, in the given order (they share ``run_id``).
    table_i : DataFrame
        One row per condition (see :func:`audit_conditions`).
    provenance : dict
        Table prefix, protocol and raised pair counts, conditions, software
        versions, start and end time, command line.
    run_id : str
        Identifier shared by every output file of the run.
    figures : dict, default=None
        ``{name: (caption, base64 PNG)}`` of the cross-condition figures.
    comparison, table_i_intervals : DataFrame, default=None
        The tables of :class:`~skprivacy.stats.ConditionComparison` (the
        differences between conditions; Table I's medians with intervals).

    Attributes
    ----------
    summary : DataFrame
        Every condition's :attr:`AuditReport.summary`, indexed by
        ``(condition, result)``.
    comparison_sentence : str
        Which condition leaks more on how many methods, or that no difference
        is resolved (see :func:`~skprivacy.stats.comparison_sentence`).

    Examples
    --------
    >>> import tempfile
    >>> from skprivacy import audit_conditions
    >>> from skprivacy.report import ConditionsReport
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> conditions = {
    ...     "low noise": make_identity_embeddings(6, 8, 8, noise=0.5, random_state=0),
    ...     "high noise": make_identity_embeddings(6, 8, 8, noise=3.0, random_state=0),
    ... }
    >>> report = audit_conditions(conditions, methods=["gaussmech"], suggest_rank=False)
    >>> list(report.table_i.index)
    ['low noise', 'high noise']
    >>> out = tempfile.mkdtemp() + "/out"
    >>> _ = report.save(out)
    >>> ConditionsReport.load(out).table_i.equals(report.table_i)
    True
    """

    FILES = ("conditions.json", "table_i.csv", "pairs.csv", "report.html")

    def __init__(
        self,
        *,
        reports,
        table_i,
        provenance,
        run_id,
        figures=None,
        comparison=None,
        table_i_intervals=None,
    ):
        self.reports = reports
        self.table_i = table_i
        self.provenance = provenance
        self.run_id = run_id
        self.figures = {} if figures is None else figures
        empty = ConditionComparison.from_dict({})
        self.comparison = empty.comparison if comparison is None else comparison
        self.table_i_intervals = (
            empty.table_i_intervals if table_i_intervals is None else table_i_intervals
        )
        self._html = None

    def __repr__(self):
        lines = [
            f"ConditionsReport(run_id={self.run_id!r}, {len(self.reports)} conditions, "
            f"Table I on the first {self.provenance['table_pairs']} pairs)"
        ]
        lines += [f"  {n}: {r.verdict['headline']}" for n, r in self.reports.items()]
        return "\n".join(lines)

    @property
    def comparison_sentence(self):
        """Which condition leaks more, or that no difference is resolved."""
        confidence = self.provenance.get("comparison", {}).get("confidence", 0.95)
        return comparison_sentence(self.comparison, confidence=confidence)

    @property
    def summary(self):
        """Every condition's summary, indexed by ``(condition, result)``."""
        return pd.concat(
            {name: r.summary for name, r in self.reports.items()},
            names=["condition", "result"],
        )

    def prefix_pairs(self):
        """Per condition, the pairs Table I summarises and their per-pair ε.

        Returns
        -------
        pairs : dict of str to DataFrame
            ``{condition: table}`` with ``id_a``, ``id_b`` and one column per
            method label: the input of :func:`skprivacy.stats.table_i` and of
            :func:`skprivacy.stats.compare_conditions` (its intervals).
        """
        n = self.provenance["table_pairs"]
        return {name: _prefix_pairs(r, n) for name, r in self.reports.items()}

    def prefix_epsilons(self):
        """Per-pair ε on the Table I prefix, by method label then condition.

        Returns
        -------
        epsilons : dict of str to dict of str to ndarray
            ``{method label: {condition: per-pair ε}}`` (the values whose
            medians and maxima are Table I).
        """
        out = {}
        for name, table in self.prefix_pairs().items():
            for label in table.columns[2:]:
                out.setdefault(label, {})[name] = table[label].dropna().to_numpy(float)
        return out

    def _renderer(self):
        return render_conditions_html(self)

    def to_dict(self):
        """Return the content of ``conditions.json`` (strict JSON)."""
        head = {
            "schema_version": CONDITIONS_SCHEMA_VERSION,
            "run_id": self.run_id,
            "table_pairs": self.provenance["table_pairs"],
            "table_i_columns": [str(c) for c in self.table_i.columns],
        }
        conditions = [
            {
                "name": name,
                "summary": r.to_dict(),
                "provenance": strict(r.provenance, []),
                "figures": {k: list(v) for k, v in r.figures.items()},
                "pairs_columns": [str(c) for c in r.pairs.columns],
            }
            for name, r in self.reports.items()
        ]
        figures = {k: list(v) for k, v in self.figures.items()}
        return strict_record(
            head,
            {
                "provenance": self.provenance,
                "comparison": self.comparison.to_dict("records"),
                "table_i_intervals": self.table_i_intervals.to_dict("records"),
                "figures": figures,
                "conditions": conditions,
            },
        )

    def files(self):
        """Return the text of ``conditions.json``, ``table_i.csv``, ``pairs.csv``, ``report.html``."""
        pairs = pd.concat(
            [
                r.pairs.assign(condition=name)[["condition", *r.pairs.columns]]
                for name, r in self.reports.items()
            ],
            ignore_index=True,
        )
        return {
            "conditions.json": dumps(self.to_dict()),
            "table_i.csv": self.table_i.to_csv(),
            "pairs.csv": pairs.to_csv(index=False),
            "report.html": self.to_html(),
        }

    @classmethod
    def _read(cls, path):
        # pairs.csv is read as text, then each condition's own columns are
        # re-read: each gets the dtypes its own pairs.csv would have.
        data, raw, table, html = read_conditions_files(path, CONDITIONS_SCHEMA_VERSION)
        reports = {}
        for entry in data["conditions"]:
            summary = entry["summary"]
            part = raw.loc[raw["condition"] == entry["name"], entry["pairs_columns"]]
            pairs = pd.read_csv(io.StringIO(part.to_csv(index=False)))
            figures = {k: tuple(v) for k, v in entry["figures"].items()}
            reports[entry["name"]] = AuditReport._from_saved(
                summary, pairs, entry["provenance"], figures=figures
            )
        table.index = table.index.astype(str)
        saved = ConditionComparison.from_dict(data)
        report = cls(
            reports=reports,
            table_i=table,
            provenance=data["provenance"],
            run_id=data["run_id"],
            figures={k: tuple(v) for k, v in data["figures"].items()},
            comparison=saved.comparison,
            table_i_intervals=saved.table_i_intervals,
        )
        return report, html


def audit_conditions(
    conditions,
    *,
    table_pairs=100,
    protocol="quick",
    methods=None,
    confidence=None,
    test_size=None,
    input_info=None,
    progress=None,
    **options,
):
    """Audit several conditions with the same protocol; compare them in Table I.

    Each condition (e.g. encoder x dataset x generator) is audited by
    :func:`~skprivacy.audit` with the same options and seed, so each has its
    own seeded pair ordering and every method audits a prefix of it. Every
    method with per-pair ε audits at least the first ``table_pairs`` pairs
    (pair counts of the protocol below ``table_pairs`` are raised, and
    recorded), and Table I gives each method's median and maximum over exactly
    those pairs, as in paper 000's Table I.

    Parameters
    ----------
    conditions : dict of str to (X, ids)
        Embeddings and identity labels of each condition, by name (the table's
        row order is the dict's order).
    table_pairs : int, default=100
        Length of the pair-ordering prefix Table I summarises (every pair when
        a condition has fewer).
    protocol : {"quick", "paper", "exhaustive"} or dict, default="quick"
        As in :func:`~skprivacy.audit`, with pair counts raised to
        ``table_pairs`` where needed.
    methods : list of str or None, default=None
        As in :func:`~skprivacy.audit`.
    confidence, test_size : float or None, default=None
        As in :func:`~skprivacy.audit`. A certificate is simultaneous over the
        pairs it certifies, so raising its pair count to ``table_pairs`` makes
        it more conservative.
    input_info : dict of str to dict or None, default=None
        Per-condition description of the input file (the command line passes
        :func:`~skprivacy.datasets.read_embeddings`' ``info``).
    progress : object or None, default=None
        Progress sink passed to each :func:`~skprivacy.audit` (it also
        receives one ``message`` per condition).
    **options : dict
        Other keyword arguments of :func:`~skprivacy.audit` (``features``,
        ``exclude``, ``random_state``, ``n_jobs``, ``suggest_rank``,
        ``verbose``).

    Returns
    -------
    report : ConditionsReport
        ``table_i`` (DataFrame, one row per condition: ``n_rows``,
        ``n_identities``, ``n_pairs``, then ``"<method> median"`` and
        ``"<method> max"`` per per-pair ε method), ``table_i_intervals`` and
        ``comparison`` (identity-bootstrap intervals of the medians and of
        their differences between conditions, at the certificates'
        confidence, by :func:`~skprivacy.stats.compare_conditions` on the
        same pairs), ``comparison_sentence``, ``reports`` (one
        :class:`~skprivacy.AuditReport` per condition), a cross-condition
        figure and ``save`` / ``load`` / ``to_html``.

    Raises
    ------
    ValueError
        For an empty ``conditions``, a bad name or ``table_pairs``, or any
        error :func:`~skprivacy.audit` raises on a condition (the message
        names the condition).

    See Also
    --------
    skprivacy.audit : The audit of one condition.
    skprivacy.plotting.ConditionsEpsilonDisplay : The cross-condition figure.

    Examples
    --------
    >>> from skprivacy import audit_conditions
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> conditions = {
    ...     f"noise={s}": make_identity_embeddings(8, 10, 8, noise=s, random_state=0)
    ...     for s in (0.5, 2.0)
    ... }
    >>> methods = ["gaussmech", "mmdtv"]
    >>> report = audit_conditions(conditions, methods=methods, suggest_rank=False)
    >>> report.table_i["n_pairs"].tolist()
    [28, 28]
    >>> report.table_i["GaussMech median"].round(1).to_dict()
    {'noise=0.5': 35.4, 'noise=2.0': 11.2}
    >>> report.comparison_sentence
    'noise=0.5 leaks more than noise=2.0 on 2 of 2 methods (95 % simultaneous)'
    """
    check_conditions(conditions, table_pairs, input_info)
    table_pairs = int(table_pairs)
    selected = _select(methods, protocol if isinstance(protocol, str) else "quick")
    settings, raised = _prefix_settings(
        protocol, selected, table_pairs, confidence, test_size
    )
    _check_data(conditions, options.get("features"), options.get("exclude"))
    base = protocol if isinstance(protocol, str) else "custom"
    run = RunProvenance(options.get("command_line"))
    run_id = uuid.uuid4().hex
    reports = {}
    if progress is not None:
        progress = SharedPlan(progress, len(conditions))
    for i, (name, (X, ids)) in enumerate(conditions.items()):
        if progress is not None:
            progress.message(f"condition {i + 1} of {len(conditions)}: {name}")
        info = (input_info or {}).get(name)
        try:
            report = audit(
                X,
                ids,
                protocol=settings,
                methods=selected,
                confidence=confidence,
                test_size=test_size,
                progress=progress,
                input_info=info,
                **options,
            )
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"condition {name!r}: {exc}") from exc
        report.run_id = run_id
        if not isinstance(settings, str):
            report.provenance["protocol"] = base
        report.provenance["condition"] = name
        report.provenance["table_pairs"] = table_pairs
        reports[name] = report
    table = _table_i(reports, table_pairs)
    first = next(iter(reports.values())).provenance
    provenance = {
        "conditions": list(reports),
        "table_pairs": table_pairs,
        "table_definition": (
            f"per condition, the median and the maximum of each method's per-pair "
            f"epsilon over the first {table_pairs} pairs of that condition's "
            "seeded pair ordering (every pair when there are fewer), the same "
            "pairs for every method"
        ),
        "protocol": base,
        "protocol_settings": first["protocol_settings"],
        "raised_pair_counts": {k: list(v) for k, v in raised.items()},
        "methods": selected,
        "seed": first["seed"],
        "metadata": first.get("metadata", {}),
        **run.record(),
    }
    report = ConditionsReport(
        reports=reports, table_i=table, provenance=provenance, run_id=run_id
    )
    confidence = first["protocol_settings"]["confidence"]
    result = compare_conditions(
        report.prefix_pairs(),
        confidence=confidence,
        n_resamples="auto",
        random_state=first["seed"],
    )
    report.comparison = result.comparison
    report.table_i_intervals = result.table_i_intervals
    provenance["comparison"] = {
        "confidence": confidence,
        "n_resamples": result.n_resamples,
        "n_identities": result.n_identities,
        "definition": "identity bootstrap (paired by identity label); differences "
        "simultaneous over the comparison table (Bonferroni)",
    }
    report.figures = _figures(report)
    return report


def _figures(report):
    epsilons = report.prefix_epsilons()
    if not epsilons:
        return {}
    n_cols = min(3, len(epsilons))
    n_rows = -(-len(epsilons) // n_cols)
    return {
        "conditions": (
            f"Per-pair epsilon on the first {report.provenance['table_pairs']} pairs "
            "of each condition (the pairs Table I summarises): one panel per method, "
            "one box per condition (line: median, whiskers: 1.5 IQR, points beyond).",
            figure_png(
                lambda fig: ConditionsEpsilonDisplay.from_epsilons(
                    epsilons, ax=fig.subplots(), n_cols=n_cols
                ),
                (3.3 * n_cols + 1.0, n_rows * (1.2 + 0.4 * len(report.reports))),
            ),
        )
    }
