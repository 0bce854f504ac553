# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one place that imports scikit-learn's private or moving API.

If scikit-learn relocates any of these helpers, only this file changes.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = [
    "RANDOM_STATE",
    "HasMethods",
    "Interval",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "_safe_indexing",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]

#: Parameter constraint of every ``random_state``: scikit-learn's (None, an int
#: in [0, 2**32 - 1], a RandomState instance) plus numpy Generators, which
#: scikit-learn's own "random_state" constraint rejects. Use it as
#: ``"random_state": RANDOM_STATE`` in ``_parameter_constraints`` and
#: ``validate_params``.
RANDOM_STATE = ("random_state", np.random.Generator)
