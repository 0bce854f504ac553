"""
A released kNN graph and prototype bank as stages of the cascade
================================================================

Paper 002's release R4 publishes no new embedding: it publishes a
*prototype bank* (one mean embedding per identity) and a *kNN graph* over the
gallery, both computed from embeddings the releaser keeps. Such artifacts are
not columns an attacker can read, so they enter :class:`~skprivacy.RenyiPressure`
as :class:`~skprivacy.pressure.ArtifactRelease` stages: each is attacked by
its own attacker and joins a cumulative state through that attacker's
log-posterior, with a weight chosen like any release's.

Here R1 is a weak embedding release, R2 a stronger one, and R4 the graph built
from a third, never-released encoder. :class:`~skprivacy.pressure.GraphAttacker`
is the graph-only attacker (A0-Graph): it sees only the edges of the query's
node, i.e. the identities of its nearest gallery nodes.

All numbers are plug-in point estimates for these attackers, mean ± std over
seeded splits; none is a bound on what a stronger attacker could do.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from skprivacy import RenyiPressure, RetrievalAttacker
from skprivacy.datasets import make_identity_embeddings
from skprivacy.plotting import PressureStagesDisplay
from skprivacy.pressure import ArtifactRelease, GraphAttacker, PrototypeAttacker

n_identities, n_rows, d = 30, 12, 32
blocks = []
for separation, seed in [(0.4, 1), (0.7, 2), (1.0, 3)]:
    Z, ids = make_identity_embeddings(
        n_identities, n_rows, d, separation=separation, noise=1.0, random_state=seed
    )
    blocks.append(Z)
X = np.hstack(blocks)
private = slice(2 * d, 3 * d)  # the encoder behind the R4 artifacts

# %%
# The graph alone
# ---------------
# How much does the kNN graph give away by itself? The graph-only attacker
# against the prototype bank (A2, which adds the cosine to each identity's
# prototype to the same vote) on the same splits.
graph_only = RenyiPressure(GraphAttacker(n_neighbors=10), random_state=0).fit(
    X[:, private], ids
)
bank = RenyiPressure(PrototypeAttacker(n_neighbors=10), random_state=0).fit(
    X[:, private], ids
)
print(f"log N = {np.log(n_identities):.3f} nats")
print(f"A0-Graph (graph only)    vRPI_2 = {graph_only.score():.3f}")
print(f"A2 (bank + graph)        vRPI_2 = {bank.score():.3f}")

# %%
# The cascade R1, R2, R4
# ----------------------
# R4 is declared by the columns it is computed from and the attacker that
# models it. The state after R4 combines the retrieval attacker on R1 + R2
# with the graph attacker's log-posterior.
releases = {
    "R1": slice(0, d),
    "R2": slice(d, 2 * d),
    "R4 graph": ArtifactRelease(private, GraphAttacker(n_neighbors=10)),
}
audit = RenyiPressure(
    RetrievalAttacker(),
    releases=releases,
    alphas=(2, np.inf),
    n_repeats=2,
    random_state=0,
).fit(X, ids)
cols = ["kind", "releases", "vrpi", "vrpi_std", "p_guess", "weight"]
print(audit.results_.loc[audit.results_["alpha"] == 2, cols].round(3))

# %%
# Which state each stage used, and how it was chosen: by the calibration
# rows, or by the held-out guard that keeps a cumulative stage from scoring
# below a state it contains.
rep = audit.repeat_results_
chosen = rep[(rep["kind"] == "cumulative") & (rep["alpha"] == 2)]
print(chosen[["repeat", "t", "state", "selected_by"]].to_string(index=False))

# %%
PressureStagesDisplay.from_estimator(audit, alpha=2)
plt.show()
