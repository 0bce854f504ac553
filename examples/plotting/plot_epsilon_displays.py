"""
Displays for the ε auditors: distributions, ROC, bandwidth sweep, calibration
=============================================================================

Every figure of an ε audit is a Display object of :mod:`skprivacy.plotting`,
built like scikit-learn's :class:`~sklearn.metrics.RocCurveDisplay`: a class
method takes a fitted estimator (or a result table), draws, and keeps its
artists (``ax_``, ``figure_``, ``line_``, ...) so the figure can be restyled,
or redrawn elsewhere with ``display.plot(ax=...)``.

We audit the bundled Yale faces with their HOG + PCA descriptors (15 people;
a generic encoder, so not every pair is perfectly separable).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from skprivacy import GaussMechAuditor, MMDTVAuditor, ROCHTAuditor, ROCHTCertifier
from skprivacy.auditors import split_half_controls
from skprivacy.datasets import load_yale_faces
from skprivacy.plotting import (
    BandwidthSweepDisplay,
    EpsilonDistributionDisplay,
    PairROCDisplay,
    PermutationPValueDisplay,
    ResidualQQDisplay,
)

yale = load_yale_faces(encoder="hog_pca128")
X, ids = yale.data, yale.identity

# %%
# Per-pair ε of several auditors on one axis
# -------------------------------------------
# One box per auditor over the same identity pairs (the seeded pair ordering
# is shared, so equal ``n_pairs`` means equal pairs). The symlog axis keeps
# MMD-TV's values, which can never exceed 1.763, next to GaussMech's large
# ones. ROC-HT's infinite values cannot be drawn and are counted on the right;
# the certificate is a lower confidence bound, far below the point estimates.
auditors = {
    "GaussMech": GaussMechAuditor(n_pairs=40),
    "MMD-TV": MMDTVAuditor(n_pairs=40),
    "ROC-HT": ROCHTAuditor(n_pairs=40),
    "ROC-HT certificate": ROCHTCertifier(n_pairs=40),
}
for auditor in auditors.values():
    auditor.fit(X, ids)
display = EpsilonDistributionDisplay.from_estimator(auditors)

# %%
# The ROC behind one pair's ROC-HT ε
# ----------------------------------
# :meth:`~skprivacy.plotting.PairROCDisplay.from_estimator` recomputes the
# pair's out-of-fold scores with the auditor's own folds and classifier seed
# (:meth:`~skprivacy.ROCHTAuditor.pair_scores`), so the curve is the one
# behind the pair's row of ``results_``. Without ``pair`` it draws the most
# separable pair; here we draw it and the least separable one side by side.
rocht = auditors["ROC-HT"]
least = rocht.results_.sort_values("auc").iloc[0]
fig, axes = plt.subplots(1, 2, figsize=(8, 4.2), layout="constrained")
PairROCDisplay.from_estimator(rocht, X, ids, ax=axes[0])
weakest = PairROCDisplay.from_estimator(
    rocht, X, ids, pair=(least.id_a, least.id_b), ax=axes[1]
)
print(f"least separable pair: AUC {weakest.roc_auc:.3f}, epsilon {weakest.epsilon}")

# %%
# On this data every pair has an operating point with FPR = 0 < TPR, hence
# ε = inf. A mechanism with a known ε shows what the bound measures: outputs
# of the Laplace mechanism with sensitivity 1 and scale 1 (pure ε = 1) for two
# neighbouring inputs. ``from_predictions`` takes any labels and scores; with
# δ = 0.02 the empirical bound is finite, and ``show_region`` draws the two
# lines that confine the ROC of every (ε, δ)-DP test at the attained ε (the
# curve touches them at the KOV point). It is a point estimate from 2,000
# samples per input, not a certificate.
rng = np.random.default_rng(0)
outputs = np.r_[rng.laplace(0.0, 1.0, 2000), rng.laplace(1.0, 1.0, 2000)]
neighbour = np.r_[np.zeros(2000), np.ones(2000)]
display = PairROCDisplay.from_predictions(
    neighbour, outputs, delta=0.02, show_region=True, title="Laplace mechanism, ε = 1"
)
print(f"ROC-HT estimate at delta=0.02: {display.epsilon:.3f}")

# %%
# The MMD bandwidth sweep
# -----------------------
# MMD-TV ε as the RBF bandwidth is scaled around the median heuristic, with
# the ceiling 2 artanh(√2/2) that no RBF kernel can exceed.
display = BandwidthSweepDisplay.from_data(X, ids, n_pairs=40)
display.ax_.set_ylim(0, 2)

# %%
# Calibration checks
# ------------------
# Permutation p-values of the identity pairs against same-identity split-half
# controls (a valid test rejects about 5% of the controls), and normal Q-Q
# plots of the pooled within-identity residuals for the least, a median and
# the most Gaussian dimension (GaussMech assumes Gaussian residuals).
mmd = MMDTVAuditor(n_pairs=40, n_permutations=999).fit(X, ids)
controls = split_half_controls(mmd, X, ids)
display = PermutationPValueDisplay.from_estimator(mmd, controls=controls)
display = ResidualQQDisplay.from_data(X, ids)
plt.show()
