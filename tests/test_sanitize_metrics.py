# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Verification EER and copy-detection μAP against independent computations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from skprivacy.datasets import make_identity_embeddings
from skprivacy.metrics import equal_error_rate
from skprivacy.sanitize import OpenSetVerificationAuditor, copy_detection_map


def _eer_by_hand(y, s):
    """Sweep every threshold in a plain loop (accept if score >= t)."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    best = None
    for t in sorted(set(s.tolist()) | {np.inf}, reverse=True):
        far = sum(1 for yi, si in zip(y, s) if yi == 0 and si >= t) / np.sum(y == 0)
        frr = sum(1 for yi, si in zip(y, s) if yi == 1 and si < t) / np.sum(y == 1)
        if best is None or abs(far - frr) < best[0] - 1e-12:
            best = (abs(far - frr), (far + frr) / 2, t)
    return best[1], best[2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(0, 12)), min_size=2, max_size=40
    ).filter(lambda v: len({b for b, _ in v}) == 2)
)
def test_eer_matches_threshold_sweep(pairs):
    y = np.array([int(b) for b, _ in pairs])
    s = np.array([v / 4 for _, v in pairs])  # coarse grid: many ties
    eer, thr = equal_error_rate(y, s)
    eer_ref, thr_ref = _eer_by_hand(y, s)
    assert eer == pytest.approx(eer_ref, abs=1e-12)
    assert thr == thr_ref


def test_eer_separable_and_errors():
    assert equal_error_rate([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]) == (0.0, 0.8)
    with pytest.raises(ValueError, match="both"):
        equal_error_rate([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="non-finite"):
        equal_error_rate([1, 0], [np.nan, 0.2])
    with pytest.raises(ValueError, match="entries"):
        equal_error_rate([1, 0, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="0 .impostor"):
        equal_error_rate([2, 0], [0.1, 0.2])


@pytest.mark.slow
def test_verification_auditor_eer_matches_its_roc():
    X, ids = make_identity_embeddings(12, 6, 16, n_identity_dims=4, random_state=0)
    auditor = OpenSetVerificationAuditor(probe="raw", far=0.1).fit(X, ids)
    with pytest.warns(UserWarning, match="also used"):
        audit = auditor.audit(X, ids)
    # By hand: genuine and impostor cosine scores of the raw rows.
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Z @ Z.T
    iu = np.triu_indices(len(X), 1)
    same = (ids[:, None] == ids[None, :])[iu]
    eer, thr = _eer_by_hand(same.astype(int), S[iu])
    # eer_ (fit identities, raw probe) and audit().eer (the same rows here).
    for value, threshold in [
        (auditor.eer_, auditor.eer_threshold_),
        (audit.eer, audit.eer_threshold),
    ]:
        assert value == pytest.approx(eer, abs=1e-9)
        assert threshold == pytest.approx(thr, abs=1e-9)


def _pooled(n_queries, n_refs, rng):
    q, r, s, truth = [], [], [], set()
    for i in range(n_queries):
        if rng.random() < 0.6:
            truth.add((f"q{i}", f"r{rng.integers(n_refs)}"))
        for j in rng.choice(n_refs, size=rng.integers(0, 4), replace=False):
            q.append(f"q{i}")
            r.append(f"r{j}")
            s.append(float(np.round(rng.random(), 1)))  # ties across queries
    return q, r, s, truth


@pytest.mark.parametrize("seed", range(8))
def test_copy_detection_map_matches_sklearn_on_pooled_ranking(seed):
    rng = np.random.default_rng(seed)
    q, r, s, truth = _pooled(30, 10, rng)
    y = np.array([(a, b) in truth for a, b in zip(q, r)])
    if not y.any() or y.all():
        pytest.skip("degenerate draw")
    ap = average_precision_score(y, s)
    predicted = len({(a, b) for a, b, hit in zip(q, r, y) if hit})
    # μAP = sklearn's AP on the pooled ranking, with recall over every true pair.
    assert copy_detection_map(q, r, s, truth) == pytest.approx(
        ap * predicted / len(truth), abs=1e-12
    )


def test_copy_detection_map_complete_ranking_equals_sklearn():
    q = ["a", "a", "b", "c", "c", "d"]
    r = ["x", "y", "x", "z", "x", "w"]
    s = [0.9, 0.1, 0.8, 0.8, 0.3, 0.2]
    truth = {("a", "x"), ("c", "z"), ("d", "w")}
    y = [(a, b) in truth for a, b in zip(q, r)]
    assert copy_detection_map(q, r, s, truth) == pytest.approx(
        average_precision_score(y, s)
    )
    # A duplicate prediction keeps its best score and counts once.
    assert copy_detection_map(q + ["a"], r + ["x"], s + [0.05], truth) == (
        pytest.approx(average_precision_score(y, s))
    )
    with pytest.raises(ValueError, match="empty"):
        copy_detection_map(q, r, s, set())
    with pytest.raises(ValueError, match="non-finite"):
        copy_detection_map(["a"], ["x"], [np.nan], truth)
