# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: ROC-HT on the paper-scale condition, fast path vs per-pair loop.

200 pairs of make_identity_embeddings(400 identities x 100 x 512, seed 0) with the
default classifier (LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)),
5-fold stratified out-of-fold ROCs. The fast path is ``ROCHTAuditor(n_jobs=2)``
(pairs chunked across joblib workers, one BLAS thread per worker, folds split
once per pair); the baseline is the straightforward per-pair loop a user would
write: ``cross_val_predict`` + ``roc_curve`` + the KOV formula, one pair at a
time, in one process. Both run here on the same pairs and their per-pair values
are checked to be equal.

Usage::

    python benchmarks/bench_roc.py [--n-pairs 200] [--n-jobs 2] [--repeats 1]
"""

import argparse
import math
import os
import time

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from skprivacy import ROCHTAuditor
from skprivacy.datasets import make_identity_embeddings


def naive_kov(fpr, tpr):
    best = 0.0
    for f, t in zip(fpr, tpr):
        for num, den in ((t, f), (1 - f, 1 - t)):
            if num <= 0:
                continue
            best = max(best, math.inf if den == 0 else math.log(num / den))
    return best


def naive_loop(X, ids, labels):
    out = []
    for a, b in labels:
        Xp = np.vstack([X[ids == a], X[ids == b]])
        yp = np.r_[np.zeros((ids == a).sum()), np.ones((ids == b).sum())]
        scores = cross_val_predict(
            LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000),
            Xp,
            yp,
            cv=StratifiedKFold(5, shuffle=True, random_state=0),
            method="predict_proba",
        )[:, 1]
        fpr, tpr, _ = roc_curve(yp, scores)
        out.append((naive_kov(fpr, tpr), roc_auc_score(yp, scores)))
    return np.array(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-pairs", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()

    X, ids = make_identity_embeddings(400, 100, 512, random_state=0)
    print(f"data: {X.shape[0]} x {X.shape[1]}, {len(np.unique(ids))} identities")
    print(f"load average: {os.getloadavg()}")

    fast, slow = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        audit = ROCHTAuditor(n_pairs=args.n_pairs, n_jobs=args.n_jobs).fit(X, ids)
        fast.append(time.perf_counter() - t0)
        labels = audit.results_[["id_a", "id_b"]].to_numpy()
        t0 = time.perf_counter()
        ref = naive_loop(X, ids, labels)
        slow.append(time.perf_counter() - t0)

    r = audit.results_
    same_eps = np.array_equal(r["epsilon"].to_numpy(), ref[:, 0])
    auc_err = float(np.max(np.abs(r["auc"].to_numpy() - ref[:, 1])))
    f, s = float(np.median(fast)), float(np.median(slow))
    print()
    print(f"{'path':<44}{'pairs':>6}{'median s':>10}{'s/pair':>9}")
    print(
        f"{'ROCHTAuditor(n_jobs=' + str(args.n_jobs) + ')':<44}"
        f"{args.n_pairs:>6}{f:>10.2f}{f / args.n_pairs:>9.4f}"
    )
    print(
        f"{'per-pair loop (cross_val_predict+roc_curve)':<44}"
        f"{args.n_pairs:>6}{s:>10.2f}{s / args.n_pairs:>9.4f}"
    )
    print(f"speed-up: {s / f:.2f}x   target: fast path <= 60 s")
    print(f"identical epsilon: {same_eps}   max |AUC difference|: {auc_err:.1e}")
    print(
        f"median eps: {audit.score()}   mean AUC: {audit.auc_mean_:.4f}   "
        f"corners: {audit.n_corners_}/{len(r)}"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
