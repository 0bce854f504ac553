# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit (``run_audit``) and its self-contained HTML report."""

import re

import numpy as np
import pytest

from skprivacy.datasets import make_identity_embeddings
from skprivacy.report import NoAuditablePairsError, run_audit
from skprivacy.report._methods import METHODS, available_methods
from skprivacy.utils import identity_pairs

SMALL = {
    "gaussmech_pairs": 15,
    "mmdtv_pairs": 10,
    "mmdtv_certified_pairs": 10,
    "kdelr_pairs": 4,
    "rocht_pairs": 6,
    "certificate_pairs": 6,
    "permutation_pairs": 5,
    "n_permutations": 99,
    "control_identities": 3,
    "sweep_pairs": 5,
}


@pytest.fixture(scope="module")
def data():
    return make_identity_embeddings(8, 12, 8, noise=1.5, random_state=1)


@pytest.fixture(scope="module")
def report(data):
    X, ids = data
    return run_audit(X, ids, protocol=SMALL, random_state=3)


@pytest.fixture(scope="module")
def html(report):
    return report.to_html()


def test_every_available_method_reports(report):
    assert report.provenance["methods"] == available_methods()
    for entry in report.summary.values():
        assert entry["kind"] in {
            "point estimate",
            "certificate",
            "hypothesis test",
            "control",
            "diagnostic",
        }
        assert entry["certifies"] and entry["does_not_certify"]


def test_pairs_follow_shared_seeded_ordering(report):
    # 8 identities (codes = sorted labels 0..7), seed 3: every method audits a
    # prefix of identity_pairs(8, random_state=3).
    expected = identity_pairs(8, 15, random_state=3)
    np.testing.assert_array_equal(report.pairs[["id_a", "id_b"]].to_numpy(), expected)
    assert report.pairs["pair_rank"].tolist() == list(range(15))
    if "mmdtv" in report.extra:
        audited = report.pairs["mmdtv_epsilon"].notna().to_numpy()
        assert audited.tolist() == [True] * 10 + [False] * 5
    assert report.provenance["pairs"] == expected.tolist()


def test_pair_counts_honour_protocol(report):
    s = report.summary
    if "gaussmech" in s:
        assert s["gaussmech"]["n_pairs"] == 15
    if "rocht" in s:
        assert s["rocht"]["n_pairs"] == 6
    if "mmd_permutation_test" in s:
        assert s["mmd_permutation_test"]["n_permutations"] == 99
        # Phipson-Smyth: p-values are never below 1 / (m + 1).
        assert (report.pairs["perm_p_value"].dropna() >= 1 / 100).all()


def test_html_is_self_contained(report, html):
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(script|link|iframe)\b", html)
    srcs = re.findall(r'src="([^"]*)"', html)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "url(" not in html  # no CSS resource either
    # Each plot the issue asks for, when its method ran.
    n_plots = len(srcs)
    expected = 1 + sum(
        m in report.extra for m in ("rocht", "mmdtv", "permutation", "gaussianity")
    )
    assert n_plots == expected


def test_summary_table_speaks_words(html):
    assert "what it does not say" in html
    assert "Only results labelled <em>certificate</em>" in html


def test_roc_plot_is_the_audited_curve(report):
    """The recomputed ROC of the most separable pair has the table's AUC."""
    if "rocht" not in report.extra:
        pytest.skip("ROCHTAuditor not available")
    roc = report.extra["rocht"]["roc"]
    assert roc["auc"] == pytest.approx(roc["auc_table"], abs=1e-12)
    from sklearn.metrics import auc

    assert auc(roc["fpr"], roc["tpr"]) == pytest.approx(roc["auc"], abs=1e-12)


def test_cleaning_reported(data):
    X, ids = data
    X = X.copy()
    X[0] = np.nan
    X[1] = 0.0
    ids = np.asarray(ids).copy()
    ids[2] = 99  # a singleton identity: excluded
    rep = run_audit(X, ids, methods=["gaussianity"])
    prov = rep.provenance
    assert prov["dropped_rows"] == {"non_finite": 1, "low_norm": 1, "small_identity": 1}
    assert prov["excluded_identities"] == [99]
    assert prov["n_rows_before"] == 96 and prov["n_rows_after"] == 93
    assert prov["n_identities_before"] == 9 and prov["n_identities_after"] == 8
    assert any("DroppedRowsWarning" in w for w in prov["warnings"])


def test_errors():
    X = np.eye(4)
    with pytest.raises(NoAuditablePairsError, match="no auditable identity pairs"):
        run_audit(X, ["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="Unknown protocol"):
        run_audit(X, ["a", "a", "b", "b"], protocol="fast")
    with pytest.raises(ValueError, match="Unknown method"):
        run_audit(X, ["a", "a", "b", "b"], methods=["nope"])


def test_registry_consistent():
    from skprivacy.report._protocols import METHOD_NAMES, PROTOCOLS

    assert tuple(METHODS) == METHOD_NAMES
    for settings in PROTOCOLS.values():
        assert set(settings) == set(PROTOCOLS["quick"])
    assert PROTOCOLS["exhaustive"]["gaussmech_pairs"] is None
    assert PROTOCOLS["exhaustive"]["mmdtv_pairs"] is None
    assert PROTOCOLS["paper"]["mmdtv_pairs"] == 500
    assert PROTOCOLS["paper"]["kdelr_pairs"] == 100
    assert PROTOCOLS["paper"]["rocht_pairs"] == 200
    assert PROTOCOLS["paper"]["n_permutations"] == 10_000


def test_classifier_witness_ratio_from_the_estimators(data, report):
    """witness_ratio = ROC-HT's max(TPR - FPR) / (MMD / 2) on the shared pairs."""
    from sklearn.metrics import roc_curve
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from skprivacy.auditors import MMDTVAuditor, ROCHTAuditor

    X, ids = data
    mmd = MMDTVAuditor(n_pairs=SMALL["mmdtv_pairs"], random_state=3).fit(X, ids)
    roc = ROCHTAuditor(n_pairs=SMALL["rocht_pairs"], random_state=3).fit(X, ids)
    joined = roc.results_.merge(mmd.results_, on=["id_a", "id_b"])
    assert len(joined) == SMALL["rocht_pairs"]  # ROC-HT's prefix is inside MMD's
    pairs = report.pairs.set_index(["id_a", "id_b"])
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    for _, row in joined.iterrows():
        # Independent TV witness: out-of-fold scores, ROC, max(TPR - FPR).
        rows = np.r_[
            np.flatnonzero(ids == row["id_a"]), np.flatnonzero(ids == row["id_b"])
        ]
        labels = (ids[rows] == row["id_b"]).astype(int)
        folds = StratifiedKFold(
            int(row["n_folds"]), shuffle=True, random_state=roc.fold_seed_
        )
        scores = cross_val_predict(
            _default_lr(), Z[rows], labels, cv=folds, method="predict_proba"
        )[:, 1]
        fpr, tpr, _ = roc_curve(labels, scores)
        expected = np.max(tpr - fpr) / (row["mmd"] / 2)
        got = pairs.loc[(row["id_a"], row["id_b"]), "witness_ratio"]
        np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert report.summary["classifier_witness"]["kind"] == "diagnostic"
    assert report.summary["classifier_witness"]["n_pairs"] == SMALL["rocht_pairs"]


def _default_lr():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)
