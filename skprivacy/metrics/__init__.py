# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scorers for selecting the most private setting, and verification metrics."""

from skprivacy.metrics._eer import equal_error_rate
from skprivacy.metrics._scorers import leakage_scorer, make_leakage_scorer

__all__ = [
    "equal_error_rate",
    "leakage_scorer",
    "make_leakage_scorer",
]
