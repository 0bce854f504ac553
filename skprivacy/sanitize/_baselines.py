# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Baseline identity erasers beside ISP: LEACE and INLP."""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from skprivacy._kernels._low_rank import low_rank_update
from skprivacy.sanitize._base import (
    _auto_subspace,
    _BaseIdentityEraser,
    _ComponentsEraser,
    _IdentityStats,
    _warn_few_dimensions,
)
from skprivacy.utils import limit_blas_threads, sklearn_random_state
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
)

__all__ = ["INLP", "LEACE"]


class LEACE(_BaseIdentityEraser):
    """LEAst-squares Concept Erasure with the identity as the concept.

    LEACE (Belrose et al., 2023) is the closed-form affine map
    ``x -> x - W^+ P W (x - mu)`` with the smallest mean squared change such
    that no *linear* classifier can predict the concept (here: the one-hot
    identity) from the output better than a constant. It is the standard
    baseline for ISP; compare the two at a matched rank (``n_components``).

    Read more in the :ref:`User Guide <sanitize>`.

    Parameters
    ----------
    n_components : int, "auto", "full" or None, default="auto"
        Number of erased directions.

        - ``"auto"``: the default rank rule shared with :class:`ISP` (see its
          ``n_components``): as many directions as the identity means show
          signal beyond chance, and never more than ``n_features // 2``, so at
          least half of the dimensions survive. The top directions by singular
          value are erased (a truncated LEACE).
        - ``"full"`` (or None): the full rank of the (whitened)
          cross-covariance between embeddings and the identity one-hot (at
          most ``min(n_features, n_identities - 1)``), which is exact LEACE.
          With many identities this erases almost every direction and warns
          (:class:`~skprivacy.exceptions.FewDimensionsLeftWarning`).
        - int: keep only the top directions by singular value: a truncated
          LEACE, comparable to ``ISP(n_components=r)`` but without LEACE's
          guarantee.
    renormalize : bool, default=False
        Whether to scale output rows to unit L2 norm. Off by default because
        LEACE's guarantee concerns the affine output; switch it on to feed
        cosine-based matchers the same unit rows as ISP produces.
    tol : float, default=1e-8
        Relative cut-off below which covariance eigenvalues (whitening) and
        cross-covariance singular values (erased rank) count as zero.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Mean of the (L2-normalised) training rows.
    proj_left_ : ndarray of shape (n_features, n_components_)
        ``W^+ U``: directions along which the eraser moves a row.
    proj_right_ : ndarray of shape (n_components_, n_features)
        ``U^T W``: how the eraser reads the coordinates it removes.
    n_components_ : int
        Number of erased directions.
    identities_ : ndarray of shape (n_identities,)
        Identity labels seen during :term:`fit`.
    drop_report_ : dict
        Rows dropped during fit (non-finite, low norm), by reason.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    ISP : Orthogonal projection off the between-identity subspace.
    INLP : Iterative nullspace projection.

    Notes
    -----
    With ``z`` the L2-normalised rows, ``Sigma_zz`` their covariance, ``Y`` the
    identity one-hot and ``Sigma_zY`` the cross-covariance, the whitening
    ``W = (Sigma_zz^{1/2})^+`` and ``U`` the left singular vectors of
    ``W Sigma_zY`` give the eraser ``r(z) = z - W^+ U U^T W (z - mu)``. Then
    the identity-conditional means of ``r(z)`` coincide (on the training data),
    which is exactly "no linear classifier beats a constant" for least-squares
    losses. ``Sigma_zY`` is built from the identity means weighted by identity
    frequency, whereas ISP weights identities equally. ``transform``
    L2-normalises input rows first, as in fit, because the map is affine.

    With many identities (``n_identities`` close to ``n_features``) full LEACE
    erases almost every direction; compare erasers at a matched rank.

    References
    ----------
    N. Belrose, D. Schneider-Joseph, S. Ravfogel, R. Cotterell, E. Raff,
    S. Biderman, "LEACE: Perfect linear concept erasure in closed form",
    NeurIPS 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import LEACE
    >>> X, ids = make_identity_embeddings(10, 20, 32, n_identity_dims=4,
    ...                                   random_state=0)
    >>> leace = LEACE("full").fit(X, ids)
    >>> Z = leace.transform(X)
    >>> means = np.array([Z[ids == i].mean(axis=0) for i in range(10)])
    >>> bool(np.ptp(means, axis=0).max() < 1e-10)
    True
    """

    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 0, None, closed="left"),
            StrOptions({"auto", "full"}),
            None,
        ],
        "renormalize": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_components="auto", *, renormalize=False, tol=1e-8):
        self.n_components = n_components
        self.renormalize = renormalize
        self.tol = tol

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, ids=None):
        """Fit the least-squares eraser of the identity one-hot.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings (L2-normalised first; unusable rows dropped with a warning).
        y : array-like of shape (n_samples,), default=None
            Identity labels, used when ``ids`` is None.
        ids : array-like of shape (n_samples,), default=None
            Identity labels routed as metadata; takes precedence over ``y``.

        Returns
        -------
        self : LEACE
            Fitted transformer.
        """
        stats = self._collect_stats(X, y, ids)
        self._fit_from_stats(stats, partial=False)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, ids=None):
        """Add a chunk of rows to the running statistics and refit the eraser.

        LEACE depends on the data only through per-identity sums and counts
        and the total scatter ``sum z z^T``, so fitting chunk by chunk gives the
        same eraser as :meth:`fit` on the concatenation (up to the order of
        floating-point additions). :meth:`fit` resets the sums.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of embeddings.
        y : array-like of shape (n_samples,), default=None
            Identity labels of the chunk, used when ``ids`` is None.
        ids : array-like of shape (n_samples,), default=None
            Identity labels routed as metadata; takes precedence over ``y``.

        Returns
        -------
        self : LEACE
            The transformer, fitted on every chunk seen so far (an int
            ``n_components`` beyond the rank reachable so far is capped).
        """
        stats = self._partial_stats(X, y, ids)
        self._fit_from_stats(stats, partial=True)
        return self

    def _fit_from_stats(self, stats, *, partial):
        n = stats.n_rows
        d = stats.sums.shape[1]
        n_identities = stats.n_identities
        self.mean_ = stats.sums.sum(axis=0) / n
        sigma = stats.scatter / n - np.outer(self.mean_, self.mean_)
        sigma = (sigma + sigma.T) / 2
        means = stats.means()
        # Cross-covariance with the one-hot: column i = (n_i / n) (mu_i - mu).
        sigma_zy = (means - self.mean_).T * (stats.counts / n)
        with limit_blas_threads(user_api=None):
            evals, evecs = linalg.eigh(sigma, check_finite=False)
        keep = evals > self.tol * max(evals.max(), 0.0)
        V, L = evecs[:, keep], evals[keep]
        W = (V / np.sqrt(L)) @ V.T
        W_inv = (V * np.sqrt(L)) @ V.T
        with limit_blas_threads(user_api=None):
            u, s, _ = linalg.svd(W @ sigma_zy, full_matrices=False, check_finite=False)
        rank = int(np.sum(s > self.tol * s[0])) if s.size else 0
        max_rank = min(d, max(n_identities - 1, 0))
        if self.n_components in (None, "full"):
            r = rank
        elif self.n_components == "auto":
            r = _auto_subspace(means, stats.counts, stats.within_covariance()).shape[0]
        else:
            r = int(self.n_components)
            if r > max_rank and not partial:
                raise ValueError(
                    f"n_components={r} exceeds min(n_features, n_identities - 1) = "
                    f"{max_rank}, the largest possible rank of the identity "
                    "cross-covariance."
                )
        r = min(r, rank)
        u = u[:, :r]
        self.proj_left_ = W_inv @ u
        self.proj_right_ = u.T @ W
        self.n_components_ = r
        self.identities_ = stats.labels
        if not partial:
            _warn_few_dimensions(self, r, d)

    def transform(self, X):
        """Erase the identity: ``z - W^+ U U^T W (z - mu)`` on L2-normalised rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings with the number of features seen in :term:`fit`.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Erased embeddings, same dtype as ``X``.
        """
        return self._transform(X, self._transform_array)

    def _transform_array(self, X, out=None):
        return low_rank_update(
            X,
            self.proj_left_.T,
            self.proj_right_,
            shift=self.mean_,
            scale_rows=True,
            renormalize=self.renormalize,
            out=out,
        )


class INLP(_ComponentsEraser):
    """Iterative Nullspace Projection against identity classifiers.

    INLP (Ravfogel et al., 2020) repeatedly trains a linear classifier to
    predict the identity, projects the data onto the nullspace of the
    classifier's weights, and repeats on the projected data. The result is an
    orthogonal projector ``P = I - B^T B`` like ISP's, but with directions
    chosen by classifiers instead of the identity means.

    Read more in the :ref:`User Guide <sanitize>`.

    Parameters
    ----------
    n_components : int, "auto", "full" or None, default="auto"
        Total number of directions to remove. Each iteration adds the top
        right singular vectors of the classifier's weight matrix (the directions
        it relies on most) until ``n_components`` is reached. ``"auto"``: the
        default rank rule shared with :class:`ISP` (see its ``n_components``),
        which keeps at least half of the dimensions. ``"full"`` (or None):
        ``min(n_features, n_identities - 1)``, which with many identities
        erases almost everything and warns
        (:class:`~skprivacy.exceptions.FewDimensionsLeftWarning`).
    classifier : estimator or None, default=None
        Linear classifier with a ``coef_`` attribute after fit. None uses
        ``LogisticRegression(max_iter=1000)`` (its L2 penalty keeps the weights
        close to class-mean differences; an unregularised or lightly
        regularised least-squares classifier such as ``RidgeClassifier(alpha=1)``
        whitens the data and picks noise directions when identities have few
        rows). Pass ``RidgeClassifier(alpha=...)`` for speed on large data.
    max_iter : int, default=20
        Maximum number of classifier/projection rounds.
    renormalize : bool, default=True
        Whether to scale projected rows back to unit L2 norm.
    random_state : int, RandomState instance, Generator or None, default=None
        Passed to the classifier if it has a ``random_state`` parameter.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
        Orthonormal rows spanning the removed subspace, in removal order.
    n_components_ : int
        Number of removed directions.
    n_iter_ : int
        Number of classifier rounds run.
    train_accuracies_ : ndarray of shape (n_iter_,)
        Training accuracy of each round's classifier on the data it saw
        (before that round's projection): a diagnostic, optimistic by
        construction.
    identities_ : ndarray of shape (n_identities,)
        Identity labels seen during :term:`fit`.
    drop_report_ : dict
        Rows dropped during fit (non-finite, low norm), by reason.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    ISP : Closed-form projection off the between-identity subspace.
    LEACE : Least-squares concept erasure.

    Notes
    -----
    A multi-class linear classifier over ``m`` identities has a weight matrix
    of rank up to ``m - 1``, so with many identities a single round can remove
    many directions; truncating each round to the classifier's top singular
    directions lets INLP be compared with ISP at the same rank ``r``.

    References
    ----------
    S. Ravfogel, Y. Elazar, H. Gonen, M. Twiton, Y. Goldberg, "Null It Out:
    Guarding Protected Attributes by Iterative Nullspace Projection", ACL 2020.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import INLP
    >>> X, ids = make_identity_embeddings(10, 20, 32, n_identity_dims=4,
    ...                                   random_state=0)
    >>> inlp = INLP(n_components=6).fit(X, ids)
    >>> inlp.components_.shape
    (6, 32)
    """

    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 0, None, closed="left"),
            StrOptions({"auto", "full"}),
            None,
        ],
        "classifier": [HasMethods(["fit"]), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "renormalize": ["boolean"],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        n_components="auto",
        *,
        classifier=None,
        max_iter=20,
        renormalize=True,
        random_state=None,
    ):
        self.n_components = n_components
        self.classifier = classifier
        self.max_iter = max_iter
        self.renormalize = renormalize
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, ids=None):
        """Run the classifier / nullspace-projection rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings (L2-normalised first; unusable rows dropped with a warning).
        y : array-like of shape (n_samples,), default=None
            Identity labels, used when ``ids`` is None.
        ids : array-like of shape (n_samples,), default=None
            Identity labels routed as metadata; takes precedence over ``y``.

        Returns
        -------
        self : INLP
            Fitted transformer.
        """
        data = self._validate_fit_data(X, y, ids)
        Z = np.asarray(data.X, dtype=np.float64)
        d = Z.shape[1]
        max_rank = min(d, data.n_identities - 1)
        if self.n_components in (None, "full"):
            target = max_rank
        elif self.n_components == "auto":
            stats = _IdentityStats(d, scatter=True)
            stats.add_data(data)
            target = _auto_subspace(
                stats.means(), stats.counts, stats.within_covariance()
            ).shape[0]
        else:
            target = int(self.n_components)
        if target > max_rank:
            raise ValueError(
                f"n_components={target} exceeds min(n_features, n_identities - 1) "
                f"= {max_rank}, the largest rank a linear identity classifier's "
                "weights can have."
            )
        base = (
            LogisticRegression(max_iter=1000)
            if self.classifier is None
            else self.classifier
        )
        basis = np.zeros((0, d))
        accuracies = []
        n_iter = 0
        while basis.shape[0] < target and n_iter < self.max_iter:
            Zp = Z - (Z @ basis.T) @ basis
            clf = clone(base)
            if "random_state" in clf.get_params():
                clf.set_params(random_state=sklearn_random_state(self.random_state))
            clf.fit(Zp, data.codes)
            n_iter += 1
            accuracies.append(float(clf.score(Zp, data.codes)))
            W = np.atleast_2d(np.asarray(clf.coef_, dtype=np.float64))
            W = W - (W @ basis.T) @ basis  # numerically stay in the nullspace
            _, s, vt = linalg.svd(W, full_matrices=False, check_finite=False)
            if not s.size or s[0] <= 0:
                break
            new = vt[s > 1e-10 * s[0]][: target - basis.shape[0]]
            basis = np.vstack([basis, new])
            # Re-orthonormalise (Gram-Schmidt drift over rounds).
            q, rr = linalg.qr(basis.T, mode="economic")
            signs = np.sign(np.diag(rr))
            signs[signs == 0] = 1
            basis = (q * signs).T
        self.components_ = basis
        self.n_components_ = basis.shape[0]
        self.n_iter_ = n_iter
        self.train_accuracies_ = np.asarray(accuracies)
        _warn_few_dimensions(self, self.n_components_, d, stacklevel=4)
        return self

    def transform(self, X):
        """Project onto the nullspace: ``x - B^T (B x)``, then re-normalise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings with the number of features seen in :term:`fit`.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Projected embeddings, same dtype as ``X``.
        """
        return self._transform(
            X, self._transform_array, check_finite=not self.renormalize
        )
