# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""ε auditors over identity pairs (paper 000, "Picture the Epsilon")."""

from skprivacy.auditors._base import BasePairAuditor, PairAuditContext
from skprivacy.auditors._controls import split_half_controls

__all__ = [
    "BasePairAuditor",
    "PairAuditContext",
    "split_half_controls",
]
