# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Small-sample inflation of the vMF concentration estimate (the figures the docs quote).

Draws ``k`` unit vectors from a von Mises-Fisher distribution of known
concentration ``kappa`` in ``d = 512`` dimensions (scipy's sampler), computes
:func:`skprivacy.membership.vmf_kappa` (Banerjee's closed form) per identity,
and prints the mean estimate divided by the true ``kappa`` for several ``k``
and ``kappa``. The column ``k = inf`` is the limit of the estimator without
sampling noise (Banerjee's formula at the exact mean resultant length
``A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa)``); ``plug-in`` columns put
the expected squared resultant length ``1/k + (1 - 1/k) A_d(kappa)^2`` into
the formula, a check of the simulation.

Usage::

    python benchmarks/kappa_inflation.py             # prints the table
    python benchmarks/kappa_inflation.py --n-rows 100000 --seed 1
"""

import argparse
import time

import numpy as np
import pandas as pd
from scipy.special import ive
from scipy.stats import vonmises_fisher

from skprivacy.membership import vmf_kappa

D = 512
KAPPAS = (50, 100, 200, 500, 1000, 2000)
KS = (5, 10, 20, 50, 100)


def banerjee(r2, d=D):
    """Banerjee's closed form as a function of the squared resultant length."""
    r = np.sqrt(r2)
    return r * (d - r2) / (1.0 - r2)


def mean_resultant_length(kappa, d=D):
    """A_d(kappa) = I_{d/2}(kappa) / I_{d/2 - 1}(kappa) (scaled Bessel functions)."""
    return ive(d / 2, kappa) / ive(d / 2 - 1, kappa)


def measure(kappa, k, n_rows, rng):
    """Mean vmf_kappa over identities of k probes, divided by the true kappa."""
    n_ids = max(200, n_rows // k)
    mu = np.zeros(D)
    mu[0] = 1.0
    X = vonmises_fisher(mu, kappa).rvs(n_ids * k, random_state=rng)
    ids = np.repeat(np.arange(n_ids), k)
    est = vmf_kappa(X, ids).to_numpy()
    return est.mean() / kappa, est.std(ddof=1) / np.sqrt(n_ids) / kappa, n_ids


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-rows", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    rows = []
    for kappa in KAPPAS:
        a2 = mean_resultant_length(kappa) ** 2
        row = {"kappa": kappa}
        for k in KS:
            ratio, se, n_ids = measure(kappa, k, args.n_rows, rng)
            row[f"k={k}"] = ratio
            row[f"se k={k}"] = se
            row[f"plug-in k={k}"] = banerjee(1 / k + (1 - 1 / k) * a2) / kappa
        row["k=inf"] = banerjee(a2) / kappa
        rows.append(row)
    table = pd.DataFrame(rows).set_index("kappa")
    print(
        f"Mean vmf_kappa / true kappa, d = {D}, von Mises-Fisher samples "
        f"({args.n_rows} rows per cell, at least 200 identities; seed {args.seed})"
    )
    shown = [f"k={k}" for k in KS] + ["k=inf"]
    print(table[shown].round(2).to_string())
    print("\nMonte Carlo standard errors of the ratios:")
    print(table[[f"se k={k}" for k in KS]].round(3).to_string())
    print("\nPlug-in check (expected squared resultant length in the formula):")
    print(table[[f"plug-in k={k}" for k in KS]].round(2).to_string())
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
