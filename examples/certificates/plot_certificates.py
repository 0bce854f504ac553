"""
Reserved-test certificates: what a test of a given size can prove
=================================================================

:class:`~skprivacy.ROCHTCertifier` fixes each pair's classifier, score
direction and threshold on training rows, counts errors on reserved test rows,
and turns exact Clopper–Pearson bounds into an ε lower bound that holds for all
certified pairs simultaneously (Bonferroni over pairs, both bounds and any
pre-declared thresholds). Unlike the out-of-fold ROC-HT value it is a
certificate: if the mechanism is ε-DP, the probability that any reported
ε_LB exceeds ε is at most ``1 - confidence``.

The price is sample size. We show the certifiable ceiling (what a perfect
classifier certifies) against test size and the number of pairs, reproduce the
paper's finding (6 test rows per class under a 40-pair correction certify
nothing; 30 do), use the scikit-learn ``fit``/``score`` shape, and check
soundness on a Laplace mechanism with known ε.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from skprivacy import ROCHTCertifier
from skprivacy.auditors import certifiable_epsilon_ceiling, certified_epsilon_lb
from skprivacy.auditors._certify_sim import run_soundness
from skprivacy.datasets import make_identity_embeddings

# %%
# The certifiable ceiling
# -----------------------
n_test = np.arange(2, 151)
fig, ax = plt.subplots(figsize=(6, 3.5))
for K in [1, 40, 1000]:
    ax.plot(
        n_test,
        certifiable_epsilon_ceiling(n_test, n_test, n_comparisons=K),
        label=f"K = {K} pairs",
    )
ax.set_xlabel("reserved-test rows per identity")
ax.set_ylabel("largest certifiable eps (95%)")
ax.legend()
fig.tight_layout()

print(
    "zero-error test, 40 pairs: n=6 ->",
    certified_epsilon_lb(6, 6, 0, 6, n_comparisons=40),
    " n=30 ->",
    round(certified_epsilon_lb(30, 30, 0, 30, n_comparisons=40), 3),
)

# %%
# Certifying separable identities with the reserved test inside the data
# ----------------------------------------------------------------------
# 100 rows per identity, 30% reserved: every pair is separated without error,
# so each certificate sits at the ceiling.
X, ids = make_identity_embeddings(12, 100, 64, noise=0.5, random_state=0)
cert = ROCHTCertifier(n_pairs=40, test_size=0.3).fit(X, ids)
print(
    cert.results_[
        ["id_a", "id_b", "epsilon", "ceiling", "tp", "n_pos", "fp", "n_neg"]
    ].head()
)
print(
    f"largest simultaneous certified eps_LB: {cert.score():.3f} "
    f"(K = {cert.n_certified_}, ceiling {cert.ceiling_:.3f})"
)

# %%
# The scikit-learn shape: fit on one split, certify another
# ---------------------------------------------------------
train = np.arange(len(ids)) % 3 != 0
cert2 = ROCHTCertifier(n_pairs=40, test_size=None).fit(X[train], ids[train])
held_out = cert2.certify(X[~train], ids[~train])
print(
    f"held-out certificate: {held_out['epsilon'].max():.3f} over {len(held_out)} pairs"
)
# Certifying the training rows is refused: a certificate from rows the tests
# were trained on is no certificate.
try:
    cert2.score(X[train], ids[train])
except ValueError as exc:
    print("refused:", str(exc).split(";")[0])

# %%
# Soundness on a mechanism with known eps
# ---------------------------------------
# Laplace mechanism on one axis of a 16-d embedding, true eps = 1. 100
# independent certifications (a fast linear discriminant keeps this example
# quick; ``benchmarks/soundness.py`` runs the full battery with the default
# logistic regression). Violations are certifications with eps_LB > 1.
rep = run_soundness(
    "laplace",
    1.0,
    100,
    certifier=ROCHTCertifier(LinearDiscriminantAnalysis(), test_size=0.3),
    n_samples=300,
    random_state=0,
)
print(
    f"violations: {rep.n_violations}/{rep.n_certifications} "
    f"(allowed: 5%, 99% binomial bound {rep.allowed_rate_99:.3f}); "
    f"tightness median eps_LB/eps = {rep.tightness:.2f}"
)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(rep.results["epsilon_lb"], bins=30)
ax.axvline(1.0, color="r", label="true eps")
ax.set_xlabel("certified eps_LB")
ax.set_ylabel("certifications")
ax.legend()
fig.tight_layout()
