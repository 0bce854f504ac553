# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Identity sanitisation: ISP, the LEACE and INLP baselines, and their audit."""

from skprivacy.sanitize._baselines import INLP, LEACE
from skprivacy.sanitize._isp import ISP
from skprivacy.sanitize._verification import OpenSetVerificationAuditor, tar_at_far

__all__ = [
    "INLP",
    "ISP",
    "LEACE",
    "OpenSetVerificationAuditor",
    "tar_at_far",
]
