# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Equal error rate of a verification score."""

import numpy as np
from sklearn.metrics import roc_curve

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
        On mismatched lengths, labels other than 0/1, a missing class, or
        non-finite scores.

    Examples
    --------
    >>> from skprivacy.metrics import equal_error_rate
    >>> eer, threshold = equal_error_rate([1, 1, 1, 0, 0, 0],
    ...                                   [0.9, 0.8, 0.3, 0.4, 0.2, 0.1])
    >>> round(eer, 4), threshold
    (0.3333, 0.4)
    """
    y = np.asarray(y_true)
    s = np.asarray(scores)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(
            f"y_true and scores must be 1-D; got shapes {y.shape} and {s.shape}."
        )
    if y.shape[0] != s.shape[0]:
        raise ValueError(
            f"y_true has {y.shape[0]} entries but scores has {s.shape[0]}."
        )
    try:
        s = s.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be numeric; got dtype {s.dtype}.") from exc
    if not np.isfinite(s).all():
        raise ValueError(
            f"scores holds {int((~np.isfinite(s)).sum())} non-finite value(s); "
            "drop or fix those pairs first."
        )
    if y.dtype == bool:
        y = y.astype(np.int64)
    try:
        labels = set(np.unique(y).tolist())
    except TypeError as exc:
        raise ValueError("y_true must hold 0/1 labels.") from exc
    if not labels <= {0, 1}:
        raise ValueError(
            f"y_true must hold 0 (impostor) and 1 (genuine) only; got {sorted(labels, key=str)}."
        )
    if labels != {0, 1}:
        raise ValueError(
            "y_true must contain both genuine (1) and impostor (0) pairs; "
            f"got only {labels.pop()}."
        )
    far, tar, thresholds = roc_curve(y, s, drop_intermediate=False)
    frr = 1.0 - tar
    # roc_curve orders thresholds from high to low: the first index within
    # rounding of the smallest gap is the highest threshold among ties.
    gap = np.abs(far - frr)
    best = int(np.flatnonzero(gap <= gap.min() + 1e-12)[0])
    return float((far[best] + frr[best]) / 2), float(thresholds[best])
