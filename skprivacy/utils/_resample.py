# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bootstrap draws and percentile intervals shared by the interval estimates."""

import math

import numpy as np

__all__ = ["multinomial_draws", "order_statistic_interval"]


def multinomial_draws(rng, n, n_resamples):
    """Bootstrap multiplicities: row ``r`` counts how often each of ``n`` units is drawn.

    ``n`` draws with replacement from ``n`` units, ``n_resamples`` times
    (multinomial with equal probabilities), as ``int32``.
    """
    p = np.full(n, 1.0 / n)
    return rng.multinomial(n, p, size=n_resamples).astype(np.int32)


def order_statistic_interval(replicates, tail):
    """Return the ``k``-th smallest and largest replicates, ``k = max(1, floor(B tail))``.

    ``tail`` is the probability left out on each side. No interpolation, so
    infinite replicates stay exact. NaN (both ends) when a replicate is NaN
    or there are none: an interval is only given when every replicate is
    defined.
    """
    replicates = np.asarray(replicates, dtype=np.float64)
    if replicates.size == 0 or np.isnan(replicates).any():
        return np.full(2, np.nan)
    k = max(1, math.floor(replicates.size * tail + 1e-9))
    ordered = np.sort(replicates)
    return np.array([ordered[k - 1], ordered[-k]])
