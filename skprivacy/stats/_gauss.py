# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The per-pair maths of GaussMech: ε from the mean gap and the residual scales.

A pure function of numbers, vectorised over pairs.
:class:`~skprivacy.GaussMechAuditor` computes the moments of every identity
once and calls it for all pairs; :func:`~skprivacy.stats.gauss_mech_epsilon`
does the same for one pair of samples.
"""

from numbers import Real

import numpy as np

from skprivacy.utils._sklearn import Interval, validate_params

__all__ = ["gauss_mech_epsilon_from_moments"]


@validate_params(
    {
        "mean_distance": ["array-like", Real],
        "sigma_x": ["array-like", Real],
        "sigma_y": ["array-like", Real],
        "delta": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def gauss_mech_epsilon_from_moments(mean_distance, sigma_x, sigma_y, *, delta=1e-5):
    r"""Gaussian-mechanism ε diagnostic from the mean gap and the residual scales.

    Reads the distance between two identities' mean embeddings as the
    sensitivity of a Gaussian mechanism whose noise scale is the larger RMS
    residual, and inverts the classical calibration at ``delta``. **A point
    estimate and a diagnostic, not a differential-privacy certificate**: it
    assumes isotropic Gaussian residuals, and the classical calibration is
    valid only for ε < 1.

    Parameters
    ----------
    mean_distance : float or array-like of shape (n_pairs,)
        :math:`\lVert \hat\mu_X - \hat\mu_Y \rVert_2`, at least 0.
    sigma_x, sigma_y : float or array-like of shape (n_pairs,)
        RMS residual per coordinate of each sample,
        :math:`\hat\sigma_S = \sqrt{\sum_i \lVert s_i - \hat\mu_S\rVert^2 /
        (n_S d)}`, at least 0.
    delta : float, default=1e-5
        The δ of the Gaussian-mechanism calibration, in (0, 1).

    Returns
    -------
    epsilon : ndarray of shape (n_pairs,) or float ndarray of shape ()
        :math:`\varepsilon_G`. With both residual scales 0, a positive mean
        distance gives ``inf`` (infinitely separable) and 0 gives 0.

    See Also
    --------
    gauss_mech_epsilon : The whole computation on two samples.

    Notes
    -----
    .. math::

        \varepsilon_G = \frac{\lVert \hat\mu_X - \hat\mu_Y \rVert_2
        \sqrt{2 \ln(1.25/\delta)}}{\max(\hat\sigma_X, \hat\sigma_Y)}.

    Using the larger scale gives the smaller value.

    Examples
    --------
    >>> from skprivacy.stats import gauss_mech_epsilon_from_moments
    >>> eps = gauss_mech_epsilon_from_moments([0.5, 0.0], [0.1, 0.0], [0.2, 0.0])
    >>> eps.round(3).tolist()
    [12.112, 0.0]
    """
    mean_distance = np.asarray(mean_distance, dtype=np.float64)
    sigma = np.maximum(
        np.asarray(sigma_x, dtype=np.float64), np.asarray(sigma_y, dtype=np.float64)
    )
    factor = np.sqrt(2.0 * np.log(1.25 / delta))
    with np.errstate(divide="ignore", invalid="ignore"):
        # Zero residual scale: distinct means are infinitely separable,
        # equal means are not separable at all.
        return np.where(
            sigma > 0,
            mean_distance * factor / np.where(sigma > 0, sigma, 1.0),
            np.where(mean_distance > 0, np.inf, 0.0),
        )
