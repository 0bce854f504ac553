# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""One self-contained HTML file: inline CSS, base64 PNG plots, no network resources."""

import html
import math

from skprivacy.report._plots import figures

__all__ = ["render_html"]

_CSS = """
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
"""


def _e(x):
    return html.escape(str(x))


def _num(v):
    if isinstance(v, bool) or v is None:
        return _e(v)
    if isinstance(v, int):
        return f"{v:d}"
    if isinstance(v, float):
        if math.isinf(v):
            return "&infin;" if v > 0 else "-&infin;"
        if math.isnan(v):
            return "n/a"
        return f"{v:.4g}"
    return _e(v)


def _kind(kind):
    cls = (
        "k-certificate"
        if kind == "certificate"
        else "k-point"
        if kind == "point estimate"
        else "k-other"
    )
    return f'<span class="kind {cls}">{_e(kind)}</span>'


def _summary_table(summary):
    rows = []
    for key, s in summary.items():
        rows.append(
            "<tr>"
            f"<td><code>{_e(key)}</code><br>{_e(s.get('estimator', ''))}</td>"
            f"<td class='num'>{_num(s.get('value'))}</td>"
            f"<td>{_kind(s.get('kind', ''))}</td>"
            f"<td>{_e(s.get('statistic', ''))}</td>"
            f"<td>{_e(s.get('certifies', ''))}</td>"
            f"<td>{_e(s.get('does_not_certify', ''))}</td>"
            "</tr>"
        )
    return (
        "<table><thead><tr><th>result</th><th>value</th><th>kind</th>"
        "<th>what the number is</th><th>what it does say</th>"
        "<th>what it does not say</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _top_pairs(pairs, n=10):
    eps_cols = [c for c in pairs.columns if c.endswith("_epsilon")]
    if not len(pairs) or not eps_cols:
        return "<p>No per-pair results.</p>"
    # Certified values first (they are the findings that carry a guarantee),
    # then the point estimates as tie-breakers.
    keys = [
        c
        for c in ("cert_epsilon", "mmdtv_epsilon", "rocht_epsilon", "gaussmech_epsilon")
        if c in pairs.columns
    ] or eps_cols[:1]
    top = pairs.sort_values(keys, ascending=False, na_position="last").head(n)
    cols = ["pair_rank", "id_a", "id_b", *eps_cols]
    cols += [c for c in ("rocht_auc", "perm_p_value") if c in pairs.columns]
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='num'>{_num(r[c])}</td>"
            if c not in ("id_a", "id_b")
            else f"<td>{_e(r[c])}</td>"
            for c in cols
        )
        + "</tr>"
        for r in top.to_dict(orient="records")
    )
    return (
        f"<p>The {len(top)} most leaky of {len(pairs)} audited pairs by "
        f"{', then '.join(f'<code>{_e(k)}</code>' for k in keys)} (all pairs are in "
        "<code>pairs.csv</code>).</p>"
        f"<div class='scroll'><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def _provenance(prov):
    inp = prov.get("input", {})
    drops = prov.get("dropped_rows", {})
    items = [
        ("input", inp.get("path", "in-memory data")),
        ("SHA-256", inp.get("sha256", "n/a")),
        ("embedding columns", inp.get("n_feature_columns", prov.get("n_features"))),
        (
            "excluded columns",
            "; ".join(f"{k} ({v})" for k, v in inp.get("excluded_columns", {}).items())
            or "none",
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
            "software",
            ", ".join(
                f"{k} {v}" for k, v in prov["versions"].items() if k != "platform"
            ),
        ),
    ]
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in items)
    warn = ""
    if prov.get("warnings"):
        warn = (
            "<p>Warnings raised during the audit:</p><pre>"
            + _e("\n".join(prov["warnings"]))
            + "</pre>"
        )
    unavailable = prov.get("unavailable_methods") or {}
    if unavailable:
        warn += (
            "<p>Methods not available in this installation: "
            + _e(", ".join(sorted(unavailable)))
            + ".</p>"
        )
    return f"<table class='prov'><tbody>{rows}</tbody></table>{warn}"


def render_html(report):
    """Render an :class:`~skprivacy.report.AuditReport` as one HTML string."""
    prov = report.provenance
    figs = figures(report.extra)
    fig_html = "".join(
        f'<figure><img alt="{_e(name)}" src="data:image/png;base64,{png}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
        for name, (caption, png) in figs.items()
    )
    from skprivacy import __version__

    title = "skprivacy identity-leakage audit"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="sub">{_e(prov.get("input", {}).get("name", "in-memory data"))} &middot;
{prov["n_rows_after"]} rows, {prov["n_identities_after"]} identities,
{prov["n_features"]} dimensions &middot; protocol <code>{_e(prov["protocol"])}</code>
&middot; seed {_e(prov["seed"])} &middot; skprivacy {_e(__version__)}</p>
<h2>Summary</h2>
<p class="note">Only results labelled <em>certificate</em> carry a confidence statement
(a lower bound on epsilon that holds with the stated probability under the stated
assumptions). <em>Point estimates</em> are plug-in values with no error bars: a large one
is evidence of leakage, a small one is not evidence of privacy.</p>
{_summary_table(report.summary)}
<h2>Plots</h2>
<div class="grid">{fig_html}</div>
<h2>Most leaky pairs</h2>
{_top_pairs(report.pairs)}
<h2>Provenance</h2>
{_provenance(prov)}
</body></html>
"""
