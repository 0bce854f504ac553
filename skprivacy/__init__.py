# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""skprivacy: measure and remove identity leakage in image and face embeddings.

Every public estimator is importable from the top level, e.g.
``from skprivacy import MMDTVAuditor, ISP``. The names load on first use, so
``import skprivacy`` (and ``skprivacy --help``) stays fast.
"""

from skprivacy._lazy import attach

__version__ = "0.3.0.dev0"

_ORIGINS = {
    "CentroidClassifier": "skprivacy.auditors",
    "GaussMechAuditor": "skprivacy.auditors",
    "KDELRAuditor": "skprivacy.auditors",
    "MMDTVAuditor": "skprivacy.auditors",
    "PooledLDAClassifier": "skprivacy.auditors",
    "ROCHTAuditor": "skprivacy.auditors",
    "ROCHTCertifier": "skprivacy.auditors",
    "ReidentificationAuditor": "skprivacy.auditors",
    "plan_audit": "skprivacy.auditors",
    "MembershipGeometry": "skprivacy.membership",
    "GraphAttacker": "skprivacy.pressure",
    "MLPAttacker": "skprivacy.pressure",
    "PrototypeAttacker": "skprivacy.pressure",
    "RenyiPressure": "skprivacy.pressure",
    "RetrievalAttacker": "skprivacy.pressure",
    "pressure_ladder": "skprivacy.pressure",
    "AuditReport": "skprivacy.report",
    "audit": "skprivacy.report",
    "audit_conditions": "skprivacy.report",
    "INLP": "skprivacy.sanitize",
    "ISP": "skprivacy.sanitize",
    "LEACE": "skprivacy.sanitize",
    "OpenSetVerificationAuditor": "skprivacy.sanitize",
}

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
    "ReidentificationAuditor",
    "RenyiPressure",
    "RetrievalAttacker",
    "__version__",
    "audit",
    "audit_conditions",
    "plan_audit",
    "pressure_ladder",
]

__getattr__, __dir__ = attach(__name__, _ORIGINS)
