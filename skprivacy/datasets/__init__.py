# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic generators, the bundled real face embeddings, and a file reader."""

from skprivacy.datasets._io import (
    classify_columns,
    read_embeddings,
    select_feature_columns,
    select_features,
)
from skprivacy.datasets._membership import make_membership_embeddings
from skprivacy.datasets._real import load_cropped_yale_b, load_yale_faces
from skprivacy.datasets._synthetic import make_identity_embeddings

__all__ = [
    "classify_columns",
    "load_cropped_yale_b",
    "load_yale_faces",
    "make_identity_embeddings",
    "make_membership_embeddings",
    "read_embeddings",
    "select_feature_columns",
    "select_features",
]
