"""
Pressure of cumulative releases for an attacker ladder
======================================================

Three releases about the same people, each a block of embedding columns: a
weak encoder (R1), a stronger one (R2) and weak generic features (R3). They are
generated independently given the identity with
:func:`~skprivacy.datasets.make_identity_embeddings` (same identities, same row
order, different identity means and noise). :func:`~skprivacy.pressure_ladder`
audits two attackers on the same splits: retrieval against the gallery (A0) and
a released prototype bank with a kNN graph (A2).

All numbers are plug-in point estimates for these attackers, mean ± std over
seeded splits; none is a bound on what a stronger attacker could do.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from skprivacy import PrototypeAttacker, RetrievalAttacker, pressure_ladder
from skprivacy.datasets import make_identity_embeddings

n_identities, n_rows, d = 30, 12, 32
blocks = {}
for name, separation, seed in [("R1", 0.5, 1), ("R2", 1.0, 2), ("R3", 0.35, 3)]:
    Z, ids = make_identity_embeddings(
        n_identities, n_rows, d, separation=separation, noise=1.0, random_state=seed
    )
    blocks[name] = Z
X = np.hstack(list(blocks.values()))
releases = {name: slice(i * d, (i + 1) * d) for i, name in enumerate(blocks)}

table = pressure_ladder(
    X,
    ids,
    {
        "A0 retrieval": RetrievalAttacker(),
        "A2 prototype+graph": PrototypeAttacker(n_neighbors=5),
    },
    releases=releases,
    weight_grid=(0, 0.5, 1, 2),
    n_repeats=2,
    random_state=0,
)

# %%
# The stage table
# ---------------
# ``cumulative`` rows are the states R1, R1+R2, R1+R2+R3; ``single`` rows are
# each release alone. ``weight`` is the calibration-tuned weight of the newest
# release in the concatenation (0 would mean the attacker ignores it).
cols = [
    "attacker",
    "kind",
    "releases",
    "vrpi",
    "vrpi_std",
    "p_guess",
    "top1_accuracy",
    "weight",
]
print(table.loc[table["alpha"] == 2, cols].round(3).to_string(index=False))

# %%
# Pressure by stage and order
# ---------------------------
# The dotted line is the ceiling log N. Higher orders weigh confident
# re-identifications more; the order-infinity pressure is
# log N + log P_guess.
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
for ax, (attacker, t) in zip(axes, table.groupby("attacker")):
    cum = t[t["kind"] == "cumulative"]
    for alpha, g in cum.groupby("alpha"):
        ax.errorbar(
            g["t"],
            g["vrpi"],
            yerr=g["vrpi_std"],
            marker="o",
            label=f"alpha={alpha:g}",
            capsize=3,
        )
    ax.axhline(np.log(n_identities), ls=":", color="k")
    ax.set_xticks([1, 2, 3], ["R1", "+R2", "+R3"])
    ax.set_title(attacker)
    ax.set_xlabel("release stage")
axes[0].set_ylabel("vRPI (nats)")
axes[1].legend(fontsize=8)
fig.tight_layout()

# %%
# Attacker confidence versus success
# ----------------------------------
# P_guess is the success probability the attacker's posterior *expects*;
# top-1 accuracy is its actual success on the queries. Close values mean the
# calibrated posteriors are honest; where P_guess exceeds the accuracy the
# attacker is overconfident and its pressure overstates what it achieves. The
# Theorem-2 bound at alpha = 2 sits above P_guess by construction.
summary = table[(table["kind"] == "cumulative") & (table["alpha"] == 2)]
print(
    summary[["attacker", "releases", "p_guess", "top1_accuracy", "guessing_bound"]]
    .round(3)
    .to_string(index=False)
)
