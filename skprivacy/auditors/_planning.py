# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plan an audit before collecting data: what given sample sizes can show."""

import math
from numbers import Integral, Real

import numpy as np
import pandas as pd

from skprivacy.auditors._ceilings import (
    _MAX_ROWS,
    mmd_certificate_ceiling,
    mmd_rows_needed,
    permutation_p_value_floor,
    reserved_test_rows,
    rocht_certificate_ceiling,
    rocht_rows_needed,
)
from skprivacy.auditors._mmd import CERTIFICATE_BANDWIDTH_GRID
from skprivacy.auditors._roc_core import family_confidence
from skprivacy.utils import MMD_TV_CEILING
from skprivacy.utils._sklearn import Interval, validate_params

__all__ = ["plan_audit", "smallest_resolvable_far"]

#: Columns of the :func:`plan_audit` table, in order.
PLAN_COLUMNS = (
    "method",
    "kind",
    "n_comparisons",
    "rows_per_identity",
    "test_rows_per_identity",
    "ceiling",
    "smallest_p_value",
    "smallest_far",
    "target",
    "rows_needed",
    "note",
)


@validate_params(
    {
        "n_comparisons": ["array-like", Real],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def smallest_resolvable_far(n_comparisons, *, confidence=0.95):
    r"""Smallest false-accept rate a test with no false accepts can bound.

    With ``n`` impostor comparisons and none accepted, the exact one-sided
    Clopper–Pearson upper bound on the FAR is :math:`1 - \alpha^{1/n}`
    (:math:`\alpha = 1 -` ``confidence``), about :math:`-\ln(\alpha)/n`
    (:math:`3/n` at 95 %). A TAR read at a lower FAR than this rests on a
    threshold the data cannot place.

    Parameters
    ----------
    n_comparisons : float or array-like
        Impostor comparisons (``> 0``).
    confidence : float in (0, 1), default=0.95
        Level of the one-sided bound.

    Returns
    -------
    far : float or ndarray
        The bound.

    Examples
    --------
    >>> from skprivacy.auditors import smallest_resolvable_far
    >>> round(smallest_resolvable_far(30_000) * 1e4, 3)  # about 3 / n
    0.999
    """
    n = np.asarray(n_comparisons)
    numbers = n.dtype.kind in "biuf" or (  # object: Python ints beyond int64
        n.dtype.kind == "O" and all(isinstance(v, Real) for v in n.ravel())
    )
    if not numbers:
        raise TypeError(
            f"n_comparisons must hold numbers of comparisons; got dtype {n.dtype}."
        )
    n = n.astype(np.float64)
    if not np.all(n > 0):
        raise ValueError(f"n_comparisons must be > 0 (no NaN); got {n_comparisons!r}.")
    far = -np.expm1(np.log1p(-confidence) / n)
    return far.item() if far.ndim == 0 else far


_ROUNDING_STEPS = 3


def _rows_for_far(far, n_identities, confidence):
    """Rows per identity whose impostor comparisons resolve ``far`` (0 accepts).

    None beyond ``_MAX_ROWS`` (the limit of the other rows_needed searches).
    """
    needed = math.log1p(-confidence) / math.log1p(-far)  # n with 1 - a^(1/n) <= far
    pairs = n_identities * (n_identities - 1) // 2
    rows = max(2, math.ceil(math.sqrt(needed / pairs)))
    # The closed form and the bound round differently: a step or two settles
    # them (no more: at tiny ``far`` the bound is flat across many rows).
    for _ in range(_ROUNDING_STEPS):
        fewer = smallest_resolvable_far(pairs * (rows - 1) ** 2, confidence=confidence)
        if rows <= 2 or fewer > far:
            break
        rows -= 1
    for _ in range(_ROUNDING_STEPS):
        if smallest_resolvable_far(pairs * rows**2, confidence=confidence) <= far:
            break
        rows += 1
    return rows if rows <= _MAX_ROWS else None


@validate_params(
    {
        "n_identities": [Interval(Integral, 2, None, closed="left")],
        "rows_per_identity": [Interval(Integral, 2, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "n_pairs": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "far": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def plan_audit(
    n_identities,
    rows_per_identity,
    *,
    confidence=0.95,
    test_size=0.3,
    n_pairs=None,
    epsilon=1.0,
    far=1e-3,
):
    """Tell what an audit of these sizes can show and the rows it needs for more.

    For each audit method: the ceiling of a certificate (the most a perfectly
    separated pair can certify at these sizes), the smallest p-value of the
    permutation test, the smallest false-accept rate a verification TAR can
    be read at, and the rows per identity needed to certify more than
    ``epsilon``, to reach ``p < 1 - confidence`` or to resolve ``far``. It
    uses the functions the audit report uses for its ceilings, so the plan
    and the report agree.

    Parameters
    ----------
    n_identities : int >= 2
        Identities to be audited.
    rows_per_identity : int >= 2
        Embeddings (images) per identity.
    confidence : float in (0, 1), default=0.95
        Joint confidence of the two certificates, as :func:`skprivacy.audit`
        issues them (each at ``family_confidence(confidence, 2)``, so that the
        larger of the two holds at ``confidence``); level of the FAR bound and
        of the permutation test (``p < 1 - confidence``).
    test_size : float in (0, 1), default=0.3
        Share of each identity's rows the ROC-HT certificate reserves for its
        test (:class:`ROCHTCertifier`'s ``test_size``).
    n_pairs : int or None, default=None
        Identity pairs certified together (each certificate's family size).
        None means every pair, ``n_identities * (n_identities - 1) / 2`` (an
        exhaustive audit); the ``skprivacy audit`` protocols certify fewer
        (their ``certificate_pairs`` and ``mmdtv_certified_pairs``).
    epsilon : float >= 0, default=1.0
        Target ε of the ``rows_needed`` column of the certificates.
    far : float in (0, 1), default=1e-3
        Target false-accept rate of the ``rows_needed`` column of the
        verification row.

    Returns
    -------
    plan : pandas.DataFrame
        One row per method (``method``): ``"gaussmech"``, ``"kdelr"``,
        ``"mmdtv"``, ``"rocht"`` (point estimates), ``"rocht_certificate"``,
        ``"mmdtv_certificate"``, ``"mmd_permutation_test"`` and
        ``"verification"`` (TAR at a FAR, as in
        :class:`~skprivacy.OpenSetVerificationAuditor`). Columns: ``kind``,
        ``n_comparisons`` (family size of a certificate, impostor
        comparisons of the verification row), ``rows_per_identity``,
        ``test_rows_per_identity`` (reserved test rows of the ROC-HT
        certificate), ``ceiling`` (largest certifiable ε; the fixed 1.763 cap
        of the MMD-TV point estimate), ``smallest_p_value``,
        ``smallest_far``, ``target`` (what ``rows_needed`` aims at, in
        words), ``rows_needed`` (rows per identity, same number of
        identities; missing when unreachable) and ``note``.

    See Also
    --------
    rocht_certificate_ceiling, mmd_certificate_ceiling,
    permutation_p_value_floor, smallest_resolvable_far : The functions behind
        the columns.

    Notes
    -----
    Every identity is assumed to have ``rows_per_identity`` rows; with
    unequal counts the ceilings of a pair depend on its two identities' rows
    (the report states each pair's). The verification row counts the
    impostor comparisons of every pair of rows of two different identities,
    ``n_pairs_of_identities * rows_per_identity ** 2``; an open-set audit
    that scores held-out identities only has fewer (pass their number as
    ``n_identities``), and one that samples at most ``max_impostor_pairs``
    comparisons is limited by that. The point estimates carry no
    confidence, hence no ceiling from the sizes (the MMD-TV ε never exceeds
    1.763 whatever the sizes; the ROC-HT ε is infinite at an exact ROC
    corner).

    Examples
    --------
    >>> from skprivacy import plan_audit
    >>> plan = plan_audit(40, 10).set_index("method")
    >>> float(plan.loc["rocht_certificate", "ceiling"])  # 3 test rows: nothing
    0.0
    >>> int(plan.loc["rocht_certificate", "rows_needed"])  # to certify epsilon > 1
    117
    >>> float(plan.loc["verification", "smallest_far"]) < 1e-3
    True
    """
    n_id = int(n_identities)
    rows = int(rows_per_identity)
    all_pairs = n_id * (n_id - 1) // 2
    family = all_pairs if n_pairs is None else min(int(n_pairs), all_pairs)
    alpha = 1.0 - confidence
    n_grid = len(CERTIFICATE_BANDWIDTH_GRID)
    # An audit that runs both certificates issues each at the level that keeps
    # its headline (the larger of the two) at ``confidence`` jointly.
    each = family_confidence(confidence, 2)
    cert = {"confidence": each, "n_comparisons": family}
    mmd = {**cert, "n_bandwidths": n_grid}
    n_test = reserved_test_rows(rows, test_size)
    n_impostor = all_pairs * rows**2
    try:
        mmd_needed = mmd_rows_needed(epsilon, **mmd)
    except ValueError:
        mmd_needed = None
    try:
        rocht_needed = rocht_rows_needed(epsilon, test_size=test_size, **cert)
    except ValueError:  # beyond the row counts it searches
        rocht_needed = None
    far_needed = _rows_for_far(far, n_id, confidence)
    beyond = f"; more than {_MAX_ROWS} rows per identity needed"
    p_needed = next(
        r for r in range(2, 10_000) if permutation_p_value_floor(r, r) < alpha
    )

    def row(method, kind, note, **values):
        return {"method": method, "kind": kind, "note": note, **values}

    point = "point estimate"
    table = [
        row("gaussmech", point, "no confidence, no ceiling"),
        row("kdelr", point, "no confidence, no ceiling"),
        row(
            "mmdtv",
            point,
            "never above 1.763, whatever the sizes",
            ceiling=MMD_TV_CEILING,
        ),
        row("rocht", point, "infinite at an exact ROC corner"),
        row(
            "rocht_certificate",
            "certificate",
            f"simultaneous over {family} pairs at confidence {each:g} (the two "
            f"certificates jointly at {confidence:g})"
            + ("" if rocht_needed is not None else beyond),
            n_comparisons=family,
            test_rows_per_identity=n_test,
            ceiling=rocht_certificate_ceiling(n_test, n_test, **cert),
            target=f"epsilon > {epsilon:g}",
            rows_needed=rocht_needed,
        ),
        row(
            "mmdtv_certificate",
            "certificate",
            f"Hoeffding bound over {family} pairs and {n_grid} bandwidths"
            + ("" if mmd_needed is not None else "; epsilon above its 1.763 cap"),
            n_comparisons=family,
            ceiling=mmd_certificate_ceiling(rows, rows, **mmd),
            target=f"epsilon > {epsilon:g}",
            rows_needed=mmd_needed,
        ),
        row(
            "mmd_permutation_test",
            "hypothesis test",
            "also never below 1 / (n_permutations + 1)",
            smallest_p_value=permutation_p_value_floor(rows, rows),
            target=f"p < {alpha:g}",
            rows_needed=p_needed,
        ),
        row(
            "verification",
            "TAR at FAR",
            "0 false accepts among every impostor comparison"
            + ("" if far_needed is not None else beyond),
            n_comparisons=n_impostor,
            smallest_far=smallest_resolvable_far(n_impostor, confidence=confidence),
            target=f"FAR <= {far:g}",
            rows_needed=far_needed,
        ),
    ]
    plan = pd.DataFrame(table, columns=list(PLAN_COLUMNS))
    plan["rows_per_identity"] = rows
    plan["target"] = plan["target"].fillna("")
    for column in ("n_comparisons", "ceiling", "smallest_p_value", "smallest_far"):
        plan[column] = plan[column].astype(np.float64)
    for column in ("test_rows_per_identity", "rows_needed"):
        plan[column] = plan[column].astype("Float64").astype("Int64")
    return plan
