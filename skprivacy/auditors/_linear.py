# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Linear shared-product classifiers for ROC-HT over every pair.

Their score is linear in per-class means: the nearest-centroid score
``<x, mu_1> - ||mu_1||^2 / 2 - (<x, mu_0> - ||mu_0||^2 / 2)``, and the same in
a space whitened once by a pooled within-class covariance (Fisher LDA with a
shared, shrunk covariance). Inside :class:`~skprivacy.ROCHTAuditor` and
:class:`~skprivacy.ROCHTCertifier` every out-of-fold score of every pair then
comes from products computed once for the data set
(:mod:`skprivacy.auditors._roc_fast`); as ordinary scikit-learn classifiers they
also run through the generic per-pair ``cross_val_predict`` path, which is how
the two paths are compared.
"""

from numbers import Real

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from skprivacy.utils import check_identity_labels, check_magnitude, identity_sums
from skprivacy.utils._sklearn import (
    Interval,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = [
    "CentroidClassifier",
    "PooledLDAClassifier",
    "pooled_within_covariance",
    "whitening_matrix",
]


def pooled_within_covariance(X, codes, n_classes):
    """Pooled within-class covariance ``sum_c sum_i (x - mu_c)(x - mu_c)^T / (n - C)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows.
    codes : ndarray of shape (n_samples,)
        Class code of each row in ``range(n_classes)``.
    n_classes : int
        Number of classes.

    Returns
    -------
    covariance : ndarray of shape (n_features, n_features)
        Divided by ``max(n_samples - n_classes, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.auditors._linear import pooled_within_covariance
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 1.0], [12.0, 1.0]])
    >>> pooled_within_covariance(X, np.array([0, 0, 1, 1]), 2)
    array([[2., 0.],
           [0., 0.]])
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.intp)
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    means = identity_sums(X, codes, n_classes) / np.maximum(counts, 1.0)[:, None]
    centred = X - means[codes]
    return centred.T @ centred / max(X.shape[0] - n_classes, 1)


def whitening_matrix(covariance, shrinkage):
    """Lower-triangular ``P`` with ``P^T P`` the inverse of the shrunk covariance.

    The shrunk covariance is ``(1 - shrinkage) * C + shrinkage * tr(C) / d * I``
    (the identity when ``tr(C) = 0``); ``P = L^{-1}`` for its Cholesky factor
    ``L``, so ``z = P x`` whitens.

    Parameters
    ----------
    covariance : ndarray of shape (n_features, n_features)
        Symmetric positive semi-definite.
    shrinkage : float in [0, 1]
        Weight of the scaled identity.

    Returns
    -------
    P : ndarray of shape (n_features, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.auditors._linear import whitening_matrix
    >>> whitening_matrix(np.diag([4.0, 1.0]), 0.0)
    array([[0.5, 0. ],
           [0. , 1. ]])
    """
    C = np.asarray(covariance, dtype=np.float64)
    d = C.shape[0]
    scale = float(np.trace(C)) / d
    if not scale > 0:
        return np.eye(d)
    shrunk = (1.0 - shrinkage) * C + shrinkage * scale * np.eye(d)
    try:
        L = cholesky(shrunk, lower=True)
    except np.linalg.LinAlgError:
        raise ValueError(
            "The shrunk covariance is singular; use a shrinkage > 0."
        ) from None
    return solve_triangular(L, np.eye(d), lower=True)


class CentroidClassifier(ClassifierMixin, BaseEstimator):
    """Nearest-centroid classifier with a linear score (ROC-HT fast path).

    Each class is summarised by the mean of its training rows ``mu_c``; a row
    ``x`` gets the class score ``<x, mu_c> - ||mu_c||^2 / 2`` (minus half the
    squared distance to the centroid, up to a term common to all classes).
    For two classes ``decision_function`` is the difference of the two scores,
    ``<x, mu_1 - mu_0> - (||mu_1||^2 - ||mu_0||^2) / 2``.

    Inside :class:`~skprivacy.ROCHTAuditor` and
    :class:`~skprivacy.ROCHTCertifier` this classifier takes the shared-product
    fast path: all pairs' out-of-fold scores come from one set of products,
    with the same folds, thresholds and results as the generic per-pair path.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    centroids_ : ndarray of shape (n_classes, n_features)
        Class means of the training rows.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

    See Also
    --------
    PooledLDAClassifier : The same score after whitening by a pooled, shrunk
        within-class covariance (Fisher LDA).
    sklearn.neighbors.NearestCentroid : Similar, without the linear score.

    Notes
    -----
    ``predict_proba`` is the softmax of the class scores (for two classes the
    logistic function of ``decision_function``); it is a monotone transform,
    not a calibrated probability. The ROC-HT auditors rank by
    ``decision_function``, which does not saturate.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy import CentroidClassifier
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 0.0], [4.0, 1.0]])
    >>> clf = CentroidClassifier().fit(X, [0, 0, 1, 1])
    >>> clf.decision_function([[1.0, 0.5], [3.0, 0.5]])
    array([-4.,  4.])
    >>> clf.predict([[1.0, 0.5], [3.0, 0.5]])
    array([0, 1])
    """

    # Rank by the linear score (positive_scores), not by its softmax.
    _pair_score_method = "decision_function"

    _parameter_constraints: dict = {}

    def __init__(self):
        pass

    def _fit_classes(self, X, y):
        # Labels by the library's one rule (no missing labels, one kind),
        # then scikit-learn's (a classification target).
        if y is not None and not isinstance(y, str):
            y = check_identity_labels(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_magnitude(X)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least two classes in y; got 1 "
                f"class ({self.classes_[0]!r})."
            )
        return X, codes

    @staticmethod
    def _class_means(X, codes, n_classes):
        counts = np.bincount(codes, minlength=n_classes)
        return identity_sums(X, codes, n_classes) / counts[:, None]

    def _transform(self, X):
        return X

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Compute the class centroids.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, codes = self._fit_classes(X, y)
        self.centroids_ = self._class_means(X, codes, self.classes_.shape[0])
        return self

    def _class_scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        check_magnitude(X)
        Z = self._transform(X)
        sq = np.einsum("cd,cd->c", self.centroids_, self.centroids_)
        return Z @ self.centroids_.T - 0.5 * sq

    def decision_function(self, X):
        """Class scores ``<x, mu_c> - ||mu_c||^2 / 2`` (their difference for two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the score of ``classes_[1]`` minus that of
            ``classes_[0]`` (positive favours ``classes_[1]``).
        """
        S = self._class_scores(X)
        if S.shape[1] == 2:
            return S[:, 1] - S[:, 0]
        return S

    def predict_proba(self, X):
        """Softmax of the class scores (a monotone transform, not calibrated).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        return softmax(self._class_scores(X), axis=1)

    def predict(self, X):
        """Class of the nearest centroid (highest class score).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        scores = self._class_scores(X)  # checks fitted before classes_ is read
        return self.classes_[np.argmax(scores, axis=1)]


class PooledLDAClassifier(CentroidClassifier):
    """Fisher LDA with one pooled, shrunk within-class covariance (ROC-HT fast path).

    Rows are whitened by the pooled within-class covariance ``C`` shrunk
    towards a scaled identity, ``(1 - shrinkage) C + shrinkage tr(C)/d I``, and
    classified by the nearest centroid in the whitened space: for two classes
    ``decision_function`` is ``(x - (mu_0 + mu_1)/2)^T C_s^{-1} (mu_1 - mu_0)``,
    Fisher's linear discriminant.

    Inside :class:`~skprivacy.ROCHTAuditor` and
    :class:`~skprivacy.ROCHTCertifier`, a ``covariance=None`` classifier gets
    the pooled within-*identity* covariance of every audited row (the
    certifier: of every training row) estimated once, and rows are whitened
    once; every pair then takes the shared-product fast path. Used on its own,
    it estimates ``C`` from the classes of its training data.

    Parameters
    ----------
    shrinkage : float in [0, 1], default=0.1
        Weight of the scaled identity in the shrunk covariance.
    covariance : array-like of shape (n_features, n_features) or None, \
default=None
        A fixed within-class covariance to use instead of the estimate (it is
        shrunk too).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    covariance_ : ndarray of shape (n_features, n_features)
        The (unshrunk) within-class covariance used.
    whitening_ : ndarray of shape (n_features, n_features)
        Lower-triangular ``P`` with ``P^T P`` the inverse shrunk covariance.
    centroids_ : ndarray of shape (n_classes, n_features)
        Class means in the whitened space (``mu_c P^T``).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

    See Also
    --------
    CentroidClassifier : The same without whitening.
    sklearn.discriminant_analysis.LinearDiscriminantAnalysis : LDA with a
        per-fit covariance.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy import PooledLDAClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)) * [1.0, 10.0, 10.0]
    >>> X[20:, 0] += 4.0  # the classes differ on the low-variance axis only
    >>> y = np.repeat([0, 1], 20)
    >>> clf = PooledLDAClassifier(shrinkage=0.0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "shrinkage": [Interval(Real, 0, 1, closed="both")],
        "covariance": ["array-like", None],
    }

    def __init__(self, shrinkage=0.1, covariance=None):
        self.shrinkage = shrinkage
        self.covariance = covariance

    def _transform(self, X):
        return X @ self.whitening_.T

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate (or take) the covariance, whiten, compute the centroids.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, codes = self._fit_classes(X, y)
        d = X.shape[1]
        if self.covariance is None:
            cov = pooled_within_covariance(X, codes, self.classes_.shape[0])
        else:
            cov = np.asarray(self.covariance, dtype=np.float64)
            if cov.shape != (d, d) or not np.all(np.isfinite(cov)):
                raise ValueError(
                    f"covariance must be a finite ({d}, {d}) matrix; got shape "
                    f"{cov.shape}."
                )
        self.covariance_ = cov
        self.whitening_ = whitening_matrix(cov, self.shrinkage)
        Z = self._transform(X)
        self.centroids_ = self._class_means(Z, codes, self.classes_.shape[0])
        return self
