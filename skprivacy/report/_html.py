# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""One self-contained HTML file: inline CSS, base64 PNG plots, no network resources.

The page layouts (``report.html``, ``conditions.html``) and their style
(``report.css``) are files of the package; this module fills them in.
"""

import html
import math
from importlib import resources
from string import Template

from skprivacy.report._plots import epsilon_columns

__all__ = ["html_body", "render_conditions_html", "render_html"]

_COUNT_COLUMNS = ("n_rows", "n_identities", "n_pairs")


def escape(x):
    """Return ``x`` as HTML text."""
    return html.escape(str(x))


def number(v):
    """Return a number as HTML text (4 significant digits, infinity, n/a)."""
    if isinstance(v, float):
        if math.isinf(v):
            return "&infin;" if v > 0 else "-&infin;"
        return "n/a" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:d}"
    return escape(v)


def _table(head, rows, titles=None, scroll=False):
    """Return a table of header cells (markup) and rows of ``<td>`` cells."""
    titles = titles or [None] * len(head)
    head = "".join(
        f"<th title='{t}'>{h}</th>" if t else f"<th>{h}</th>"
        for h, t in zip(head, titles)
    )
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f"<div class='scroll'>{table}</div>" if scroll else table


def _td(text, num=False):
    return f"<td class='num'>{text}</td>" if num else f"<td>{text}</td>"


def _name(key, entry):
    return _td(f"<code>{escape(key)}</code><br>{escape(entry.get('title', ''))}")


def _ceiling(ceiling, at_ceiling):
    """Return a value's ceiling note (and whether it is at it) as HTML."""
    text = f"<br><small>ceiling {number(ceiling)}</small>"
    return text + ("<br><span class='ceil'>at ceiling</span>" if at_ceiling else "")


def _value(e):
    if e.get("skipped"):
        return "<span class='skip'>skipped</span>"
    text = number(e.get("value"))
    if text == "&infin;" and "epsilon_interior_median" in e:
        text += f"<br><small>interior median {number(e['epsilon_interior_median'])}"
        text += "</small>"
    if e.get("kind") == "certificate":
        text += _ceiling(e.get("ceiling"), e.get("at_ceiling"))
    return text


def _summary_table(results):
    classes = {"certificate": "k-certificate", "point estimate": "k-point"}
    rows = [
        [
            _name(key, e),
            _td(_value(e), num=True),
            _td(
                f"<span class='kind {classes.get(e.get('kind'), 'k-other')}'>"
                f"{escape(e.get('kind', ''))}</span>"
            ),
            _td(
                f"<span class='skip'>Skipped: {escape(e['reason'])}</span>"
                if e.get("skipped")
                else escape(e.get("statistic", ""))
            ),
            _td(escape(e.get("says", ""))),
            _td(escape(e.get("does_not_say", ""))),
        ]
        for key, e in results.items()
    ]
    head = "result|value|kind|what the number is|what it does say|what it does not say"
    return _table(head.split("|"), rows)


def _certificates(results):
    certs = {k: e for k, e in results.items() if e.get("kind") == "certificate"}
    if not certs:
        return "<p>No certificate was requested.</p>"
    rows = [
        [
            _name(key, e),
            _td(number(e.get("value")), num=True),
            _td(
                number(e.get("ceiling"))
                + (
                    "<br><span class='ceil'>at ceiling</span>"
                    if e.get("at_ceiling")
                    else ""
                ),
                num=True,
            ),
            _td(
                f"{e['n_at_ceiling']} of {e['n_pairs']}"
                if "n_at_ceiling" in e
                else "n/a",
                num=True,
            ),
            # A skipped certificate states nothing, at no confidence.
            _td("n/a" if e["skipped"] else number(e.get("confidence")), num=True),
            _td(escape(e.get("reason") or (e.get("lift") or {}).get("text", ""))),
        ]
        for key, e in certs.items()
    ]
    head = "certificate|certified &epsilon; &ge;|ceiling|pairs at ceiling|confidence"
    return (
        "<p>A certificate can never exceed the <em>ceiling</em> its test size "
        "allows (what a perfect classifier would certify). A value at its ceiling "
        "says &ldquo;as separable as this test can show&rdquo;: the test size, not "
        "the embeddings, limits it.</p>"
        + _table([*head.split("|"), "what would lift the ceiling"], rows)
    )


def _top_pairs(pairs, results, n=10):
    """Return the most leaky pairs, ordered by the per-pair ε columns in order."""
    columns = epsilon_columns(results, pairs)
    if not len(pairs) or not columns:
        return "<p>No per-pair results.</p>"
    keys = [column for column, _, _ in columns]
    audited = pairs[pairs[keys[0]].notna()]
    top = audited.sort_values(keys, ascending=False, na_position="last").head(n)
    ceilings = {c: ceiling for c, _, ceiling in columns if ceiling in pairs.columns}
    cols = ["pair_rank", "id_a", "id_b", *keys]

    def cell(r, c):
        if c in ("id_a", "id_b"):
            return _td(escape(r[c]))
        text, v = number(r[c]), r[c]
        if c in ceilings and isinstance(v, float) and not math.isnan(v):
            ceiling = r[ceilings[c]]
            at = ceiling > 0 and math.isclose(v, ceiling, rel_tol=1e-9)
            text += _ceiling(ceiling, at)
        return _td(text, num=True)

    # The results' labels wrap where the column names cannot, so the table
    # fits the page; the pairs.csv name is the header's tooltip.
    labels = {c: label for c, label, _ in columns}
    return (
        f"<p>The {len(top)} most leaky of the {len(audited)} pairs with "
        f"<code>{escape(keys[0])}</code>, ordered by the point estimates "
        f"{', then '.join(f'<code>{escape(k)}</code>' for k in keys)} (certificates "
        "last, each above its pair's ceiling: they mostly reflect the test size). "
        "All pairs are in <code>pairs.csv</code>.</p>"
        + _table(
            [escape(labels.get(c, c)) for c in cols],
            [[cell(r, c) for c in cols] for r in top.to_dict(orient="records")],
            titles=[escape(c) for c in cols],
            scroll=True,
        )
    )


def _verdict(v):
    leak = v.get("level") in ("leak", "separable")
    lines = "".join(
        f"<li><strong>{escape(line['family'])}</strong>: {escape(line['text'])}</li>"
        for line in v["lines"]
    )
    return (
        f"<div class='verdict{'' if leak else ' quiet'}'>"
        f"<p class='headline'>{escape(v['headline'])}</p><ul>{lines}</ul></div>"
    )


def _next_steps(steps):
    if not steps:
        return "<p>Nothing to add.</p>"
    items = "".join(
        f"<li>{escape(s['text'])}"
        + (f"<br><code>{escape(s['command'])}</code>" if s.get("command") else "")
        + "</li>"
        for s in steps
    )
    return f"<ul>{items}</ul>"


def _columns(prov):
    used = prov.get("feature_columns", [])
    shown = ", ".join(map(str, used[:12])) + (
        f", ... ({len(used)} in all)" if len(used) > 12 else ""
    )
    rows = [
        [_td(f"<code>{escape(k)}</code>"), _td(escape(v))]
        for k, v in prov.get("excluded_columns", {}).items()
    ]
    table = (
        _table(["column not audited", "why"], rows)
        if rows
        else "<p>No column was left out.</p>"
    )
    return (
        f"<p>{len(used)} embedding columns audited: <code>{escape(shown)}</code>.</p>"
        + table
    )


def _provenance(prov):
    """Return the fields of ``report.html``'s provenance table, as HTML."""
    inp = prov.get("input", {})
    missing_id = inp.get("n_rows_missing_id")
    drops = prov.get("dropped_rows", {})
    fields = {
        "input": inp.get("path", inp.get("source", "in-memory data")),
        "sha256": inp.get("sha256", "n/a"),
        "rows": f"{prov['n_rows_before']} / {prov['n_rows_after']}",
        "identities": f"{prov['n_identities_before']} / {prov['n_identities_after']}",
        "dropped": ", ".join(f"{k}: {v}" for k, v in drops.items())
        + (f", missing identity: {missing_id}" if missing_id else ""),
        "excluded_identities": ", ".join(map(str, prov["excluded_identities"]))
        or "none",
        "pairs_used": f"{len(prov['pairs'])} of {prov['n_pairs_total']}",
        "times": f"{prov['start_time']} / {prov['end_time']}",
        "command_line": prov.get("command_line", "n/a"),
        "metadata": "; ".join(f"{k} = {v}" for k, v in prov.get("metadata", {}).items())
        or "none",
        "software": ", ".join(
            f"{k} {v}" for k, v in prov["versions"].items() if k != "platform"
        ),
    }
    fields = {k: escape(v) for k, v in fields.items()}
    fields["arrays"] = "".join(
        f"<tr><th>{escape(f'array {name} (SHA-256, shape, dtype)')}</th><td>"
        + escape(f"{a['sha256']}, {tuple(a['shape'])}, {a['dtype']}")
        + "</td></tr>\n"
        for name, a in inp.get("arrays", {}).items()
    )
    missing = prov.get("missing_generation_fields") or []
    fields["not_recorded"] = (
        "<tr><th>not recorded</th><td>"
        + ", ".join(f"<code>{escape(k)}</code>" for k in missing)
        + ": the embeddings file does not carry them; supply them with "
        "<code>--meta KEY=VALUE</code> (<code>metadata=</code> in Python) so the "
        "audit can be reproduced (generator fields do not apply to real "
        "photographs)</td></tr>"
        if missing
        else ""
    )
    fields["warnings"] = (
        "<p>Warnings raised during the audit:</p><pre>"
        + escape("\n".join(prov["warnings"]))
        + "</pre>"
        if prov.get("warnings")
        else ""
    )
    return fields


def _page(name, prov, run_id, **fields):
    """Fill the package's page head and body ``name`` (fields escaped by the caller)."""
    files = resources.files("skprivacy.report")
    text = {
        f: files.joinpath(f).read_text(encoding="utf-8")
        for f in (name, "page.html", "report.css")
    }
    page = Template(text["page.html"] + text[name] + "</body></html>\n")
    return page.substitute(
        css=text["report.css"],
        run_id=escape(run_id),
        protocol=escape(prov["protocol"]),
        seed=escape(prov["seed"]),
        version=escape(prov["versions"]["skprivacy"]),
        **fields,
    )


def _figures(figures):
    return "".join(
        f'<figure><img alt="{escape(name)}" src="data:image/png;base64,{png}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
        for name, (caption, png) in figures.items()
    )


def render_html(report):
    """Render an :class:`~skprivacy.report.AuditReport` as one HTML string."""
    prov = report.provenance
    source = prov.get("input", {}).get("name", prov.get("input", {}).get("source"))
    return _page(
        "report.html",
        prov,
        report.run_id,
        title="skprivacy identity-leakage audit",
        source=escape(source or "in-memory data"),
        n_rows=prov["n_rows_after"],
        n_identities=prov["n_identities_after"],
        n_features=prov["n_features"],
        verdict=_verdict(report.verdict),
        next_steps=_next_steps(report.next_steps),
        certificates=_certificates(report.results),
        summary=_summary_table(report.results),
        figures=_figures(report.figures),
        top_pairs=_top_pairs(report.pairs, report.results),
        columns=_columns(prov),
        duplicates=f"<p>{escape((report.duplicates or {}).get('text', 'Not checked.'))}</p>",
        **_provenance(prov),
    )


def render_conditions_html(report):
    """Render a :class:`~skprivacy.report.ConditionsReport` as one HTML string."""
    table, prov = report.table_i, report.provenance
    anchors = {name: f"condition-{i + 1}" for i, name in enumerate(report.reports)}
    # Each method's median and max side by side under one method header (two
    # narrow columns rather than fourteen long names: the table fits the page).
    methods = [
        c.removesuffix(" median")
        for c in table.columns
        if c.endswith(" median") and c.removesuffix("median") + "max" in table
    ]
    paired = [f"{m} {s}" for m in methods for s in ("median", "max")]
    single = [c for c in table.columns if c not in paired]
    columns = [*single, *paired]
    rows = [
        [_td(f"<a href='#{anchors[name]}'>{escape(name)}</a>")]
        + [
            _td(number(int(row[c]) if c in _COUNT_COLUMNS else float(row[c])), num=True)
            for c in columns
        ]
        for name, row in table.iterrows()
    ]
    head = "".join(
        f"<th rowspan='2'>{h}</th>"
        for h in ["condition", *(escape(c.removeprefix("n_")) for c in single)]
    ) + "".join(f"<th colspan='2'>{escape(m)} &epsilon;</th>" for m in methods)
    head = f"<tr>{head}</tr><tr>{'<th>median</th><th>max</th>' * len(methods)}</tr>"
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    raised = prov.get("raised_pair_counts") or {}
    definition = prov["table_definition"]
    return _page(
        "conditions.html",
        prov,
        report.run_id,
        title="skprivacy multi-condition audit",
        n_conditions=len(report.reports),
        headlines="".join(
            f"<li><a href='#{anchors[name]}'>{escape(name)}</a>: "
            f"{escape(r.verdict['headline'])}</li>"
            for name, r in report.reports.items()
        ),
        definition=escape(definition[0].upper() + definition[1:]),
        raised=(
            "Pair counts raised so every method audits the prefix: "
            + ", ".join(f"{k} {old} &rarr; {new}" for k, (old, new) in raised.items())
            + "."
            if raised
            else "Every method's pair count already covered the prefix."
        ),
        table=f"<div class='scroll'><table><thead>{head}</thead><tbody>{body}"
        "</tbody></table></div>",
        figures=_figures(report.figures),
        comparison=_comparison(report),
        sections="".join(
            f"<details id='{anchors[name]}'{' open' if i == 0 else ''}><summary>"
            f"<strong>{escape(name)}</strong>: {escape(sub.verdict['headline'])}"
            f"</summary>{_body(sub.to_html())}</details>"
            for i, (name, sub) in enumerate(report.reports.items())
        ),
    )


def _interval(low, high, value=""):
    text = f"{number(float(value))} " if value != "" else ""
    return _td(f"{text}[{number(float(low))}, {number(float(high))}]", num=True)


def _comparison(report):
    """Return the comparison section: its sentence, the differences, Table I's intervals."""
    cmp, cells = report.comparison, report.table_i_intervals
    if cells.empty:
        return ""
    level = f"{100 * report.provenance['comparison']['confidence']:g} %"
    rows = [
        [_td(escape(v)) for v in (r.condition_a, r.condition_b, r.method)]
        + [_interval(r.ci_low, r.ci_high, r.difference)]
        + [_td("yes" if r.resolved else "no, not at this sample size")]
        for r in cmp.itertuples()
    ]
    text = (
        f"<p><strong>{escape(report.comparison_sentence)}.</strong> Median ε of "
        f"A minus B, with identity-bootstrap intervals (identities resampled, "
        f"paired across conditions) {level} simultaneous over the table; an "
        "interval containing 0 means no difference is resolved at this sample "
        "size, not that the conditions leak equally.</p>"
        + _table(["A", "B", "method", "difference [interval]", "resolved"], rows)
        if len(cmp)
        else ""
    )
    cells = cells.assign(
        cell=[
            _interval(*v[1:], v[0])
            for v in cells[["median", "ci_low", "ci_high"]].values
        ]
    )
    wide = cells.pivot(index="condition", columns="method", values="cell")
    wide = wide.reindex(cells["condition"].unique()).fillna(_td(""))
    rows = [[_td(escape(c)), *row] for c, row in wide.iterrows()]
    return (
        f"<h2>Comparison</h2>{text}<p>Table I medians with {level} "
        "identity-bootstrap intervals, cell by cell.</p>"
        + _table(["condition", *map(escape, wide.columns)], rows, scroll=True)
    )


def _body(document):
    return document[document.index("<body>") + 6 : document.index("</body>")]


def html_body(document):
    """Return the markup for embedding (Jupyter): the style and body content."""
    style = document[document.index("<style>") : document.index("</style>") + 8]
    return style + _body(document)
