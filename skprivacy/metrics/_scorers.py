# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scorers that let scikit-learn's model selection *minimise* audited leakage.

An auditor's ``score`` returns leakage (higher = leakier), but ``GridSearchCV``
and ``cross_validate`` maximise the score. These scorers negate it, i.e. they
have ``greater_is_better=False`` semantics.
"""

from sklearn.pipeline import Pipeline

from skprivacy.auditors import BasePairAuditor
from skprivacy.auditors._base import summarize
from skprivacy.utils._sklearn import StrOptions, validate_params

__all__ = ["leakage_scorer", "make_leakage_scorer"]


def leakage_scorer(estimator, X, y):
    """Return minus the audited leakage of ``(X, y)``, for model selection.

    Use as ``scoring=leakage_scorer`` in :class:`~sklearn.model_selection.GridSearchCV`
    or :func:`~sklearn.model_selection.cross_validate` over an auditor or a
    :class:`~sklearn.pipeline.Pipeline` ending in one: the selected setting is
    then the *most private* one.

    Parameters
    ----------
    estimator : estimator
        A fitted auditor, or a fitted pipeline whose last step is an auditor.
    X : array-like of shape (n_samples, n_features)
        Held-out embeddings (transformed by the pipeline's earlier steps).
    y : array-like of shape (n_samples,)
        Identity labels.

    Returns
    -------
    score : float
        ``-estimator.score(X, y)``.

    Raises
    ------
    TypeError
        If ``estimator`` has no ``score`` method (e.g. an eraser on its own).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import GaussMechAuditor
    >>> from skprivacy.metrics import leakage_scorer
    >>> X, ids = make_identity_embeddings(5, 10, 16, random_state=0)
    >>> auditor = GaussMechAuditor().fit(X, ids)
    >>> leakage_scorer(auditor, X, ids) == -auditor.score(X, ids)
    True
    """
    if not hasattr(estimator, "score"):
        raise TypeError(
            f"leakage_scorer needs an auditor, or a pipeline ending in one; "
            f"{type(estimator).__name__} has no score method (an eraser such as "
            "ISP only transforms: put an auditor after it in a Pipeline)."
        )
    return -float(estimator.score(X, y))


@validate_params(
    {"summary": [StrOptions({"median", "max"}), None]},
    prefer_skip_nested_validation=True,
)
def make_leakage_scorer(*, summary=None):
    """Make a scorer returning minus the audited leakage, with a chosen summary.

    Parameters
    ----------
    summary : {"median", "max"} or None, default=None
        ``None`` negates the auditor's own ``score`` (its documented summary).
        ``"median"`` or ``"max"`` summarise the per-pair scored column of the
        held-out audit that way instead (e.g. the maximum of GaussMech).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``, larger = more private. With a
        ``summary``, it raises ``TypeError`` unless the (last step of the)
        estimator is a pair auditor, which alone has per-pair results.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import GaussMechAuditor
    >>> from skprivacy.metrics import make_leakage_scorer
    >>> X, ids = make_identity_embeddings(5, 10, 16, random_state=0)
    >>> auditor = GaussMechAuditor().fit(X, ids)
    >>> scorer = make_leakage_scorer(summary="max")
    >>> bool(scorer(auditor, X, ids) == -auditor.results_["epsilon"].max())
    True
    """
    if summary is None:
        return leakage_scorer

    def scorer(estimator, X, y):
        auditor = estimator[-1] if isinstance(estimator, Pipeline) else estimator
        if not isinstance(auditor, BasePairAuditor):
            raise TypeError(
                f"make_leakage_scorer(summary={summary!r}) summarises per-pair "
                "results, so it needs a pair auditor (GaussMechAuditor, "
                "KDELRAuditor, MMDTVAuditor, ROCHTAuditor), or a pipeline ending in "
                f"one; got {type(auditor).__name__}. Use summary=None to negate "
                "its own score."
            )
        if isinstance(estimator, Pipeline):
            X = estimator[:-1].transform(X)

        data = auditor._validate(X, y, reset=False)
        _, results, _ = auditor._audit(data, auditor.random_state)
        return -summarize(results[auditor._score_column_name()], summary)

    scorer.__name__ = f"leakage_scorer_{summary}"
    return scorer
