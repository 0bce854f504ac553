"""
Transfer audit: does a projector fitted on some people protect others?
======================================================================

A sanitiser is fitted once, on the identities its owner has labels for, and
then applied to everyone else's embeddings. What matters is the leakage of
**people it never saw**. :func:`~skprivacy.sanitize.transfer_audit` measures
exactly that: it fits the sanitiser on a *source* set of identities, then runs
the open-set verification audit (:class:`~skprivacy.sanitize.OpenSetVerificationAuditor`,
attacker probe trained and audited on identity-disjoint folds) on a disjoint
*target* set, once on the raw and once on the sanitised target embeddings.
With ``labels_target`` it also reports the utility kept (an attribute probe's
accuracy and retrieval precision).

Here the embeddings are synthetic (:func:`~skprivacy.datasets.make_identity_embeddings`)
with an attribute independent of identity planted in its own subspace, so the
sanitiser should remove the identity and keep the attribute. We compare ranks
of :class:`~skprivacy.sanitize.ISP` fitted on 200 source identities, and show
what happens when the source has too few identities to estimate the subspace.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import ISP, OpenSetVerificationAuditor, transfer_audit

bunch = make_identity_embeddings(
    300,
    6,
    64,
    n_identity_dims=12,
    n_attribute_classes=3,
    attribute_strength=0.25,
    return_X_y=False,
    random_state=0,
)
X, ids, attribute = bunch.data, bunch.identity, bunch.attribute
source, target = ids < 200, ids >= 200  # disjoint identities
auditor = OpenSetVerificationAuditor(far=1e-2, random_state=0)

# %%
# Leakage and utility on unseen identities, by rank
# -------------------------------------------------
# Each call fits ``ISP(r)`` on the source identities only; the audit never
# sees them. ``"auto"`` is the default rank rule.
rows = []
for rank in [0, 6, 12, "auto"]:
    table = transfer_audit(
        ISP(rank),
        X[source],
        ids[source],
        X[target],
        ids[target],
        attribute[target],
        auditor=auditor,
    )
    after = table.set_index("stage").loc["after"]
    rows.append(
        {
            "n_components": str(rank),
            "tar": after["tar"],
            "tar_lower": after["tar_lower"],
            "tar_upper": after["tar_upper"],
            "attribute_accuracy": after["attribute_accuracy"],
        }
    )
before = table.set_index("stage").loc["before"]
results = pd.DataFrame(rows)
print(
    f"raw target embeddings: TAR@FAR=1e-2 {before['tar']:.3f}, "
    f"attribute accuracy {before['attribute_accuracy']:.3f}"
)
print(results.round(3).to_string(index=False))

# %%
# Too few source identities
# -------------------------
# With 10 source identities the centred mean matrix has rank at most 9, so a
# projector fitted there cannot span the 12 identity directions: the target's
# leakage drops less than with 200 source identities.
few = ids < 10
small = transfer_audit(
    ISP(9),
    X[few],
    ids[few],
    X[target],
    ids[target],
    attribute[target],
    auditor=auditor,
)
print(
    small[["stage", "tar", "tar_lower", "tar_upper", "attribute_accuracy"]]
    .round(3)
    .to_string(index=False)
)

# %%
fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
x = np.arange(len(results))
err = np.vstack(
    [results["tar"] - results["tar_lower"], results["tar_upper"] - results["tar"]]
)
ax.errorbar(
    x,
    results["tar"],
    yerr=err,
    fmt="o-",
    color="C3",
    label="TAR at FAR=1e-2, unseen identities",
)
ax.plot(
    x,
    results["attribute_accuracy"],
    "s--",
    color="C0",
    label="attribute accuracy (utility)",
)
ax.axhline(before["tar"], color="C3", ls=":", label="TAR before sanitising")
ax.set_xticks(x, results["n_components"])
ax.set_xlabel("ISP n_components (fitted on 200 source identities)")
ax.set_ylim(0, 1.05)
ax.legend(loc="center right")
plt.show()
