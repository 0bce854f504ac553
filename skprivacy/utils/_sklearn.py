# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one place that imports scikit-learn's private or moving API.

If scikit-learn relocates any of these helpers, only this file changes.
"""

from sklearn.base import _fit_context
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
    "HasMethods",
    "Interval",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]
