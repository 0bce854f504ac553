# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Gaussian KDEs of every column on uniform grids, by an exact recurrence.

:func:`kde_on_grid` (a few exponentials per sample and column, two
multiplications per grid point) beside :func:`kde_on_grid_reference` (one
exponential per sample, column and grid point).
"""

import numpy as np

__all__ = ["kde_on_grid", "kde_on_grid_reference"]

_SQRT_2PI = np.sqrt(2.0 * np.pi)


def kde_on_grid(X, h, lo, step, grid_size):
    r"""Gaussian KDE of every column of ``X`` on per-column uniform grids.

    Column ``j`` is evaluated at ``lo[j] + k * step[j]``, ``k = 0 ..
    grid_size - 1``, with bandwidth ``h[j]``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Samples.
    h : ndarray of shape (n_features,)
        Bandwidths.
    lo, step : ndarray of shape (n_features,)
        Grid start and spacing per column.
    grid_size : int
        Number of grid points.

    Returns
    -------
    density : ndarray of shape (grid_size, n_features)
        ``(1 / (n h)) sum_i phi((g - x_i) / h)``.

    Notes
    -----
    On a uniform grid the Gaussian terms obey an exact multiplicative
    recurrence: with :math:`a = (g_s - x)/h` and :math:`\delta = \Delta/h`,
    :math:`e^{-(a + (j+1)\delta)^2/2} = e^{-(a + j\delta)^2/2} \cdot
    e^{-a\delta - \delta^2/2} \cdot e^{-j\delta^2}`. Exponentials are
    evaluated directly at the start of each segment of ``L`` grid points and
    propagated by two multiplications per point inside it (relative error
    ~``L`` ulps). ``L`` is chosen so that ``(L - 1) * max(delta) <= 7``: a
    start value that underflows then only feeds points whose true terms are
    below ``exp(-450)``. With ``max(delta) >= 7`` every point is evaluated
    directly. Ratios are capped at ``e^700`` (only reached where every term
    of the segment is below ``exp(-4000)``).
    """
    n = X.shape[0]
    u = (lo[None, :] - X) / h[None, :]
    delta = step / h
    dmax = float(delta.max()) if delta.size else 0.0
    seg = 32 if dmax <= 7.0 / 31 else max(1, int(7.0 / dmax) + 1)
    q = np.exp(-(delta * delta))
    out = np.empty((grid_size, X.shape[1]))
    a = np.empty_like(u)
    E = np.empty_like(u)
    R = np.empty_like(u)
    for s in range(0, grid_size, seg):
        np.multiply(delta, s, out=a[0])
        np.add(u, a[0][None, :], out=a)
        np.multiply(a, a, out=E)
        E *= -0.5
        np.exp(E, out=E)
        out[s] = E.sum(axis=0)
        stop = min(s + seg, grid_size)
        if stop - s > 1:
            np.multiply(a, -delta[None, :], out=R)
            R -= 0.5 * delta * delta
            # Ratios above e^700 only occur where the start term underflowed
            # (|a| > 100) and every term of the segment is negligible.
            np.minimum(R, 700.0, out=R)
            np.exp(R, out=R)
            for k in range(s + 1, stop):
                E *= R
                R *= q
                out[k] = E.sum(axis=0)
    out /= n * h * _SQRT_2PI
    return out


def kde_on_grid_reference(X, h, lo, step, grid_size):
    """Gaussian KDE of every column of ``X`` on per-column grids (plain).

    The reference of :func:`kde_on_grid`: every Gaussian term evaluated
    directly, ``(1 / (n h)) sum_i phi((g - x_i) / h)``.
    """
    X = np.asarray(X, dtype=np.float64)
    grid = lo[None, :] + np.arange(grid_size)[:, None] * step[None, :]
    u = (grid[:, None, :] - X[None, :, :]) / h[None, None, :]
    return np.exp(-0.5 * u * u).sum(axis=1) / (X.shape[0] * h * _SQRT_2PI)
