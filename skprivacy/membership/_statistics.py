# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-identity hyperspherical membership statistics (paper 001).

Every statistic is a function of one identity's ``k >= 2`` L2-normalised
embeddings (and, for ProtoCE, of the prototypes of all identities in the data).
All of them are computed from *segment sums*: the per-identity sum
``S_y = sum_i e_i`` (one sparse indicator matrix product over all rows) and the
per-row dot products ``e_i . S_y``. No Python loop runs over embeddings or
identities; ProtoCE, whose cost is one ``n_samples x n_identities`` Gram block,
is computed in row blocks so memory stays bounded.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator

from skprivacy.utils import (
    check_identity_labels,
    validate_identity_data,
)
from skprivacy.utils._identity import identity_sums
from skprivacy.utils._random import check_generator
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, StrOptions, validate_params

__all__ = [
    "HEADS",
    "STATISTICS",
    "MagFaceHead",
    "membership_statistics",
    "pair_cos",
    "penalised_logit",
    "prototype_ce",
    "vmf_kappa",
]

#: Names of the four statistics, in the order of the paper (and of the columns
#: of :func:`membership_statistics`). Higher values are member-like for all four.
STATISTICS = ("pair_cos", "vmf_kappa", "penalised_logit", "prototype_ce")

# Working dtypes of the statistics: float32 input stays float32 (Gram
# blocks of ProtoCE in float32, sums accumulated in float64); anything else is
# converted to float64.
_WORKING_DTYPES = [np.float64, np.float32]

# Largest ProtoCE logit block (query rows x prototypes) in bytes.
_BLOCK_BYTES = 64 * 2**20

#: Named margin heads ``g(cos theta, m)``; ``"magface"`` is magnitude-aware
#: (its margin is a function of each probe's feature norm, see
#: :class:`MagFaceHead`).
HEADS = ("arcface", "cosface", "sphereface", "magface")

_HEAD_PARAMS = {
    "head": [StrOptions(set(HEADS)), callable],
    "scale": [Interval(Real, 0, None, closed="neither")],
    "margin": [Interval(Real, None, None, closed="neither")],
    "keep_norms": ["boolean"],
}


# ----------------------------------------------------------------------------
# Margin heads
# ----------------------------------------------------------------------------
class MagFaceHead:
    r"""MagFace's magnitude-aware ArcFace head (Meng et al., CVPR 2021).

    MagFace trains with an additive angular margin that grows with the
    feature norm :math:`a = \lVert x\rVert` of the (unnormalised) embedding,
    so its loss cannot be evaluated on L2-normalised rows alone. For a probe
    of norm :math:`a` the penalised own-class cosine is

    .. math::
        g(\cos\theta, a) = \cos(\theta + m(a)),\qquad
        m(a) = \frac{u_m - l_m}{u_a - l_a}\,(\operatorname{clip}(a, l_a, u_a)
        - l_a) + l_m,

    the linear margin function of the paper, with the norm clipped to
    :math:`[l_a, u_a]` as in its reference implementation. Use it as
    ``head="magface"`` (these published defaults) or pass an instance with
    other bounds as ``head``, together with ``keep_norms=True`` and the
    *unnormalised* embeddings, in :func:`penalised_logit`,
    :func:`prototype_ce`, :func:`membership_statistics` or
    :class:`~skprivacy.membership.MembershipGeometry`.

    Parameters
    ----------
    lower_norm : float, default=10.0
        :math:`l_a`, the norm at which the margin is smallest.
    upper_norm : float, default=110.0
        :math:`u_a`, the norm at which the margin is largest.
    lower_margin : float, default=0.45
        :math:`l_m = m(l_a)`, in radians.
    upper_margin : float, default=0.8
        :math:`u_m = m(u_a)`, in radians.

    Attributes
    ----------
    uses_norms : bool
        Always True: the head is called as ``head(cos, margin, norms)``; the
        ``margin`` argument (the estimator's ``margin``) is ignored.

    See Also
    --------
    apply_head : Evaluate any head.

    Notes
    -----
    As the other heads here, the angular margin is *plain*:
    :math:`\cos(\theta + m)` without the easy-margin fallback of the
    reference code for :math:`\theta + m > \pi`. MagFace's regulariser
    :math:`\lambda_g g(a)` with :math:`g(a) = 1/a + a/u_a^2` depends on the
    norm only, not on the cluster geometry, and is not part of PenLogit or
    ProtoCE. The defaults are those of the paper's released models
    (iResNet on MS1MV2: :math:`l_a = 10`, :math:`u_a = 110`,
    :math:`l_m = 0.45`, :math:`u_m = 0.8`, :math:`s = 64`).

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import MagFaceHead
    >>> head = MagFaceHead()
    >>> head.margin(np.array([5.0, 60.0, 200.0]))  # clipped to [10, 110]
    array([0.45 , 0.625, 0.8  ])
    >>> float(head(np.cos(0.5), None, np.array(60.0)))  # cos(0.5 + 0.625)
    0.4311...
    """

    uses_norms = True

    def __init__(
        self, lower_norm=10.0, upper_norm=110.0, lower_margin=0.45, upper_margin=0.8
    ):
        for name, value in (
            ("lower_norm", lower_norm),
            ("upper_norm", upper_norm),
            ("lower_margin", lower_margin),
            ("upper_margin", upper_margin),
        ):
            if not isinstance(value, Real) or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite number; got {value!r}.")
        if not 0 <= lower_norm < upper_norm:
            raise ValueError(
                "MagFaceHead needs 0 <= lower_norm < upper_norm; got "
                f"lower_norm={lower_norm!r}, upper_norm={upper_norm!r}."
            )
        self.lower_norm = float(lower_norm)
        self.upper_norm = float(upper_norm)
        self.lower_margin = float(lower_margin)
        self.upper_margin = float(upper_margin)

    def margin(self, norms):
        r"""Return the margin :math:`m(a)` of each feature norm.

        Parameters
        ----------
        norms : array-like
            Feature norms :math:`\lVert x\rVert` of the unnormalised
            embeddings.

        Returns
        -------
        margin : ndarray
            :math:`m(\operatorname{clip}(a, l_a, u_a))`, same shape as
            ``norms``.
        """
        norms = np.asarray(norms, dtype=np.float64)
        if np.isnan(norms).any():
            raise ValueError(
                f"norms has {int(np.isnan(norms).sum())} NaN value(s); every probe "
                "needs its feature norm."
            )
        a = np.clip(norms, self.lower_norm, self.upper_norm)
        slope = (self.upper_margin - self.lower_margin) / (
            self.upper_norm - self.lower_norm
        )
        return slope * (a - self.lower_norm) + self.lower_margin

    def __call__(self, cos, margin, norms):
        r"""Return :math:`\cos(\theta + m(a))`; ``margin`` is ignored."""
        theta = np.arccos(np.clip(np.asarray(cos, dtype=np.float64), -1.0, 1.0))
        return np.cos(theta + self.margin(norms))

    def __repr__(self):
        return (
            f"MagFaceHead(lower_norm={self.lower_norm:g}, upper_norm="
            f"{self.upper_norm:g}, lower_margin={self.lower_margin:g}, "
            f"upper_margin={self.upper_margin:g})"
        )

    def __eq__(self, other):
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self):
        return hash((type(self), tuple(sorted(vars(self).items()))))


def _resolve_head(head):
    return MagFaceHead() if isinstance(head, str) and head == "magface" else head


def _uses_norms(head):
    return bool(getattr(_resolve_head(head), "uses_norms", False))


def apply_head(head, cos, margin, norms=None):
    """Return the head-specific penalised cosine ``g(cos theta, m)``.

    Parameters
    ----------
    head : {"arcface", "cosface", "sphereface", "magface"} or callable
        ``"arcface"``: ``cos(theta + m)``, *plain* (no easy-margin fallback when
        ``theta + m > pi``); ``"cosface"``: ``cos(theta) - m``;
        ``"sphereface"``: ``cos(m * theta)`` (``m`` multiplicative, e.g. 4 in
        the original SphereFace); ``"magface"``: ``cos(theta + m(||x||))``
        with MagFace's margin function of the feature norm
        (:class:`MagFaceHead` with its published defaults; ``margin`` is
        ignored). A callable is called as ``head(cos, margin)`` with an
        ndarray and must return an array of the same shape; a callable with
        a true attribute ``uses_norms`` (e.g. a :class:`MagFaceHead`) is
        called as ``head(cos, margin, norms)``.
    cos : ndarray
        Cosines, clipped to ``[-1, 1]`` before taking ``arccos``.
    margin : float
        The margin ``m``.
    norms : ndarray, default=None
        Feature norms of the probes the cosines belong to (same shape as
        ``cos``); required by magnitude-aware heads, ignored by the others.

    Returns
    -------
    g : ndarray
        Penalised cosines, same shape as ``cos``.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import apply_head
    >>> c = np.cos(np.pi / 3)  # theta = 60 degrees
    >>> heads = ["arcface", "cosface", "sphereface"]
    >>> [round(float(apply_head(h, c, m)), 6) for h, m in zip(heads, [np.pi / 6, 0.25, 2])]
    [0.0, 0.25, -0.5]
    >>> # MagFace, norm 110: margin 0.8
    >>> round(float(apply_head("magface", c, None, norms=110.0)), 6)
    -0.272895
    """
    cos = np.asarray(cos, dtype=np.float64)
    if not np.all(np.isfinite(cos)):
        bad = np.flatnonzero(~np.isfinite(cos.ravel()))
        raise ValueError(
            f"cos has {bad.size} non-finite value(s) (NaN or infinity) at flat "
            f"position(s) {bad[:5].tolist()}; a head needs finite cosines."
        )
    head = _resolve_head(head)
    if callable(head):
        if getattr(head, "uses_norms", False):
            if norms is None:
                raise ValueError(
                    f"The head {head!r} is magnitude-aware: its margin depends on "
                    "each probe's feature norm. Pass the unnormalised embeddings "
                    "with keep_norms=True."
                )
            g = head(cos, margin, np.broadcast_to(norms, cos.shape))
        else:
            g = head(cos, margin)
        g = np.asarray(g, dtype=np.float64)
        if g.shape != cos.shape:
            raise ValueError(
                "A callable head must return an array of the same shape as its "
                f"cosine input {cos.shape}; got shape {g.shape}."
            )
        return g
    if head == "cosface":
        return cos - margin
    theta = np.arccos(np.clip(cos, -1.0, 1.0))
    if head == "arcface":
        return np.cos(theta + margin)
    if head == "sphereface":
        return np.cos(margin * theta)
    raise ValueError(
        f"Unknown head {head!r}; expected one of {HEADS} or a callable g(cos, m)."
    )


# ----------------------------------------------------------------------------
# Shared preparation: clean, group, segment sums
# ----------------------------------------------------------------------------
class _Segments:
    """Cleaned rows with their identity codes and the segment sums.

    Attributes: ``Z`` (n, d) unit rows, ``codes`` (n,), ``identities`` (G,),
    ``k`` (G,), ``S`` (G, d) per-identity sums, ``S2`` (G,) squared norms of
    ``S``, ``sq`` (G,) per-identity sum of squared row norms (= k up to
    rounding), ``eS`` (n,) the dot products ``e_i . S_{y_i}``, ``norms``
    (n,) the rows' norms before L2 normalisation, or None when not kept.
    """

    def subset(self, keep):
        """Return the same identities on the rows ``keep`` (sorted indices)."""
        norms = None if self.norms is None else self.norms[keep]
        return _Segments(
            self.Z[keep], self.codes[keep], self.identities, self.drop_report, norms
        )

    def __init__(self, Z, codes, identities, drop_report, norms=None):
        self.Z = Z
        self.norms = norms  # input row norms, kept for magnitude-aware heads
        self.codes = codes
        self.identities = identities
        self.drop_report = drop_report
        n, d = Z.shape
        G = len(identities)
        self.k = np.bincount(codes, minlength=G).astype(np.float64)
        # Sums accumulate in float64 whatever the dtype of Z (a float32 input
        # keeps float32 rows); they are linear in the data, so this costs little.
        self.S = _identity_sums64(Z, codes, G)
        self.S2 = np.einsum("ij,ij->i", self.S, self.S)
        self.sq = np.bincount(
            codes, weights=np.einsum("ij,ij->i", Z, Z, dtype=np.float64), minlength=G
        )
        self.eS = _rowwise_dot(Z, self.S, codes)

    @property
    def n_features(self):
        return self.Z.shape[1]


def _matched_rows(codes, n_groups, k_target, random_state):
    """Return a seeded subsample of row indices, at most ``k_target`` per group.

    Each row gets a uniform random key; within each group the ``k_target``
    rows with the smallest keys are kept (a uniform subsample without
    replacement), groups with fewer rows keep all of them. Returned sorted,
    so the kept rows stay in input order.
    """
    rng = check_generator(random_state)
    keys = rng.random(codes.shape[0])
    order = np.lexsort((keys, codes))
    starts = np.searchsorted(codes[order], np.arange(n_groups))
    position = np.arange(codes.shape[0]) - starts[codes[order]]
    return np.sort(order[position < k_target])


def _identity_sums64(Z, codes, n_groups, block=65536):
    # float64 per-identity sums; a float32 Z is converted one row block at a
    # time so that no float64 copy of the whole matrix is made.
    if Z.dtype == np.float64 or Z.shape[0] <= block:
        return identity_sums(Z, codes, n_groups, dtype=np.float64)
    S = np.zeros((n_groups, Z.shape[1]))
    for start in range(0, Z.shape[0], block):
        sl = slice(start, start + block)
        S += identity_sums(Z[sl], codes[sl], n_groups, dtype=np.float64)
    return S


def _rowwise_dot(Z, S, codes, block=8192):
    # e_i . S_{y_i} without materialising S[codes] (n x d) all at once.
    out = np.empty(Z.shape[0], dtype=np.float64)
    for start in range(0, Z.shape[0], block):
        sl = slice(start, start + block)
        out[sl] = np.einsum("ij,ij->i", Z[sl], S[codes[sl]], dtype=np.float64)
    return out


class _Caller(BaseEstimator):
    """Stand-in estimator carrying validate_data's bookkeeping for a function."""


def _segments(data, *, keep_norms, head):
    """``_Segments`` of validated data; unit rows, norms kept on request.

    ``data`` comes from ``validate_identity_data(..., normalize="defer" if
    keep_norms else True)``: with ``keep_norms`` its rows are the cleaned input
    rows with their norms, L2-normalised here.
    """
    if not keep_norms:
        if _uses_norms(head):
            raise ValueError(
                f"The head {_resolve_head(head)!r} is magnitude-aware: its margin "
                "depends on each probe's feature norm, which L2 normalisation "
                "discards. Pass the unnormalised embeddings with keep_norms=True."
            )
        return _Segments(data.X, data.codes, data.identities, data.drop_report)
    norms = data.norms
    if _uses_norms(head) and np.allclose(norms, 1.0, rtol=0, atol=1e-3):
        warnings.warn(
            "keep_norms=True but every embedding has norm 1: they look "
            "L2-normalised already, so the magnitude-aware head sees one norm "
            "for all probes (MagFace: the constant margin of its lower norm "
            "bound). Pass the model's unnormalised features.",
            UserWarning,
            stacklevel=3,
        )
    Z = data.normalized_rows()
    return _Segments(Z, data.codes, data.identities, data.drop_report, norms)


def _prepare(X, ids, *, caller, keep_norms=False, head=None):
    """Validate ``(X, ids)``, drop unusable rows and identities with k < 2.

    The shared input layer (:func:`~skprivacy.utils.validate_identity_data`):
    the same cleaning, label rule, warnings and drop report as the estimators.
    """
    ids = check_identity_labels(ids, name="ids")
    data = validate_identity_data(
        _Caller(),
        X,
        ids,
        min_samples_per_identity=2,
        min_identities=0,
        normalize="defer" if keep_norms else True,
        dtype=_WORKING_DTYPES,
        y_name="ids",
    )
    if data.n_identities == 0:
        raise ValueError(
            f"{caller}: no identity has at least 2 usable rows; nothing to compute."
        )
    return _segments(data, keep_norms=keep_norms, head=head)


def _series(values, seg, name):
    index = pd.Index(seg.identities, name="identity")
    return pd.Series(values, index=index, name=name)


# ----------------------------------------------------------------------------
# The four statistics, from segment sums
# ----------------------------------------------------------------------------
def _pair_cos(seg):
    # sum_{i != j} e_i . e_j = ||S||^2 - sum_i ||e_i||^2, over k (k - 1) ordered pairs.
    k = seg.k
    return (seg.S2 - seg.sq) / (k * (k - 1.0))


def _vmf_kappa(seg):
    d = seg.n_features
    R = np.sqrt(seg.S2) / seg.k
    R2 = R * R
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = R * (d - R2) / (1.0 - R2)
    # R = 1 (all probes identical) is the limit kappa -> +inf, not 0/0.
    kappa[R2 >= 1.0] = np.inf
    return kappa


def _loo_cos(seg):
    # cos angle(e_i, S - e_i) = (e_i.S - ||e_i||^2) / ||S - e_i||,
    # ||S - e_i||^2 = ||S||^2 - 2 e_i.S + ||e_i||^2.
    c = seg.codes
    e2 = np.einsum("ij,ij->i", seg.Z, seg.Z, dtype=np.float64)
    num = seg.eS - e2
    den2 = seg.S2[c] - 2.0 * seg.eS + e2
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = num / np.sqrt(np.maximum(den2, 0.0))
    cos[den2 <= 0.0] = np.nan  # the other k - 1 probes sum to zero: no prototype
    return np.clip(cos, -1.0, 1.0)


def _head_values(head, cos, margin, norms):
    # apply_head on the defined cosines; NaN where there is no prototype (the
    # other probes of the identity sum to zero), which apply_head refuses.
    ok = ~np.isnan(cos)
    if ok.all():
        return apply_head(head, cos, margin, norms=norms)
    out = np.full(cos.shape, np.nan)
    out[ok] = apply_head(
        head, cos[ok], margin, norms=None if norms is None else norms[ok]
    )
    return out


def _penalised_logit(seg, head, scale, margin):
    ell = scale * _head_values(head, _loo_cos(seg), margin, seg.norms)
    return np.bincount(seg.codes, weights=ell, minlength=len(seg.k)) / seg.k


def _own_cos(seg, leave_one_out):
    if leave_one_out:
        return _loo_cos(seg)
    return seg.eS / np.sqrt(seg.S2[seg.codes])


def _no_shift_safe(scale, n_columns, dtype):
    """Whether ``sum_j exp(s cos theta_j)`` is safe without a max-shift.

    With ``|s cos| <= s`` no term overflows or leaves the normal range, and
    the sum of ``n_columns`` terms stays finite, when ``s + log(n_columns)``
    is below the log of the largest finite value and ``s`` below minus the
    log of the smallest normal one (float64: s <= ~700; float32: s <= ~79 for
    10,000 identities). Then the two extra passes of a generic logsumexp
    (max, subtract) are not needed.
    """
    info = np.finfo(dtype)
    return scale + np.log(max(n_columns, 1)) <= np.log(info.max) - 1.0 and (
        scale <= -np.log(info.tiny) - 1.0
    )


def _proto_block(Zb, cb, Ws, s_own, scale, neg_weight):
    # log sum_{j != y} exp(s cos theta_j) for a block of queries; Ws = s * W,
    # in the dtype of Zb: a float32 audit runs its Gram block, exponentials
    # and row sums (numpy's pairwise summation) in float32, and only the
    # per-row results in float64.
    logits = Zb @ Ws.T
    if neg_weight is None:
        logits[np.arange(Zb.shape[0]), cb] = -np.inf
        log_w = 0.0
    else:
        cols, log_w = neg_weight
        own = cols[None, :] == cb[:, None]
        logits[own] = -np.inf
        # Rescale the sampled sum to the full negative set (unbiased for the sum).
        log_w = log_w[cb]
    if _no_shift_safe(scale, logits.shape[1], logits.dtype):
        np.exp(logits, out=logits)
        lse = np.log(logits.sum(axis=1).astype(np.float64)) + log_w
    else:
        mx = logits.max(axis=1)
        np.subtract(logits, mx[:, None], out=logits)
        np.exp(logits, out=logits)
        lse = mx.astype(np.float64) + np.log(logits.sum(axis=1).astype(np.float64))
        lse += log_w
    # -L = s g - log(e^{s g} + e^{lse}) = -log(1 + e^{lse - s g}); NaN where
    # the own prototype is undefined.
    with np.errstate(invalid="ignore"):
        return -np.logaddexp(0.0, lse - s_own)


def _prototype_ce(
    seg,
    head,
    scale,
    margin,
    leave_one_out=False,
    n_negatives=None,
    random_state=None,
    batch_size="auto",
    n_jobs=None,
):
    G = len(seg.k)
    if G == 1:
        # No other identity, no negatives: -L = -log(1) = 0 for every query.
        return np.zeros(1)
    # An identity whose probes sum to zero has no prototype direction: it is
    # nobody's negative (a zero or NaN row would add exp(0) or NaN to every
    # query's sum) and its own value, without leave_one_out, is NaN.
    alive = seg.S2 > 0.0
    n_alive = int(alive.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        s_own = scale * _head_values(
            head, _own_cos(seg, leave_one_out), margin, seg.norms
        )
        # Scaled prototypes s * w_j, from the float64 sums, in the rows' dtype.
        W = (seg.S * (scale / np.sqrt(seg.S2))[:, None]).astype(seg.Z.dtype, copy=False)
    neg_weight = None
    if n_negatives is not None and n_negatives < n_alive - 1:
        rng = check_generator(random_state)
        candidates = np.flatnonzero(alive)
        cols = np.sort(rng.choice(candidates, size=n_negatives, replace=False))
        in_sample = np.zeros(G, dtype=bool)
        in_sample[cols] = True
        # Identity y sees n_negatives (or n_negatives - 1 if y was sampled) of
        # its n_alive - 1 negatives (n_alive if y has no prototype).
        n_seen = n_negatives - in_sample.astype(np.float64)
        neg_weight = (cols, np.log((n_alive - alive) / n_seen))
        W = W[cols]
    elif n_alive < G:
        cols = np.flatnonzero(alive)
        neg_weight = (cols, np.zeros(G))
        W = W[cols]
    n = seg.Z.shape[0]
    if batch_size == "auto":
        # Logit blocks of at most _BLOCK_BYTES whatever the number of
        # identities (2048 float32 rows at 4,000 identities, 1,600 at 10,000).
        per_row = W.shape[0] * W.dtype.itemsize
        batch_size = int(min(2048, max(16, _BLOCK_BYTES // max(per_row, 1))))
    starts = range(0, n, batch_size)
    parts = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_proto_block)(
            seg.Z[b : b + batch_size],
            seg.codes[b : b + batch_size],
            W,
            s_own[b : b + batch_size],
            scale,
            neg_weight,
        )
        for b in starts
    )
    neg_ce = np.concatenate(parts) if parts else np.empty(0)
    return np.bincount(seg.codes, weights=neg_ce, minlength=G) / seg.k


# ----------------------------------------------------------------------------
# Public functions
# ----------------------------------------------------------------------------
@validate_params(
    {"X": ["array-like"], "ids": ["array-like"]}, prefer_skip_nested_validation=True
)
def pair_cos(X, ids):
    r"""Mean pairwise cosine similarity of each identity's embeddings (PairCos).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings. Rows that are non-finite or have L2 norm <= 1e-6 are
        dropped (with a warning); the rest are L2-normalised.
    ids : array-like of shape (n_samples,)
        Identity label of each row. Identities with fewer than 2 usable rows
        are excluded (with a warning).

    Returns
    -------
    pair_cos : pandas.Series
        One value per identity (index ``"identity"``), higher = more coherent
        cluster (member-like). A point estimate for the observed probes.

    Notes
    -----
    :math:`\bar s = \binom{k}{2}^{-1}\sum_{i<j}\cos(e_i, e_j)`, computed as
    :math:`(\lVert S\rVert^2 - \sum_i\lVert e_i\rVert^2)/(k(k-1))` with the
    segment sum :math:`S = \sum_i e_i`, i.e. without forming any pair.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import pair_cos
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    >>> pair_cos(X, ["a", "a", "b", "b"])
    identity
    a    0.0
    b    1.0
    Name: pair_cos, dtype: float64
    """
    seg = _prepare(X, ids, caller="pair_cos")
    return _series(_pair_cos(seg), seg, "pair_cos")


@validate_params(
    {"X": ["array-like"], "ids": ["array-like"]}, prefer_skip_nested_validation=True
)
def vmf_kappa(X, ids):
    r"""Von Mises-Fisher concentration of each identity (Banerjee closed form).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (cleaned and L2-normalised as in :func:`pair_cos`). The
        dimension ``d`` of the formula is ``n_features``.
    ids : array-like of shape (n_samples,)
        Identity label of each row.

    Returns
    -------
    vmf_kappa : pandas.Series
        :math:`\hat\kappa` per identity, higher = more concentrated
        (member-like); ``inf`` when all probes coincide (:math:`\bar R = 1`).
        A point estimate (the Banerjee et al. 2005 approximation to the
        maximum-likelihood :math:`\kappa`).

    Notes
    -----
    :math:`\hat\kappa = \bar R (d - \bar R^2) / (1 - \bar R^2)` with the mean
    resultant length :math:`\bar R = \lVert \frac1k \sum_i e_i \rVert`. We do
    not call ``scipy.stats.vonmises_fisher.fit``: it returns
    :math:`\kappa \approx 10^{-8}` for 512-dimensional face embeddings. Note
    that for a fixed ``k`` the statistic is a monotone function of
    :math:`\bar R`, hence of PairCos: both give the same AUC when every
    identity has the same number of probes.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import vmf_kappa
    >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # R = 1/sqrt(2)
    >>> float(vmf_kappa(X, [0, 0]).iloc[0])  # (1/sqrt 2)(3 - 1/2)/(1 - 1/2)
    3.5355...
    """
    seg = _prepare(X, ids, caller="vmf_kappa")
    return _series(_vmf_kappa(seg), seg, "vmf_kappa")


@validate_params(
    {"X": ["array-like"], "ids": ["array-like"], **_HEAD_PARAMS},
    prefer_skip_nested_validation=True,
)
def penalised_logit(
    X, ids, *, head="arcface", scale=64.0, margin=0.5, keep_norms=False
):
    r"""Leave-one-out margin-penalised logit of each identity (PenLogit).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (cleaned and L2-normalised as in :func:`pair_cos`).
    ids : array-like of shape (n_samples,)
        Identity label of each row.
    head : str or callable, default="arcface"
        Penalisation ``g(cos theta, m)``: ``"arcface"`` is ``cos(theta + m)``
        (plain, without insightface's easy-margin fallback for
        ``theta + m > pi``), ``"cosface"`` is ``cos(theta) - m``,
        ``"sphereface"`` is ``cos(m theta)`` (``m`` multiplicative, e.g. 4),
        ``"magface"`` is ``cos(theta + m(||x||))`` with MagFace's margin
        function of the probe's feature norm (:class:`MagFaceHead`; needs
        ``keep_norms=True``, ignores ``margin``). A callable is called as
        ``head(cos, margin)`` on an ndarray (``head(cos, margin, norms)`` if
        it has a true ``uses_norms`` attribute).
    scale : float, default=64.0
        Loss scale ``s``.
    margin : float, default=0.5
        Margin ``m``.
    keep_norms : bool, default=False
        Keep each row's L2 norm (before normalisation) for a magnitude-aware
        head (``head="magface"`` or a :class:`MagFaceHead`); pass the model's
        *unnormalised* features then. The statistics still use the normalised
        rows; the norms only set each probe's margin. A magnitude-aware head
        without it is an error (normalised rows have no norm left).

    Returns
    -------
    penalised_logit : pandas.Series
        :math:`\bar\ell` per identity, higher = member-like. A point estimate.

    Notes
    -----
    :math:`\ell_i = s\,g(\cos\angle(e_i, \hat w_{\setminus i}), m)`,
    :math:`\bar\ell = \frac1k\sum_i \ell_i`, with :math:`\hat w_{\setminus i}`
    the normalised mean of the other :math:`k - 1` probes. The leave-one-out
    cosine is :math:`(e_i\cdot S - 1)/\lVert S - e_i\rVert` with
    :math:`\lVert S - e_i\rVert^2 = \lVert S\rVert^2 - 2 e_i\cdot S + 1`, so it
    needs only the segment sum :math:`S` and one dot product per row.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import penalised_logit
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])  # 90 degrees apart
    >>> float(penalised_logit(X, [0, 0], head="cosface", scale=1.0, margin=0.25).iloc[0])
    -0.25
    """
    seg = _prepare(X, ids, caller="penalised_logit", keep_norms=keep_norms, head=head)
    return _series(_penalised_logit(seg, head, scale, margin), seg, "penalised_logit")


@validate_params(
    {
        "X": ["array-like"],
        "ids": ["array-like"],
        **_HEAD_PARAMS,
        "leave_one_out": ["boolean"],
        "n_negatives": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": RANDOM_STATE,
        "batch_size": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def prototype_ce(
    X,
    ids,
    *,
    head="arcface",
    scale=64.0,
    margin=0.5,
    leave_one_out=False,
    n_negatives=None,
    random_state=None,
    batch_size="auto",
    n_jobs=None,
    keep_norms=False,
):
    r"""Negative prototype softmax cross-entropy of each identity (ProtoCE).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (cleaned and L2-normalised as in :func:`pair_cos`).
    ids : array-like of shape (n_samples,)
        Identity label of each row. The prototypes of **all** identities in
        ``X`` (with at least 2 usable rows) are the negatives, so the value of
        an identity depends on which other identities are audited with it.
    head : str or callable, default="arcface"
        Penalisation of the own-class logit (see :func:`penalised_logit`).
    scale : float, default=64.0
        Loss scale ``s``.
    margin : float, default=0.5
        Margin ``m``.
    leave_one_out : bool, default=False
        If False (the paper's definition), the query embedding is part of its
        own prototype :math:`\hat w_y = \mu_y/\lVert\mu_y\rVert`, as a trained
        class weight has seen its training samples; this inflates
        :math:`\cos\theta_y` by a self-similarity term of order ``1/k``. If
        True, the own prototype of query ``e_i`` is the normalised mean of the
        *other* ``k - 1`` probes (as in PenLogit); negatives always use all
        probes of their identity.
    n_negatives : int, default=None
        None (default) uses every other identity as a negative: exact, cost
        ``O(n_samples x n_identities x n_features)``. An int uses one seeded
        random subset of that many prototypes for all queries and rescales
        the sampled sum to the full negative count (unbiased for the sum
        inside the log, *approximate* for the statistic); for very large
        audits only. An identity whose probes sum to zero has no prototype:
        it is no one's negative, and its own value is NaN unless
        ``leave_one_out``.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the negative subset when ``n_negatives`` is set.
    batch_size : int or "auto", default="auto"
        Query rows per Gram block (memory ``batch_size x n_identities``
        values per block and thread). ``"auto"``: at most 2,048 rows and at
        most 64 MiB of logits per block, so memory stays bounded however
        many identities are audited.
    n_jobs : int, default=None
        Blocks processed in parallel threads through joblib.
    keep_norms : bool, default=False
        Keep each row's L2 norm (before normalisation) for a magnitude-aware
        head (``head="magface"`` or a :class:`MagFaceHead`); pass the model's
        *unnormalised* features then. The statistics still use the normalised
        rows; the norms only set each probe's margin. A magnitude-aware head
        without it is an error (normalised rows have no norm left).

    Returns
    -------
    prototype_ce : pandas.Series
        :math:`-\bar{\mathcal L}_y` per identity (the negated loss, averaged
        over the identity's probes), higher = member-like; always <= 0. A
        point estimate.

    Notes
    -----
    For query :math:`e_i` of identity :math:`y`, with
    :math:`\cos\theta_j = e_i\cdot\hat w_j`,

    .. math::
        -\mathcal L_i = -\log\bigl(1 + \textstyle\sum_{j\ne y}
        e^{s\cos\theta_j - s\,g(\cos\theta_y, m)}\bigr),

    evaluated as ``-logaddexp(0, logsumexp_j(s cos theta_j) - s g)`` so that
    values near 0 (well-separated identities) keep full relative precision.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import prototype_ce
    >>> X = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.6, 0.8]])
    >>> prototype_ce(X, [0, 0, 1, 1], scale=4.0, margin=0.1).round(4)
    identity
    0   -0.3085
    1   -0.3085
    Name: prototype_ce, dtype: float64
    """
    seg = _prepare(X, ids, caller="prototype_ce", keep_norms=keep_norms, head=head)
    values = _prototype_ce(
        seg,
        head,
        scale,
        margin,
        leave_one_out=leave_one_out,
        n_negatives=n_negatives,
        random_state=random_state,
        batch_size=batch_size,
        n_jobs=n_jobs,
    )
    return _series(values, seg, "prototype_ce")


def _compute_table(
    seg,
    statistics,
    *,
    head="arcface",
    scale=64.0,
    margin=0.5,
    leave_one_out=False,
    n_negatives=None,
    random_state=None,
    n_jobs=None,
    matched=None,
):
    # ``matched``: the same identities on a probe-count-matched subsample, for
    # the statistics whose value depends on k (vMF-kappa, the leave-one-out
    # and own prototypes). PairCos is unbiased for every k and uses all rows.
    cols = {"identity": seg.identities, "k": seg.k.astype(np.int64)}
    m = seg if matched is None else matched
    for name in statistics:
        if name == "pair_cos":
            cols[name] = _pair_cos(seg)
        elif name == "vmf_kappa":
            cols[name] = _vmf_kappa(m)
        elif name == "penalised_logit":
            cols[name] = _penalised_logit(m, head, scale, margin)
        else:
            cols[name] = _prototype_ce(
                m,
                head,
                scale,
                margin,
                leave_one_out=leave_one_out,
                n_negatives=n_negatives,
                random_state=random_state,
                n_jobs=n_jobs,
            )
    return pd.DataFrame(cols)


@validate_params(
    {
        "X": ["array-like"],
        "ids": ["array-like"],
        "statistics": [StrOptions({"all"}), list, tuple],
        **_HEAD_PARAMS,
        "leave_one_out": ["boolean"],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def membership_statistics(
    X,
    ids,
    *,
    statistics="all",
    head="arcface",
    scale=64.0,
    margin=0.5,
    leave_one_out=False,
    n_jobs=None,
    keep_norms=False,
):
    """Compute several membership statistics at once, sharing the segment sums.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (cleaned and L2-normalised as in :func:`pair_cos`).
    ids : array-like of shape (n_samples,)
        Identity label of each row.
    statistics : "all" or list of str, default="all"
        Subset of ``("pair_cos", "vmf_kappa", "penalised_logit",
        "prototype_ce")``.
    head, scale, margin : see :func:`penalised_logit`
        Loss-head settings (grey-box statistics only).
    leave_one_out : bool, default=False
        ProtoCE's own-prototype convention (see :func:`prototype_ce`).
    n_jobs : int, default=None
        Threads for the ProtoCE Gram blocks.
    keep_norms : bool, default=False
        Keep the rows' norms for a magnitude-aware head (see
        :func:`penalised_logit`).

    Returns
    -------
    table : pandas.DataFrame
        One row per identity: ``identity``, ``k`` (probes used) and one column
        per statistic (higher = member-like).

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.membership import membership_statistics
    >>> rng = np.random.default_rng(0)
    >>> X, ids = rng.normal(size=(40, 8)), np.repeat(np.arange(4), 10)
    >>> membership_statistics(X, ids).columns.tolist()
    ['identity', 'k', 'pair_cos', 'vmf_kappa', 'penalised_logit', 'prototype_ce']
    """
    statistics = _check_statistics(statistics)
    seg = _prepare(
        X, ids, caller="membership_statistics", keep_norms=keep_norms, head=head
    )
    return _compute_table(
        seg,
        statistics,
        head=head,
        scale=scale,
        margin=margin,
        leave_one_out=leave_one_out,
        n_jobs=n_jobs,
    )


def _check_statistics(statistics):
    if isinstance(statistics, str):
        if statistics != "all":
            raise ValueError(
                f"statistics must be 'all' or a list drawn from {STATISTICS}; "
                f"got {statistics!r}."
            )
        return list(STATISTICS)
    statistics = list(statistics)
    bad = [s for s in statistics if s not in STATISTICS]
    if bad or not statistics or len(set(statistics)) != len(statistics):
        raise ValueError(
            f"statistics must be 'all' or a non-empty list of distinct names from "
            f"{STATISTICS}; got {statistics!r}."
        )
    return statistics
