# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""GaussMech: a Gaussian-mechanism-style ε diagnostic per identity pair."""

from numbers import Real

import numpy as np

from skprivacy._kernels._moments import grouped_moments
from skprivacy.auditors._base import (
    STREAM_RATE,
    BasePairAuditor,
    pair_row_index,
)
from skprivacy.auditors._description import describe_gaussmech
from skprivacy.stats import gauss_mech_epsilon_from_moments
from skprivacy.utils._sklearn import Interval

__all__ = ["GaussMechAuditor"]


def identity_moments(data, pairs=None):
    """Per-identity means and RMS residual scales of an ``IdentityData``.

    Returns ``(slot, means, sigmas)`` for the identities occurring in
    ``pairs`` (every identity when ``pairs`` is None): the moments of
    identity ``code`` are row ``slot[code]`` of ``means`` (shape
    ``(n_used, d)``) and ``sigmas[slot[code]]``. With deferred normalisation
    (``data.norms`` set) the rows are never normalised: the norms are folded
    into the sums (see ``grouped_moments``).
    """
    if pairs is None:
        pairs = np.arange(data.n_identities)
    slot, rows, starts = pair_row_index(data, pairs)
    Xs = data.X if rows is None else data.X[rows]
    norms = None
    if data.norms is not None:
        norms = data.norms if rows is None else data.norms[rows]
    means, sigmas = grouped_moments(Xs, starts, norms)
    return slot, means, sigmas


class GaussMechAuditor(BasePairAuditor):
    r"""Gaussian-mechanism-style ε diagnostic per identity pair (paper 000).

    For each audited pair of identities (A, B), the distance between their mean
    embeddings is read as the sensitivity of a Gaussian mechanism whose noise
    scale is the larger of the two identities' RMS within-identity residual,
    and inverted with the classical Gaussian-mechanism calibration at
    ``delta``.

    **This is a point estimate and a diagnostic, not a differential-privacy
    certificate**: it assumes isotropic Gaussian residuals, which
    :func:`~skprivacy.auditors.residual_gaussianity` typically rejects for face
    embeddings, and the classical calibration is only valid for ε < 1.

    Parameters
    ----------
    delta : float, default=1e-5
        The δ of the Gaussian-mechanism calibration, in (0, 1).
    n_pairs : int or None, default=500
        Number of pairs audited: a prefix of the seeded pair ordering
        (:func:`~skprivacy.utils.identity_pairs`). ``None`` audits every pair.
    n_jobs : int, default=None
        Number of jobs for the pair loop, run through joblib in chunks of
        pairs (so ``joblib.parallel_config(backend="dask")`` works).
        ``None`` means 1 unless in a :obj:`joblib.parallel_config` context.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the pair ordering. Auditors with the same seed audit the same
        pairs.

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per audited pair: ``id_a``, ``id_b``, ``epsilon``,
        ``delta_mean`` (``||mu_A - mu_B||``), ``sigma`` (``max(sigma_A,
        sigma_B)``), ``sigma_a``, ``sigma_b``.
    pairs_ : ndarray of shape (n_pairs_audited, 2)
        Identity codes of the audited pairs (indices into ``identities_``).
    identities_ : ndarray of shape (n_identities,)
        Audited identity labels.
    drop_report_ : dict
        Rows dropped by the input layer, by reason.
    summary_ : float
        Per-pair median of ``epsilon`` (the value of ``score()``).
    summary_kind_ : str
        ``"median"``.
    guarantee_ : str
        ``"point estimate"``.
    pair_details_ : dict
        Empty for this auditor.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

    See Also
    --------
    MMDTVAuditor : A kernel two-sample ε estimate that needs no Gaussianity.
    KDELRAuditor : Per-dimension density-ratio ε diagnostic.
    skprivacy.stats.gauss_mech_epsilon_from_moments : The per-pair computation.

    Notes
    -----
    With L2-normalised embeddings :math:`z`, identity means
    :math:`\hat\mu_{id}` and RMS residual scales
    :math:`\hat\sigma_{id} = \sqrt{\sum_i \lVert z_{id,i} - \hat\mu_{id}
    \rVert^2 / (n_{id} d)}`,

    .. math::

        \varepsilon_G(A, B) = \frac{\lVert \hat\mu_A - \hat\mu_B \rVert_2
        \sqrt{2 \ln(1.25/\delta)}}{\max(\hat\sigma_A, \hat\sigma_B)}.

    Using the larger scale gives the smaller value. Means and scales are
    computed once per identity; the exhaustive audit (``n_pairs=None``) is
    one vectorised pass over the pairs.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import GaussMechAuditor
    >>> X, ids = make_identity_embeddings(6, 20, 32, random_state=0)
    >>> auditor = GaussMechAuditor(n_pairs=None).fit(X, ids)
    >>> auditor.results_.shape
    (15, 7)
    >>> auditor.guarantee_
    'point estimate'
    """

    _summary = "median"
    _guarantee = "point estimate"
    # Moments fold the row norms into one weighted pass (identity_moments).
    _defer_normalization = True

    _parameter_constraints: dict = {
        **BasePairAuditor._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, *, delta=1e-5, n_pairs=500, n_jobs=None, random_state=0):
        self.delta = delta
        self.n_pairs = n_pairs
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _estimate_seconds(self, data, pairs):
        # Moments (a few passes over the used rows) plus a d-vector per pair.
        d = data.X.shape[1]
        return (4.0 * data.X.shape[0] * d + 4.0 * len(pairs) * d) / STREAM_RATE

    def _prepare_audit(self, data, pairs):
        return identity_moments(data, pairs)

    def _audit_pairs(self, data, pairs, context):
        slot, means, sigmas = context.state
        a, b = slot[pairs[:, 0]], slot[pairs[:, 1]]
        delta_mean = np.linalg.norm(means[a] - means[b], axis=1)
        return {
            "epsilon": gauss_mech_epsilon_from_moments(
                delta_mean, sigmas[a], sigmas[b], delta=self.delta
            ),
            "delta_mean": delta_mean,
            "sigma": np.maximum(sigmas[a], sigmas[b]),
            "sigma_a": sigmas[a],
            "sigma_b": sigmas[b],
        }

    @property
    def description_(self):
        """What the fitted audit reports (:class:`~skprivacy.auditors.AuditDescription`)."""
        return describe_gaussmech(self)
