"""
A cross-validated audit
=======================

Auditors are scikit-learn estimators: ``fit(X, ids)`` audits, ``score(X, ids)``
audits new data with the fitted settings and returns the leakage (higher =
leakier). So :func:`~sklearn.model_selection.cross_validate` gives an audit with
an error bar. Which folds to use depends on the question:

* **Stratified folds** (:class:`~sklearn.model_selection.StratifiedKFold` on
  the identity labels) keep every identity on both sides of each split. Each
  test fold re-audits the *same people* on unseen images: the spread across
  folds is the sampling noise of the audit for this population.
* **Identity-grouped folds** (:class:`~sklearn.model_selection.GroupKFold` with
  ``groups=ids``) keep identities apart. Each test fold audits *other people*:
  the spread says how much the leakage varies from one group of identities to
  another, i.e. whether the audit generalises to people you have not seen.

A third use is the certificate's natural shape: :class:`~skprivacy.ROCHTCertifier`
trains its per-pair classifiers on the training fold and certifies on the
held-out fold, so every fold gives a valid simultaneous certificate.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_validate

from skprivacy import ROCHTCertifier
from skprivacy.auditors import GaussMechAuditor, MMDTVAuditor, family_confidence
from skprivacy.datasets import load_cropped_yale_b

faces = load_cropped_yale_b()
X, ids = faces.data, faces.identity
print(X.shape, len(np.unique(ids)), "identities")

# %%
# Point estimates under both fold schemes. ``n_pairs=None`` audits every pair
# of the identities present in the test fold.
rows = []
for auditor in [GaussMechAuditor(n_pairs=None), MMDTVAuditor(n_pairs=None)]:
    for name, cv, groups in [
        ("stratified", StratifiedKFold(4, shuffle=True, random_state=0), None),
        ("identity-grouped", GroupKFold(4), ids),
    ]:
        cvres = cross_validate(auditor, X, ids, groups=groups, cv=cv)
        for fold, value in enumerate(cvres["test_score"]):
            rows.append(
                {
                    "auditor": type(auditor).__name__,
                    "folds": name,
                    "fold": fold,
                    "score": value,
                }
            )
scores = pd.DataFrame(rows)
print(scores.groupby(["auditor", "folds"])["score"].agg(["mean", "std"]))

# %%
# Stratified test folds hold a quarter of each identity's images, so their
# scores are noisier than the full-data audit but refer to the same people;
# grouped folds vary more because they audit different people.
fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
for ax, (name, group) in zip(axes, scores.groupby("auditor")):
    for i, (_, g) in enumerate(group.groupby("folds")):
        ax.plot(np.full(len(g), i), g["score"], "o", alpha=0.7)
    ax.set_xticks([0, 1], sorted(group["folds"].unique()))
    ax.set_title(name)
    ax.set_ylabel("held-out score (point estimate)")
fig.tight_layout()

# %%
# Certificates on held-out folds: train the per-pair classifiers on two thirds
# of each identity's images (``test_size=None``: no internal split), certify on
# the remaining third. Every fold's value is a simultaneous 95% lower bound over
# its 50 pairs; with about 15 held-out images per identity and a Bonferroni
# correction over the pairs, even perfectly separated identities certify only a
# small epsilon (see the ceiling).
certifier = ROCHTCertifier(test_size=None, n_pairs=50, random_state=0)
cvres = cross_validate(
    certifier,
    X,
    ids,
    cv=StratifiedKFold(3, shuffle=True, random_state=0),
    return_estimator=True,
    return_indices=True,
)
print("certified epsilon lower bound per fold:", np.round(cvres["test_score"], 3))
print("held-out certificates of the last fold, with the ceiling of its test size:")
last = cvres["indices"]["test"][-1]
table = cvres["estimator"][-1].certify(X[last], ids[last])
print(table[["id_a", "id_b", "epsilon", "ceiling"]].head())

# %%
# Each fold's value holds at 95% on its own. A statement about all three folds
# together (or about the best setting of a grid search) pays for the family by
# the union bound: certify every member at
# :func:`~skprivacy.auditors.family_confidence` of the family-wide level.
print(
    "per-fold confidence for a 95% statement over 3 folds:", family_confidence(0.95, 3)
)
