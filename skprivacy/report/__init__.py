# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit behind ``skprivacy audit`` and its self-contained HTML report."""

from skprivacy.report._audit import (
    GENERATION_FIELDS,
    OUTPUT_FILES,
    SCHEMA_VERSION,
    AuditReport,
    NoAuditablePairsError,
    audit,
    run_audit,
    software_versions,
)
from skprivacy.report._conditions import ConditionsReport, audit_conditions
from skprivacy.report._methods import METHOD_NAMES, METHODS, available_methods
from skprivacy.report._protocols import PROTOCOL_HELP, PROTOCOLS
from skprivacy.report._schema import summary_schema

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
    "software_versions",
    "summary_schema",
]
