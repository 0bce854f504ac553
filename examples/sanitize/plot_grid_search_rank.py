"""
Choosing ISP's rank: the most private ``r`` within a utility tolerance
======================================================================

:class:`~skprivacy.sanitize.ISP` drops into any scikit-learn pipeline. Here
the pipeline's ``y`` is a downstream target (the capture condition of the Yale
Faces images), not the identity, so the identity labels reach ISP through
scikit-learn's *metadata routing*: ``ISP().set_fit_request(ids=True)`` and
``search.fit(X, condition, ids=ids, groups=ids)``.

Two grid searches over ``n_components`` share the same identity-disjoint folds
(:class:`~sklearn.model_selection.GroupKFold`):

1. **leakage**: ``make_pipeline(ISP(), OpenSetVerificationAuditor())`` scored
   with :func:`~skprivacy.metrics.leakage_scorer` (minus the open-set TAR, so
   larger = more private);
2. **utility**: ``Pipeline([("isp", ISP()), ("clf", LogisticRegression())])``
   scored by condition accuracy on people not seen in training.

A custom ``refit`` callable then picks, among the ranks whose utility is within
a tolerance of the best, the one with the lowest leakage. For the smallest rank
whose leakage meets a target with a confidence statement, see
:func:`~skprivacy.sanitize.select_rank`.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline, make_pipeline

from skprivacy.datasets import load_yale_faces
from skprivacy.metrics import leakage_scorer
from skprivacy.sanitize import ISP, OpenSetVerificationAuditor

faces = load_yale_faces(encoder="hog_pca128")
X, ids, condition = faces.data, faces.identity, faces.condition
grid = {"isp__n_components": [0, 1, 2, 3, 4, 6, 8]}
cv = GroupKFold(n_splits=3)  # 10 training identities per fold: r <= 9

# %%
# Leakage of each rank
# --------------------
# The pipeline's ``y`` is the identity here, so no routing is needed. With
# ~5 test identities per fold, only a FAR of 1e-2 is resolvable.
leak_search = GridSearchCV(
    make_pipeline(ISP(), OpenSetVerificationAuditor(far=1e-2, random_state=0)),
    grid,
    scoring=leakage_scorer,
    cv=cv,
    refit=False,
)
leak_search.fit(X, ids, groups=ids)
tar = -leak_search.cv_results_["mean_test_score"]  # TAR at FAR = 1e-2

# %%
# Utility of each rank, with the identities routed as metadata
# ------------------------------------------------------------
TOLERANCE = 0.02  # accept up to 2 points of condition accuracy lost


def most_private_within_tolerance(cv_results):
    """Refit rule: lowest leakage among ranks with near-best utility."""
    utility = np.asarray(cv_results["mean_test_score"])
    ok = np.flatnonzero(utility >= utility.max() - TOLERANCE)
    return int(ok[np.argmin(tar[ok])])


with sklearn.config_context(enable_metadata_routing=True):
    pipe = Pipeline(
        [
            ("isp", ISP().set_fit_request(ids=True)),
            ("clf", LogisticRegression(max_iter=1000)),
        ]
    )
    search = GridSearchCV(pipe, grid, cv=cv, refit=most_private_within_tolerance)
    search.fit(X, condition, ids=ids, groups=ids)

results = pd.DataFrame(
    {
        "n_components": grid["isp__n_components"],
        "TAR@FAR=1e-2": tar,
        "condition accuracy": search.cv_results_["mean_test_score"],
    }
)
print(results.round(3).to_string(index=False))
print("selected:", search.best_params_)

# %%
# The selected pipeline is refitted on all data (identities still routed), and
# its ISP step can be exported as a plain matrix with ``to_npz``.
chosen = search.best_estimator_.named_steps["isp"]
print("removed directions:", chosen.n_components_)
print("share of between-identity energy removed:", chosen.explained_energy_ratio_.sum())

fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
ax.plot(
    results["n_components"],
    results["TAR@FAR=1e-2"],
    "o-",
    color="C3",
    label="TAR at FAR=1e-2 (leakage)",
)
ax.plot(
    results["n_components"],
    results["condition accuracy"],
    "s--",
    color="C0",
    label="condition accuracy (utility)",
)
ax.axvline(
    search.best_params_["isp__n_components"], color="grey", ls=":", label="selected r"
)
ax.set_xlabel("n_components (r)")
ax.set_ylim(0, 1)
ax.legend()
plt.show()
