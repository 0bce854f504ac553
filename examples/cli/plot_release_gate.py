"""
A release gate: fail a pipeline when an audit finds too much
============================================================

``skprivacy audit`` writes its report and exits 0 whatever it finds, unless a
release gate is given:

* ``--max-certified-epsilon E`` exits with status 1 when a certificate proves
  epsilon above ``E`` (a certified *lower* bound exceeds ``E``);
* ``--fail-on separable`` (or ``leak``) exits with status 1 when the verdict
  level of ``summary.json`` is at or above that level (little evidence <
  inconclusive < separable < leak).

The report is written first, and a failed gate prints one line on stderr
saying which gate failed and why, so a CI step can keep the report as its
artefact::

    skprivacy audit embeddings.parquet --out audit_report \\
        --fail-on separable --max-certified-epsilon 1

Here two planted files stand in for a release candidate: one whose four
identities lie far apart (leaky), one whose rows all come from one
distribution (clean).
"""

# %%
import json
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skprivacy import plan_audit
from skprivacy.cli import main

rng = np.random.default_rng(0)
n_ids, n_rows, dim = 4, 60, 4
ids = np.repeat(np.arange(n_ids), n_rows)
folder = Path(tempfile.mkdtemp())
files = {
    "leaky": 10.0 * np.eye(dim)[ids] + rng.normal(size=(ids.size, dim)),
    "clean": rng.normal(size=(ids.size, dim)),
}
for name, X in files.items():
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(dim)])
    frame.insert(0, "identity", ids)
    frame.to_csv(folder / f"{name}.csv", index=False)

# %%
# The gate in a pipeline step: the exit status is the decision, the report
# (here ``summary.json``) is the evidence behind it.
E = 0.5
for name in files:
    out = folder / f"report_{name}"
    status = main(
        [
            "audit", str(folder / f"{name}.csv"), "--out", str(out), "--quiet",
            "--methods", "rocht_certificate", "mmdtv_certificate", "permutation",
            "--max-certified-epsilon", str(E),
        ]
    )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    certified = {
        key: round(entry["value"], 3)
        for key, entry in summary["results"].items()
        if entry["kind"] == "certificate"
    }
    print(f"{name}: exit status {status}, certified epsilon {certified}")

# %%
# A gate can only fail when the audit can certify more than ``E``: a
# certificate never exceeds its *ceiling*, which depends on the sample sizes
# alone. ``skprivacy plan`` (:func:`skprivacy.plan_audit`) gives the ceiling
# before any data are collected. With fewer than 40 rows per identity, the
# ROC-HT certificate of four identities cannot pass ``E`` whatever the data,
# so a passing gate would say nothing; at 60 rows the leaky file's certificate
# (1.033) is at its ceiling.
rows = np.arange(10, 161, 10)
ceilings = [
    plan_audit(n_ids, int(r)).set_index("method").loc["rocht_certificate", "ceiling"]
    for r in rows
]
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(rows, ceilings, marker="o", label="ROC-HT certificate ceiling")
ax.axhline(E, color="C3", linestyle="--", label=f"--max-certified-epsilon {E:g}")
ax.axvline(n_rows, color="0.6", linestyle=":", label=f"{n_rows} rows (this audit)")
ax.set_xlabel("rows per identity")
ax.set_ylabel("largest certifiable epsilon")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
