# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Named audit protocols: how many pairs and permutations each method gets."""

__all__ = ["METHOD_NAMES", "PROTOCOLS"]

#: Registered method names, in run order (kept here, import-light, for the CLI
#: parser; ``skprivacy.report._methods.METHODS`` holds their implementations).
METHOD_NAMES = (
    "gaussmech",
    "kdelr",
    "mmdtv",
    "permutation",
    "rocht",
    "certificate",
    "gaussianity",
)

#: ``None`` for a pair count means every pair (exhaustive). Every method uses a
#: prefix of the same seeded pair ordering, so methods compare the same pairs.
PROTOCOLS = {
    # A first look on the bundled data in well under 30 s on 2 cores.
    "quick": {
        "gaussmech_pairs": 100,
        "mmdtv_pairs": 100,
        "mmdtv_certified_pairs": 100,
        "confidence": 0.95,
        "kdelr_pairs": 20,
        "kdelr_alphas": (0.0, 1e-2),
        "rocht_pairs": 30,
        "certificate_pairs": 30,
        "permutation_pairs": 20,
        "n_permutations": 1000,
        "control_identities": 10,
        "sweep_pairs": 50,
        "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
        "gaussianity_dims": 4,
    },
    # Paper 000's protocol.
    "paper": {
        "gaussmech_pairs": 500,
        "mmdtv_pairs": 500,
        "mmdtv_certified_pairs": 500,
        "confidence": 0.95,
        "kdelr_pairs": 100,
        "kdelr_alphas": (0.0, 1e-2),
        "rocht_pairs": 200,
        "certificate_pairs": 200,
        "permutation_pairs": 100,
        "n_permutations": 10_000,
        "control_identities": 100,
        "sweep_pairs": 500,
        "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
        "gaussianity_dims": 4,
    },
    # Every pair for the methods with an exhaustive engine (GaussMech, MMD-TV);
    # the per-pair-classifier and permutation methods keep the paper's sizes.
    "exhaustive": {
        "gaussmech_pairs": None,
        "mmdtv_pairs": None,
        "mmdtv_certified_pairs": 500,
        "confidence": 0.95,
        "kdelr_pairs": 100,
        "kdelr_alphas": (0.0, 1e-2),
        "rocht_pairs": 200,
        "certificate_pairs": 200,
        "permutation_pairs": 100,
        "n_permutations": 10_000,
        "control_identities": 100,
        "sweep_pairs": 500,
        "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
        "gaussianity_dims": 4,
    },
}
