"""
ROC-HT on real face embeddings: ε, AUC, corners and controls
============================================================

:class:`~skprivacy.ROCHTAuditor` trains a classifier per identity pair, pools
its out-of-fold probabilities into one ROC and evaluates the
Kairouz–Oh–Viswanath bound at every operating point. On well-separated
identities the value is often ``inf`` (an endpoint of the ROC), which is
algebraically correct but is a *point estimate*, not a certificate; AUC and the
exact (0, 1) corner are reported beside it. We audit the bundled Yale faces
(15 people; the weaker HOG + PCA descriptors, so that not every pair is
perfectly separable), check the classifier sensitivity with a
random forest on identical pairs and folds, and run same-identity split-half
controls.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from skprivacy import ROCHTAuditor
from skprivacy.auditors import (
    compare_roc_audits,
    roc_operating_points,
    split_half_controls,
)
from skprivacy.datasets import load_yale_faces

yale = load_yale_faces(encoder="hog_pca128")
X, ids = yale.data, yale.identity

# %%
# Per-pair audit
# --------------
# 20 of the 105 identity pairs, 5-fold stratified CV, default logistic
# regression (the paper's settings).
lr = ROCHTAuditor(n_pairs=20, random_state=0).fit(X, ids)
print(lr.results_[["id_a", "id_b", "epsilon", "auc", "tv", "corner"]].head())
print(
    f"median eps (score): {lr.score()}, pairs with eps = inf: "
    f"{np.isinf(lr.results_['epsilon']).sum()}/20, exact corners: {lr.n_corners_}, "
    f"mean AUC: {lr.auc_mean_:.3f}"
)

# %%
# The ROC of the least separable pair
# -----------------------------------
# The same out-of-fold scores, recomputed with scikit-learn, and the operating
# point that maximises the KOV bound.
worst = lr.results_["auc"].idxmin()
row = lr.results_.loc[worst]
Z = X / np.linalg.norm(X, axis=1, keepdims=True)
Xp = np.vstack([Z[ids == row.id_a], Z[ids == row.id_b]])
yp = np.r_[np.zeros((ids == row.id_a).sum()), np.ones((ids == row.id_b).sum())]
scores = cross_val_predict(
    LogisticRegression(max_iter=1000),
    Xp,
    yp,
    cv=StratifiedKFold(5, shuffle=True, random_state=0),
    method="predict_proba",
)[:, 1]
fpr, tpr, _ = roc_operating_points(yp, scores)
fig, ax = plt.subplots(figsize=(4, 4))
ax.plot(fpr, tpr, drawstyle="steps-post", marker=".")
ax.plot(row.fpr, row.tpr, "r*", ms=12, label=f"max KOV: eps = {row.epsilon:.3g}")
ax.set_xlabel("FPR")
ax.set_ylabel("TPR")
ax.set_title(f"{row.id_a} vs {row.id_b}, AUC {row.auc:.3f}")
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# Classifier sensitivity
# ----------------------
# Same pairs and same folds, random forest instead of logistic regression.
rf = ROCHTAuditor(RandomForestClassifier(n_estimators=25), n_pairs=20).fit(X, ids)
cmp = compare_roc_audits(lr, rf)
print(f"mean AUC difference (LR - RF): {cmp.mean_auc_difference:+.4f}")

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.hist(cmp.results["auc_difference"], bins=20)
ax.set_xlabel("per-pair AUC difference, logistic - random forest")
ax.set_ylabel("pairs")
fig.tight_layout()

# %%
# Split-half controls
# -------------------
# Each identity's rows are split into two random halves and audited as if
# they were two identities. Both halves come from one distribution, so the
# AUC should sit near 0.5 and exact corners should not occur.
ctl = split_half_controls(ROCHTAuditor(), X, ids, random_state=0)
print(
    f"controls: {ctl.n_controls}, mean AUC {ctl.results['auc'].mean():.3f}, "
    f"exact corners {int(ctl.results['corner'].sum())}"
)
