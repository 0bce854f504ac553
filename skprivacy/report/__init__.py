# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit behind ``skprivacy audit`` and its self-contained HTML report."""

from skprivacy.report._audit import AuditReport, NoAuditablePairsError, run_audit
from skprivacy.report._protocols import PROTOCOLS

__all__ = ["PROTOCOLS", "AuditReport", "NoAuditablePairsError", "run_audit"]
