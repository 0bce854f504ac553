# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Numerical constants shared across skprivacy: each one is defined here only."""

import numpy as np

__all__ = ["DUPLICATE_TOL", "MIN_NORM", "MMD_TV_CEILING"]

#: Two rows whose cosine distance ``1 - cos(a, b)`` is at most this value are
#: near-duplicates: it holds copies recast to float32, rescaled, rounded to 6
#: decimals or perturbed by 1e-9 per entry, and no two distinct images of the
#: bundled face data sets (their closest pairs lie above 1e-3).
DUPLICATE_TOL = 1e-6

#: Rows whose L2 norm is at or below this value carry no direction and are dropped.
MIN_NORM = 1e-6

#: The largest ε the MMD-TV bound can give for a kernel bounded by 1, such as the
#: RBF kernel: the MMD of two distributions is at most ``sqrt(2)``, so
#: ``2 artanh(MMD / 2)`` is at most ``2 artanh(sqrt(2) / 2) ≈ 1.763``, however
#: separable the identities are.
MMD_TV_CEILING = float(2.0 * np.arctanh(np.sqrt(2.0) / 2.0))
