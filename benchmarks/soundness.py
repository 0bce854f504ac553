# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Soundness battery of ROC-HT reserved-test certificates (full run).

For mechanisms with a known true ε, embedded in 16 dimensions (one signal
coordinate, 15 identity-independent Gaussian noise coordinates, then the
library's L2 normalisation, a post-processing), run many independent
certifications with ``ROCHTCertifier`` (default logistic regression,
confidence 0.95) and report

* the violation rate: fraction of certifications in which *any* pair's
  certified ε_LB exceeds that pair's true ε. A sound procedure has rate
  <= 0.05; the column ``allowed (99%)`` is the 99% quantile of
  Binomial(n, 0.05)/n, which a sound procedure exceeds with probability <= 1%;
* tightness: the median over pairs with true ε > 0 of ε_LB / true ε;
* the fraction of pairs certified positive and the median certifiable ceiling.

With ``--honesty``, instead: false-certificate rates where the true ε is 0
(identities of one distribution, 1-NN classifier, ``--n`` runs each) against
the one-sided margin ``0.05 + 3 sqrt(0.05 * 0.95 / n)``: every row present
twice; a fitted family certified one pair's held-out rows at a time (the
largest reported); the larger of the ROC-HT and MMD-TV certificates, each at
``family_confidence(0.95, 2)``.

Usage::

    python benchmarks/soundness.py [--n 500] [--n-jobs 2] [--quick] [--honesty]
"""

import argparse
import os
import time

from skprivacy import ROCHTCertifier
from skprivacy.auditors._certify_sim import (
    binomial_margin,
    duplicated_rows_trials,
    larger_of_two_trials,
    per_pair_scoring_trials,
    run_soundness,
)

# (mechanism, epsilon, identities, samples per identity, certifier kwargs)
CONFIGS = [
    ("identical", 0.0, 2, 500, {}),
    ("laplace", 0.5, 2, 500, {}),
    ("laplace", 1.0, 2, 500, {}),
    ("laplace", 2.0, 2, 500, {}),
    ("randomized_response", 0.5, 2, 500, {}),
    ("randomized_response", 1.0, 2, 500, {}),
    ("randomized_response", 2.0, 2, 500, {}),
    ("laplace", 0.5, 4, 300, {}),  # 6 pairs with ε = 0.5, 1.0, 1.5: K = 6
    ("randomized_response", 1.0, 4, 300, {}),  # K = 6, two pairs with ε = 0
    ("laplace", 1.0, 2, 500, {"thresholds": 5}),  # Bonferroni-paid search
    ("randomized_response", 1.0, 2, 100, {}),  # paper-like sample size
]


def honesty(n):
    """Print the false-certificate rates at true ε = 0."""
    bound = binomial_margin(0.05, n)
    print(
        f"false certificates at true eps = 0, 1-NN, {n} runs each; sound if <= {bound:.3f}"
    )
    for name, run in (
        ("every row duplicated (test_size=0.3)", lambda: duplicated_rows_trials(n)),
        (
            "4 identities, 6 pairs fitted, certified pair by pair, max",
            lambda: per_pair_scoring_trials(n),
        ),
    ):
        t0 = time.perf_counter()
        false = run()
        print(
            f"  {name}: {int(false.sum())}/{n} = {false.mean():.3f} "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    t0 = time.perf_counter()
    false = larger_of_two_trials(n)
    print(
        f"  larger of ROC-HT and MMD-TV certificates, each at 0.975: "
        f"{int(false['max'].sum())}/{n} = {false['max'].mean():.3f} (ROC-HT "
        f"{int(false['rocht'].sum())}, MMD-TV {int(false['mmd'].sum())}; "
        f"{time.perf_counter() - t0:.1f} s)"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="certifications each")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="first 3 configs only")
    parser.add_argument("--honesty", action="store_true", help="rates at eps = 0")
    args = parser.parse_args()
    if args.honesty:
        print(f"load average: {os.getloadavg()}")
        honesty(args.n)
        print(f"load average: {os.getloadavg()}")
        return
    configs = CONFIGS[:3] if args.quick else CONFIGS
    print(f"load average: {os.getloadavg()}")
    header = (
        f"{'mechanism':<21}{'eps':>5}{'K':>3}{'n/id':>6}{'thr':>6}{'certs':>7}"
        f"{'viol':>6}{'rate':>8}{'allowed(99%)':>14}{'tight':>7}{'cert>0':>8}"
        f"{'ceiling':>9}{'s':>7}"
    )
    print(header)
    print("-" * len(header))
    for mech, eps, n_id, n_samples, kwargs in configs:
        t0 = time.perf_counter()
        rep = run_soundness(
            mech,
            eps,
            args.n,
            certifier=ROCHTCertifier(test_size=0.3, confidence=0.95, **kwargs),
            n_identities=n_id,
            n_samples=n_samples,
            n_features=16,
            random_state=0,
            n_jobs=args.n_jobs,
        )
        k = n_id * (n_id - 1) // 2
        thr = kwargs.get("thresholds", "train")
        print(
            f"{mech:<21}{eps:>5.1f}{k:>3}{n_samples:>6}{thr!s:>6}"
            f"{rep.n_certifications:>7}{rep.n_violations:>6}"
            f"{rep.violation_rate:>8.3f}{rep.allowed_rate_99:>14.3f}"
            f"{rep.tightness:>7.2f}{rep.certified_fraction:>8.2f}"
            f"{rep.median_ceiling:>9.2f}{time.perf_counter() - t0:>7.0f}",
            flush=True,
        )
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
