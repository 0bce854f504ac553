# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared utilities: the input layer and the identity-pair protocol."""

from skprivacy.utils._pairs import (
    identity_pairs,
    n_identity_pairs,
    pair_rank,
    pair_unrank,
)
from skprivacy.utils._validation import (
    MIN_NORM,
    IdentityData,
    check_embeddings,
    check_no_text_columns,
    encode_identities,
    l2_normalize,
    validate_identity_data,
)

__all__ = [
    "MIN_NORM",
    "IdentityData",
    "check_embeddings",
    "check_no_text_columns",
    "encode_identities",
    "identity_pairs",
    "l2_normalize",
    "n_identity_pairs",
    "pair_rank",
    "pair_unrank",
    "validate_identity_data",
]
