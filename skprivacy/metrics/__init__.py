# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scorers for selecting the most private setting with scikit-learn tools."""

from skprivacy.metrics._scorers import leakage_scorer, make_leakage_scorer

__all__ = [
    "leakage_scorer",
    "make_leakage_scorer",
]
