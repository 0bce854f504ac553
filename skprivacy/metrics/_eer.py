# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Equal error rate of a verification score."""

import numpy as np
from sklearn.metrics import roc_curve

from skprivacy.utils import check_binary_labels, check_scores

__all__ = ["equal_error_rate"]


def equal_error_rate(y_true, scores):
    """Return the equal error rate of verification scores and its threshold.

    A pair is accepted when its score is at least the threshold ``t``; the
    false-accept rate ``FAR(t)`` is the share of impostor pairs
    (``y_true == 0``) accepted and the false-reject rate ``FRR(t)`` the share
    of genuine pairs (``y_true == 1``) rejected. Over every threshold where
    the decisions change (each distinct score, and one rejecting every pair),
    the one with the smallest ``|FAR(t) - FRR(t)|`` is taken (the highest such
    threshold on ties), and the EER is ``(FAR(t) + FRR(t)) / 2`` there: with
    finitely many pairs the two rates rarely meet exactly, and their mean at
    the closest point is the usual point estimate.

    Parameters
    ----------
    y_true : array-like of shape (n_pairs,)
        1 (or True) for genuine pairs, 0 (or False) for impostor pairs; both
        must occur.
    scores : array-like of shape (n_pairs,)
        Similarity scores, higher meaning more likely genuine; finite.

    Returns
    -------
    eer : float
        Equal error rate, in ``[0, 1]`` (a point estimate).
    threshold : float
        Score threshold (accept if ``score >= threshold``) where FAR and FRR
        are closest; ``inf`` if rejecting every pair is that point.

    Raises
    ------
    ValueError
        On mismatched lengths, missing labels or labels other than 0/1, a
        missing class, or non-finite scores (the messages name the rows).
    TypeError
        If the scores are not numeric.

    Examples
    --------
    >>> from skprivacy.metrics import equal_error_rate
    >>> eer, threshold = equal_error_rate([1, 1, 1, 0, 0, 0],
    ...                                   [0.9, 0.8, 0.3, 0.4, 0.2, 0.1])
    >>> round(eer, 4), threshold
    (0.3333, 0.4)
    """
    y = check_binary_labels(
        y_true, name="y_true", positive="genuine pairs", negative="impostor pairs"
    )
    s = check_scores(scores, name="scores")
    if y.shape[0] != s.shape[0]:
        raise ValueError(
            f"y_true has {y.shape[0]} entries but scores has {s.shape[0]}."
        )
    far, tar, thresholds = roc_curve(y, s, drop_intermediate=False)
    frr = 1.0 - tar
    # roc_curve orders thresholds from high to low: the first index within
    # rounding of the smallest gap is the highest threshold among ties.
    gap = np.abs(far - frr)
    best = int(np.flatnonzero(gap <= gap.min() + 1e-12)[0])
    return float((far[best] + frr[best]) / 2), float(thresholds[best])
