# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Two-sample tests and per-pair ε estimates as functions of two samples.

Each function computes the quantities of one pair ``(X, Y)`` with the kernels
the auditors use and calls the same per-pair maths (:func:`mmd2_unbiased`,
:func:`mmd_to_epsilon`, :func:`kde_lr_per_dimension`,
:func:`gauss_mech_epsilon_from_moments`), so a function and its auditor give
the same numbers on the same rows. Unlike the auditors, the functions use the
rows as given: they do not drop or L2-normalise rows (pass
``sklearn.preprocessing.normalize(X)`` to reproduce an auditor's input layer).
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_array

from skprivacy._kernels._mmd import (
    check_bandwidth_at_median,
    cross_blocks,
    cross_kernel_sums,
    identity_state,
    pair_bandwidths,
    permutation_test,
    within_kernel_sums,
)
from skprivacy._kernels._moments import grouped_moments
from skprivacy.stats._gauss import gauss_mech_epsilon_from_moments
from skprivacy.stats._kde import kde_lr_per_dimension, silverman_bandwidth
from skprivacy.stats._mmd import mmd2_unbiased, mmd_to_epsilon
from skprivacy.utils import (
    check_generator,
    check_magnitude,
    check_no_text_columns,
    limit_blas_threads,
)
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, StrOptions, validate_params

__all__ = [
    "GaussMechResult",
    "KDELRResult",
    "MMDTestResult",
    "gauss_mech_epsilon",
    "kde_lr_epsilon",
    "mmd_test",
]


def _check_samples(X, Y):
    """Two float64 samples with the same number of features, at least 2 rows each."""
    out = []
    for name, S in (("X", X), ("Y", Y)):
        try:
            check_no_text_columns(S)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        if np.ndim(S) == 1:
            S = np.reshape(np.asarray(S), (-1, 1))
        try:
            S = check_array(S, dtype=np.float64, ensure_min_samples=2, input_name=name)
        except ValueError as exc:
            # scikit-learn names the argument for NaN, not for too few rows.
            msg = str(exc)
            raise ValueError(msg if f" {name} " in msg else f"{name}: {msg}") from None
        out.append(S)
    X, Y = out
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            "X and Y must have the same number of features; got "
            f"{X.shape[1]} and {Y.shape[1]}."
        )
    for name, S in (("X", X), ("Y", Y)):
        # Squared distances of such entries overflow (or underflow) float64 and
        # the statistic would come out NaN, inf or 0 without a word.
        check_magnitude(
            S,
            name=name,
            advice="Rescale X and Y by one common factor first (e.g. L2-normalise "
            "the embeddings).",
        )
    return X, Y


def _check_bandwidth(Z, sigma):
    """Refuse a bandwidth at which the kernel is 0 or 1 for typical rows."""
    rows = Z[:: max(1, len(Z) // 256)]
    sq = np.einsum("ij,ij->i", rows, rows)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (rows @ rows.T)
    d2 = np.maximum(d2[np.triu_indices(len(rows), 1)], 0.0)
    check_bandwidth_at_median(
        d2, sigma, f"bandwidth={sigma!r}", "bandwidth=None (the median heuristic)"
    )


# --------------------------------------------------------------------------- MMD
@dataclass(frozen=True)
class MMDTestResult:
    """Result of :func:`mmd_test`: unbiased MMD², permutation p-value and ε.

    Unpacks as ``statistic, pvalue = mmd_test(X, Y)`` (hyppo's convention);
    every field is also an attribute.

    Parameters
    ----------
    statistic : float
        Unbiased estimate of the squared MMD (may be slightly negative).
    pvalue : float
        Permutation p-value ``(b + 1) / (m + 1)``; NaN when
        ``n_permutations=0``.
    epsilon : float
        MMD-TV ε at the sample MMD, a point estimate (not a certificate).
    mmd : float
        ``sqrt(max(statistic, 0))``.
    bandwidth : float
        RBF bandwidth σ used.
    n_permutations : int
        Number ``m`` of random relabellings.
    bound : {"tv", "gonzalez"}
        MMD-to-ε map used for ``epsilon``.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.stats import mmd_test
    >>> rng = np.random.default_rng(0)
    >>> statistic, pvalue = mmd_test(rng.normal(size=(30, 2)),
    ...                              rng.normal(1.0, size=(30, 2)),
    ...                              n_permutations=999)
    >>> pvalue
    0.001
    """

    statistic: float
    pvalue: float
    epsilon: float
    mmd: float
    bandwidth: float
    n_permutations: int
    bound: str

    def __iter__(self):
        return iter((self.statistic, self.pvalue))


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), None],
        "n_permutations": [Interval(Integral, 0, None, closed="left")],
        "bound": [StrOptions({"tv", "gonzalez"})],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def mmd_test(X, Y, *, bandwidth=None, n_permutations=9999, bound="tv", random_state=0):
    r"""Kernel two-sample test of ``P_X = P_Y`` with the unbiased MMD² and its ε.

    The per-pair computation of :class:`~skprivacy.MMDTVAuditor` on two
    samples: an RBF kernel with the median-heuristic bandwidth, the unbiased
    MMD², its MMD-TV ε and a permutation test with the Phipson–Smyth p-value.
    Rows are used as given (the auditor L2-normalises embeddings first).

    Parameters
    ----------
    X : array-like of shape (n_x, n_features) or (n_x,)
        First sample (a 1-D array is one feature), ``n_x >= 2``, finite.
    Y : array-like of shape (n_y, n_features) or (n_y,)
        Second sample, same number of features, ``n_y >= 2``, finite.
    bandwidth : float or None, default=None
        RBF bandwidth σ of :math:`k(x, y) = \exp(-\lVert x - y\rVert^2 /
        (2\sigma^2))`. None: the median of the pooled sample's off-diagonal
        Euclidean distances (the RMS distance if that median is 0).
    n_permutations : int, default=9999
        Number ``m`` of random relabellings of the pooled sample; 0 skips the
        test (``pvalue`` is NaN).
    bound : {"tv", "gonzalez"}, default="tv"
        MMD-to-ε map: ``2 artanh(MMD/2)`` or ``2 artanh(MMD/sqrt(2))``.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the relabellings (see Notes).

    Returns
    -------
    result : MMDTestResult
        ``statistic`` (unbiased MMD²), ``pvalue``, ``epsilon``, ``mmd``,
        ``bandwidth``, ``n_permutations`` and ``bound``; unpacks as
        ``(statistic, pvalue)``.

    See Also
    --------
    skprivacy.MMDTVAuditor : The same computation over many identity pairs.

    Notes
    -----
    With :math:`n_x, n_y` rows,

    .. math::

        \widehat{\mathrm{MMD}}^2_u = \frac{\sum_{i \ne j} k(x_i, x_j)}{n_x(n_x-1)}
        + \frac{\sum_{i \ne j} k(y_i, y_j)}{n_y(n_y-1)}
        - \frac{2 \sum_{i,j} k(x_i, y_j)}{n_x n_y},

    :math:`\varepsilon = 2\,\mathrm{artanh}(\widehat{\mathrm{MMD}}/2)`, a
    point estimate that can never exceed :math:`2\,\mathrm{artanh}(\sqrt 2/2)
    \approx 1.763` for an RBF kernel. The p-value is :math:`(b + 1)/(m + 1)`,
    :math:`b` the number of relabellings whose statistic is at least the
    observed one (ties, including relabellings that reproduce the observed
    split, count; a relative tolerance of 1e-12 absorbs rounding), so it is
    never 0 and the test is exact. With few rows the number of distinct
    splits, :math:`\binom{n_x + n_y}{n_x}`, limits how small a p-value can
    be (2 + 2 rows: 6 splits, and the observed one and its mirror image give
    the same statistic, so about a third of the relabellings match it and the
    p-value is about 1/3 or more).

    *The relabelling stream.* With ``rng`` the generator of
    ``random_state`` (``numpy.random.default_rng(random_state)`` for an int
    or None; a Generator is used as is) and ``z`` the vector of ``n_x`` ones
    followed by ``n_y`` zeros, relabelling ``i`` is row ``i`` of
    ``rng.permuted(np.broadcast_to(z, (m, n_x + n_y)), axis=1)``: its ones
    mark the pooled rows that play the role of ``X``. The statistics are
    evaluated in batches, but the rows are drawn in this order, so any
    independent implementation can replay the same relabellings.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.stats import mmd_test
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3))
    >>> result = mmd_test(X, rng.normal(0.5, size=(40, 3)), n_permutations=999)
    >>> result.pvalue < 0.05, round(result.epsilon, 3)
    (True, 0.176)
    >>> mmd_test(X, rng.normal(size=(40, 3)), n_permutations=999).pvalue > 0.05
    True
    """
    X, Y = _check_samples(X, Y)
    n_x, n_y = X.shape[0], Y.shape[0]
    Z = np.ascontiguousarray(np.vstack([X, Y]))
    if bandwidth is not None:
        _check_bandwidth(Z, float(bandwidth))
    # The pair's quantities through the auditor's kernels, one pair of two
    # "identities" (X: rows 0..n_x-1, Y: the rest).
    state = identity_state(Z, np.array([0, n_x, n_x + n_y]), np.ones(2, np.intp))
    a, b = np.array([0]), np.array([1])
    with limit_blas_threads():
        ((block, _),) = cross_blocks(state, np.array([[0, 1]]))
        if bandwidth is None:
            _, sigma = pair_bandwidths(state, block, a, b)
        else:
            sigma = np.array([float(bandwidth)])
        gamma = 0.5 / (sigma * sigma)
        mmd2 = mmd2_unbiased(
            2.0 * within_kernel_sums(state, a, gamma),
            2.0 * within_kernel_sums(state, b, gamma),
            cross_kernel_sums(block, sigma),
            n_x,
            n_y,
        )[0]
    mmd = np.sqrt(max(mmd2, 0.0))
    sigma = float(sigma[0])
    pvalue = np.nan
    if n_permutations:
        rng = check_generator(random_state)
        pvalue, _ = permutation_test(Z, n_x, sigma, n_permutations, rng)
    return MMDTestResult(
        statistic=float(mmd2),
        pvalue=float(pvalue),
        epsilon=float(mmd_to_epsilon(mmd, bound)),
        mmd=float(mmd),
        bandwidth=sigma,
        n_permutations=int(n_permutations),
        bound=bound,
    )


# ------------------------------------------------------------------------ KDE-LR
@dataclass(frozen=True)
class KDELRResult:
    """Result of :func:`kde_lr_epsilon`: the composed KDE log-ratio ε.

    For KDE-LR the statistic *is* the ε point estimate (there is no test), so
    ``statistic == epsilon``.

    Parameters
    ----------
    statistic : float
        The composed ε (sum over dimensions of the largest log density ratio).
    epsilon : float
        The same value, a point estimate and a diagnostic (not a certificate).
    epsilon_per_dimension : ndarray of shape (n_features,)
        Largest absolute log density ratio of each dimension.
    argmax_dimension : int
        Dimension with the largest value.
    bandwidth_x, bandwidth_y : ndarray of shape (n_features,)
        Silverman bandwidths of each sample, per dimension.
    alpha : float
        Weight of the uniform mixture.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.stats import kde_lr_epsilon
    >>> rng = np.random.default_rng(0)
    >>> result = kde_lr_epsilon(rng.normal(size=(50, 2)), rng.normal(size=(50, 2)),
    ...                         alpha=0.01)
    >>> result.epsilon_per_dimension.shape, result.statistic == result.epsilon
    ((2,), True)
    """

    statistic: float
    epsilon: float
    epsilon_per_dimension: np.ndarray
    argmax_dimension: int
    bandwidth_x: np.ndarray
    bandwidth_y: np.ndarray
    alpha: float


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "grid_size": [Interval(Integral, 2, None, closed="left")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "floor": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def kde_lr_epsilon(X, Y, *, alpha=0.0, grid_size=201, margin=3.0, floor=1e-12):
    r"""KDE log-ratio ε of two samples, per dimension and composed (paper 000).

    The per-pair computation of :class:`~skprivacy.KDELRAuditor`: per
    dimension, Gaussian KDEs of ``X``'s and ``Y``'s marginals with their own
    Silverman bandwidths on a common grid, mixed with a uniform density,
    floored, and the largest absolute log-ratio; summed over dimensions.
    **A point estimate and a diagnostic, not a certificate** (see the
    auditor). Rows are used as given (the auditor L2-normalises embeddings).

    Parameters
    ----------
    X : array-like of shape (n_x, n_features) or (n_x,)
        First sample (a 1-D array is one feature), ``n_x >= 2``, finite.
    Y : array-like of shape (n_y, n_features) or (n_y,)
        Second sample, same number of features, ``n_y >= 2``, finite.
    alpha : float, default=0.0
        Weight of the uniform mixture, in [0, 1] (paper: 0 and 1e-2).
    grid_size : int, default=201
        Grid points per dimension.
    margin : float, default=3.0
        The grid spans both samples' range extended by ``margin`` times the
        larger bandwidth on each side.
    floor : float, default=1e-12
        Densities are floored at this value before taking logs.

    Returns
    -------
    result : KDELRResult
        ``statistic`` and ``epsilon`` (the composed ε),
        ``epsilon_per_dimension``, ``argmax_dimension``, ``bandwidth_x``,
        ``bandwidth_y`` and ``alpha``.

    See Also
    --------
    skprivacy.KDELRAuditor : The same computation over many identity pairs.

    Notes
    -----
    :math:`\varepsilon_{d'} = \max_g |\log \tilde p_X(g) - \log \tilde
    p_Y(g)|` with :math:`\tilde p = \max((1-\alpha)\hat p + \alpha u,
    \tau)`, and :math:`\varepsilon = \sum_{d'} \varepsilon_{d'}`; see
    :class:`~skprivacy.KDELRAuditor` for the grid and the bandwidths.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.stats import kde_lr_epsilon
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(60, 3)), rng.normal(size=(60, 3))
    >>> Y[:, 1] += 3.0  # one dimension carries the difference
    >>> result = kde_lr_epsilon(X, Y, alpha=0.01)
    >>> result.argmax_dimension
    1
    """
    X, Y = _check_samples(X, Y)
    hx, hy = silverman_bandwidth(X), silverman_bandwidth(Y)
    per_dim = kde_lr_per_dimension(
        X,
        Y,
        bandwidth_x=hx,
        bandwidth_y=hy,
        alpha=alpha,
        grid_size=grid_size,
        margin=margin,
        floor=floor,
    )
    epsilon = float(per_dim.sum())
    return KDELRResult(
        statistic=epsilon,
        epsilon=epsilon,
        epsilon_per_dimension=per_dim,
        argmax_dimension=int(per_dim.argmax()),
        bandwidth_x=hx,
        bandwidth_y=hy,
        alpha=float(alpha),
    )


# --------------------------------------------------------------------- GaussMech
@dataclass(frozen=True)
class GaussMechResult:
    """Result of :func:`gauss_mech_epsilon`: a Gaussian-mechanism ε diagnostic.

    Parameters
    ----------
    statistic : float
        Standardised mean distance ``||mean(X) - mean(Y)|| / sigma``.
    epsilon : float
        ``statistic * sqrt(2 ln(1.25 / delta))``, a point estimate and a
        diagnostic (not a differential-privacy certificate).
    delta_mean : float
        ``||mean(X) - mean(Y)||``.
    sigma : float
        ``max(sigma_x, sigma_y)``.
    sigma_x, sigma_y : float
        RMS residual per coordinate of each sample.
    delta : float
        The δ of the calibration.

    Examples
    --------
    >>> from skprivacy.stats import gauss_mech_epsilon
    >>> result = gauss_mech_epsilon([[0.0], [2.0]], [[4.0], [6.0]], delta=1e-5)
    >>> result.statistic, result.delta_mean, result.sigma
    (4.0, 4.0, 1.0)
    """

    statistic: float
    epsilon: float
    delta_mean: float
    sigma: float
    sigma_x: float
    sigma_y: float
    delta: float


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "delta": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def gauss_mech_epsilon(X, Y, *, delta=1e-5):
    r"""Gaussian-mechanism ε diagnostic of two samples (paper 000, GaussMech).

    The per-pair computation of :class:`~skprivacy.GaussMechAuditor`: the
    distance between the sample means read as the sensitivity of a Gaussian
    mechanism whose noise scale is the larger RMS residual, inverted with the
    classical calibration at ``delta``. **A point estimate and a diagnostic,
    not a certificate**: it assumes isotropic Gaussian residuals. Rows are
    used as given (the auditor L2-normalises embeddings).

    Parameters
    ----------
    X : array-like of shape (n_x, n_features) or (n_x,)
        First sample (a 1-D array is one feature), ``n_x >= 2``, finite.
    Y : array-like of shape (n_y, n_features) or (n_y,)
        Second sample, same number of features, ``n_y >= 2``, finite.
    delta : float, default=1e-5
        The δ of the Gaussian-mechanism calibration, in (0, 1).

    Returns
    -------
    result : GaussMechResult
        ``statistic`` (standardised mean distance), ``epsilon``,
        ``delta_mean``, ``sigma``, ``sigma_x``, ``sigma_y`` and ``delta``.

    See Also
    --------
    skprivacy.GaussMechAuditor : The same computation over many identity pairs.

    Notes
    -----
    .. math::

        \hat\sigma_S = \sqrt{\frac{\sum_i \lVert s_i - \bar s\rVert^2}{n_S d}},
        \qquad
        \varepsilon = \frac{\lVert \bar x - \bar y \rVert_2
        \sqrt{2 \ln(1.25/\delta)}}{\max(\hat\sigma_X, \hat\sigma_Y)}.

    With both residual scales 0, distinct means give ``inf`` and equal means 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.stats import gauss_mech_epsilon
    >>> rng = np.random.default_rng(0)
    >>> result = gauss_mech_epsilon(rng.normal(size=(100, 4)),
    ...                             rng.normal(0.5, size=(100, 4)))
    >>> round(result.statistic, 2), round(result.epsilon, 2)
    (1.04, 5.04)
    """
    X, Y = _check_samples(X, Y)
    (mean_x, mean_y), (sigma_x, sigma_y) = grouped_moments(
        np.ascontiguousarray(np.vstack([X, Y])),
        np.array([0, X.shape[0], X.shape[0] + Y.shape[0]]),
    )
    delta_mean = np.linalg.norm(mean_x - mean_y)
    epsilon = gauss_mech_epsilon_from_moments(delta_mean, sigma_x, sigma_y, delta=delta)
    factor = np.sqrt(2.0 * np.log(1.25 / delta))
    return GaussMechResult(
        statistic=float(epsilon / factor),
        epsilon=float(epsilon),
        delta_mean=float(delta_mean),
        sigma=float(max(sigma_x, sigma_y)),
        sigma_x=float(sigma_x),
        sigma_y=float(sigma_y),
        delta=float(delta),
    )
