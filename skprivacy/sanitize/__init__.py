# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Identity sanitisation: ISP, the LEACE and INLP baselines, and their audit."""

from skprivacy.sanitize._baselines import INLP, LEACE
from skprivacy.sanitize._copy_detection import copy_detection_map
from skprivacy.sanitize._cross_fit import cross_fit_transform
from skprivacy.sanitize._file import sanitize_file, sanitize_provenance
from skprivacy.sanitize._isp import ISP
from skprivacy.sanitize._select import select_rank
from skprivacy.sanitize._utility import (
    attribute_probe_accuracy,
    plot_privacy_utility,
    privacy_utility_tradeoff,
    retrieval_precision_at_k,
    transfer_audit,
)
from skprivacy.sanitize._verification import OpenSetVerificationAuditor, tar_at_far

__all__ = [
    "INLP",
    "ISP",
    "LEACE",
    "OpenSetVerificationAuditor",
    "attribute_probe_accuracy",
    "copy_detection_map",
    "cross_fit_transform",
    "plot_privacy_utility",
    "privacy_utility_tradeoff",
    "retrieval_precision_at_k",
    "sanitize_file",
    "sanitize_provenance",
    "select_rank",
    "tar_at_far",
    "transfer_audit",
]
