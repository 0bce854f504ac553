# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""One self-contained HTML file: inline CSS, base64 PNG plots, no network resources."""

import html
import math

from skprivacy.report._plots import epsilon_columns

__all__ = ["CSS", "escape", "html_body", "number", "render_html"]

CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2rem auto;
       max-width: 1100px; color: #1f2328; line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #d0d7de; padding-bottom: 0.2rem;
     margin-top: 2rem; }
.sub { color: #59636e; margin-top: 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.88rem; margin: 0.6rem 0; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.5rem; text-align: left;
         vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.kind { display: inline-block; padding: 0 0.45rem; border-radius: 0.6rem;
        font-size: 0.78rem; white-space: nowrap; }
.k-certificate { background: #dafbe1; color: #116329; }
.k-point { background: #fff8c5; color: #7d4e00; }
.k-other { background: #ddf4ff; color: #0550ae; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; border: 1px solid #eaeef2; }
figcaption { color: #59636e; font-size: 0.85rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr));
        gap: 0.5rem 1.5rem; }
code, pre { background: #f6f8fa; border-radius: 4px; padding: 0 0.25rem; }
pre { padding: 0.6rem; white-space: pre-wrap; word-break: break-word;
      font-size: 0.8rem; }
.scroll { overflow-x: auto; }
.prov td { overflow-wrap: anywhere; }
.prov th { width: 14rem; }
.note { background: #fff8c5; border-left: 4px solid #d4a72c; padding: 0.5rem 0.8rem; }
.verdict { background: #f6f8fa; border: 1px solid #d0d7de; border-left: 6px solid #cf222e;
           padding: 0.6rem 1rem; margin: 1rem 0; }
.verdict.quiet { border-left-color: #1a7f37; }
.verdict p.headline { font-size: 1.1rem; font-weight: 600; margin: 0.2rem 0 0.5rem; }
.verdict ul { margin: 0.2rem 0; padding-left: 1.2rem; }
.ceil { display: inline-block; padding: 0 0.4rem; border-radius: 0.6rem; font-size: 0.78rem;
        background: #ffebe9; color: #a40e26; white-space: nowrap; }
.skip { color: #59636e; font-style: italic; }
.runid { color: #59636e; font-size: 0.8rem; }
"""


def escape(x):
    """Return ``x`` as HTML text."""
    return html.escape(str(x))


def number(v):
    """Return a number as HTML text (4 significant digits, infinity, n/a)."""
    if isinstance(v, bool) or v is None:
        return escape(v)
    if isinstance(v, int):
        return f"{v:d}"
    if isinstance(v, float):
        if math.isinf(v):
            return "&infin;" if v > 0 else "-&infin;"
        if math.isnan(v):
            return "n/a"
        return f"{v:.4g}"
    return escape(v)


def _kind(kind):
    cls = {"certificate": "k-certificate", "point estimate": "k-point"}.get(
        kind, "k-other"
    )
    return f'<span class="kind {cls}">{escape(kind)}</span>'


def _value(entry):
    if entry.get("skipped"):
        return "<span class='skip'>skipped</span>"
    text = number(entry.get("value"))
    if entry.get("kind") == "certificate":
        text += f"<br><small>ceiling {number(entry.get('ceiling'))}</small>"
        if entry.get("at_ceiling"):
            text += "<br><span class='ceil'>at ceiling</span>"
    return text


def _summary_table(results):
    rows = []
    for key, s in results.items():
        said = (
            f"<span class='skip'>Skipped: {escape(s['reason'])}</span>"
            if s.get("skipped")
            else escape(s.get("statistic", ""))
        )
        rows.append(
            "<tr>"
            f"<td><code>{escape(key)}</code><br>{escape(s.get('title', ''))}</td>"
            f"<td class='num'>{_value(s)}</td>"
            f"<td>{_kind(s.get('kind', ''))}</td>"
            f"<td>{said}</td>"
            f"<td>{escape(s.get('says', ''))}</td>"
            f"<td>{escape(s.get('does_not_say', ''))}</td>"
            "</tr>"
        )
    return (
        "<table><thead><tr><th>result</th><th>value</th><th>kind</th>"
        "<th>what the number is</th><th>what it does say</th>"
        "<th>what it does not say</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _certificates(results):
    certs = {k: e for k, e in results.items() if e.get("kind") == "certificate"}
    if not certs:
        return "<p>No certificate was requested.</p>"
    rows = []
    for key, e in certs.items():
        lift = e.get("lift") or {}
        if e.get("skipped"):
            lifted = escape(e["reason"])
        elif lift.get("test_size"):
            lifted = (
                f"test_size {lift['test_size']:g} &rarr; ceiling "
                f"{number(lift['ceiling'])}"
            )
        elif lift.get("rows_per_identity"):
            lifted = (
                f"{lift['rows_per_identity']} rows per identity &rarr; ceiling "
                f"{number(lift['ceiling'])}"
            )
        else:
            lifted = "more rows per identity"
        mark = "<span class='ceil'>at ceiling</span>" if e.get("at_ceiling") else ""
        n_at = (
            f"{e['n_at_ceiling']} of {e['n_pairs']}" if "n_at_ceiling" in e else "n/a"
        )
        rows.append(
            "<tr>"
            f"<td><code>{escape(key)}</code><br>{escape(e.get('title', ''))}</td>"
            f"<td class='num'>{number(e.get('value'))}</td>"
            f"<td class='num'>{number(e.get('ceiling'))}</td>"
            f"<td>{mark}</td>"
            f"<td class='num'>{n_at}</td>"
            f"<td class='num'>{number(e.get('confidence'))}</td>"
            f"<td>{lifted}</td>"
            "</tr>"
        )
    return (
        "<p>A certificate can never exceed the <em>ceiling</em> its test size "
        "allows (what a perfect classifier would certify). A value at its ceiling "
        "says &ldquo;as separable as this test can show&rdquo;: the test size, not "
        "the embeddings, limits it.</p>"
        "<table><thead><tr><th>certificate</th><th>certified &epsilon; &ge;</th>"
        "<th>ceiling</th><th></th><th>pairs at ceiling</th><th>confidence</th>"
        "<th>what would lift the ceiling</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _top_pairs(pairs, results, n=10):
    """Return the most leaky pairs, ordered by the per-pair ε columns in order."""
    columns = epsilon_columns(results, pairs)
    if not len(pairs) or not columns:
        return "<p>No per-pair results.</p>"
    keys = [column for column, _, _ in columns]
    primary = keys[0]
    audited = pairs[pairs[primary].notna()]
    top = audited.sort_values(keys, ascending=False, na_position="last").head(n)
    ceilings = {c: ceiling for c, _, ceiling in columns if ceiling in pairs.columns}
    cols = ["pair_rank", "id_a", "id_b", *keys]
    # The results' labels wrap where the column names cannot, so the table
    # fits the page; the pairs.csv name is the header's tooltip.
    labels = {c: label for c, label, _ in columns}
    head = "".join(
        f"<th title='{escape(c)}'>{escape(labels.get(c, c))}</th>" for c in cols
    )

    def cell(r, c):
        if c in ("id_a", "id_b"):
            return f"<td>{escape(r[c])}</td>"
        text = number(r[c])
        if c in ceilings and isinstance(r[c], float) and not math.isnan(r[c]):
            ceiling = r[ceilings[c]]
            text += f"<br><small>ceiling {number(ceiling)}</small>"
            if ceiling > 0 and math.isclose(r[c], ceiling, rel_tol=1e-9):
                text += "<br><span class='ceil'>at ceiling</span>"
        return f"<td class='num'>{text}</td>"

    body = "".join(
        "<tr>" + "".join(cell(r, c) for c in cols) + "</tr>"
        for r in top.to_dict(orient="records")
    )
    return (
        f"<p>The {len(top)} most leaky of the {len(audited)} pairs with "
        f"<code>{escape(primary)}</code>, ordered by the point estimates "
        f"{', then '.join(f'<code>{escape(k)}</code>' for k in keys)} (certificates "
        "last, each above its pair's ceiling: they mostly reflect the test size). "
        "All pairs are in "
        "<code>pairs.csv</code>.</p>"
        f"<div class='scroll'><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def _verdict(report):
    v = report.verdict
    leak = v["headline"].startswith(("Identities leak", "Identities are separable"))
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
    excluded = prov.get("excluded_columns", {})
    shown = ", ".join(map(str, used[:12])) + (
        f", ... ({len(used)} in all)" if len(used) > 12 else ""
    )
    rows = "".join(
        f"<tr><td><code>{escape(k)}</code></td><td>{escape(v)}</td></tr>"
        for k, v in excluded.items()
    )
    table = (
        "<table><thead><tr><th>column not audited</th><th>why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if rows
        else "<p>No column was left out.</p>"
    )
    return (
        f"<p>{len(used)} embedding columns audited: <code>{escape(shown)}</code>.</p>"
        + table
    )


def _provenance(prov, run_id):
    inp = prov.get("input", {})
    drops = prov.get("dropped_rows", {})
    items = [
        ("run id", run_id),
        ("input", inp.get("path", inp.get("source", "in-memory data"))),
        ("SHA-256", inp.get("sha256", "n/a")),
        *(
            (
                f"array {name} (SHA-256, shape, dtype)",
                f"{a['sha256']}, {tuple(a['shape'])}, {a['dtype']}",
            )
            for name, a in inp.get("arrays", {}).items()
        ),
        (
            "rows before / after cleaning",
            f"{prov['n_rows_before']} / {prov['n_rows_after']}",
        ),
        (
            "identities before / after",
            f"{prov['n_identities_before']} / {prov['n_identities_after']}",
        ),
        (
            "dropped rows by reason",
            ", ".join(f"{k}: {v}" for k, v in drops.items())
            + (
                f", missing identity: {inp['n_rows_missing_id']}"
                if inp.get("n_rows_missing_id")
                else ""
            ),
        ),
        (
            "excluded identities",
            ", ".join(map(str, prov["excluded_identities"])) or "none",
        ),
        ("protocol", prov["protocol"]),
        ("seed", prov["seed"]),
        (
            "pairs in the shared ordering used",
            f"{len(prov['pairs'])} of {prov['n_pairs_total']}",
        ),
        ("start / end (UTC)", f"{prov['start_time']} / {prov['end_time']}"),
        ("command line", prov.get("command_line", "n/a")),
        (
            "metadata (supplied)",
            "; ".join(f"{k} = {v}" for k, v in prov.get("metadata", {}).items())
            or "none",
        ),
        (
            "software",
            ", ".join(
                f"{k} {v}" for k, v in prov["versions"].items() if k != "platform"
            ),
        ),
    ]
    rows = "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in items
    )
    missing = prov.get("missing_generation_fields") or []
    if missing:
        rows += (
            "<tr><th>not recorded</th><td>"
            + ", ".join(f"<code>{escape(k)}</code>" for k in missing)
            + ": the embeddings file does not carry them; supply them with "
            "<code>--meta KEY=VALUE</code> (<code>metadata=</code> in Python) so the "
            "audit can be reproduced (generator fields do not apply to real "
            "photographs)</td></tr>"
        )
    warn = ""
    if prov.get("warnings"):
        warn = (
            "<p>Warnings raised during the audit:</p><pre>"
            + escape("\n".join(prov["warnings"]))
            + "</pre>"
        )
    return f"<table class='prov'><tbody>{rows}</tbody></table>{warn}"


def render_html(report):
    """Render an :class:`~skprivacy.report.AuditReport` as one HTML string."""
    prov = report.provenance
    fig_html = "".join(
        f'<figure><img alt="{escape(name)}" src="data:image/png;base64,{png}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
        for name, (caption, png) in report.figures.items()
    )
    title = "skprivacy identity-leakage audit"
    name = prov.get("input", {}).get("name", prov.get("input", {}).get("source", ""))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="skprivacy-run-id" content="{escape(report.run_id)}">
<title>{escape(title)}</title><style>{CSS}</style></head>
<body>
<div class="skprivacy-report">
<h1>{escape(title)}</h1>
<p class="sub">{escape(name or "in-memory data")} &middot;
{prov["n_rows_after"]} rows, {prov["n_identities_after"]} identities,
{prov["n_features"]} dimensions &middot; protocol <code>{escape(prov["protocol"])}</code>
&middot; seed {escape(prov["seed"])} &middot; skprivacy {escape(prov["versions"]["skprivacy"])}
<br><span class="runid">run {escape(report.run_id)}</span></p>
<h2>Verdict</h2>
{_verdict(report)}
<h2>What next</h2>
{_next_steps(report.next_steps)}
<h2>Certificates and their ceilings</h2>
{_certificates(report.results)}
<h2>Summary</h2>
<p class="note">Only results labelled <em>certificate</em> carry a confidence statement
(a lower bound on epsilon that holds with the stated probability under the stated
assumptions). <em>Point estimates</em> are plug-in values with no error bars: a large one
is evidence of leakage, a small one is not evidence of privacy.</p>
{_summary_table(report.results)}
<h2>Plots</h2>
<div class="grid">{fig_html}</div>
<h2>Most leaky pairs</h2>
{_top_pairs(report.pairs, report.results)}
<h2>Columns</h2>
{_columns(prov)}
<h2>Provenance</h2>
{_provenance(prov, report.run_id)}
</div>
</body></html>
"""


def html_body(document):
    """Return the markup for embedding (Jupyter): the style and body content."""
    style = document[document.index("<style>") : document.index("</style>") + 8]
    body = document[document.index("<body>") + 6 : document.index("</body>")]
    return style + body
