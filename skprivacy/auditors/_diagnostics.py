# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Residual Gaussianity diagnostic for GaussMech (paper 000, controls)."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch

from skprivacy.utils import check_legacy_rng, validate_identity_data
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, validate_params

__all__ = ["residual_gaussianity"]


class _Input(BaseEstimator):
    """Placeholder estimator so the shared input layer can validate data."""


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "threshold": [Interval(Real, 0, 1, closed="neither")],
        "max_samples": [Interval(Integral, 3, None, closed="left"), None],
        "n_quantiles": [Interval(Integral, 2, None, closed="left")],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def residual_gaussianity(
    X, y, *, threshold=1e-3, max_samples=5000, n_quantiles=101, random_state=0
):
    """Shapiro–Wilk test of the pooled within-identity residuals, per dimension.

    The residuals ``z - mean_id`` of every retained identity are pooled and,
    for each embedding dimension, tested for Gaussianity with
    :func:`scipy.stats.shapiro`. GaussMech's reading as a Gaussian mechanism
    is only meaningful when these residuals look Gaussian (paper 000 rejects
    on most of 512 dimensions).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (cleaned and L2-normalised like every auditor's input).
    y : array-like of shape (n_samples,)
        Identity labels.
    threshold : float, default=1e-3
        Dimensions with p-value below this count as rejected.
    max_samples : int or None, default=5000
        Shapiro–Wilk p-values are only accurate up to 5,000 observations
        (scipy warns above that), so a seeded random subset of this many
        pooled residual rows is tested (the same rows for every dimension).
        ``None`` tests all rows.
    n_quantiles : int, default=101
        Number of probability levels of the Q-Q data.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the subset.

    Returns
    -------
    diagnostic : :class:`~sklearn.utils.Bunch`
        ``results`` (DataFrame, one row per dimension: ``dimension``,
        ``statistic``, ``p_value``, ``rejected``), ``n_rejected``,
        ``n_dimensions``, ``n_residuals`` (rows tested), ``threshold`` and
        ``qq`` (DataFrame with ``probability``, ``theoretical`` — standard
        normal quantiles — and one column per dimension with the empirical
        quantiles of the standardised residuals).

    Notes
    -----
    The pooled residuals are not an i.i.d. sample from one distribution
    (identities differ in scale), and with thousands of observations the test
    detects tiny departures; read the count together with the Q-Q data, as in
    the paper, not as an exact model-selection test.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import residual_gaussianity
    >>> X, ids = make_identity_embeddings(10, 20, 8, random_state=0)
    >>> diag = residual_gaussianity(X, ids)
    >>> diag.results.shape, diag.qq.shape
    ((8, 4), (101, 10))
    """
    data = validate_identity_data(_Input(), X, y)
    order, starts = data.order()
    Xs = data.X[order]
    means = np.add.reduceat(Xs, starts[:-1], axis=0) / data.counts[:, None]
    resid = Xs - np.repeat(means, data.counts, axis=0)
    if max_samples is not None and resid.shape[0] > max_samples:
        rng = check_legacy_rng(random_state)
        rows = np.sort(rng.choice(resid.shape[0], size=max_samples, replace=False))
        resid = resid[rows]
    d = resid.shape[1]
    stat = np.empty(d)
    pval = np.empty(d)
    for j in range(d):
        res = stats.shapiro(resid[:, j])
        stat[j], pval[j] = res.statistic, res.pvalue
    results = pd.DataFrame(
        {
            "dimension": np.arange(d),
            "statistic": stat,
            "p_value": pval,
            "rejected": pval < threshold,
        }
    )
    probs = (np.arange(n_quantiles) + 0.5) / n_quantiles
    std = resid.std(axis=0, ddof=1)
    standardised = (resid - resid.mean(axis=0)) / np.where(std > 0, std, 1.0)
    qq = pd.DataFrame(np.quantile(standardised, probs, axis=0), columns=np.arange(d))
    qq.insert(0, "theoretical", stats.norm.ppf(probs))
    qq.insert(0, "probability", probs)
    return Bunch(
        results=results,
        n_rejected=int(results["rejected"].sum()),
        n_dimensions=d,
        n_residuals=int(resid.shape[0]),
        threshold=float(threshold),
        qq=qq,
    )
