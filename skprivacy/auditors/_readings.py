# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Readings of certificates and tests that need the ceiling functions.

A certificate's description gains what its sample sizes allow: each pair's
ceiling (MMD-TV), whether the value sits at it, and what would lift it (a
larger test size for ROC-HT, more rows per identity for MMD-TV); the
permutation test's gains the pairs too small to reject whatever the data.
Before fitting, the ``why_no_*`` readings say when the row counts alone rule
a result out (a certificate whose ceiling is 0, a test that cannot reject).
These build on the estimators' ``description_`` with the pure functions of
:mod:`skprivacy.auditors._ceilings`, which import the estimator modules
(so the estimators cannot import them).
"""

import math
from dataclasses import replace

import numpy as np

from skprivacy.auditors._ceilings import (
    mmd_certificate_ceiling,
    mmd_margin_ceiling,
    mmd_rows_needed,
    permutation_p_value_floor,
    reserved_test_rows,
    rocht_certificate_ceiling,
    rocht_rows_needed,
)
from skprivacy.auditors._description import (
    ceiling_fields,
    certificate_finding,
    share_text,
)
from skprivacy.auditors._mmd import CERTIFICATE_BANDWIDTH_GRID

__all__ = [
    "describe_certificate",
    "describe_permutation",
    "why_no_mmd_certificate",
    "why_no_permutation_rejection",
    "why_no_reidentification",
    "why_no_rocht_certificate",
    "why_no_split_half_control",
]


def _rocht_lift(est):
    """Return the smallest larger test size lifting the ceiling by 10%.

    On the certified pairs' row counts (training plus reserved rows), with the
    fitted confidence and family size.
    """
    res, current = est.results_, float(est.ceiling_)
    rows_a = (res["n_train_a"] + res["n_neg"]).to_numpy()
    rows_b = (res["n_train_b"] + res["n_pos"]).to_numpy()
    for candidate in (0.4, 0.5, 0.6, 0.7, 0.8):
        if candidate <= est.test_size:
            continue
        ceiling = rocht_certificate_ceiling(
            reserved_test_rows(rows_a, candidate),
            reserved_test_rows(rows_b, candidate),
            confidence=est.confidence,
            n_comparisons=est.n_comparisons_,
        )
        top = float(np.max(ceiling))
        if top > max(1.1 * current, current + 1e-9):
            text = f"test_size {candidate:g} \u2192 ceiling {top:.4g}"
            return {"test_size": candidate, "ceiling": top, "text": text}
    return {"test_size": None, "ceiling": None, "text": "more rows per identity"}


def _mmd_lift(est, ceiling):
    """Rows per identity at which the MMD-TV ceiling doubles (or first exceeds 0)."""
    tv = {"bound": est.bound, "delta": est.delta}
    family = {
        "confidence": est.confidence,
        "n_comparisons": len(est.results_),
        "n_bandwidths": (
            1 if est.bandwidth != "median" else len(CERTIFICATE_BANDWIDTH_GRID)
        ),
        **tv,
    }
    # Short of the TV chain's cap, which no sample size reaches.
    cap = float(mmd_margin_ceiling(0.0, **tv))
    rows = max(mmd_rows_needed(min(2 * ceiling, 0.95 * cap), **family), 4)
    ceiling = float(mmd_certificate_ceiling(rows, rows, **family))
    text = f"{rows} rows per identity \u2192 ceiling {ceiling:.4g}"
    return {"rows_per_identity": rows, "ceiling": ceiling, "text": text}


def describe_certificate(est):
    """Return a fitted certificate's description with its ceiling and lift.

    Parameters
    ----------
    est : ROCHTCertifier or MMDTVAuditor
        Fitted; an :class:`MMDTVAuditor` with ``confidence`` set.

    Returns
    -------
    description : AuditDescription
        ``est.description_`` whose entry adds ``ceiling``, ``at_ceiling``,
        ``n_at_ceiling``, ``n_positive_certificates`` and ``lift`` (what
        would raise the ceiling, with its ``text``), and whose
        finding says them; an MMD-TV certificate's pairs add ``ceiling``.

    Examples
    --------
    >>> from skprivacy.auditors import ROCHTCertifier
    >>> from skprivacy.auditors._readings import describe_certificate
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(4, 40, 16, random_state=0)
    >>> cert = ROCHTCertifier(n_pairs=3).fit(X, ids)
    >>> sorted(describe_certificate(cert).entry["lift"])
    ['ceiling', 'test_size', 'text']
    """
    described = est.description_
    entry, changes = dict(described.entry), {}
    if described.ceiling is None:  # MMD-TV: the ceiling of each pair's margin
        res = est.results_
        margins = res["mmd2_margin"].to_numpy()
        ceilings = np.asarray(
            mmd_margin_ceiling(margins, bound=est.bound, delta=est.delta)
        )
        epsilons = res["epsilon_lower"].to_numpy()
        entry.update(
            ceiling_fields(described.value, ceilings.max(), epsilons, ceilings)
        )
        entry["lift"] = _mmd_lift(est, float(ceilings.max()))
        changes = {
            "pairs": described.pairs.assign(ceiling=ceilings),
            "ceiling": "ceiling",
        }
    else:
        entry["lift"] = _rocht_lift(est)
    finding = certificate_finding(described.title, {"value": described.value, **entry})
    return replace(described, entry=entry, finding=finding, **changes)


def describe_permutation(est, identities, counts):
    """Return a permutation test's description with its pairs without power.

    Parameters
    ----------
    est : MMDTVAuditor
        Fitted with ``n_permutations > 0``.
    identities, counts : array-like
        Each audited identity's label and row count.

    Returns
    -------
    description : AuditDescription
        ``est.description_`` whose entry adds ``n_pairs_without_power`` (pairs
        whose rows split too few ways to reach p < 0.05 whatever the data)
        and ``distinguished`` (how many pairs are distinguished, in words, with that
        count), which is also its finding.

    Examples
    --------
    >>> from skprivacy.auditors import MMDTVAuditor
    >>> from skprivacy.auditors._readings import describe_permutation
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(4, 3, 8, random_state=0)
    >>> est = MMDTVAuditor(n_pairs=2, n_permutations=99).fit(X, ids)
    >>> describe_permutation(est, [0, 1, 2, 3], [3, 3, 3, 3]).entry[
    ...     "n_pairs_without_power"]
    2
    """
    described = est.description_
    size = dict(zip(np.asarray(identities).tolist(), np.asarray(counts).tolist()))
    res = est.results_
    floors = permutation_p_value_floor(
        [size[a] for a in res["id_a"]], [size[b] for b in res["id_b"]]
    )
    powerless = int((np.atleast_1d(floors) >= 0.05).sum())
    n_rejected, n = described.entry["n_rejected"], len(res)
    text = share_text(n_rejected, n, powerless)
    entry = {
        **described.entry,
        "n_pairs_without_power": powerless,
        "distinguished": text,
    }
    return replace(
        described, entry=entry, finding=f"MMD permutation test at level 0.05: {text}"
    )


def why_no_rocht_certificate(counts, *, test_size, confidence, n_pairs):
    """Return why no ROC-HT certificate > 0 is possible on these rows (None: it is).

    Parameters
    ----------
    counts : array-like of int
        Rows per identity.
    test_size, confidence : float
        The certifier's reserved share and simultaneous confidence.
    n_pairs : int
        Pairs certified together.

    Returns
    -------
    reason : str or None
        The sentence, or None when the two largest identities (the best
        ceiling any pair can have) leave a ceiling above 0.
    """
    top = reserved_test_rows(np.sort(counts)[-2:], test_size)
    family = {"confidence": confidence, "n_comparisons": n_pairs}
    if rocht_certificate_ceiling(top[0], top[1], **family) > 0:
        return None
    need = rocht_rows_needed(0.0, **family)
    return (
        f"its ceiling is 0 on these data: test_size {test_size:g} reserves at "
        f"most {top[0]} row(s) per identity, too few to certify any epsilon > 0 at "
        f"confidence {confidence:g} over {n_pairs} pairs; it needs at least "
        f"{need} reserved rows per identity (about "
        f"{math.ceil(need / test_size)} rows per identity at this test size)"
    )


def why_no_mmd_certificate(counts, *, confidence, n_pairs):
    """Return why no MMD-TV certificate > 0 is possible on these rows (None: it is).

    As :func:`why_no_rocht_certificate`, for the certificate over the median
    heuristic's bandwidth grid; the second largest identity bounds every pair.
    """
    family = {
        "confidence": confidence,
        "n_comparisons": n_pairs,
        "n_bandwidths": len(CERTIFICATE_BANDWIDTH_GRID),
    }
    second = int(np.sort(counts)[-2])
    if mmd_certificate_ceiling(second, second, **family) > 0:
        return None
    return (
        f"its ceiling is 0 on these data: with at most {second} rows per identity "
        f"(second largest identity), the Hoeffding margin over {n_pairs} pairs at "
        f"confidence {confidence:g} exceeds the largest possible MMD², "
        "so no epsilon > 0 can be certified; it needs at least "
        f"{max(mmd_rows_needed(0.0, **family), 4)} rows per identity"
    )


def why_no_permutation_rejection(counts, level=0.05):
    """Return why no permutation test can reject at ``level`` here (None: one can).

    The two largest identities' pooled rows split into the most ways, so
    their smallest attainable p-value is the smallest of any pair.
    """
    counts = np.sort(counts)
    floor = float(permutation_p_value_floor(counts[-1], counts[-2]))
    if floor < level:
        return None
    return (
        f"it cannot reject at level {level:g} on these data: the two largest "
        f"identities have {counts[-1]} and {counts[-2]} rows, whose pooled rows "
        f"split only {math.comb(int(counts[-1] + counts[-2]), int(counts[-2]))} "
        f"ways, so the smallest attainable p-value is {floor:.2g}; it needs at "
        "least 4 rows in each of two identities"
    )


def why_no_split_half_control(counts):
    """Return why no split-half control can run here (None: one can)."""
    if (np.asarray(counts) >= 4).any():
        return None
    return (
        "a split-half control needs an identity with at least 4 rows (two halves "
        f"of 2); the largest identity here has {int(np.max(counts))}"
    )


def why_no_reidentification(y, groups):
    """Return why no row can be a re-identification query (None: one can).

    ``groups`` is :func:`~skprivacy.utils.duplicate_groups`' labelling of the
    rows (-1: no copy); a duplicate group counts as one row of its identity.
    """
    codes = np.unique(np.asarray(y), return_inverse=True)[1]
    groups = np.asarray(groups)
    key = np.where(groups >= 0, groups, -1 - np.arange(groups.size))
    distinct = np.unique(np.stack([codes, key], axis=1), axis=0)[:, 0]
    if np.bincount(distinct).max() >= 2:
        return None
    return (
        "every identity's rows are copies of one image (duplicates are hidden "
        "from the search), so no image has another of its identity to find"
    )
