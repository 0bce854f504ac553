# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Temperature calibration and per-identity splitting shared by the attackers."""

import math

import numpy as np
from scipy.optimize import minimize_scalar

from skprivacy.utils._identity import group_by_identity

__all__ = [
    "calibration_mask",
    "logsumexp_rows",
    "fit_temperature",
    "softmax_nll",
    "temperature_scale",
]


def calibration_mask(codes, calibration_size, rng):
    """Choose calibration rows, stratified by identity.

    Every identity with at least two rows gives
    ``clip(round(calibration_size * n_i), 1, n_i - 1)`` rows, so it keeps at
    least one row for fitting; identities with a single row give none.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Integer identity code of each row.
    calibration_size : float
        Fraction of each identity's rows to hold out.
    rng : numpy.random.RandomState
        Source of randomness.

    Returns
    -------
    mask : ndarray of shape (n_samples,), dtype=bool
        True for calibration rows.
    """
    codes = np.asarray(codes)
    mask = np.zeros(codes.shape[0], dtype=bool)
    order, starts, counts = group_by_identity(codes)
    for i, n_i in enumerate(counts):
        if n_i < 2:
            continue
        k = int(min(max(round(calibration_size * n_i), 1), n_i - 1))
        rows = order[starts[i] : starts[i + 1]]
        mask[rng.choice(rows, size=k, replace=False)] = True
    return mask


def logsumexp_rows(a, keepdims=False):
    """Return the row-wise ``log(sum(exp(a)))``.

    scipy's ``logsumexp`` has per-call overhead that dominates the many small
    calls of a temperature search.
    """
    m = a.max(axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m
    return out if keepdims else out[:, 0]


def softmax_nll(logits, y):
    """Mean negative log-likelihood of labels ``y`` under ``softmax(logits)``."""
    lse = logsumexp_rows(logits)
    return float(np.mean(lse - logits[np.arange(logits.shape[0]), y]))


def fit_temperature(nll, bounds=(1e-4, 1e2), xatol=1e-2):
    """Minimise ``nll(T)`` over ``T`` in ``bounds`` (bounded Brent on ``log T``).

    Parameters
    ----------
    nll : callable
        Maps a temperature to the calibration negative log-likelihood.
    bounds : tuple of float, default=(1e-4, 1e2)
        Search interval for the temperature.
    xatol : float, default=1e-2
        Absolute tolerance on ``log T`` (1% in ``T``: the NLL is flat at
        its minimum, so finer steps change nothing measurable).

    Returns
    -------
    temperature : float
        The minimiser.
    """
    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    res = minimize_scalar(
        lambda log_t: nll(math.exp(log_t)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": xatol},
    )
    return float(math.exp(res.x))


def temperature_scale(log_proba, temperature):
    """Return ``log softmax(log_proba / temperature)`` row-wise."""
    z = log_proba / temperature
    return z - logsumexp_rows(z, keepdims=True)
