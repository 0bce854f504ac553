"""
Planning an audit: how many images per identity?
================================================

A certificate is a lower confidence bound, so its value can never exceed what a
perfectly separated pair of identities certifies at the same sample sizes: the
*ceiling*. :func:`skprivacy.plan_audit` computes the ceilings, the smallest
p-value of the permutation test and the smallest false-accept rate a
verification TAR can be read at, before any image is collected, and the rows
per identity needed for more. It uses the functions the audit report uses, so
the plan and a real audit of the planned sizes agree.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

from skprivacy import audit, plan_audit
from skprivacy.auditors import (
    mmd_certificate_ceiling,
    reserved_test_rows,
    rocht_certificate_ceiling,
)
from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import PROTOCOLS

# %%
# The plan of one data collection
# -------------------------------
# 40 identities with 20 images each, certificates simultaneous over 30 pairs,
# asking how many images would certify ε > 1 and resolve a FAR of 1e-4.
plan = plan_audit(40, 20, n_pairs=30, epsilon=1.0, far=1e-4)
print(
    plan[
        [
            "method",
            "ceiling",
            "smallest_p_value",
            "smallest_far",
            "target",
            "rows_needed",
        ]
    ].to_string(index=False)
)

# %%
# Ceilings against images per identity
# ------------------------------------
# The ROC-HT certificate uses the 30 % of each identity's rows it reserves for
# its test; the MMD-TV certificate pays for 37 candidate bandwidths and can
# never exceed 1.763. Certifying more pairs together lowers both.
rows = np.arange(4, 401, 2)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for n_pairs in (1, 30, 780):
    n_test = reserved_test_rows(rows, 0.3)
    axes[0].plot(
        rows,
        rocht_certificate_ceiling(n_test, n_test, n_comparisons=n_pairs),
        label=f"{n_pairs} pairs",
    )
    axes[1].plot(
        rows,
        mmd_certificate_ceiling(rows, rows, n_comparisons=n_pairs, n_bandwidths=37),
        label=f"{n_pairs} pairs",
    )
axes[0].set_title("ROC-HT certificate (test_size 0.3)", fontsize=10)
axes[1].set_title("MMD-TV certificate", fontsize=10)
for ax in axes:
    ax.set_xlabel("images per identity")
    ax.set_xscale("log")
axes[0].set_ylabel("largest certifiable epsilon (95 %)")
axes[1].legend(fontsize=8)
fig.tight_layout()

# %%
# The plan agrees with the audit
# ------------------------------
# An audit of 10 identities with 60 images each, both certificates over every
# pair (45): the ceilings its summary reports are the planned ones.
X, ids = make_identity_embeddings(10, 60, 16, random_state=0)
protocol = dict(PROTOCOLS["quick"], certificate_pairs=None, mmdtv_certified_pairs=None)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    report = audit(
        X,
        ids,
        methods=["rocht_certificate", "mmdtv_certificate"],
        protocol=protocol,
        suggest_rank=False,
        random_state=0,
    )
planned = plan_audit(10, 60).set_index("method")
for key in ("rocht_certificate", "mmdtv_certificate"):
    print(
        f"{key}: audit ceiling {report.results[key]['ceiling']:.4f}, "
        f"planned {planned.loc[key, 'ceiling']:.4f}"
    )
