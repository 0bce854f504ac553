# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit behind ``skprivacy audit`` and its self-contained HTML report.

Names load on first use, so the command line reads the method and protocol
names without importing the estimators.
"""

from skprivacy._lazy import attach

_ORIGINS = {
    "OUTPUT_FILES": "skprivacy.report._audit",
    "SCHEMA_VERSION": "skprivacy.report._audit",
    "AuditReport": "skprivacy.report._audit",
    "NoAuditablePairsError": "skprivacy.exceptions",
    "audit": "skprivacy.report._audit",
    "run_audit": "skprivacy.report._audit",
    "ConditionsReport": "skprivacy.report._conditions",
    "audit_conditions": "skprivacy.report._conditions",
    "METHOD_NAMES": "skprivacy.report._names",
    "PROTOCOL_HELP": "skprivacy.report._names",
    "METHODS": "skprivacy.report._registry",
    "PROTOCOLS": "skprivacy.report._registry",
    "available_methods": "skprivacy.report._registry",
    "summary_schema": "skprivacy.report._schema",
    # Defined in skprivacy.utils; also importable from here.
    "GENERATION_FIELDS": "skprivacy.utils",
    "software_versions": "skprivacy.utils",
}

__all__ = [
    "GENERATION_FIELDS",
    "METHODS",
    "METHOD_NAMES",
    "OUTPUT_FILES",
    "PROTOCOLS",
    "PROTOCOL_HELP",
    "SCHEMA_VERSION",
    "AuditReport",
    "ConditionsReport",
    "NoAuditablePairsError",
    "audit",
    "audit_conditions",
    "available_methods",
    "run_audit",
    "summary_schema",
]

__getattr__, __dir__ = attach(__name__, _ORIGINS)
