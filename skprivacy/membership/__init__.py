# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Training-membership signal in the hyperspherical geometry of embeddings (paper 001)."""

from skprivacy.membership._geometry import (
    MembershipGeometry,
    membership_auc,
    membership_roc_curve,
)
from skprivacy.membership._reference import audit_reference_sets
from skprivacy.membership._statistics import (
    HEADS,
    STATISTICS,
    MagFaceHead,
    apply_head,
    membership_statistics,
    pair_cos,
    penalised_logit,
    prototype_ce,
    vmf_kappa,
)

__all__ = [
    "HEADS",
    "STATISTICS",
    "MagFaceHead",
    "MembershipGeometry",
    "apply_head",
    "audit_reference_sets",
    "membership_auc",
    "membership_roc_curve",
    "membership_statistics",
    "pair_cos",
    "penalised_logit",
    "prototype_ce",
    "vmf_kappa",
]
