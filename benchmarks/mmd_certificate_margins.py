# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Figures of the certified MMD-TV section of doc/user_guide/auditors.rst.

1. The Hoeffding margin ``t = sqrt(8 ln(G K / alpha) / k)`` subtracted from
   MMD^2_u (``G = 37`` grid bandwidths for the median heuristic, ``K`` audited
   pairs, ``alpha = 1 - confidence``, ``k = min(n_A // 2, n_B // 2)``), for
   several samples per identity and numbers of pairs; the closed form is
   checked against the ``mmd2_margin`` column a fitted ``MMDTVAuditor``
   reports (K = 1 and K = 45).
2. The (eps, delta) map ``eps >= log((1 + t - 2 delta) / (1 - t))``, ``t =
   MMD / 2``, at a few MMD values, and its soundness on the analytic Gaussian
   mechanism (population: the map at t = TV never exceeds the true eps).

Run: ``python benchmarks/mmd_certificate_margins.py``
"""

import numpy as np
from scipy.stats import norm

from skprivacy.auditors import MMDTVAuditor
from skprivacy.auditors._mmd import CERTIFICATE_BANDWIDTH_GRID, mmd_to_epsilon
from skprivacy.datasets import make_identity_embeddings


def margin(n_per_identity, n_pairs, confidence=0.95, n_grid=None):
    g = len(CERTIFICATE_BANDWIDTH_GRID) if n_grid is None else n_grid
    k = n_per_identity // 2
    return np.sqrt(8.0 * np.log(g * n_pairs / (1.0 - confidence)) / k)


def gauss_delta(eps, s, sens=1.0):
    a = sens / (2 * s)
    return norm.cdf(-eps * s / sens + a) - np.exp(eps) * norm.cdf(-eps * s / sens - a)


def main():
    pairs = [1, 500, 79_800]
    print("Hoeffding margin t on MMD^2 (confidence 0.95, median bandwidth, G = 37)")
    print(
        f"{'samples/identity':>17} " + " ".join(f"{'K=' + str(k):>10}" for k in pairs)
    )
    for n in (30, 100, 400, 2000):
        print(f"{n:>17} " + " ".join(f"{margin(n, k):>10.3f}" for k in pairs))
    # The closed form is what the auditor subtracts.
    for n_ids in (2, 10):
        X, ids = make_identity_embeddings(n_ids, 100, 16, random_state=0)
        est = MMDTVAuditor(n_pairs=None, confidence=0.95).fit(X, ids)
        got = est.results_["mmd2_margin"].to_numpy()
        k = n_ids * (n_ids - 1) // 2
        assert np.allclose(got, margin(100, k), rtol=1e-12), (got, margin(100, k))
        print(f"auditor, 100 samples/identity, K={k}: mmd2_margin {got[0]:.3f}")

    print("\n(eps, delta) map, t = MMD / 2: eps = log((1 + t - 2 delta) / (1 - t))")
    print(
        f"{'MMD':>6} "
        + " ".join(f"{'delta=' + str(d):>12}" for d in (0, 1e-5, 0.01, 0.05))
    )
    for m in (0.2, 0.5, 0.8, 1.2, np.sqrt(2)):
        row = [float(mmd_to_epsilon(m, delta=d)) for d in (0, 1e-5, 0.01, 0.05)]
        print(f"{m:>6.3f} " + " ".join(f"{v:>12.5f}" for v in row))

    print("\nsoundness on the analytic Gaussian mechanism N(0, s^2) vs N(1, s^2):")
    print(f"{'s':>5} {'eps':>5} {'delta(eps)':>11} {'TV':>7} {'map(2 TV, delta)':>17}")
    worst = -np.inf
    for s in (0.2, 0.5, 1.0, 3.0):
        for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
            delta = gauss_delta(eps, s)
            tv = 2 * norm.cdf(1 / (2 * s)) - 1
            mapped = float(mmd_to_epsilon(2 * tv, delta=delta))
            worst = max(worst, mapped - eps)
            print(f"{s:>5} {eps:>5} {delta:>11.4g} {tv:>7.4f} {mapped:>17.4f}")
    print(f"largest map - eps: {worst:.3g} (<= 0: the map never exceeds the true eps)")


if __name__ == "__main__":
    main()
