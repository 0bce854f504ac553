# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""plan_audit: independent formulas, and agreement with real audits."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.stats import beta

from skprivacy import audit, plan_audit
from skprivacy.auditors import smallest_resolvable_far
from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import PROTOCOLS

# The audit issues each of its two certificates at 1 - 0.05 / 2, so that the
# larger of the two holds at 0.95 jointly; the plan follows it.
EACH = 1 - 0.05 / 2


def _rocht_by_hand(n_test, confidence, k):
    a = (1 - confidence) / (2 * k)
    t = a ** (1 / n_test)  # Clopper-Pearson lower bound of n_test / n_test
    return max(0.0, math.log(t / (1 - t)))


def _mmd_by_hand(rows, confidence, k, g=37):
    margin = math.sqrt(8 * math.log(g * k / (1 - confidence)) / (rows // 2))
    return 2 * math.atanh(math.sqrt(2 - margin) / 2) if margin < 2 else 0.0


@pytest.mark.parametrize("n_ids, rows, n_pairs", [(40, 10, None), (400, 100, 30)])
def test_plan_columns_by_hand(n_ids, rows, n_pairs):
    plan = plan_audit(n_ids, rows, n_pairs=n_pairs, epsilon=0.5, far=1e-4)
    plan = plan.set_index("method")
    k = n_ids * (n_ids - 1) // 2 if n_pairs is None else n_pairs
    n_test = min(max(math.ceil(0.3 * rows), 1), rows - 1)
    row = plan.loc["rocht_certificate"]
    assert row["test_rows_per_identity"] == n_test
    assert row["n_comparisons"] == k
    assert_allclose(row["ceiling"], _rocht_by_hand(n_test, EACH, k), atol=1e-12)
    assert_allclose(
        plan.loc["mmdtv_certificate", "ceiling"],
        _mmd_by_hand(rows, EACH, k),
        atol=1e-12,
    )
    assert plan.loc["mmd_permutation_test", "smallest_p_value"] == 2 / math.comb(
        2 * rows, rows
    )
    n_imp = n_ids * (n_ids - 1) // 2 * rows**2
    assert_allclose(
        plan.loc["verification", "smallest_far"], beta.ppf(0.95, 1, n_imp), rtol=1e-9
    )
    # Rows needed: the smallest count that reaches each target.
    need = int(plan.loc["rocht_certificate", "rows_needed"])
    t = [min(max(math.ceil(0.3 * r), 1), r - 1) for r in (need - 1, need)]
    assert _rocht_by_hand(t[0], EACH, k) <= 0.5 < _rocht_by_hand(t[1], EACH, k)
    need = int(plan.loc["mmdtv_certificate", "rows_needed"])
    assert _mmd_by_hand(need - 2, EACH, k) <= 0.5 < _mmd_by_hand(need, EACH, k)
    assert int(plan.loc["mmd_permutation_test", "rows_needed"]) == 4  # 2/70 < 0.05
    need = int(plan.loc["verification", "rows_needed"])
    pairs = n_ids * (n_ids - 1) // 2
    assert beta.ppf(0.95, 1, pairs * need**2) <= 1e-4
    assert need == 2 or beta.ppf(0.95, 1, pairs * (need - 1) ** 2) > 1e-4


def test_plan_unreachable_mmd_target_and_point_estimates():
    plan = plan_audit(10, 20, epsilon=2.0).set_index("method")
    assert pd.isna(plan.loc["mmdtv_certificate", "rows_needed"])
    assert "cap" in plan.loc["mmdtv_certificate", "note"]
    assert_allclose(plan.loc["mmdtv", "ceiling"], 2 * math.atanh(math.sqrt(2) / 2))
    assert plan.loc[["gaussmech", "kdelr", "rocht"], "ceiling"].isna().all()


def test_smallest_resolvable_far_matches_scipy():
    n = np.array([10, 3_000, 30_000, 10**9])
    assert_allclose(smallest_resolvable_far(n), beta.ppf(0.95, 1, n), rtol=1e-9)
    assert_allclose(
        smallest_resolvable_far(100, confidence=0.99), 1 - 0.01 ** (1 / 100)
    )
    with pytest.raises(ValueError, match="> 0"):
        smallest_resolvable_far(0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_identities": 1, "rows_per_identity": 5}, "n_identities"),
        ({"n_identities": 5, "rows_per_identity": 1}, "rows_per_identity"),
        ({"n_identities": 5, "rows_per_identity": 5, "far": 0}, "far"),
    ],
)
def test_plan_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plan_audit(**kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("n_ids", [5, 8])
@pytest.mark.parametrize("rows", [12, 40, 70])
@pytest.mark.parametrize("family", [None, 6])
def test_plan_agrees_with_the_ceilings_real_audits_report(n_ids, rows, family):
    X, ids = make_identity_embeddings(n_ids, rows, 8, random_state=0)
    protocol = dict(
        PROTOCOLS["quick"],
        certificate_pairs=family,
        mmdtv_certified_pairs=family,
        permutation_pairs=None,
        n_permutations=99,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit(
            X,
            ids,
            methods=["rocht_certificate", "mmdtv_certificate", "permutation"],
            protocol=protocol,
            suggest_rank=False,
            random_state=0,
        )
    plan = plan_audit(n_ids, rows, n_pairs=family).set_index("method")
    for key in ("rocht_certificate", "mmdtv_certificate"):
        assert_allclose(
            report.results[key]["ceiling"], plan.loc[key, "ceiling"], atol=1e-12
        )
    perm = report.results["mmd_permutation_test"]
    without_power = plan.loc["mmd_permutation_test", "smallest_p_value"] >= 0.05
    assert perm.get("n_pairs_without_power", 0) == (
        perm["n_pairs"] if without_power else 0
    )
