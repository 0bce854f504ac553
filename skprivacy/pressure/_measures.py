# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Rényi information measures on a matrix of identity posteriors (paper 002).

Every function takes ``P`` of shape ``(n_queries, n_identities)`` whose rows are
posterior distributions ``p(. | z)`` of the identity given one query ``z``, and
estimates an expectation over queries by the (optionally weighted) average over
the rows. With the true Bayes posterior and queries drawn from the data
distribution these are consistent plug-in estimates of the population
quantities; with an attacker's posterior they measure what that attacker can do.
"""

import math
from numbers import Real

import numpy as np
import pandas as pd

__all__ = [
    "arimoto_entropy",
    "check_posterior",
    "guessing_bound",
    "guessing_probability",
    "pressure_profile",
    "renyi_entropy",
    "sibson_information",
    "vrpi",
]

#: Absolute tolerance on row sums and on negative entries of a posterior matrix.
POSTERIOR_TOL = 1e-9


def _show_rows(rows, limit=10):
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    more = f" (and {len(rows) - limit} more)" if len(rows) > limit else ""
    return shown + more


def check_posterior(P, *, tol=POSTERIOR_TOL):
    """Validate a matrix whose rows are probability vectors.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_outcomes)
        Candidate posterior matrix.
    tol : float, default=1e-9
        Entries may be as low as ``-tol`` and row sums may differ from 1 by at
        most ``tol`` (floating-point rounding); such entries are clipped at 0.

    Returns
    -------
    P : ndarray of shape (n_queries, n_outcomes), dtype=float64
        The validated matrix, negative rounding clipped to 0.

    Raises
    ------
    ValueError
        If ``P`` is not 2-D, is empty, has non-finite entries, entries below
        ``-tol``, or rows whose sum differs from 1 by more than ``tol``. The
        message names the offending rows.

    Examples
    --------
    >>> from skprivacy.pressure import check_posterior
    >>> check_posterior([[0.5, 0.5], [1.0, 0.0]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    try:
        P = np.asarray(P, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            "P must be a numeric matrix of posterior probabilities; got an array "
            f"of dtype {np.asarray(P).dtype}."
        ) from None
    if P.ndim != 2:
        raise ValueError(
            "A posterior matrix must be 2-D (n_queries, n_identities); got an "
            f"array with shape {P.shape}."
        )
    if P.shape[0] == 0 or P.shape[1] == 0:
        raise ValueError(f"The posterior matrix is empty (shape {P.shape}).")
    bad = np.flatnonzero(~np.isfinite(P).all(axis=1))
    if bad.size:
        raise ValueError(
            f"Posterior rows must be finite; {bad.size} row(s) contain NaN or "
            f"infinite entries: rows {_show_rows(bad)}."
        )
    bad = np.flatnonzero((P < -tol).any(axis=1))
    if bad.size:
        raise ValueError(
            f"Posterior rows must be probability vectors; {bad.size} row(s) have "
            f"negative entries (below -{tol:g}): rows {_show_rows(bad)}."
        )
    sums = P.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > tol)
    if bad.size:
        raise ValueError(
            "Posterior rows must sum to 1 (tolerance "
            f"{tol:g}); {bad.size} row(s) do not: rows {_show_rows(bad)} "
            f"(first bad sum {sums[bad[0]]!r})."
        )
    if (P < 0).any():
        P = np.clip(P, 0.0, None)
    return P


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, Real):
        raise TypeError(f"alpha must be a real number > 1 or inf; got {alpha!r}.")
    alpha = float(alpha)
    if math.isnan(alpha) or alpha <= 1.0:
        raise ValueError(
            f"alpha must be > 1 (or inf for min-entropy); got {alpha!r}. The "
            "order alpha = 1 (Shannon) is not covered by the Arimoto formula used "
            "here."
        )
    return alpha


def _check_weights(sample_weight, n):
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} entries but P has {n} rows.")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError("sample_weight must be finite, non-negative and not all zero.")
    return w / w.sum()


def _check_prior(prior, n_outcomes):
    if prior is None:
        return None
    prior = np.asarray(prior, dtype=np.float64).reshape(-1)
    if prior.shape[0] != n_outcomes:
        raise ValueError(
            f"prior has {prior.shape[0]} entries but P has {n_outcomes} columns."
        )
    if (
        not np.isfinite(prior).all()
        or (prior < -POSTERIOR_TOL).any()
        or abs(prior.sum() - 1.0) > POSTERIOR_TOL
    ):
        raise ValueError(
            "prior must be a probability vector (finite, non-negative, summing to 1)."
        )
    return np.clip(prior, 0.0, None)


def _check_support(P, prior):
    """Refuse posterior mass on identities the prior rules out.

    A posterior computed under ``prior`` puts no mass where the prior is zero;
    mass there means ``P`` and ``prior`` do not belong together, and the
    prior-normalised pressure would come out negative.
    """
    if prior is None:
        return
    bad = np.flatnonzero((prior <= 0.0) & (P > POSTERIOR_TOL).any(axis=0))
    if bad.size:
        raise ValueError(
            f"P puts posterior mass on {bad.size} identity(ies) with zero prior "
            f"probability (column(s) {_show_rows(bad)}); a posterior under this "
            "prior must be 0 there. Pass the prior the posterior was computed with."
        )


def _mean(values, weights):
    if weights is None:
        return float(np.mean(values))
    return float(np.dot(weights, values))


def _int_power(x, n):
    """``x ** n`` for a positive integer ``n`` by repeated squaring."""
    result = None
    base = x
    while n:
        if n & 1:
            result = base.copy() if result is None else result * base
        n >>= 1
        if n:
            base = base * base
    return result


def _power(x, alpha):
    """``x ** alpha`` for ``x`` in [0, 1]; fast paths for (half-)integer orders.

    ``np.power`` with a float exponent costs ~15x a multiplication; orders such
    as 2, 5, 10 (and 1.5 = 1 + 1/2) are common, so they use multiplications
    (and one square root), accurate to a few ulp.
    """
    if alpha == int(alpha) and alpha <= 64:
        return _int_power(x, int(alpha))
    if 2 * alpha == int(2 * alpha) and alpha <= 64:
        return _int_power(x, int(alpha)) * np.sqrt(x)
    return np.power(x, alpha)


def _row_alpha_norms(P, alpha, ratio=None, m=None):
    """Return ``||p||_alpha`` for every row, computed without underflow.

    ``||p||_alpha = m * (sum_u (p_u / m) ** alpha) ** (1 / alpha)`` with
    ``m = max_u p_u``, so every term is in [0, 1] and the sum is in [1, N].
    ``ratio`` and ``m`` may be passed in when several orders share them.
    """
    if m is None:
        m = P.max(axis=1)
    if math.isinf(alpha):
        return m
    if ratio is None:
        ratio = P / m[:, None]
    return m * np.power(_power(ratio, alpha).sum(axis=1), 1.0 / alpha)


def _arimoto(P, alpha, weights):
    norms_mean = _mean(_row_alpha_norms(P, alpha), weights)
    if math.isinf(alpha):
        return -math.log(norms_mean)
    return alpha / (1.0 - alpha) * math.log(norms_mean)


def arimoto_entropy(P, alpha, *, sample_weight=None):
    r"""Compute Arimoto's conditional Rényi entropy :math:`H_\alpha(U \mid Z)` (nats).

    Plug-in estimate from a posterior matrix: the expectation over queries is
    the (weighted) average over the rows of ``P``. It is a point estimate, not
    a bound.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_identities)
        Row ``i`` is the posterior :math:`p(\cdot \mid z_i)` over identities.
    alpha : float
        Order, ``alpha > 1``; ``float("inf")`` gives the conditional
        min-entropy.
    sample_weight : array-like of shape (n_queries,), default=None
        Weights of the queries in the expectation (e.g. the probability of
        each outcome of a discrete release); uniform if None.

    Returns
    -------
    entropy : float
        :math:`H_\alpha(U \mid Z)` in nats, between 0 and ``log(n_identities)``.

    See Also
    --------
    vrpi : ``log N`` minus this entropy.

    Notes
    -----
    .. math::

        H_\alpha(U \mid Z) = \frac{\alpha}{1 - \alpha}
        \log \mathbb{E}_z \lVert p(\cdot \mid z) \rVert_\alpha ,
        \qquad
        H_\infty(U \mid Z) = -\log \mathbb{E}_z \max_u p(u \mid z).

    It is non-increasing in :math:`\alpha` and never increases when side
    information is added (Theorem 1 of paper 002), provided ``P`` is the exact
    posterior.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.pressure import arimoto_entropy
    >>> P = np.full((3, 4), 0.25)          # no information: log 4
    >>> round(arimoto_entropy(P, 2), 6), round(float(np.log(4)), 6)
    (1.386294, 1.386294)
    """
    alpha = _check_alpha(alpha)
    P = check_posterior(P)
    return _arimoto(P, alpha, _check_weights(sample_weight, P.shape[0]))


def renyi_entropy(prior, alpha):
    r"""Rényi entropy :math:`H_\alpha(U)` of a distribution (nats).

    Parameters
    ----------
    prior : array-like of shape (n_outcomes,)
        A probability vector.
    alpha : float
        Order, ``alpha > 1`` or ``float("inf")``.

    Returns
    -------
    entropy : float
        :math:`\frac{1}{1-\alpha}\log\sum_u \pi_u^\alpha`
        (:math:`-\log\max_u \pi_u` for :math:`\alpha = \infty`).

    Examples
    --------
    >>> from skprivacy.pressure import renyi_entropy
    >>> round(renyi_entropy([0.5, 0.5], 2), 6)
    0.693147
    """
    alpha = _check_alpha(alpha)
    prior = np.asarray(prior, dtype=np.float64).reshape(-1)
    prior = _check_prior(prior, prior.shape[0])
    return _arimoto(prior[None, :], alpha, None)


def vrpi(P, alpha, prior=None, *, sample_weight=None):
    r"""Vision re-identification pressure index :math:`\mathrm{vRPI}_\alpha`.

    Plug-in point estimate (not a bound) of how far the identity posterior has
    collapsed from the prior, in nats.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_identities)
        Row ``i`` is the posterior over identities for query ``i``.
    alpha : float
        Order, ``alpha > 1`` or ``float("inf")``.
    prior : array-like of shape (n_identities,), default=None
        None: uniform prior, :math:`\log N - H_\alpha(U \mid Z)`. Otherwise the
        prior-normalised variant :math:`H_\alpha(U) - H_\alpha(U \mid Z)`;
        ``P`` must then be the posterior under that prior and the queries
        drawn from the matching marginal.
    sample_weight : array-like of shape (n_queries,), default=None
        Weights of the queries; uniform if None.

    Returns
    -------
    pressure : float
        0 when the posterior is the prior; ``log N`` when every query is
        identified with certainty (uniform prior).

    Notes
    -----
    :math:`\mathrm{vRPI}_\infty = \log N + \log P_{\mathrm{guess}}` with a
    uniform prior.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.pressure import vrpi
    >>> round(vrpi(np.eye(4), 2), 6)       # every query identified: log 4
    1.386294
    >>> abs(vrpi(np.full((2, 4), 0.25), 5)) < 1e-12   # no information
    True
    """
    alpha = _check_alpha(alpha)
    P = check_posterior(P)
    weights = _check_weights(sample_weight, P.shape[0])
    prior = _check_prior(prior, P.shape[1])
    _check_support(P, prior)
    if prior is None:
        reference = math.log(P.shape[1])
    else:
        reference = _arimoto(prior[None, :], alpha, None)
    return reference - _arimoto(P, alpha, weights)


def guessing_probability(P, *, sample_weight=None):
    r"""Plug-in guessing probability :math:`P_{\mathrm{guess}} = \mathbb{E}_z\max_u p(u\mid z)`.

    With the exact posterior this is the Bayes-optimal attacker's success
    probability; with an attacker's posterior it is the success that attacker
    *expects* (compare with its top-1 accuracy to judge its calibration). A
    point estimate.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_identities)
        Posterior rows.
    sample_weight : array-like of shape (n_queries,), default=None
        Weights of the queries; uniform if None.

    Returns
    -------
    p_guess : float
        In ``[1/N, 1]``.

    Examples
    --------
    >>> from skprivacy.pressure import guessing_probability
    >>> guessing_probability([[0.9, 0.1], [0.5, 0.5]])
    0.7
    """
    P = check_posterior(P)
    return _mean(P.max(axis=1), _check_weights(sample_weight, P.shape[0]))


def guessing_bound(P, alpha, *, sample_weight=None):
    r"""Theorem-2 bound on the guessing probability from :math:`H_\alpha`.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_identities)
        Posterior rows.
    alpha : float
        Order, ``alpha > 1`` or ``float("inf")``.
    sample_weight : array-like of shape (n_queries,), default=None
        Weights of the queries; uniform if None.

    Returns
    -------
    bound : float
        :math:`\exp\!\big(\tfrac{1-\alpha}{\alpha} H_\alpha(U\mid Z)\big)
        = \mathbb{E}_z\lVert p(\cdot\mid z)\rVert_\alpha`, which is always
        ``>= guessing_probability(P)`` because
        :math:`\max_u p_u \le \lVert p\rVert_\alpha`. Equality at
        :math:`\alpha=\infty`.

    Notes
    -----
    The inequality holds exactly for the same ``P`` (it is deterministic, not
    a statistical statement). When ``P`` is an estimate, both sides are
    estimates of their population values.

    Examples
    --------
    >>> from skprivacy.pressure import guessing_bound, guessing_probability
    >>> P = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]]
    >>> guessing_bound(P, 2) >= guessing_probability(P)
    True
    """
    alpha = _check_alpha(alpha)
    P = check_posterior(P)
    weights = _check_weights(sample_weight, P.shape[0])
    return _mean(_row_alpha_norms(P, alpha), weights)


def sibson_information(P, alpha, prior=None, *, sample_weight=None):
    r"""Compute Sibson's α-mutual information :math:`I^{\mathrm{S}}_\alpha(U; Z)` (nats).

    Computed from posteriors: ``P`` must be the posterior of ``U`` under
    ``prior`` and the rows (with ``sample_weight``) a sample of ``Z`` from the
    marginal under that prior. A plug-in point estimate.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_identities)
        Posterior rows.
    alpha : float
        Order, ``alpha > 1`` or ``float("inf")``.
    prior : array-like of shape (n_identities,), default=None
        The identity prior; uniform if None.
    sample_weight : array-like of shape (n_queries,), default=None
        Weights of the queries; uniform if None.

    Returns
    -------
    information : float
        :math:`I^{\mathrm{S}}_\alpha(U;Z)`; equals :func:`vrpi` when the prior
        is uniform.

    Notes
    -----
    With :math:`W(z\mid u) = p(u\mid z)\,p(z)/\pi_u`, Sibson's definition
    :math:`\frac{\alpha}{\alpha-1}\log\int\big(\sum_u \pi_u W(z\mid u)^\alpha
    \big)^{1/\alpha}dz` becomes

    .. math::

        I^{\mathrm{S}}_\alpha = \frac{\alpha}{\alpha-1}\log\mathbb{E}_z
        \Big(\sum_u \pi_u^{1-\alpha}\,p(u\mid z)^\alpha\Big)^{1/\alpha},
        \qquad
        I^{\mathrm{S}}_\infty = \log\mathbb{E}_z\max_u \frac{p(u\mid z)}{\pi_u}.

    Outcomes with zero prior must have zero posterior and are ignored.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.pressure import sibson_information, vrpi
    >>> P = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    >>> bool(np.isclose(sibson_information(P, 2), vrpi(P, 2)))
    True
    """
    alpha = _check_alpha(alpha)
    P = check_posterior(P)
    weights = _check_weights(sample_weight, P.shape[0])
    prior = _check_prior(prior, P.shape[1])
    if prior is None:
        prior = np.full(P.shape[1], 1.0 / P.shape[1])
    support = prior > 0
    if (P[:, ~support] > POSTERIOR_TOL).any():
        raise ValueError(
            "P puts posterior mass on identities with zero prior probability."
        )
    # Likelihood ratios p(u|z) / pi_u; the tilted norm is then
    # (sum_u pi_u * ratio_u ** alpha) ** (1 / alpha), computed with the row max
    # factored out to avoid overflow.
    ratio = P[:, support] / prior[support]
    m = ratio.max(axis=1)
    if math.isinf(alpha):
        return math.log(_mean(m, weights))
    scaled = _power(ratio / m[:, None], alpha) @ prior[support]
    norms = m * np.power(scaled, 1.0 / alpha)
    return alpha / (alpha - 1.0) * math.log(_mean(norms, weights))


def pressure_profile(
    P, alphas=(1.5, 2.0, 5.0, 10.0, math.inf), *, prior=None, sample_weight=None
):
    r"""Every measure at several orders in one pass over ``P``.

    Equivalent to calling :func:`arimoto_entropy`, :func:`vrpi`,
    :func:`guessing_bound`, :func:`sibson_information` and
    :func:`guessing_probability` for each order, but ``P`` is validated once and
    the row maxima are shared. All values are plug-in point estimates.

    Parameters
    ----------
    P : array-like of shape (n_queries, n_identities)
        Posterior rows.
    alphas : array-like of float, default=(1.5, 2, 5, 10, inf)
        Orders, each ``> 1`` or ``inf``.
    prior : array-like of shape (n_identities,), default=None
        Identity prior (uniform if None); see :func:`vrpi`.
    sample_weight : array-like of shape (n_queries,), default=None
        Weights of the queries; uniform if None.

    Returns
    -------
    profile : pandas.DataFrame
        Indexed by ``alpha``, columns ``arimoto_entropy``, ``vrpi``,
        ``sibson_information``, ``guessing_bound`` and ``p_guess``.

    Examples
    --------
    >>> from skprivacy.pressure import pressure_profile
    >>> prof = pressure_profile([[0.5, 0.5], [1.0, 0.0]], alphas=[2, float("inf")])
    >>> prof[["vrpi", "p_guess"]].round(4).to_dict("index")
    {2.0: {'vrpi': 0.3765, 'p_guess': 0.75}, inf: {'vrpi': 0.4055, 'p_guess': 0.75}}
    """
    alphas = [_check_alpha(a) for a in np.atleast_1d(alphas).tolist()]
    if not alphas:
        raise ValueError("alphas is empty; give at least one order alpha > 1.")
    P = check_posterior(P)
    weights = _check_weights(sample_weight, P.shape[0])
    prior = _check_prior(prior, P.shape[1])
    _check_support(P, prior)
    m = P.max(axis=1)
    ratio = P / m[:, None]
    p_guess = _mean(m, weights)
    rows = []
    for alpha in alphas:
        norms_mean = _mean(_row_alpha_norms(P, alpha, ratio=ratio, m=m), weights)
        if math.isinf(alpha):
            h = -math.log(norms_mean)
        else:
            h = alpha / (1.0 - alpha) * math.log(norms_mean)
        if prior is None:
            pressure = math.log(P.shape[1]) - h
            sibson = pressure
        else:
            pressure = _arimoto(prior[None, :], alpha, None) - h
            sibson = sibson_information(
                P, alpha, prior=prior, sample_weight=sample_weight
            )
        rows.append(
            {
                "alpha": alpha,
                "arimoto_entropy": h,
                "vrpi": pressure,
                "sibson_information": sibson,
                "guessing_bound": norms_mean,
                "p_guess": p_guess,
            }
        )
    return pd.DataFrame(rows).set_index("alpha")
