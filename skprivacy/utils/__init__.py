# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared utilities: input layer, duplicate rows, pair protocol, progress, provenance."""

from skprivacy.utils._constants import DUPLICATE_TOL, MIN_NORM, MMD_TV_CEILING
from skprivacy.utils._duplicates import duplicate_groups, near_duplicates_of
from skprivacy.utils._identity import group_by_identity, identity_sums
from skprivacy.utils._pairs import (
    identity_pair_table,
    identity_pairs,
    n_identity_pairs,
    pair_rank,
    pair_unrank,
)
from skprivacy.utils._progress import Progress
from skprivacy.utils._provenance import (
    GENERATION_FIELDS,
    RunProvenance,
    array_fingerprint,
    check_metadata,
    software_versions,
)
from skprivacy.utils._random import (
    check_generator,
    check_legacy_rng,
    seed_from,
    sklearn_random_state,
    spawn_generator,
)
from skprivacy.utils._threads import blas_threads, limit_blas_threads, map_blas_threads
from skprivacy.utils._validation import (
    IdentityData,
    check_binary_labels,
    check_class_labels,
    check_conditions,
    check_embeddings,
    check_identity_column,
    check_identity_counts,
    check_identity_labels,
    check_magnitude,
    check_no_text_columns,
    check_scores,
    encode_identities,
    l2_normalize,
    row_norms,
    validate_identity_data,
)

__all__ = [
    "DUPLICATE_TOL",
    "GENERATION_FIELDS",
    "MIN_NORM",
    "MMD_TV_CEILING",
    "IdentityData",
    "Progress",
    "RunProvenance",
    "array_fingerprint",
    "blas_threads",
    "check_binary_labels",
    "check_class_labels",
    "check_conditions",
    "check_embeddings",
    "check_generator",
    "check_identity_column",
    "check_identity_counts",
    "check_identity_labels",
    "check_legacy_rng",
    "check_magnitude",
    "check_metadata",
    "check_no_text_columns",
    "check_scores",
    "duplicate_groups",
    "encode_identities",
    "group_by_identity",
    "identity_pair_table",
    "identity_pairs",
    "identity_sums",
    "l2_normalize",
    "limit_blas_threads",
    "map_blas_threads",
    "n_identity_pairs",
    "near_duplicates_of",
    "pair_rank",
    "pair_unrank",
    "row_norms",
    "seed_from",
    "sklearn_random_state",
    "software_versions",
    "spawn_generator",
    "validate_identity_data",
]
