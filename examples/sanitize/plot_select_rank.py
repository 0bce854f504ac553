"""
Erase to a target: the smallest ISP rank with a confidence statement
====================================================================

:func:`~skprivacy.sanitize.select_rank` answers "how much must I erase?": for
each rank it cross-fits the eraser (every identity transformed by an
:class:`~skprivacy.sanitize.ISP` fitted on the *other* identities), measures
open-set verification TAR at a fixed FAR on that output with an upper
confidence bound that treats people (not pairs) as the independent draws,
and returns the smallest rank whose bound is at or below the target. The
bounds hold jointly over every rank tried, and the utility of each rank, on a
task we name, sits in the same table.

The data are synthetic with a known answer: identity lives in 8 of 64
dimensions, and a 3-class attribute (the utility task) in others.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, cross_val_score

from skprivacy.datasets import make_identity_embeddings
from skprivacy.sanitize import ISP, select_rank

X, ids, attribute = make_identity_embeddings(
    200,
    8,
    64,
    n_identity_dims=8,
    separation=2.0,
    n_attribute_classes=3,
    attribute_strength=0.3,
    random_state=0,
)


def utility(Z):
    """Attribute accuracy on people the probe was not trained on."""
    probe = LogisticRegression(max_iter=1000)
    return cross_val_score(probe, Z, attribute, groups=ids, cv=GroupKFold(3)).mean()


TARGET = 0.05
result = select_rank(
    ISP(), X, ids, target=TARGET, far=1e-3, cv=5, scoring=utility, random_state=0
)
table = result.table_
print(f"smallest rank meeting TAR@FAR=1e-3 <= {TARGET}: {result.rank_}")
print(table[["rank", "tar", "tar_upper", "reid_rate", "utility", "meets_target"]])

# %%
# Leakage, its bound and utility by rank
# --------------------------------------
# The chosen rank is the first whose *bound*, not its point estimate, is at
# or below the target. Ranks beyond the identity subspace erase the attribute
# as well, and utility falls.
positions = range(len(table))
fig, ax = plt.subplots(figsize=(6.5, 4), constrained_layout=True)
ax.plot(positions, table["tar"], "o-", color="C3", label="TAR at FAR=1e-3")
ax.plot(positions, table["tar_upper"], "v--", color="C3", label="its upper bound")
ax.plot(positions, table["utility"], "s-", color="C0", label="attribute accuracy")
ax.axhline(TARGET, color="grey", lw=1, label="target")
ax.axvline(list(table["rank"]).index(result.rank_), color="k", ls=":", label="rank_")
ax.set_xticks(list(positions), [str(r) for r in table["rank"]])
ax.set_xlabel("ISP rank (n_components)")
ax.set_ylim(-0.02, 1.02)
ax.legend(loc="center right")
plt.show()

# %%
# The chosen eraser, fitted on every row, is ready to export
# (:meth:`~skprivacy.sanitize.ISP.to_npz`).
print(result.eraser_.n_components_, result.eraser_.components_.shape)
