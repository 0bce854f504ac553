# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Two-sample tests, the per-pair maths of the ε auditors, bootstrap intervals.

The per-pair computations of the ε auditors (:class:`~skprivacy.MMDTVAuditor`,
:class:`~skprivacy.KDELRAuditor`, :class:`~skprivacy.GaussMechAuditor`), in two
shapes:

* functions of two samples, as users of hyppo- or scipy-like libraries expect:
  ``result = mmd_test(X, Y)``, ``result.statistic``, ``result.pvalue``;
* the pure maths they and the auditors share, vectorised over pairs
  (:func:`mmd2_unbiased`, :func:`mmd_to_epsilon`,
  :func:`kde_lr_per_dimension`, :func:`silverman_bandwidth`,
  :func:`gauss_mech_epsilon_from_moments`);

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
from skprivacy.stats._gauss import gauss_mech_epsilon_from_moments
from skprivacy.stats._kde import kde_lr_per_dimension, silverman_bandwidth
from skprivacy.stats._mmd import mmd2_unbiased, mmd_to_epsilon
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
    "gauss_mech_epsilon_from_moments",
    "identity_rate_interval",
    "kde_lr_epsilon",
    "kde_lr_per_dimension",
    "mmd2_unbiased",
    "mmd_test",
    "mmd_to_epsilon",
    "silverman_bandwidth",
    "table_i",
]
