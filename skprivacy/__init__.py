# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""skprivacy: measure and remove identity leakage in image and face embeddings.

Every public estimator is importable from the top level, e.g.
``from skprivacy import MMDTVAuditor, ISP``.
"""

from skprivacy.auditors import (
    CentroidClassifier,
    GaussMechAuditor,
    KDELRAuditor,
    MMDTVAuditor,
    PooledLDAClassifier,
    ROCHTAuditor,
    ROCHTCertifier,
    plan_audit,
)
from skprivacy.membership import MembershipGeometry
from skprivacy.pressure import (
    GraphAttacker,
    MLPAttacker,
    PrototypeAttacker,
    RenyiPressure,
    RetrievalAttacker,
    pressure_ladder,
)
from skprivacy.report import AuditReport, audit, audit_conditions
from skprivacy.sanitize import INLP, ISP, LEACE, OpenSetVerificationAuditor

__version__ = "0.1.0.dev0"

__all__ = [
    "AuditReport",
    "CentroidClassifier",
    "GaussMechAuditor",
    "GraphAttacker",
    "INLP",
    "ISP",
    "KDELRAuditor",
    "LEACE",
    "MLPAttacker",
    "MMDTVAuditor",
    "MembershipGeometry",
    "OpenSetVerificationAuditor",
    "PooledLDAClassifier",
    "PrototypeAttacker",
    "ROCHTAuditor",
    "ROCHTCertifier",
    "RenyiPressure",
    "RetrievalAttacker",
    "__version__",
    "audit",
    "audit_conditions",
    "plan_audit",
    "pressure_ladder",
]
