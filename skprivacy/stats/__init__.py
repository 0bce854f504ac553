# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Two-sample tests and per-pair ε estimates on two samples ``X`` and ``Y``.

The per-pair computations of the ε auditors (:class:`~skprivacy.MMDTVAuditor`,
:class:`~skprivacy.KDELRAuditor`, :class:`~skprivacy.GaussMechAuditor`) as
functions of two samples, in the shape users of hyppo- or scipy-like libraries
expect: ``result = mmd_test(X, Y)``, ``result.statistic``, ``result.pvalue``.
"""

from skprivacy.stats._two_sample import (
    GaussMechResult,
    KDELRResult,
    MMDTestResult,
    gauss_mech_epsilon,
    kde_lr_epsilon,
    mmd_test,
)

__all__ = [
    "GaussMechResult",
    "KDELRResult",
    "MMDTestResult",
    "gauss_mech_epsilon",
    "kde_lr_epsilon",
    "mmd_test",
]
