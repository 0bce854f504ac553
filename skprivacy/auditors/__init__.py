# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""ε auditors over identity pairs (paper 000, "Picture the Epsilon")."""

from skprivacy.auditors._base import BasePairAuditor, PairAuditContext
from skprivacy.auditors._ceilings import (
    mmd_certificate_ceiling,
    mmd_certificate_margin,
    mmd_margin_ceiling,
    mmd_rows_needed,
    permutation_p_value_floor,
    reserved_test_rows,
    rocht_certificate_ceiling,
    rocht_rows_needed,
)
from skprivacy.auditors._certify import ROCHTCertifier
from skprivacy.auditors._controls import split_half_controls
from skprivacy.auditors._description import AuditDescription, estimate_seconds
from skprivacy.auditors._diagnostics import residual_gaussianity
from skprivacy.auditors._gauss import GaussMechAuditor
from skprivacy.auditors._kde import KDELRAuditor, kde_lr_alpha_sweep
from skprivacy.auditors._linear import CentroidClassifier, PooledLDAClassifier
from skprivacy.auditors._mmd import MMDTVAuditor, mmd_bandwidth_sweep
from skprivacy.auditors._planning import plan_audit, smallest_resolvable_far
from skprivacy.auditors._reid import ReidentificationAuditor
from skprivacy.auditors._roc import (
    ROCHTAuditor,
    classifier_sensitivity,
    compare_roc_audits,
)
from skprivacy.auditors._roc_core import (
    certifiable_epsilon_ceiling,
    certified_epsilon_lb,
    clopper_pearson_bound,
    family_confidence,
    kov_epsilon,
    roc_operating_points,
)

__all__ = [
    "AuditDescription",
    "BasePairAuditor",
    "CentroidClassifier",
    "GaussMechAuditor",
    "KDELRAuditor",
    "MMDTVAuditor",
    "PairAuditContext",
    "PooledLDAClassifier",
    "ROCHTAuditor",
    "ROCHTCertifier",
    "ReidentificationAuditor",
    "certifiable_epsilon_ceiling",
    "certified_epsilon_lb",
    "classifier_sensitivity",
    "clopper_pearson_bound",
    "compare_roc_audits",
    "estimate_seconds",
    "family_confidence",
    "kde_lr_alpha_sweep",
    "kov_epsilon",
    "mmd_bandwidth_sweep",
    "mmd_certificate_ceiling",
    "mmd_certificate_margin",
    "mmd_margin_ceiling",
    "mmd_rows_needed",
    "permutation_p_value_floor",
    "plan_audit",
    "reserved_test_rows",
    "residual_gaussianity",
    "roc_operating_points",
    "rocht_certificate_ceiling",
    "rocht_rows_needed",
    "smallest_resolvable_far",
    "split_half_controls",
]
