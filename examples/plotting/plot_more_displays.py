"""
Displays for membership, re-identification pressure and sanitisation
=====================================================================

The other families draw their results with Display objects too:

* :class:`~skprivacy.plotting.MembershipDistributionDisplay` — member and
  non-member distributions of the membership statistics (paper 001);
* :class:`~skprivacy.plotting.PressureStagesDisplay` — re-identification
  pressure of cumulative releases (paper 002);
* :class:`~skprivacy.plotting.PrivacyUtilityDisplay` — leakage and utility of
  a sanitiser over a parameter sweep (paper 003).

All data are small synthetic sets with a planted effect.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skprivacy import ISP, MembershipGeometry, RenyiPressure
from skprivacy.datasets import make_identity_embeddings, make_membership_embeddings
from skprivacy.plotting import (
    MembershipDistributionDisplay,
    PressureStagesDisplay,
    PrivacyUtilityDisplay,
)
from skprivacy.sanitize import OpenSetVerificationAuditor, privacy_utility_tradeoff

# %%
# Membership statistics of members and non-members
# ------------------------------------------------
# Members' clusters are planted tighter (``concentration_gap``). Each panel is
# one statistic, with its member-vs-non-member AUC (a point estimate).
X, ids, member = make_membership_embeddings(
    n_members=40, n_nonmembers=40, concentration_gap=0.3, random_state=0
)
mg = MembershipGeometry(random_state=0).fit(X, ids, member=member)
display = MembershipDistributionDisplay.from_estimator(mg)

# %%
# Several non-member references in one figure: the long format has one row
# per (reference, statistic, identity) with the columns ``reference``,
# ``statistic``, ``identity``, ``member`` and ``value``. Here it is built from
# two fits, one per reference; a reference from another domain (looser
# clusters for reasons unrelated to training) inflates every AUC.
kw = {"n_members": 40, "n_nonmembers": 40, "concentration_gap": 0.3}
X_shift, ids_shift, member_shift = make_membership_embeddings(
    domain_shift=0.6, random_state=0, **kw
)
references = {
    "held-out": (X[~member], ids[~member]),
    "other domain": (X_shift[~member_shift], ids_shift[~member_shift]),
}
frames = []
for name, (X_ref, ids_ref) in references.items():
    X_all = np.vstack([X[member], X_ref])
    ids_all = np.r_[ids[member].astype(str), [f"{name}/{i}" for i in ids_ref]]
    is_member = np.r_[np.ones(member.sum(), bool), np.zeros(len(ids_ref), bool)]
    fitted = MembershipGeometry(random_state=0).fit(X_all, ids_all, member=is_member)
    long = fitted.statistics_.melt(
        id_vars=["identity", "member"],
        value_vars=["pair_cos", "vmf_kappa"],
        var_name="statistic",
        value_name="value",
    )
    frames.append(long.assign(reference=name))
frame = pd.concat(frames, ignore_index=True)
display = MembershipDistributionDisplay.from_frame(frame)
print(display.auc.round(3))

# %%
# Pressure of cumulative releases
# -------------------------------
# Two releases about the same people (a strong and a weak encoder). The line
# is the pressure of the cumulative state, the crosses each release alone,
# the dotted line the ceiling log N. Values are plug-in point estimates for
# the default retrieval attacker, ± one standard deviation over three splits.
strong, people = make_identity_embeddings(30, 10, 16, separation=0.6, random_state=1)
weak, _ = make_identity_embeddings(30, 10, 16, separation=0.3, random_state=2)
pressure = RenyiPressure(
    releases={"strong": slice(0, 16), "weak": slice(16, 32)},
    alphas=(2.0, np.inf),
    n_repeats=3,
    random_state=0,
).fit(np.hstack([strong, weak]), people)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
PressureStagesDisplay.from_estimator(pressure, ax=axes[0])
PressureStagesDisplay.from_estimator(pressure, measure="p_guess", alpha=2, ax=axes[1])

# %%
# Privacy-utility trade-off of ISP
# --------------------------------
# Verification TAR at FAR = 1e-2 on held-out identities (leakage, with its
# Clopper-Pearson interval) and attribute accuracy (utility) as ISP removes
# more identity directions.
X, ids, attribute = make_identity_embeddings(
    40,
    6,
    16,
    n_identity_dims=4,
    n_attribute_classes=2,
    attribute_strength=0.3,
    random_state=0,
)
table = privacy_utility_tradeoff(
    X,
    ids,
    attribute,
    sanitizer=ISP(),
    param_values=[0, 1, 2, 4, 8],
    auditor=OpenSetVerificationAuditor(far=1e-2, random_state=0),
    cv=2,
)
display = PrivacyUtilityDisplay.from_tradeoff(table)
plt.show()
