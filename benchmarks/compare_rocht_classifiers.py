# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the ROC-HT fast path costs in power: logistic regression vs the fast classifiers.

For each condition, ROC-HT is run with the paper's logistic regression and
with :class:`~skprivacy.CentroidClassifier` and
:class:`~skprivacy.PooledLDAClassifier` on the same pairs and folds
(:func:`~skprivacy.auditors.compare_roc_audits`), and the reserved-test
certificate with each. Conditions:

* the bundled cropped Yale B embeddings (38 identities, every pair);
* the paper-scale synthetic condition, ``make_identity_embeddings(400, 100,
  512, noise=...)`` for each ``--noise`` (4: separable; 12: mean AUC about
  0.9), on a ``--prefix``-pair prefix (logistic regression costs about a
  tenth of a second per pair).

Prints one table row per (condition, classifier): mean AUC, mean AUC
difference to logistic regression, median ROC-HT ε, number of infinite ε,
largest certificate and pairs certified > 0, and the fit time. The certificates
guide's table is this output.

Run: ``python benchmarks/compare_rocht_classifiers.py [--prefix 200]``
"""

import argparse
import os
import time

import numpy as np

from skprivacy import (
    CentroidClassifier,
    PooledLDAClassifier,
    ROCHTAuditor,
    ROCHTCertifier,
)
from skprivacy.auditors import compare_roc_audits
from skprivacy.datasets import load_cropped_yale_b, make_identity_embeddings

CLASSIFIERS = {
    "LogisticRegression": None,
    "CentroidClassifier": CentroidClassifier(),
    "PooledLDAClassifier": PooledLDAClassifier(),
}


def run(name, X, ids, n_pairs, n_jobs):
    audits = {}
    for label, clf in CLASSIFIERS.items():
        t0 = time.perf_counter()
        audit = ROCHTAuditor(clf, n_pairs=n_pairs, n_jobs=n_jobs).fit(X, ids)
        cert = ROCHTCertifier(clf, n_pairs=n_pairs, n_jobs=n_jobs).fit(X, ids)
        seconds = time.perf_counter() - t0
        audits[label] = audit
        cmp = compare_roc_audits(audit, audits["LogisticRegression"])
        eps = audit.results_["epsilon"].to_numpy()
        print(
            f"| {name} | {label} | {len(eps)} | {audit.auc_mean_:.3f} | "
            f"{cmp.mean_auc_difference:+.3f} | {np.median(eps):.3f} | "
            f"{int(np.isinf(eps).sum())} | {cert.score():.3f} (ceiling "
            f"{cert.ceiling_:.3f}) | {int((cert.results_['epsilon'] > 0).sum())} | "
            f"{seconds:.1f} s |",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=int, default=200)
    parser.add_argument(
        "--noise",
        type=float,
        nargs="+",
        default=[4.0, 12.0],
        help="synthetic conditions (noise 4: separable; 12: mean AUC about 0.9)",
    )
    parser.add_argument("--no-yale", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    print(
        "| condition | classifier | pairs | mean AUC | AUC - LR | median eps | "
        "inf eps | max certificate | certified > 0 | time |"
    )
    if not args.no_yale:
        yale = load_cropped_yale_b()
        run("cropped Yale B", yale.data, yale.identity, None, args.n_jobs)
    for noise in args.noise:
        X, ids = make_identity_embeddings(400, 100, 512, noise=noise, random_state=0)
        name = f"synthetic 400x100x512 (noise {noise:g})"
        run(name, X, ids, args.prefix, args.n_jobs)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
