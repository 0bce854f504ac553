# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""A quick in-sample suggestion of an ISP rank (the audit report's "what next")."""

import math
import warnings

import numpy as np

from skprivacy.auditors import ROCHTAuditor
from skprivacy.sanitize._isp import ISP

__all__ = ["SWEEP_PAIRS", "TARGET_AUC", "suggest_isp_rank"]

#: Mean out-of-fold AUC regarded as "near chance" by the rank suggestion.
TARGET_AUC = 0.6
#: Pairs of the shared ordering the quick ISP sweep audits per rank.
SWEEP_PAIRS = 10


def suggest_isp_rank(X, y, *, random_state=0, n_jobs=None):
    """Return the smallest ISP rank whose quick audit looks near chance.

    For ranks 1, 2, 4, ... up to ``min(n_features - 1, n_identities - 1)`` (at
    least one dimension must remain, or every sanitised row is 0), ISP is
    fitted on the audited rows and a :class:`~skprivacy.ROCHTAuditor` on the
    first :data:`SWEEP_PAIRS` pairs measures the mean out-of-fold AUC of the
    sanitised rows; the first rank at or below :data:`TARGET_AUC` is
    suggested. In-sample and on few pairs: a starting point for
    ``skprivacy sanitize``, to be checked by auditing its output.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Cleaned embeddings (every identity with at least two rows).
    y : ndarray of shape (n_samples,)
        Identity labels.
    random_state : int, default=0
        Seed of the pair ordering and of the folds.
    n_jobs : int or None, default=None
        Passed to :class:`~skprivacy.ROCHTAuditor`.

    Returns
    -------
    suggestion : dict
        ``rank`` (None when no rank reaches the target), ``auc_before``,
        ``auc_after``, ``target_auc``, ``n_pairs`` and ``sweep`` (rank, AUC).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize._rank import suggest_isp_rank
    >>> X, ids = make_identity_embeddings(6, 10, 8, random_state=0)
    >>> suggestion = suggest_isp_rank(X, ids)
    >>> suggestion["auc_before"] > suggestion["target_auc"] >= suggestion["auc_after"]
    True
    """
    n_identities = len(np.unique(y))
    n_pairs = min(SWEEP_PAIRS, n_identities * (n_identities - 1) // 2)
    top = min(X.shape[1] - 1, n_identities - 1)

    def auc(Z):
        est = ROCHTAuditor(n_pairs=n_pairs, random_state=random_state)
        return float(est.set_params(n_jobs=n_jobs).fit(Z, y).auc_mean_)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = auc(X)
        sweep = [{"rank": 0, "auc": before}]
        rank = None
        if before > TARGET_AUC and top >= 1:
            ranks = sorted({2**j for j in range(int(math.log2(top)) + 1)} | {top})
            # Bisection over the ladder: removing more identity directions does
            # not raise the AUC (up to noise), so ~log2(len(ranks)) fits suffice.
            lo, hi = -1, len(ranks) - 1
            measured = {}

            def at(i):
                if i not in measured:
                    Z = ISP(n_components=ranks[i]).fit_transform(X, y)
                    measured[i] = auc(Z)
                return measured[i]

            if at(hi) <= TARGET_AUC:
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    lo, hi = (lo, mid) if at(mid) <= TARGET_AUC else (mid, hi)
                rank = ranks[hi]
            sweep += [{"rank": ranks[i], "auc": measured[i]} for i in sorted(measured)]
    after = next((s["auc"] for s in sweep if s["rank"] == rank), sweep[-1]["auc"])
    return {
        "rank": rank,
        "auc_before": before,
        "auc_after": after,
        "target_auc": TARGET_AUC,
        "n_pairs": n_pairs,
        "sweep": sweep,
    }
