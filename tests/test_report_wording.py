# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a first reader of a report meets: sentences true of the run that was
made, every table column named, no Python ``None``, nothing said twice."""

import re
import types
import warnings

import numpy as np
import pandas as pd
import pytest

from skprivacy.datasets import make_identity_embeddings, read_embeddings
from skprivacy.exceptions import ExcludedColumnsWarning
from skprivacy.report import audit, audit_conditions
from skprivacy.report._verdict import next_steps


@pytest.fixture(scope="module")
def data():
    # 8 rows per identity: both certificates are skipped (ceiling 0).
    return make_identity_embeddings(12, 8, 8, random_state=0)


@pytest.fixture(scope="module")
def quick(data):
    return audit(*data, suggest_rank=False)


def _cells(html, heading):
    """Header and body cells of the first table after ``heading``."""
    table = html[html.index(heading) :]
    table = table[table.index("<table") : table.index("</table>")]
    head = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", table, flags=re.S)
    rows = [
        re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S)
    ]
    return head, rows


def test_a_run_without_tests_does_not_say_they_could_not_run(data):
    only = audit(*data, methods=["gaussmech"], suggest_rank=False)
    assert only.verdict["headline"] == (
        "No hypothesis test or certificate was requested; the results below are "
        "point estimates and diagnostics."
    )
    # Requested and skipped (8 rows per identity): then it could not run.
    skipped = audit(*data, methods=["gaussmech", "mmdtv_certificate"])
    assert skipped.results["mmdtv_certificate"]["skipped"]
    assert skipped.verdict["headline"] == (
        "No hypothesis test or certificate could run on these data; the results "
        "below are point estimates and diagnostics."
    )


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_what_next_names_skipped_results_without_repeating_their_reasons(quick):
    skipped = {e["title"]: e["reason"] for e in quick.results.values() if e["skipped"]}
    assert len(skipped) == 2  # both certificates
    (more,) = [s for s in quick.next_steps if s["action"] == "more rows"]
    assert more["text"] == (
        "Collect more images per identity (now 8): certificates and controls need "
        "tens of rows per identity; skipped here: "
        + ", ".join(skipped)
        + " (the reasons are above)."
    )
    html = quick.to_html()
    for reason in skipped.values():
        # Said in the verdict list and the certificates table, not in What next.
        what_next = html[html.index("What next") : html.index("Certificates and")]
        assert reason not in what_next


def test_the_paper_protocol_is_named_for_a_reader(quick):
    (step,) = [s for s in quick.next_steps if s["action"] == "protocol"]
    assert step["text"] == (
        "Run the protocol of the paper these auditors come from (\u201cPicture the "
        "Epsilon\u201d): more pairs and 10,000 permutations (or --protocol "
        "exhaustive for every pair)."
    )
    assert "paper 000" not in quick.to_html()


@pytest.mark.parametrize(
    "protocol, recommended", [("quick", True), ("paper", False), ("exhaustive", False)]
)
def test_the_paper_protocol_is_not_recommended_after_itself(protocol, recommended):
    # A run whose pair counts cover part of the pairs: the step is due unless
    # the run already used the paper (or exhaustive) protocol.
    ctx = types.SimpleNamespace(
        settings={"gaussmech_pairs": 10},
        n_pairs=lambda key: 10,
        n_pairs_total=66,
        counts=np.full(12, 20),
    )
    steps = next_steps({}, ctx, protocol, None, source="f.csv")
    assert [s["action"] for s in steps] == (["protocol"] if recommended else [])


def test_certificates_table_names_every_column_and_says_no_none(quick):
    head, rows = _cells(quick.to_html(), "Certificates and their ceilings")
    assert head == [
        "certificate",
        "certified &epsilon; &ge;",
        "ceiling",
        "pairs at ceiling",
        "confidence",
        "what would lift the ceiling",
    ]
    assert len(rows) == 2 and all(len(row) == len(head) for row in rows)
    for row in rows:  # skipped: no confidence statement is made
        assert row[4] == "n/a"
        assert "None" not in "".join(row)


def test_a_certificate_at_its_ceiling_is_marked_in_the_ceiling_column():
    X, ids = make_identity_embeddings(4, 60, 8, noise=0.05, random_state=0)
    report = audit(X, ids, methods=["rocht_certificate"], suggest_rank=False)
    entry = report.results["rocht_certificate"]
    assert entry["at_ceiling"]  # well separated: at the ceiling
    head, (row,) = _cells(report.to_html(), "Certificates and their ceilings")
    assert row[2] == (f"{entry['ceiling']:.4g}<br><span class='ceil'>at ceiling</span>")
    assert row[4] == "0.95"


@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_table_i_groups_median_and_max_under_each_method():
    conditions = {
        f"noise={s}": make_identity_embeddings(8, 6, 8, noise=s, random_state=1)
        for s in (0.5, 2.0)
    }
    report = audit_conditions(conditions, methods=["gaussmech", "mmdtv"])
    html = report.to_html()
    table = html[html.index("<table") : html.index("</table>")]
    head = re.findall(r"<th(\s[^>]*)?>(.*?)</th>", table)
    assert head == [
        (" rowspan='2'", "condition"),
        (" rowspan='2'", "rows"),
        (" rowspan='2'", "identities"),
        (" rowspan='2'", "pairs"),
        (" colspan='2'", "MMD-TV &epsilon;"),
        (" colspan='2'", "GaussMech &epsilon;"),
        *[("", "median"), ("", "max")] * 2,
    ]
    _, rows = _cells(html, "<table")
    for (_, expected), row in zip(report.table_i.iterrows(), rows):
        values = [expected[c] for c in ("n_rows", "n_identities", "n_pairs")]
        values += [expected[f"{m} {s}"] for m in ("MMD-TV", "GaussMech")
                   for s in ("median", "max")]  # fmt: skip
        assert row[1:] == [
            f"{int(v):d}" if k < 3 else f"{float(v):.4g}" for k, v in enumerate(values)
        ]


def test_no_features_hint_for_columns_excluded_by_name(tmp_path):
    X, ids = make_identity_embeddings(6, 5, 8, random_state=0)
    frame = pd.DataFrame(X, columns=[f"e{j}" for j in range(8)])
    frame.insert(0, "identity", ids)
    frame["note"] = "x"
    path = tmp_path / "emb.csv"
    frame.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExcludedColumnsWarning)
        _, _, info = read_embeddings(path, exclude="^note$")
    assert info["excluded_columns"] == {"note": "matches exclude pattern '^note$'"}
    # Another column left out by the classification is still said, alone.
    frame["frame"] = np.arange(len(frame)) % 3
    frame.to_csv(path, index=False)
    with pytest.warns(ExcludedColumnsWarning) as record:
        read_embeddings(path, exclude="^note$")
    (message,) = [str(w.message) for w in record]
    assert message == (
        "emb.csv: Columns not used as embedding dimensions: 'frame' "
        "(integer-valued (metadata such as a frame, shot or pose number)). Pass "
        "features=/--features to choose the embedding columns explicitly."
    )
