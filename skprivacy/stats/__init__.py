# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Two-sample tests, per-pair ε estimates and identity-level bootstrap intervals.

The per-pair computations of the ε auditors (:class:`~skprivacy.MMDTVAuditor`,
:class:`~skprivacy.KDELRAuditor`, :class:`~skprivacy.GaussMechAuditor`) as
functions of two samples, in the shape users of hyppo- or scipy-like libraries
expect: ``result = mmd_test(X, Y)``, ``result.statistic``, ``result.pvalue``;
and intervals that resample identities rather than pairs or rows
(:func:`compare_conditions`, :func:`identity_rate_interval`), and
:func:`table_i`, the medians those intervals are for.
"""

from skprivacy.stats._bootstrap import (
    ConditionComparison,
    compare_conditions,
    comparison_sentence,
    identity_rate_interval,
    table_i,
)
from skprivacy.stats._two_sample import (
    GaussMechResult,
    KDELRResult,
    MMDTestResult,
    gauss_mech_epsilon,
    kde_lr_epsilon,
    mmd_test,
)

__all__ = [
    "ConditionComparison",
    "GaussMechResult",
    "KDELRResult",
    "MMDTestResult",
    "compare_conditions",
    "comparison_sentence",
    "gauss_mech_epsilon",
    "identity_rate_interval",
    "kde_lr_epsilon",
    "mmd_test",
    "table_i",
]
