# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The per-pair maths of MMD-TV: the unbiased MMD² and its ε.

Pure functions of numbers (kernel sums, sample sizes, MMD values), vectorised
over pairs. :class:`~skprivacy.MMDTVAuditor` computes the kernel sums of many
identity pairs at once and calls them; :func:`~skprivacy.stats.mmd_test` does
the same for one pair of samples.
"""

from numbers import Integral, Real

import numpy as np

from skprivacy.utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["mmd2_unbiased", "mmd_to_epsilon"]


@validate_params(
    {
        "sum_xx": ["array-like", Real],
        "sum_yy": ["array-like", Real],
        "sum_xy": ["array-like", Real],
        "n_x": ["array-like", Integral],
        "n_y": ["array-like", Integral],
    },
    prefer_skip_nested_validation=True,
)
def mmd2_unbiased(sum_xx, sum_yy, sum_xy, n_x, n_y):
    r"""Unbiased estimate of the squared MMD from kernel sums.

    Parameters
    ----------
    sum_xx : float or array-like of shape (n_pairs,)
        :math:`\sum_{i \ne j} k(x_i, x_j)` over ordered pairs of distinct rows
        of the first sample (each unordered pair counted twice).
    sum_yy : float or array-like of shape (n_pairs,)
        The same for the second sample.
    sum_xy : float or array-like of shape (n_pairs,)
        :math:`\sum_{i, j} k(x_i, y_j)` over all cross pairs.
    n_x, n_y : int or array-like of shape (n_pairs,)
        Sample sizes, at least 2.

    Returns
    -------
    mmd2 : ndarray of shape (n_pairs,) or float ndarray of shape ()
        :math:`\widehat{\mathrm{MMD}}^2_u`; it may be slightly negative.

    See Also
    --------
    mmd_to_epsilon : The ε read from ``sqrt(max(mmd2, 0))``.
    mmd_test : The whole two-sample computation on two samples.

    Notes
    -----
    .. math::

        \widehat{\mathrm{MMD}}^2_u = \frac{\sum_{i \ne j} k(x_i, x_j)}{n_x(n_x-1)}
        + \frac{\sum_{i \ne j} k(y_i, y_j)}{n_y(n_y-1)}
        - \frac{2 \sum_{i,j} k(x_i, y_j)}{n_x n_y}

    (Gretton et al., JMLR 2012, eq. 3): the diagonals :math:`k(x_i, x_i)`
    are left out, which makes the estimate unbiased.

    Examples
    --------
    >>> from skprivacy.stats import mmd2_unbiased
    >>> float(mmd2_unbiased(2.0, 2.0, 0.0, 2, 2))  # two tight, distant pairs
    2.0
    """
    sum_xx, sum_yy, sum_xy = (
        np.asarray(s, dtype=np.float64) for s in (sum_xx, sum_yy, sum_xy)
    )
    n_x, n_y = np.asarray(n_x), np.asarray(n_y)
    if np.any(n_x < 2) or np.any(n_y < 2):
        raise ValueError("The unbiased MMD needs at least 2 rows in each sample.")
    return (
        sum_xx / (n_x * (n_x - 1))
        + sum_yy / (n_y * (n_y - 1))
        - 2.0 * sum_xy / (n_x * n_y)
    )


@validate_params(
    {
        "mmd": ["array-like", Real],
        "bound": [StrOptions({"tv", "gonzalez"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def mmd_to_epsilon(mmd, bound="tv", delta=0.0):
    r"""Map MMD values to ε lower bounds ((ε, δ)-DP, kernels with ``0 <= k <= 1``).

    Parameters
    ----------
    mmd : float or array-like
        MMD values (not squared), ``>= 0``.
    bound : {"tv", "gonzalez"}, default="tv"
        The TV lower bound ``t`` read from the MMD: ``"tv"``: ``t = MMD / 2``
        (MMD <= 2 TV for ``k(x, x) <= 1``); ``"gonzalez"``: ``t = MMD /
        sqrt(2)`` (González et al., ``0 <= k <= 1``).
    delta : float, default=0.0
        The δ of (ε, δ)-DP, in [0, 1). ``0`` is pure DP: ``ε = 2 artanh(t)``.

    Returns
    -------
    epsilon : ndarray
        The smallest ε for which an (ε, δ)-DP mechanism can have total
        variation ``t``: ``log((1 + t - 2δ) / (1 - t))``, clipped at 0
        (``inf`` when ``t >= 1``).

    See Also
    --------
    mmd2_unbiased : The squared MMD estimate.

    Notes
    -----
    An (ε, δ)-DP pair of distributions has
    :math:`\mathrm{TV} \le (e^\varepsilon - 1 + 2\delta)/(e^\varepsilon + 1)`
    (the two-point extremal mechanism), so a total variation of at least
    :math:`t` forces

    .. math::

        \varepsilon \ge \log\frac{1 + t - 2\delta}{1 - t},

    which is :math:`2\,\mathrm{artanh}(t)` at :math:`\delta = 0` and 0 when
    :math:`t \le \delta`. For an RBF kernel :math:`\mathrm{MMD} \le \sqrt 2`,
    so with ``bound="tv"`` and :math:`\delta = 0` the value never exceeds
    :math:`2\,\mathrm{artanh}(\sqrt 2/2) \approx 1.763`.

    Examples
    --------
    >>> from skprivacy.stats import mmd_to_epsilon
    >>> round(float(mmd_to_epsilon(2 ** 0.5)), 4)  # the ceiling of the TV chain
    1.7627
    >>> round(float(mmd_to_epsilon(0.8, delta=0.05)), 4)  # log(1.3 / 0.6)
    0.7732
    """
    mmd = np.asarray(mmd, dtype=np.float64)
    denom = 2.0 if bound == "tv" else np.sqrt(2.0)
    t = np.minimum(mmd / denom, 1.0)
    with np.errstate(divide="ignore"):
        if delta == 0:
            return 2.0 * np.arctanh(t)
        eps = np.log((1.0 + t - 2.0 * delta) / (1.0 - t))
    return np.where(t <= delta, 0.0, np.maximum(eps, 0.0))
