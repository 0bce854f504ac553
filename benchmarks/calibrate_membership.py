# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibration of the membership audit: the figures quoted in the user guide.

1. Null audits: ``--n-audits`` audits of :class:`MembershipGeometry` without
   any membership signal (``concentration_gap=0``; 20 member + 20 non-member
   identities, 5 probes, 32 dimensions, ``n_permutations=999``). Prints, per
   statistic and for the fusion, the share of permutation p-values below 0.05
   (should be <= 0.05 up to binomial error), the mean and 95th percentile of
   the AUC, and the share of audits whose AUC exceeds 0.5 + 2 DeLong SE.

2. Probe-count mismatch: identical kappa for every identity (no spread),
   members probed k = 20 times and non-members k = 5 (60 + 60 identities,
   d = 512), over ``--n-seeds`` seeds: mean and standard deviation of each
   statistic's AUC with the default ``match_k=True`` and with
   ``match_k=False``.

Usage::

    python benchmarks/calibrate_membership.py            # prints the tables
    python benchmarks/calibrate_membership.py --write    # also updates
        # benchmarks/calibrate_membership_results.txt (quoted by the docs)
"""

import argparse
import io
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binom

from skprivacy.datasets import make_membership_embeddings
from skprivacy.exceptions import ProbeCountWarning
from skprivacy.membership import MembershipGeometry

RESULTS = Path(__file__).with_name("calibrate_membership_results.txt")


def null_audits(n_audits, n_permutations):
    rows = []
    for seed in range(n_audits):
        X, ids, member = make_membership_embeddings(
            20,
            20,
            n_samples_per_identity=5,
            n_features=32,
            concentration_gap=0.0,
            random_state=seed,
        )
        mg = MembershipGeometry(n_permutations=n_permutations, random_state=seed)
        mg.fit(X, ids, member=member)
        sep = mg.separability_
        for stat in sep.index:
            rows.append(
                {
                    "statistic": stat,
                    "auc": sep.loc[stat, "auc"],
                    "p": sep.loc[stat, "p_value"],
                    "above_2se": sep.loc[stat, "auc"]
                    > 0.5 + 2 * sep.loc[stat, "auc_se"],
                }
            )
        rows.append(
            {
                "statistic": "fusion (out-of-fold)",
                "auc": mg.fusion_auc_,
                "p": mg.fusion_p_value_,
                "above_2se": np.nan,
            }
        )
    frame = pd.DataFrame(rows)
    return frame.groupby("statistic", sort=False).agg(
        rejection_rate=("p", lambda p: np.mean(p < 0.05)),
        mean_auc=("auc", "mean"),
        p95_auc=("auc", lambda a: np.quantile(a, 0.95)),
        auc_above_half_plus_2se=("above_2se", "mean"),
    )


def k_mismatch(n_seeds):
    rows = []
    for seed in range(n_seeds):
        kw = {
            "n_features": 512,
            "concentration_gap": 0.0,
            "identity_spread": 0.0,
            "random_state": seed,
        }
        Xa, ida, ma = make_membership_embeddings(
            60, 60, n_samples_per_identity=20, **kw
        )
        Xb, idb, mb = make_membership_embeddings(60, 60, n_samples_per_identity=5, **kw)
        X = np.vstack([Xa[ma], Xb[~mb]])
        ids = np.concatenate([ida[ma], idb[~mb]])
        member = np.concatenate([ma[ma], mb[~mb]])
        for match_k in (True, False):
            mg = MembershipGeometry(
                match_k=match_k, n_permutations=0, random_state=seed
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ProbeCountWarning)
                mg.fit(X, ids, member=member)
            rows.extend(
                {"match_k": match_k, "statistic": s, "auc": a}
                for s, a in mg.auc_.items()
            )
    frame = pd.DataFrame(rows)
    return (
        frame.groupby(["match_k", "statistic"], sort=False)["auc"]
        .agg(["mean", "std"])
        .unstack("match_k")
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-audits", type=int, default=200)
    parser.add_argument("--n-permutations", type=int, default=999)
    parser.add_argument("--n-seeds", type=int, default=20)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    out = io.StringIO()
    t0 = time.perf_counter()
    table = null_audits(args.n_audits, args.n_permutations)
    limit = binom.isf(0.001, args.n_audits, 0.05) / args.n_audits
    print(
        f"{args.n_audits} null audits (20 + 20 identities, k = 5, d = 32, "
        f"{args.n_permutations} permutations); p < 0.05 allowed up to "
        f"{limit:.3f} (0.05 + binomial margin, one-sided 0.1%)",
        file=out,
    )
    print(table.round(4).to_string(), file=out)
    print(
        f"\nIdentical kappa, members k = 20, non-members k = 5 (60 + 60 "
        f"identities, d = 512), AUC over {args.n_seeds} seeds:",
        file=out,
    )
    print(k_mismatch(args.n_seeds).round(3).to_string(), file=out)
    text = out.getvalue()
    print(text, end="")
    print(f"[{time.perf_counter() - t0:.1f} s]")
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.write:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
