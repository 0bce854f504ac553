# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared machinery of the identity erasers (ISP, LEACE, INLP).

All three are linear (or affine) maps fitted from identity labels. They share
how the labels arrive (``y`` when fitted alone, ``ids`` when routed as metadata
in a pipeline whose ``y`` is a downstream target), input validation, and a
blocked, multi-threaded low-rank ``transform``.
"""

import warnings

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from skprivacy._kernels._low_rank import low_rank_update
from skprivacy.exceptions import FewDimensionsLeftWarning
from skprivacy.utils import (
    check_embeddings,
    encode_identities,
    identity_sums,
    limit_blas_threads,
    validate_identity_data,
)
from skprivacy.utils._sklearn import check_is_fitted, validate_data

__all__ = []

_FLOAT_DTYPES = (np.float64, np.float32)


def _identity_labels(estimator, y, ids):
    """Pick the identity labels: ``ids`` when given (metadata routing), else ``y``."""
    labels = ids if ids is not None else y
    if labels is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y "
            "is None: pass the identity labels as y (fitted alone) or as ids=... "
            "(routed as metadata in a pipeline whose y is a downstream target)."
        )
    return labels


def _identity_means(X, codes, counts):
    """Per-identity mean rows, computed with one sparse product (float64).

    ``counts[i]`` is the number of rows with code ``i`` (``IdentityData.counts``).
    """
    return _identity_sums(X, codes, len(counts)) / counts[:, None]


def _identity_sums(X, codes, n_identities):
    """Per-identity row sums, accumulated in float64."""
    return identity_sums(X, codes, n_identities, dtype=np.float64)


#: Default rank rule (``n_components="auto"``), see :func:`_auto_subspace`.
#: At least this share of the embedding dimensions always survives.
AUTO_KEEP_SHARE = 0.5
#: A direction counts as identity signal when its between-identity variance
#: exceeds this many times the largest ratio chance alone would produce.
AUTO_MARGIN = 2.0
#: With one row per identity (no within-identity spread to compare with), the
#: rule falls back to the fewest directions holding this share of the energy.
AUTO_ENERGY = 0.9


def _max_auto_rank(n_features):
    """Largest rank the default rule removes: ceil(d / 2) dimensions survive."""
    return n_features - int(np.ceil(n_features * AUTO_KEEP_SHARE))


def _auto_subspace(means, counts, within):
    """Directions removed by the default rank rule, as orthonormal rows.

    ``B = M_c^T M_c / m`` is the scatter of the centred identity means. Under
    no identity signal its expectation is ``c W`` with ``W`` the pooled
    within-identity covariance and ``c = mean_i(1 / n_i) (1 - 1 / m)``: the
    spread of means that averaging ``n_i`` noisy rows produces by chance (an
    attribute independent of identity, such as pose or lighting, lands
    there). The candidate directions are the eigenvectors of the de-biased
    scatter ``B - c W`` with a positive eigenvalue; one is kept when its
    variance ratio ``v^T B v / (c v^T W v)`` exceeds ``AUTO_MARGIN`` times
    ``(1 + sqrt(d / (m - 1)))^2``, the largest ratio pure chance reaches
    (Marchenko-Pastur edge). At most :func:`_max_auto_rank` directions are
    kept. Without within-identity spread (one row per identity) the fewest
    leading directions of ``M_c`` holding ``AUTO_ENERGY`` of its energy are
    taken instead, under the same cap.

    Returns
    -------
    directions : ndarray of shape (r, d)
    """
    m, d = means.shape
    cap = _max_auto_rank(d)
    centred = means - means.mean(axis=0)
    if m < 2:
        return np.zeros((0, d))
    if within is None:
        with limit_blas_threads(user_api=None):
            _, s, vt = linalg.svd(centred, full_matrices=False, check_finite=False)
        energy = s**2
        total = energy.sum()
        if total <= 0:
            return np.zeros((0, d))
        r = int(np.searchsorted(np.cumsum(energy) / total, AUTO_ENERGY)) + 1
        tol = s[0] * max(m, d) * np.finfo(float).eps
        r = min(r, cap, int(np.sum(s > tol)))
        return vt[:r]
    scatter = centred.T @ centred / m
    c = float(np.mean(1.0 / counts)) * (1.0 - 1.0 / m)
    with limit_blas_threads(user_api=None):
        evals, vecs = linalg.eigh(scatter - c * within, check_finite=False)
    evals, vecs = evals[::-1], vecs[:, ::-1]
    between = np.einsum("dk,dk->k", vecs, scatter @ vecs)
    chance = c * np.einsum("dk,dk->k", vecs, within @ vecs)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(chance > 0, between / chance, np.inf)
    edge = (1.0 + np.sqrt(d / (m - 1))) ** 2
    scale = evals[0] if evals.size else 0.0
    keep = np.flatnonzero(
        (ratio > AUTO_MARGIN * edge) & (evals > 1e-12 * max(scale, 0.0))
    )[:cap]
    return vecs[:, keep].T


def _warn_few_dimensions(estimator, rank, n_features, stacklevel=5):
    """Warn (FewDimensionsLeftWarning) when fewer than half of the dimensions survive."""
    if rank > _max_auto_rank(n_features):
        warnings.warn(
            f"{type(estimator).__name__} removed {rank} of {n_features} directions: "
            f"only {n_features - rank} dimension(s) survive, fewer than half. The "
            "output may be useless for anything but erasure; the default "
            "n_components='auto' keeps at least half.",
            FewDimensionsLeftWarning,
            # 5: the caller of fit, through sklearn's _fit_context wrapper.
            stacklevel=stacklevel,
        )


#: Elements per float64 sub-block of :func:`_block_stats` (16 MB).
_STATS_BLOCK_ELEMENTS = 1 << 21


def _block_stats(X, codes, identities, scatter):
    """Sufficient statistics of one block of cleaned rows (float64).

    Accumulated over sub-blocks of rows, so the float64 copy of float32 input
    never exceeds ~16 MB (a whole-chunk copy was 2 x 100 MB per 100,000 x 128
    chunk of ``skprivacy sanitize``, twice that at d = 512).
    """
    X = np.asarray(X)
    codes = np.asarray(codes)
    n, d = X.shape
    m = len(identities)
    counts = np.bincount(codes, minlength=m)
    sums = np.zeros((m, d))
    outer = np.zeros((d, d)) if scatter else None
    step = max(1, _STATS_BLOCK_ELEMENTS // max(d, 1))
    for start in range(0, n, step):
        xb = X[start : start + step].astype(np.float64, copy=False)
        sums += _identity_sums(xb, codes[start : start + step], m)
        if scatter:
            outer += xb.T @ xb
    return identities, sums, counts, outer


class _IdentityStats:
    """Per-identity sums and counts, and the total scatter, over many chunks.

    Everything ISP and LEACE need is a sum over rows, so fitting on chunks
    (``partial_fit``) or on the blocks of a dask array gives the statistics of
    the concatenation, up to the order of floating-point additions.
    """

    def __init__(self, n_features, scatter):
        self.labels = None
        self.sums = np.zeros((0, n_features))
        self.counts = np.zeros(0, dtype=np.int64)
        self.scatter = np.zeros((n_features, n_features)) if scatter else None
        self.drop_report = {}

    def add(self, identities, sums, counts, outer, drops):
        identities = np.asarray(identities)
        if self.labels is None or self.labels.size == 0:
            self.labels = identities[:0]
        try:
            labels = np.union1d(self.labels, identities)
        except TypeError as exc:
            raise ValueError(
                "identity labels of this chunk cannot be compared with those seen "
                f"before ({self.labels.dtype} vs {identities.dtype}); use one label "
                "type for every chunk."
            ) from exc
        if labels.size != self.labels.size:
            where = np.searchsorted(labels, self.labels)
            grown = np.zeros((labels.size, self.sums.shape[1]))
            grown[where] = self.sums
            grown_counts = np.zeros(labels.size, dtype=np.int64)
            grown_counts[where] = self.counts
            self.sums, self.counts = grown, grown_counts
        self.labels = labels
        where = np.searchsorted(labels, identities)
        np.add.at(self.sums, where, sums)
        np.add.at(self.counts, where, counts)
        if self.scatter is not None:
            self.scatter += outer
        for key, value in drops.items():
            if isinstance(value, list):
                self.drop_report.setdefault(key, []).extend(value)
            elif isinstance(value, (int, np.integer)):
                self.drop_report[key] = self.drop_report.get(key, 0) + int(value)

    def add_data(self, data):
        """Add the rows of an :class:`~skprivacy.utils.IdentityData`."""
        ids, sums, counts, outer = _block_stats(
            data.X, data.codes, data.identities, self.scatter is not None
        )
        self.add(ids, sums, counts, outer, data.drop_report)

    @property
    def n_rows(self):
        return int(self.counts.sum())

    @property
    def n_identities(self):
        return int(self.labels.size) if self.labels is not None else 0

    def means(self):
        return self.sums / self.counts[:, None]

    def within_covariance(self):
        """Pooled within-identity covariance, or None without repeated identities."""
        n, m = self.n_rows, self.n_identities
        if self.scatter is None or n <= m:
            return None
        within = self.scatter - self.sums.T @ self.means()
        return (within + within.T) / (2 * (n - m))


def _is_dask_array(X):
    """Whether ``X`` is a dask array (checked without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "map_blocks")


def _known_chunks(X):
    """``X`` with its chunk sizes computed if any is unknown (NaN).

    A dask array filtered by a boolean mask (``X[X[:, 0] > 0]``) does not know
    its chunk sizes, which rechunking and aligning the labels need; computing
    them costs one pass over the blocks.
    """
    if any(np.isnan(size) for sizes in X.chunks for size in sizes):
        X = X.compute_chunk_sizes()
    return X


def _clean_block_stats(X, labels, scatter):
    """Clean one block and return its sufficient statistics and drop counts.

    Non-finite and near-zero rows are dropped, the rest L2-normalised. Used on the blocks of a dask array, possibly on a remote worker.
    """
    X = np.asarray(X)
    if X.dtype not in _FLOAT_DTYPES:
        X = X.astype(np.float64)
    labels = np.asarray(labels)
    try:
        Z, kept, drops = check_embeddings(X, warn=False)
    except ValueError:  # every row of this block unusable: counted, not fatal
        finite = np.isfinite(X).all(axis=1)
        Z, kept = X[:0], np.zeros(X.shape[0], dtype=bool)
        drops = {
            "non_finite": int((~finite).sum()),
            "low_norm": int(finite.sum()),
        }
    identities, codes = encode_identities(labels[kept])
    drops = {"n_input_rows": int(X.shape[0]), "n_kept_rows": int(kept.sum()), **drops}
    return (*_block_stats(Z, codes, identities, scatter), drops)


class _BaseIdentityEraser(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class: label handling, validation, chunked statistics and tags.

    Subclasses whose fit needs only row sums (ISP, LEACE) build an
    :class:`_IdentityStats` (from a numpy array, the blocks of a dask array, or
    successive ``partial_fit`` chunks) and turn it into their fitted state in
    ``_fit_from_stats``.
    """

    def _validate_fit_data(self, X, y, ids, *, reset=True, min_identities=2):
        labels = _identity_labels(self, y, ids)
        data = validate_identity_data(
            self,
            X,
            labels,
            reset=reset,
            min_samples_per_identity=1,
            min_identities=min_identities,
            dtype=_FLOAT_DTYPES,
        )
        self.drop_report_ = data.drop_report
        self.identities_ = data.identities
        return data

    def _needs_scatter(self):
        return True

    def _collect_stats(self, X, y, ids):
        """Statistics of a full fit: numpy in memory, dask block by block."""
        if _is_dask_array(X):
            stats = self._dask_stats(X, _identity_labels(self, y, ids))
        else:
            data = self._validate_fit_data(X, y, ids)
            stats = _IdentityStats(data.X.shape[1], self._needs_scatter())
            stats.add_data(data)
        if stats.n_identities < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 identities with a usable "
                f"row; got {stats.n_identities}."
            )
        self._stats = stats
        return stats

    def _partial_stats(self, X, y, ids):
        """Add one chunk to the running statistics (``partial_fit``)."""
        first = not hasattr(self, "_stats")
        data = self._validate_fit_data(X, y, ids, reset=first, min_identities=1)
        if first:
            self._stats = _IdentityStats(data.X.shape[1], self._needs_scatter())
        self._stats.add_data(data)
        self.drop_report_ = dict(self._stats.drop_report)
        self.identities_ = self._stats.labels
        return self._stats

    def _dask_stats(self, X, labels):
        # dask is optional: imported only when a dask array is passed.
        import dask
        import dask.array as da

        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array; got {X.ndim} dimension(s).")
        X = _known_chunks(X).rechunk({1: -1})
        if _is_dask_array(labels):
            labels = _known_chunks(labels).rechunk((X.chunks[0],))
        else:
            labels = np.asarray(labels)
            if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
                raise ValueError(
                    f"identity labels have shape {labels.shape}; expected "
                    f"({X.shape[0]},), one label per row of X."
                )
            labels = da.from_array(labels, chunks=(X.chunks[0],))
        if labels.shape[0] != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} rows but {labels.shape[0]} identity labels."
            )
        scatter = self._needs_scatter()
        parts = [
            dask.delayed(_clean_block_stats)(xb, yb, scatter)
            for xb, yb in zip(X.to_delayed().ravel(), labels.to_delayed().ravel())
        ]
        stats = _IdentityStats(X.shape[1], scatter)
        for result in dask.compute(*parts):
            stats.add(*result)
        stats.drop_report.setdefault("excluded_identities", [])
        self.n_features_in_ = int(X.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.drop_report_ = dict(stats.drop_report)
        self.identities_ = stats.labels
        return stats

    def _transform(self, X, apply, *, check_finite=True):
        """Validate ``X`` and apply ``apply``; a dask array gives a lazy dask array."""
        if _is_dask_array(X):
            check_is_fitted(self)
            X = _known_chunks(X)
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has shape {X.shape}; {type(self).__name__} expects "
                    f"(n_samples, {self.n_features_in_})."
                )
            X = X.rechunk({1: -1})
            dtype = X.dtype if X.dtype in _FLOAT_DTYPES else np.dtype(np.float64)
            # Row blocks are independent: each is transformed by the numpy
            # path, on whichever worker holds it.
            return X.map_blocks(self._transform_block, dtype=dtype)
        return apply(self._validate_transform_data(X, check_finite=check_finite))

    def _transform_block(self, X):
        # A block emptied by a mask (X[X[:, 0] > 0]) has no row to transform.
        if X.shape[0] == 0:
            dtype = X.dtype if X.dtype in _FLOAT_DTYPES else np.float64
            return np.empty((0, X.shape[1]), dtype=dtype)
        return self.transform(X)

    def _validate_transform_data(self, X, *, check_finite=True):
        check_is_fitted(self)
        return validate_data(
            self,
            X,
            reset=False,
            dtype=_FLOAT_DTYPES,
            # The fast orthogonal kernel checks for infinity inside its
            # in-cache blocks, saving a full pass over X.
            ensure_all_finite="allow-nan" if check_finite else False,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class _ComponentsEraser(_BaseIdentityEraser):
    """Base class of the erasers that project off the span of ``components_``.

    ``components_`` holds orthonormal rows (ISP, INLP); ``transform`` maps
    ``x`` to ``x - C^T (C x)``, re-normalised when ``renormalize`` is set.
    """

    def _transform_array(self, X, out=None):
        C = self.components_
        return low_rank_update(
            X, C, C, renormalize=self.renormalize, orthogonal=True, out=out
        )
