# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Copy-detection micro average precision (DISC2021), a utility metric."""

import numpy as np
import pandas as pd

from skprivacy.utils import check_identity_labels, check_scores

__all__ = ["copy_detection_map"]


def copy_detection_map(query_ids, reference_ids, scores, ground_truth):
    """Return the copy-detection micro average precision (DISC2021 μAP).

    Every predicted ``(query, reference, score)`` triple of every query is
    pooled into one ranking by decreasing score; a prediction is correct when
    its pair is in ``ground_truth``. The micro average precision is the area
    under that ranking's precision-recall curve, with recall counted against
    **all** ground-truth pairs, so a true copy that was never predicted costs
    recall (as in the Image Similarity Challenge of DISC2021, Douze et al.,
    2021). Repeated predictions of one pair keep their highest score; tied
    scores enter the curve together (as in
    :func:`sklearn.metrics.average_precision_score`).

    Use it as a utility metric after sanitisation: identity erasure should
    not destroy copy detection.

    Parameters
    ----------
    query_ids : array-like of shape (n_predictions,)
        Query of each predicted pair.
    reference_ids : array-like of shape (n_predictions,)
        Reference of each predicted pair.
    scores : array-like of shape (n_predictions,)
        Confidence of each prediction (higher = more likely a copy); finite.
    ground_truth : iterable of (query, reference) tuples
        The matching pairs. Queries without a match have no entry.

    Returns
    -------
    micro_ap : float
        In ``[0, 1]``; ``AP * (predicted true pairs / all true pairs)`` where
        AP is the average precision of the pooled ranking.

    Raises
    ------
    ValueError
        On mismatched lengths, missing or mixed-type ids (None, NaN), non-finite
        scores, or an empty ground truth.

    Examples
    --------
    >>> from skprivacy.sanitize import copy_detection_map
    >>> copy_detection_map(["q1", "q2", "q3"], ["r1", "r9", "r3"],
    ...                    [0.9, 0.8, 0.4], {("q1", "r1"), ("q3", "r3"),
    ...                                      ("q4", "r4")})
    0.5555555555555556
    """
    shapes = [np.shape(v) for v in (query_ids, reference_ids, scores)]
    if not all(len(shape) == 1 for shape in shapes) or len(set(shapes)) != 1:
        raise ValueError(
            "query_ids, reference_ids and scores must be 1-D with one entry per "
            f"prediction; got shapes {shapes[0]}, {shapes[1]} and {shapes[2]}."
        )
    q = check_identity_labels(query_ids, name="query_ids").astype(object)
    r = check_identity_labels(reference_ids, name="reference_ids").astype(object)
    s = check_scores(scores, name="scores", allow_empty=True)
    truth = {tuple(pair) for pair in ground_truth}
    if not truth:
        raise ValueError("ground_truth is empty: there is no copy to detect.")
    if any(len(pair) != 2 for pair in truth):
        raise ValueError("ground_truth must hold (query, reference) pairs.")
    if s.size == 0:
        return 0.0
    # One prediction per pair, its best score.
    best = (
        pd.DataFrame({"q": q, "r": r, "s": s})
        .groupby(["q", "r"], sort=False, dropna=False)["s"]
        .max()
    )
    hit = np.fromiter(
        (pair in truth for pair in best.index), dtype=bool, count=len(best)
    )
    order = np.argsort(-best.to_numpy(), kind="stable")
    ranked, hit = best.to_numpy()[order], hit[order]
    # Tied scores form one step of the curve: evaluate at the last of each tie.
    ends = np.r_[np.flatnonzero(np.diff(ranked) != 0), ranked.size - 1]
    tp = np.cumsum(hit)[ends]
    precision = tp / (ends + 1)
    recall = tp / len(truth)
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
