"""
GaussMech and KDE-LR diagnostics on real face embeddings
========================================================

GaussMech reads the mean gap between two identities as the sensitivity of a
Gaussian mechanism; KDE-LR sums per-dimension density log-ratios. Both are
**point estimates and diagnostics**, not certificates. We audit the bundled
Yale faces (15 people, dlib ResNet embeddings), look at how much the KDE-LR
value depends on its smoothing weight and which dimensions dominate it, and
run the residual Gaussianity check that GaussMech's reading relies on.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from skprivacy import GaussMechAuditor, KDELRAuditor
from skprivacy.auditors import kde_lr_alpha_sweep, residual_gaussianity
from skprivacy.datasets import load_yale_faces

yale = load_yale_faces()
X, ids = yale.data, yale.identity

# %%
# GaussMech over all 105 pairs
# ----------------------------
gauss = GaussMechAuditor(n_pairs=None).fit(X, ids)
print(f"GaussMech median eps: {gauss.score():.1f} ({gauss.guarantee_})")
print(gauss.results_.describe().loc[["mean", "min", "max"]])

# %%
# KDE-LR at the paper's two smoothing weights, from one set of KDEs
# -----------------------------------------------------------------
sweep = kde_lr_alpha_sweep(X, ids, alphas=(0.0, 0.01), n_pairs=None)
print(sweep.median(numeric_only=True))
kde = KDELRAuditor(n_pairs=None).fit(X, ids)
per_dim = kde.epsilon_per_dimension_

fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
axes[0].scatter(sweep["epsilon_alpha=0"], sweep["epsilon_alpha=0.01"], s=10)
axes[0].set_xlabel("KDE-LR ε, α = 0")
axes[0].set_ylabel("KDE-LR ε, α = 0.01")
axes[1].plot(np.sort(per_dim.mean(axis=0))[::-1])
axes[1].set_xlabel("dimension (sorted)")
axes[1].set_ylabel("mean per-dimension ε")
fig.tight_layout()

# %%
# Is the Gaussian residual assumption plausible?
# ----------------------------------------------
diag = residual_gaussianity(X, ids)
print(
    f"{diag.n_rejected} of {diag.n_dimensions} dimensions reject Gaussianity "
    f"at p < {diag.threshold:g} ({diag.n_residuals} pooled residuals)"
)
worst = int(diag.results.sort_values("p_value")["dimension"].iloc[0])
fig, ax = plt.subplots(figsize=(4, 4))
ax.plot(diag.qq["theoretical"], diag.qq[worst], ".", label=f"dimension {worst}")
lim = [diag.qq["theoretical"].min(), diag.qq["theoretical"].max()]
ax.plot(lim, lim, "k--", lw=1)
ax.set_xlabel("normal quantile")
ax.set_ylabel("standardised residual quantile")
ax.legend()
fig.tight_layout()
plt.show()
