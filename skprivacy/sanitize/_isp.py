# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Identity Sanitization Projection (ISP, paper 003)."""

from numbers import Integral

import numpy as np
from scipy import linalg
from sklearn.utils.extmath import svd_flip

from skprivacy.sanitize._base import (
    _auto_subspace,
    _ComponentsEraser,
    _warn_few_dimensions,
)
from skprivacy.sanitize._projector import read_projector
from skprivacy.utils import limit_blas_threads
from skprivacy.utils._sklearn import (
    Interval,
    RealNotInt,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["ISP"]


class ISP(_ComponentsEraser):
    """Identity Sanitization Projection: remove the between-identity subspace.

    ISP estimates the subspace spanned by the identity means and projects every
    embedding onto its orthogonal complement, ``z -> P z / ||P z||`` with
    ``P = I - U_r U_r^T``. It is closed-form (one SVD), exportable as a plain
    matrix (:meth:`to_npz`, :meth:`get_projector`), and drops into any
    scikit-learn pipeline.

    Read more in the :ref:`User Guide <sanitize>`.

    Parameters
    ----------
    n_components : int, float, "auto", "full" or None, default="auto"
        Number ``r`` of identity directions to remove.

        - ``"auto"`` (default rank rule): remove the directions in which the
          identity means spread more than chance allows, never more than
          ``n_features // 2`` of them, so **at least half of the dimensions
          always survive**. The candidates are the eigenvectors of the
          between-identity scatter of the means minus its chance part
          ``c W`` (``W`` the pooled within-identity covariance, ``c =
          mean_i(1 / n_i) (1 - 1 / m)``: averaging ``n_i`` noisy rows spreads
          the means by that much even without identity signal, e.g. through an
          attribute such as pose or lighting that is independent of identity).
          A direction is removed when its ratio of between-identity variance to
          that chance level exceeds ``2 (1 + sqrt(d / (m - 1)))^2``, twice the
          largest ratio pure chance reaches (the Marchenko-Pastur edge). With
          one row per identity (no within-identity spread) the rule takes the
          fewest leading directions holding 90% of the between-identity energy,
          under the same cap.
        - int ``r >= 0``: remove the top ``r`` left singular vectors of the
          centred identity-mean matrix ``M`` (``r = 0`` leaves the data unchanged
          apart from the re-normalisation, a convenient "before" in sweeps);
          ``r`` must not exceed ``min(n_features, n_identities - 1)``, the
          largest possible rank of ``M``.
        - float in ``(0, 1)``: remove the fewest directions whose share of the
          between-identity energy ``sum_k s_k^2`` is greater than this value
          (like :class:`~sklearn.decomposition.PCA`).
        - ``"full"`` (or None): remove every direction with a non-zero singular
          value, i.e. the numerical rank of ``M`` (full erasure of the identity
          means). With ``n_identities - 1 >= n_features`` this erases every
          dimension.

        Whenever the fitted rank leaves fewer than half of the dimensions,
        :meth:`fit` warns with
        :class:`~skprivacy.exceptions.FewDimensionsLeftWarning`.
    renormalize : bool, default=True
        Whether to scale the projected rows back to unit L2 norm (the paper's
        ``P z / ||P z||``). Rows projected to zero (up to rounding,
        ``||P z|| <= 100 eps ||z||``) are returned as zero rows.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
        Orthonormal rows ``U_r^T`` spanning the removed identity subspace,
        ordered by decreasing singular value (for ``"auto"``: by decreasing
        de-biased between-identity variance) (signs fixed so that the largest
        entry of each row is positive).
    singular_values_ : ndarray of shape (n_components_,)
        Singular values of ``M`` for the removed directions (for ``"auto"``:
        the norm ``||M^T u||`` along each removed direction ``u``).
    explained_energy_ratio_ : ndarray of shape (n_components_,)
        Share of the between-identity energy ``||M||_F^2`` removed by each
        component (sums to at most 1).
    mean_ : ndarray of shape (n_features,)
        ``mu_C``, the unweighted mean of the identity means (the centre of
        ``M``). The projection itself is linear and does not subtract it.
    n_components_ : int
        Number of removed directions ``r``.
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
    LEACE : Least-squares concept erasure (closed-form, affine).
    INLP : Iterative nullspace projection with linear classifiers.
    OpenSetVerificationAuditor : The attacker-calibrated audit of the result.

    Notes
    -----
    With ``z`` the L2-normalised rows, ``mu_i`` the mean of identity ``i``'s
    rows, ``mu_C = mean_i mu_i`` and ``M = [mu_1 - mu_C, ..., mu_m - mu_C]``
    (``d x m``), the SVD ``M = U S V^T`` gives ``U_r`` (top ``r`` columns) and
    ``P = I - U_r U_r^T``, a symmetric, idempotent orthogonal projector. When
    ``r = rank(M)``, ``P mu_i = P mu_C`` for every identity: all identity means
    collapse onto one point, so no linear read-out of the *means* separates
    identities. Within-identity variation that happens to lie in other
    directions is untouched.

    ``transform`` computes ``x - U_r (U_r^T x)`` blockwise as two skinny matrix
    products (``4 n d r`` flops, never ``n d^2``), then re-normalises. It is
    applied to the rows as given (``P`` is linear), so with
    ``renormalize=False`` the output keeps the input's scale.

    Identity labels: fitted alone, ``fit(X, ids)`` uses ``y`` as the identity.
    Inside a pipeline whose ``y`` is a downstream target, route the identities
    as metadata: ``ISP().set_fit_request(ids=True)`` with
    ``sklearn.set_config(enable_metadata_routing=True)``, then
    ``pipe.fit(X, y, ids=ids)``; without routing, ``pipe.fit(X, y,
    isp__ids=ids)`` does the same.

    References
    ----------
    Paper 003, "From Measurement to Mitigation: Quantifying and Reducing Identity
    Leakage in Image Representation Encoders with Linear Subspace Removal".

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import ISP
    >>> X, ids = make_identity_embeddings(20, 10, 32, n_identity_dims=4,
    ...                                   random_state=0)
    >>> isp = ISP(n_components=4).fit(X, ids)
    >>> isp.components_.shape
    (4, 32)
    >>> Z = isp.transform(X)
    >>> bool(abs(Z @ isp.components_.T).max() < 1e-12)
    True
    """

    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 0, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            StrOptions({"auto", "full"}),
            None,
        ],
        "renormalize": ["boolean"],
    }

    def __init__(self, n_components="auto", *, renormalize=True):
        self.n_components = n_components
        self.renormalize = renormalize

    def _needs_scatter(self):
        return self.n_components == "auto"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, ids=None):
        """Estimate the identity subspace from identity-labelled embeddings.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or dask array
            Embeddings. Rows are L2-normalised first; non-finite and (near-)zero
            rows are dropped with a warning. A ``dask.array`` is reduced block
            by block to per-identity sums (on a ``distributed`` cluster if one
            is active), never loaded whole.
        y : array-like of shape (n_samples,), default=None
            Identity labels, used when ``ids`` is None (ISP fitted alone).
        ids : array-like of shape (n_samples,), default=None
            Identity labels routed as metadata (e.g. from a pipeline whose ``y``
            is a downstream target). Takes precedence over ``y``.

        Returns
        -------
        self : ISP
            Fitted transformer.
        """
        stats = self._collect_stats(X, y, ids)
        self._fit_from_stats(stats, partial=False)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, ids=None):
        """Add a chunk of rows to the per-identity sums and refit the subspace.

        ISP depends on the data only through per-identity sums and counts (and,
        for ``n_components="auto"``, the total scatter ``sum z z^T``), so
        fitting chunk by chunk gives the same projector as :meth:`fit` on the
        concatenation (up to the order of floating-point additions). An
        identity may span several chunks. The first call (or a call after
        :meth:`fit`'s state was discarded) starts new sums; :meth:`fit` resets
        them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of embeddings (cleaned and L2-normalised as in :meth:`fit`).
        y : array-like of shape (n_samples,), default=None
            Identity labels of the chunk, used when ``ids`` is None.
        ids : array-like of shape (n_samples,), default=None
            Identity labels routed as metadata; takes precedence over ``y``.

        Returns
        -------
        self : ISP
            The transformer, fitted on every chunk seen so far. Until two
            identities have been seen it removes nothing, and an int
            ``n_components`` larger than the rank reachable so far is capped.
        """
        stats = self._partial_stats(X, y, ids)
        self._fit_from_stats(stats, partial=True)
        return self

    def _fit_from_stats(self, stats, *, partial):
        means = stats.means()
        self.mean_ = means.mean(axis=0)
        centred = means - self.mean_
        n_identities, n_features = means.shape
        total = float(np.sum(centred**2))
        max_rank = min(n_features, max(n_identities - 1, 0))
        r = self.n_components
        if r == "auto":
            vt = _auto_subspace(means, stats.counts, stats.within_covariance())
            s = np.linalg.norm(centred @ vt.T, axis=0)
        else:
            # SVD of M^T (m x d): its right singular vectors are M's left ones.
            with limit_blas_threads(user_api=None):
                _, s, vt = linalg.svd(centred, full_matrices=False, check_finite=False)
            energy = s**2
            tol = (s[0] if s.size else 0.0) * max(means.shape) * np.finfo(float).eps
            numerical_rank = int(np.sum(s[:max_rank] > tol))
            if r is None or r == "full":
                r = numerical_rank
            elif isinstance(r, Integral):
                if r > max_rank and not partial:
                    raise ValueError(
                        f"n_components={r} exceeds min(n_features, n_identities - 1)"
                        f" = {max_rank}, the largest possible rank of the centred "
                        f"identity-mean matrix ({n_features} features, "
                        f"{n_identities} identities)."
                    )
                r = min(r, max_rank)
            else:
                if total > 0:
                    ratio = np.cumsum(energy) / total
                    r = int(np.searchsorted(ratio, r, side="right")) + 1
                else:
                    r = 0
                r = min(r, numerical_rank)
            r = int(r)
            s, vt = s[:r], vt[:r]
        r = vt.shape[0]
        # Largest-magnitude entry of each row positive: a deterministic basis
        # (the rows of vt are unit vectors, so that entry is never zero).
        if r:
            _, vt = svd_flip(None, vt.copy(), u_based_decision=False)
        self.components_ = np.ascontiguousarray(vt, dtype=np.float64)
        self.singular_values_ = np.asarray(s, dtype=np.float64).copy()
        self.explained_energy_ratio_ = (
            self.singular_values_**2 / total if total > 0 else np.zeros(r)
        )
        self.n_components_ = r
        self.identities_ = stats.labels
        if not partial:
            _warn_few_dimensions(self, r, n_features)

    def transform(self, X):
        """Remove the identity subspace: ``x - U_r (U_r^T x)``, then re-normalise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or dask array
            Embeddings with the number of features seen in :term:`fit`. Rows
            containing NaN come out as NaN. A ``dask.array`` gives a lazy
            ``dask.array`` (``map_blocks`` over row blocks).

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Sanitised embeddings, same dtype as ``X`` (float32 or float64).
        """
        return self._transform(
            X, self._transform_array, check_finite=not self.renormalize
        )

    def get_projector(self):
        """Return the dense projector ``P = I - U_r U_r^T`` as a plain array.

        ``transform`` never forms this ``d x d`` matrix; it is here for export
        (e.g. to apply ``P`` in another language or a database).

        Returns
        -------
        P : ndarray of shape (n_features_in_, n_features_in_)
            Symmetric, idempotent projector onto the complement of the removed
            identity subspace.
        """
        check_is_fitted(self)
        U = self.components_
        P = -(U.T @ U)
        P[np.diag_indices_from(P)] += 1.0
        return P

    def to_npz(self, file):
        """Save the fitted projector as a plain ``.npz`` archive (no pickle).

        The archive holds ``components`` (``r x d``), ``projector`` (``d x d``,
        for use outside Python), ``mean``, ``singular_values``,
        ``explained_energy_ratio``, ``renormalize`` and, if known,
        ``feature_names_in``. Load it with :meth:`from_npz` or
        ``numpy.load(file, allow_pickle=False)``.

        Parameters
        ----------
        file : str, path-like or file-like
            Destination (``numpy.savez`` semantics: ``.npz`` is appended to a
            path without it).
        """
        check_is_fitted(self)
        arrays = {
            "components": self.components_,
            "projector": self.get_projector(),
            "mean": self.mean_,
            "singular_values": self.singular_values_,
            "explained_energy_ratio": self.explained_energy_ratio_,
            "renormalize": np.asarray(bool(self.renormalize)),
        }
        if hasattr(self, "feature_names_in_"):
            arrays["feature_names_in"] = np.asarray(self.feature_names_in_, dtype=str)
        np.savez(file, **arrays)

    @classmethod
    def from_npz(cls, file):
        """Rebuild a fitted ISP from an archive written by :meth:`to_npz`.

        The archive is read with ``allow_pickle=False``, so loading it cannot
        execute code (unlike unpickling an estimator), and every field is
        checked (keys, shapes, dtypes, orthonormal components, a boolean
        ``renormalize``).

        Parameters
        ----------
        file : str, path-like or file-like
            An ``.npz`` archive written by :meth:`to_npz`.

        Returns
        -------
        isp : ISP
            A fitted ISP equivalent to the saved one.

        Raises
        ------
        ValueError
            If the file is not a valid projector archive: one line naming the
            file and the problem.
        """
        return cls.from_components(**read_projector(file))

    @classmethod
    def from_components(
        cls,
        components,
        *,
        renormalize=True,
        mean=None,
        singular_values=None,
        explained_energy_ratio=None,
        feature_names_in=None,
        atol=1e-6,
    ):
        """Build a fitted ISP from a plain array of removed directions.

        Parameters
        ----------
        components : array-like of shape (r, n_features)
            Orthonormal rows spanning the subspace to remove (e.g. the
            ``components`` of a :meth:`to_npz` archive, or a basis computed
            elsewhere).
        renormalize : bool, default=True
            Whether ``transform`` re-normalises rows.
        mean : array-like of shape (n_features,), default=None
            Stored as ``mean_`` (informational; zeros if None).
        singular_values : array-like of shape (r,), default=None
            Stored as ``singular_values_`` (NaN if None).
        explained_energy_ratio : array-like of shape (r,), default=None
            Stored as ``explained_energy_ratio_`` (NaN if None).
        feature_names_in : array-like of str, default=None
            Column names expected by ``transform`` for DataFrame input.
        atol : float, default=1e-6
            Tolerance of the orthonormality check ``|U U^T - I| <= atol``.

        Returns
        -------
        isp : ISP
            A fitted ISP whose ``transform`` removes ``components``.

        Raises
        ------
        ValueError
            If ``components`` is not a finite 2-D array with orthonormal rows.

        Examples
        --------
        >>> import numpy as np
        >>> from skprivacy.sanitize import ISP
        >>> isp = ISP.from_components(np.eye(3)[:1])
        >>> isp.transform([[3.0, 4.0, 0.0]])
        array([[0., 1., 0.]])
        """
        U = np.asarray(components, dtype=np.float64)
        if U.ndim != 2 or not np.isfinite(U).all():
            raise ValueError(
                "components must be a finite 2-D array of shape (r, n_features); "
                f"got shape {U.shape}."
            )
        r, d = U.shape
        if r > d:
            raise ValueError(
                f"components has {r} rows but only {d} features: at most "
                "n_features orthonormal directions exist."
            )
        gram_err = np.abs(U @ U.T - np.eye(r)).max() if r else 0.0
        if gram_err > atol:
            raise ValueError(
                "components rows must be orthonormal (U U^T = I); the largest "
                f"deviation is {gram_err:.3g} > atol={atol:g}. Orthonormalise them "
                "first, e.g. with scipy.linalg.orth(components.T).T."
            )
        isp = cls(n_components=r, renormalize=renormalize)
        isp.components_ = U
        isp.n_components_ = r
        isp.n_features_in_ = d
        isp.mean_ = np.zeros(d) if mean is None else np.asarray(mean, dtype=float)
        isp.singular_values_ = (
            np.full(r, np.nan)
            if singular_values is None
            else np.asarray(singular_values, dtype=float)
        )
        isp.explained_energy_ratio_ = (
            np.full(r, np.nan)
            if explained_energy_ratio is None
            else np.asarray(explained_energy_ratio, dtype=float)
        )
        isp.identities_ = np.array([], dtype=object)
        isp.drop_report_ = {}
        if feature_names_in is not None:
            names = np.asarray(feature_names_in, dtype=object)
            if names.shape != (d,):
                raise ValueError(
                    f"feature_names_in has {names.size} names for {d} features."
                )
            isp.feature_names_in_ = names
        return isp
