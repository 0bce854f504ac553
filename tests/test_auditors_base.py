"""The shared pair-audit base: protocol, results, score, parallelism, composition."""

import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skprivacy import ISP, GaussMechAuditor, KDELRAuditor, MMDTVAuditor
from skprivacy.auditors import residual_gaussianity, split_half_controls
from skprivacy.datasets import make_identity_embeddings
from skprivacy.exceptions import DroppedRowsWarning, ExcludedIdentitiesWarning
from skprivacy.metrics import leakage_scorer, make_leakage_scorer
from skprivacy.utils import identity_pairs

AUDITORS = [
    GaussMechAuditor(n_pairs=30),
    KDELRAuditor(n_pairs=12, grid_size=41),
    MMDTVAuditor(n_pairs=30, n_permutations=49, confidence=0.9),
]
IDS = [type(a).__name__ for a in AUDITORS]


@pytest.fixture(scope="module")
def data():
    X, ids = make_identity_embeddings(12, 14, 10, random_state=0)
    return X, np.array([f"person{i:02d}" for i in ids], dtype=object)


@pytest.mark.parametrize("auditor", AUDITORS, ids=IDS)
def test_results_follow_the_pair_protocol(auditor, data):
    X, ids = data
    est = clone(auditor).fit(X, ids)
    res = est.results_
    assert list(res.columns[:3]) == ["id_a", "id_b", "epsilon"]
    assert res["epsilon"].dtype == np.float64
    pairs = identity_pairs(12, est.n_pairs, random_state=0)
    assert_allclose(est.pairs_, pairs)
    assert (res["id_a"].to_numpy() == est.identities_[pairs[:, 0]]).all()
    assert (res["id_b"].to_numpy() == est.identities_[pairs[:, 1]]).all()
    assert est.drop_report_["n_kept_rows"] == len(X)
    assert isinstance(est.score(), float)


def test_methods_audit_the_same_pairs(data):
    X, ids = data
    fitted = [clone(a).set_params(n_pairs=10).fit(X, ids) for a in AUDITORS]
    for est in fitted[1:]:
        assert est.results_[["id_a", "id_b"]].equals(
            fitted[0].results_[["id_a", "id_b"]]
        )


@pytest.mark.parametrize("auditor", AUDITORS, ids=IDS)
def test_score_on_new_data_uses_fitted_settings(auditor, data):
    X, ids = data
    est = clone(auditor).fit(X, ids)
    X2, ids2 = make_identity_embeddings(8, 10, 10, separation=3.0, random_state=9)
    fresh = clone(auditor).fit(X2, ids2)
    assert est.score(X2, ids2) == pytest.approx(fresh.score())
    assert est.score() == est.summary_  # unchanged by scoring other data
    with pytest.raises(ValueError, match="both X and y"):
        est.score(X2)


def test_bad_input_is_reported(data):
    X, ids = data
    X = X.copy()
    X[0, 0] = np.nan
    X[1] = 0.0
    ids = ids.copy()
    ids[2] = "loner"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = GaussMechAuditor().fit(X, ids)
    kinds = {w.category for w in caught}
    assert {DroppedRowsWarning, ExcludedIdentitiesWarning} <= kinds
    assert est.drop_report_["non_finite"] == 1
    assert est.drop_report_["low_norm"] == 1
    assert "loner" not in set(est.identities_)
    with pytest.raises(ValueError, match="n_pairs"):
        GaussMechAuditor(n_pairs=0).fit(X, ids)
    with pytest.raises(ValueError, match="identity label"):
        GaussMechAuditor().fit(X, None)


@pytest.fixture
def dispatch_everything(monkeypatch):
    # Send every audit to the workers, however small (the cost model would
    # keep these tiny audits in process).
    from skprivacy.auditors import _base

    monkeypatch.setattr(_base, "_IN_PROCESS_SECONDS", 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("auditor", AUDITORS, ids=IDS)
def test_n_jobs_gives_identical_results(auditor, data, dispatch_everything):
    X, ids = data
    one = clone(auditor).set_params(n_jobs=1).fit(X, ids).results_
    two = clone(auditor).set_params(n_jobs=2).fit(X, ids).results_
    pd.testing.assert_frame_equal(one, two, check_exact=True)


@pytest.mark.parametrize("auditor", AUDITORS, ids=IDS)
@pytest.mark.slow  # over 0.4 s: outside the developer fast lane
def test_small_audits_stay_in_process(auditor, data, monkeypatch):
    # Below the cost threshold no worker is started whatever n_jobs says, and
    # the results are those of the dispatched run.
    from skprivacy.auditors import _base

    X, ids = data
    est = clone(auditor).set_params(n_jobs=2)
    dispatched = clone(est)
    monkeypatch.setattr(_base, "_IN_PROCESS_SECONDS", 0.0)
    expected = dispatched.fit(X, ids).results_
    monkeypatch.undo()

    def refuse(*args, **kwargs):
        raise AssertionError("a small audit dispatched to joblib workers")

    monkeypatch.setattr(_base, "Parallel", refuse)
    got = est.fit(X, ids).results_
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_exhaustive_mmd_chunks_identical_under_threads(data, dispatch_everything):
    X, ids = data
    one = MMDTVAuditor(n_pairs=None, n_jobs=1).fit(X, ids).results_
    with joblib.parallel_config(backend="threading"):
        two = MMDTVAuditor(n_pairs=None, n_jobs=2).fit(X, ids).results_
    pd.testing.assert_frame_equal(one, two, check_exact=True)


@pytest.mark.slow
def test_dask_backend_identical(data, dispatch_everything):
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    X, ids = data
    auditor = MMDTVAuditor(n_pairs=None, n_permutations=49)
    local = clone(auditor).fit(X, ids).results_
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with joblib.parallel_config(backend="dask"):
            remote = clone(auditor).set_params(n_jobs=2).fit(X, ids).results_
        # The work really went through the cluster, in chunks of pairs.
        n_tasks = sum(len(v) for v in client.run_on_scheduler(_task_counts).values())
    pd.testing.assert_frame_equal(local, remote, check_exact=True)
    assert 1 <= n_tasks < len(local)


def _task_counts(dask_scheduler=None):
    return {"tasks": list(dask_scheduler.task_prefixes)}


# ------------------------------------------------------- pipelines and selection
@pytest.mark.parametrize("auditor", AUDITORS, ids=IDS)
def test_auditor_in_pipeline_after_transformer(auditor, data):
    X, ids = data
    pipe = make_pipeline(StandardScaler(), clone(auditor)).fit(X, ids)
    direct = clone(auditor).fit(StandardScaler().fit_transform(X), ids)
    assert pipe.score(X, ids) == pytest.approx(direct.score())
    assert pipe[-1].results_.equals(direct.results_)


class Shrink(TransformerMixin, BaseEstimator):
    """Blend rows with the global mean: a knob that trades utility for privacy."""

    def __init__(self, strength=0.0):
        self.strength = strength

    def fit(self, X, y=None):
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def transform(self, X):
        # Blend each row with the global mean: identities become less separable,
        # while within-identity noise is added back so scales do not collapse.
        rng = np.random.default_rng(0)
        X = np.asarray(X)
        noise = rng.standard_normal(X.shape) * 0.05
        return (1 - self.strength) * X + self.strength * (self.mean_ + noise)


def test_grid_search_with_leakage_scorer_picks_most_private():
    X, ids = make_identity_embeddings(10, 30, 16, random_state=1)
    pipe = make_pipeline(Shrink(), GaussMechAuditor(n_pairs=None))
    grid = {"shrink__strength": [0.0, 0.5, 0.95]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    private = GridSearchCV(pipe, grid, scoring=leakage_scorer, cv=cv).fit(X, ids)
    leaky = GridSearchCV(pipe, grid, cv=cv).fit(X, ids)
    assert private.best_params_ == {"shrink__strength": 0.95}
    assert leaky.best_params_ == {"shrink__strength": 0.0}
    assert private.best_score_ < 0


def test_isp_selection_with_scorers():
    X, ids = make_identity_embeddings(12, 20, 32, n_identity_dims=8, random_state=2)
    pipe = make_pipeline(ISP(), MMDTVAuditor(n_pairs=None))
    cv = StratifiedKFold(2, shuffle=True, random_state=0)
    search = GridSearchCV(
        pipe,
        {"isp__n_components": [1, 8]},
        scoring=make_leakage_scorer(summary="median"),
        cv=cv,
    ).fit(X, ids)
    assert search.best_params_ == {"isp__n_components": 8}
    scores = cross_validate(pipe, X, ids, scoring=leakage_scorer, cv=cv)
    assert (scores["test_score"] <= 0).all()


# ------------------------------------------------------------ controls, diagnostic
def test_split_half_controls_without_p_values(data):
    X, ids = data
    ctl = split_half_controls(GaussMechAuditor(), X, ids, random_state=0)
    assert ctl.n_controls == 12
    assert np.isnan(ctl.rejection_rate)
    assert list(ctl.results.columns[:3]) == ["identity", "n_half_a", "n_half_b"]
    assert (ctl.results[["n_half_a", "n_half_b"]].sum(axis=1) == 14).all()
    assert ctl.epsilon_median == pytest.approx(ctl.results["epsilon"].median())
    # Halves of one identity leak much less than distinct identities.
    assert ctl.epsilon_max < GaussMechAuditor(n_pairs=None).fit(X, ids).score()
    with pytest.raises(TypeError, match="pair auditor"):
        split_half_controls(LinearRegression(), X, ids)


def test_residual_gaussianity_matches_scipy():
    X, ids = make_identity_embeddings(
        20, 30, 6, noise_distribution="laplace", random_state=0
    )
    diag = residual_gaussianity(X, ids, max_samples=None)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    for j in range(6):
        resid = np.concatenate(
            [Z[ids == i, j] - Z[ids == i, j].mean() for i in np.unique(ids)]
        )
        assert diag.results["p_value"][j] == pytest.approx(stats.shapiro(resid).pvalue)
    assert diag.n_rejected == int((diag.results["p_value"] < 1e-3).sum())
    assert diag.n_residuals == 600
    assert_allclose(diag.qq["theoretical"], stats.norm.ppf(diag.qq["probability"]))


@pytest.mark.parametrize("auditor", AUDITORS, ids=IDS)
def test_deferred_normalisation_matches_normalised_input(auditor, data):
    # The auditors read raw rows and normalise only what they use; the
    # results equal those on rows L2-normalised beforehand (which the input
    # layer renormalises: norms 1 up to rounding, hence the tolerance).
    X, ids = data
    X = X * np.linspace(0.5, 4.0, len(X))[:, None]
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    raw = clone(auditor).fit(X, ids).results_
    unit = clone(auditor).fit(Z, ids).results_
    num = raw.select_dtypes("number").columns
    assert_allclose(raw[num].to_numpy(), unit[num].to_numpy(), rtol=1e-9, atol=1e-12)


def test_sparse_audits_normalise_only_the_pairs_rows():
    from skprivacy.auditors._base import pair_identity_rows
    from skprivacy.utils import validate_identity_data

    X, ids = make_identity_embeddings(40, 5, 8, random_state=1)
    lazy = validate_identity_data(BaseEstimator(), X, ids, normalize="defer")
    eager = validate_identity_data(BaseEstimator(), X, ids)
    pairs = np.array([[0, 3], [5, 3]])
    s1, X1, st1 = pair_identity_rows(lazy, pairs)
    s2, X2, st2 = pair_identity_rows(eager, pairs)
    assert X1.shape == (15, 8)
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(st1, st2)
    np.testing.assert_array_equal(X1, X2)
