# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic identity embeddings on the unit sphere with known ground truth."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.stats import ortho_group
from sklearn.utils import Bunch

from skprivacy.utils import check_legacy_rng
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, StrOptions, validate_params

__all__ = ["make_identity_embeddings"]


def _sample_noise(rng, distribution, size):
    # Every option has unit variance per coordinate, so `noise` keeps its meaning.
    if distribution == "gaussian":
        return rng.standard_normal(size)
    if distribution == "laplace":
        return rng.laplace(scale=1 / np.sqrt(2), size=size)
    # Student t with 3 degrees of freedom: heavy tails, variance 3 before scaling.
    return rng.standard_t(3, size=size) / np.sqrt(3.0)


@validate_params(
    {
        "n_identities": [Interval(Integral, 1, None, closed="left")],
        "n_samples_per_identity": [Interval(Integral, 1, None, closed="left"), tuple],
        "n_features": [Interval(Integral, 2, None, closed="left")],
        "n_identity_dims": [Interval(Integral, 1, None, closed="left"), None],
        "separation": [Interval(Real, 0, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "noise_distribution": [StrOptions({"gaussian", "laplace", "student_t"})],
        "offset": [Interval(Real, 0, None, closed="left")],
        "n_attribute_classes": [Interval(Integral, 0, None, closed="left")],
        "attribute_strength": [Interval(Real, 0, None, closed="left")],
        "return_X_y": ["boolean"],
        "as_frame": ["boolean"],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def make_identity_embeddings(
    n_identities=100,
    n_samples_per_identity=50,
    n_features=512,
    *,
    n_identity_dims=None,
    separation=1.0,
    noise=0.5,
    noise_distribution="gaussian",
    offset=0.0,
    n_attribute_classes=0,
    attribute_strength=1.0,
    return_X_y=True,
    as_frame=False,
    random_state=None,
):
    """Generate identity-labelled embeddings on the unit sphere with known structure.

    Each row is ``normalize(offset * c + m_id + a_attr + noise * e)``: a shared
    offset direction ``c`` (real face embeddings are not centred), an identity
    mean ``m_id`` in an ``n_identity_dims``-dimensional identity subspace, an
    optional attribute mean ``a_attr`` in an attribute subspace orthogonal to
    the identity subspace, and isotropic within-identity noise ``e``.

    Parameters
    ----------
    n_identities : int, default=100
        Number of identities.
    n_samples_per_identity : int or tuple of (int, int), default=50
        Rows per identity; a tuple ``(low, high)`` draws each identity's count
        uniformly from ``low`` to ``high`` inclusive.
    n_features : int, default=512
        Embedding dimension ``d``.
    n_identity_dims : int or None, default=None
        Dimension ``k`` of the identity subspace; ``None`` means
        ``min(n_identities, n_features // 2)``.
    separation : float, default=1.0
        Root-mean-square norm of the identity means ``m_id`` before
        normalisation: ``E ||m_id||^2 = separation^2``. Larger separation gives
        a larger mean distance between identities.
    noise : float, default=0.5
        Root-mean-square norm of the within-identity noise before
        normalisation: ``E ||noise * e||^2 = noise^2`` (each coordinate has
        variance ``noise^2 / d``). Zero noise puts all rows of an identity on
        one point.
    noise_distribution : {"gaussian", "laplace", "student_t"}, default="gaussian"
        Distribution of the noise coordinates (all scaled to unit variance):
        real L2-normalised residuals are not Gaussian, so heavy-tailed options
        exercise the non-Gaussian case (``student_t`` has 3 degrees of freedom).
    offset : float, default=0.0
        Norm of a shared offset direction added to every row (orthogonal to
        the identity and attribute subspaces).
    n_attribute_classes : int, default=0
        If positive, every row also gets a non-identity attribute label drawn
        uniformly from ``n_attribute_classes`` classes, independent of the
        identity, whose class means live in an attribute subspace of dimension
        ``n_attribute_classes`` orthogonal to the identity subspace.
    attribute_strength : float, default=1.0
        Norm of each attribute class mean before normalisation.
    return_X_y : bool, default=True
        If True return ``(X, ids)`` (or ``(X, ids, attribute)`` with
        attributes); otherwise a :class:`~sklearn.utils.Bunch`.
    as_frame : bool, default=False
        If True, ``X`` is a DataFrame with columns ``e0 .. e{d-1}`` and the
        labels are Series.
    random_state : int, RandomState instance, Generator or None, default=None
        Seed for reproducible output.

    Returns
    -------
    X : ndarray or DataFrame of shape (n_samples, n_features)
        Unit-norm rows, grouped by identity.
    ids : ndarray or Series of shape (n_samples,)
        Identity labels ``0 .. n_identities - 1``.
    attribute : ndarray or Series of shape (n_samples,)
        Attribute labels; returned only if ``n_attribute_classes > 0``.
    data : Bunch
        If ``return_X_y=False``: ``data``, ``identity``, ``attribute`` (or
        None), and the ground truth ``identity_basis`` (d x k, orthonormal
        columns), ``attribute_basis`` (d x n_attribute_classes or None),
        ``identity_means`` (n_identities x d, before normalisation),
        ``attribute_means`` and ``offset_direction``.

    Notes
    -----
    Ground truth given by the knobs:

    * rows have unit L2 norm;
    * identity means are ``separation * U g_id / sqrt(k)`` with
      ``g_id ~ N(0, I_k)`` and ``U = identity_basis``, so the identity signal
      spans at most ``k`` dimensions and its strength grows with
      ``separation``;
    * ``attribute_basis`` is exactly orthogonal to ``identity_basis`` (and to
      the offset direction), so projecting out the identity subspace leaves
      the attribute signal intact before normalisation;
    * with ``separation=0`` all identities share one distribution (an
      epsilon = 0 mechanism for the auditors).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> X, ids = make_identity_embeddings(5, 4, 16, random_state=0)
    >>> X.shape, ids[:6]
    ((20, 16), array([0, 0, 0, 0, 1, 1]))
    """
    rng = check_legacy_rng(random_state)
    d = n_features
    k = min(n_identities, d // 2) if n_identity_dims is None else n_identity_dims
    n_attr = n_attribute_classes
    if k + n_attr + (1 if offset > 0 else 0) > d:
        raise ValueError(
            f"n_identity_dims ({k}) + n_attribute_classes ({n_attr}) + offset "
            f"direction must fit in n_features ({d})."
        )
    if isinstance(n_samples_per_identity, tuple):
        low, high = n_samples_per_identity
        if not 1 <= low <= high:
            raise ValueError(
                "n_samples_per_identity=(low, high) needs 1 <= low <= high; "
                f"got {n_samples_per_identity}."
            )
        counts = rng.randint(low, high + 1, size=n_identities)
    else:
        counts = np.full(n_identities, n_samples_per_identity)

    basis = ortho_group.rvs(d, random_state=rng)
    identity_basis = basis[:, :k]
    attribute_basis = basis[:, k : k + n_attr] if n_attr else None
    offset_direction = basis[:, k + n_attr] if offset > 0 else np.zeros(d)

    identity_means = separation * rng.standard_normal((n_identities, k)) / np.sqrt(k)
    identity_means = identity_means @ identity_basis.T
    ids = np.repeat(np.arange(n_identities), counts)
    n = ids.shape[0]
    X = identity_means[ids] + offset * offset_direction
    attribute = attribute_means = None
    if n_attr:
        attribute = rng.randint(n_attr, size=n)
        attribute_means = attribute_strength * attribute_basis.T
        X += attribute_means[attribute]
    X += noise * _sample_noise(rng, noise_distribution, (n, d)) / np.sqrt(d)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X /= np.where(norms > 0, norms, 1.0)

    if as_frame:
        X = pd.DataFrame(X, columns=[f"e{j}" for j in range(d)])
        ids = pd.Series(ids, name="identity")
        if attribute is not None:
            attribute = pd.Series(attribute, name="attribute")
    if return_X_y:
        return (X, ids) if attribute is None else (X, ids, attribute)
    return Bunch(
        data=X,
        identity=ids,
        attribute=attribute,
        identity_basis=identity_basis,
        attribute_basis=attribute_basis,
        identity_means=identity_means,
        attribute_means=attribute_means,
        offset_direction=offset_direction,
    )
