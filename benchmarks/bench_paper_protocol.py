# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: the paper protocol's classifier-sensitivity step against the rest.

Data: ``make_identity_embeddings(40 identities x 10 x 128, seed 0)`` (the
``--separation``/``--noise`` options give harder data, on which the AUCs are
not all 1). Each repeat runs, in one process:

1. ``skprivacy.audit(X, ids, protocol="paper")``: total wall time, the
   ``classifier_sensitivity`` step's seconds (``method_seconds`` of the
   provenance), the rest (total minus the step) and their ratio;
2. the baseline: the same step as paper 000 runs it, a 100-tree forest under
   5 folds (``protocol={**PROTOCOLS["paper"], "sensitivity_trees": 100,
   "sensitivity_folds": 5}``, ``methods=["classifier_sensitivity"]``), its
   seconds and its ratio to the paper protocol's step.

Medians of ``--repeats``. From the last repeat it prints what the smaller
check changes on the same 50 pairs: the mean AUCs of logistic regression
and of the forest, the check's statistic (mean of logistic minus forest)
under each, and the mean absolute per-pair difference of the forest's AUC
and of the statistic between the two.

Usage::

    python benchmarks/bench_paper_protocol.py [--repeats 3] [--separation 0.3 --noise 2]
"""

import argparse
import os
import time

import numpy as np

from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import PROTOCOLS, audit

STEP = "classifier_sensitivity"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--separation", type=float, default=1.0)
    parser.add_argument("--noise", type=float, default=0.5)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X, ids = make_identity_embeddings(
        40, 10, 128, separation=args.separation, noise=args.noise, random_state=0
    )
    paper_forest = {
        **PROTOCOLS["paper"],
        "sensitivity_trees": 100,
        "sensitivity_folds": 5,
    }
    rows = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        report = audit(X, ids, protocol="paper", verbose=0)
        total = time.perf_counter() - t0
        step = report.provenance["method_seconds"][STEP]
        baseline_report = audit(
            X, ids, protocol=paper_forest, methods=[STEP], suggest_rank=False, verbose=0
        )
        baseline = baseline_report.provenance["method_seconds"][STEP]
        rows.append((total, step, total - step, baseline))
        print(
            f"  repeat: total {total:.1f} s, step {step:.1f} s, rest {total - step:.1f}"
            f" s, 100-tree step {baseline:.1f} s (load {os.getloadavg()[0]:.1f})"
        )
    total, step, rest, baseline = np.median(np.asarray(rows), axis=0)
    trees = PROTOCOLS["paper"]["sensitivity_trees"]
    folds = PROTOCOLS["paper"]["sensitivity_folds"]
    small_check = f"{trees} trees, {folds} folds"
    print(f"load average after: {os.getloadavg()}")
    print(f"medians of {args.repeats}, 40 x 10 x 128, protocol paper ({small_check}):")
    print(f"  total wall              {total:8.1f} s")
    print(f"  sensitivity step        {step:8.1f} s ({step / total:.0%} of the run)")
    print(f"  rest of the protocol    {rest:8.1f} s (step / rest = {step / rest:.2f})")
    print(
        f"  paper's step (100 trees, 5 folds) {baseline:.1f} s ({baseline / step:.1f}x;"
        f" it would be {baseline / (rest + baseline):.0%} of a run)"
    )
    small = report.fitted[STEP][STEP].results
    large = baseline_report.fitted[STEP][STEP].results
    same = small[["id_a", "id_b"]].to_numpy() == large[["id_a", "id_b"]].to_numpy()
    assert same.all()
    print(f"what the smaller check changes on the same {len(small)} pairs:")
    for label, table in ((small_check, small), ("100 trees, 5 folds", large)):
        print(
            f"  {label:20s} mean AUC logistic {table['auc_a'].mean():.4f}, forest "
            f"{table['auc_b'].mean():.4f}; statistic (logistic - forest) "
            f"{table['auc_difference'].mean():+.4f} (sd over pairs "
            f"{table['auc_difference'].std(ddof=1):.4f})"
        )
    forest = np.abs(small["auc_b"].to_numpy() - large["auc_b"].to_numpy())
    stat = np.abs(
        small["auc_difference"].to_numpy() - large["auc_difference"].to_numpy()
    )
    print(
        f"  per pair, mean |difference|: forest AUC {forest.mean():.4f}, statistic "
        f"{stat.mean():.4f}"
    )


if __name__ == "__main__":
    main()
