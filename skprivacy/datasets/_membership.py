# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic member / non-member identity clusters with known membership signal."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from skprivacy.utils import check_generator, check_legacy_rng, seed_from
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, validate_params

__all__ = ["make_membership_embeddings"]

# Cosine of an identity mean to the shared hub direction (mean and spread):
# real face embeddings are not centred, so identities share a common component
# and their prototypes are correlated (which is what ProtoCE's negatives see).
_HUB_COS, _HUB_SPREAD = 0.5, 0.15


@validate_params(
    {
        "n_members": [Interval(Integral, 1, None, closed="left")],
        "n_nonmembers": [Interval(Integral, 1, None, closed="left")],
        "n_samples_per_identity": [Interval(Integral, 2, None, closed="left")],
        "n_features": [Interval(Integral, 2, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="neither")],
        "concentration_gap": [Interval(Real, None, None, closed="neither")],
        "identity_spread": [Interval(Real, 0, None, closed="left")],
        "isolation_gap": [Interval(Real, None, None, closed="neither")],
        "domain_shift": [Interval(Real, None, None, closed="neither")],
        "return_X_y": ["boolean"],
        "as_frame": ["boolean"],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def make_membership_embeddings(
    n_members=100,
    n_nonmembers=100,
    n_samples_per_identity=10,
    n_features=128,
    *,
    noise=1.0,
    concentration_gap=0.5,
    identity_spread=0.3,
    isolation_gap=0.0,
    domain_shift=0.0,
    return_X_y=True,
    as_frame=False,
    random_state=None,
):
    r"""Generate member and non-member identity clusters with a planted gap.

    Every row of identity ``i`` is ``normalize(mu_i + sigma_i * eps / sqrt(d))``
    with ``eps ~ N(0, I_d)``: a unit identity mean ``mu_i`` plus isotropic
    noise of per-identity scale

    .. math::
        \log\sigma_i = \log(\text{noise}) + \text{identity\_spread}\,z_i
        - \text{concentration\_gap}\,[i\ \text{member}]
        + \text{domain\_shift}\,[i\ \text{non-member}],

    with :math:`z_i \sim N(0, 1)`. Members are therefore tighter than
    non-members by the known factor ``exp(concentration_gap)`` in noise scale
    (for small noise, about ``exp(2 * concentration_gap)`` in vMF
    concentration), and ``domain_shift`` loosens the non-members the way a
    benchmark from another domain (pose, quality, age) does for a model
    trained elsewhere: a difference that is *not* caused by training.

    Identity means share a hub direction ``h``:
    ``mu_i = normalize(c_i h + sqrt(1 - c_i^2) u_i)`` with random unit ``u_i``
    and ``c_i = clip(0.5 + 0.15 z'_i - isolation_gap [i member], 0, 0.95)``,
    so ``isolation_gap > 0`` pushes members away from the other identities (as
    a margin loss does for training classes) without changing their
    tightness: a signal that ProtoCE sees and PairCos/vMF-kappa do not.

    Members and non-members are drawn from separate random streams derived
    from ``random_state``, so calls that differ only in ``domain_shift`` return
    identical members and non-members that differ only in their noise scale,
    and calls that differ only in ``concentration_gap`` differ only in the
    members' noise scale (common random numbers).

    Parameters
    ----------
    n_members : int, default=100
        Identities in the (simulated) training set.
    n_nonmembers : int, default=100
        Identities not in the training set.
    n_samples_per_identity : int, default=10
        Probes ``k`` per identity (at least 2).
    n_features : int, default=128
        Embedding dimension ``d``.
    noise : float, default=1.0
        Base within-identity noise scale (1.0 gives a mean pairwise cosine of
        about 0.5, as for real face embeddings).
    concentration_gap : float, default=0.5
        Log-ratio of non-member to member noise scale; 0 means no membership
        signal in the concentration.
    identity_spread : float, default=0.3
        Standard deviation of the per-identity log noise scale (identities
        differ in how tight they are irrespective of membership).
    isolation_gap : float, default=0.0
        Reduction of the members' cosine to the hub direction.
    domain_shift : float, default=0.0
        Added to the non-members' log noise scale.
    return_X_y : bool, default=True
        If True return ``(X, ids, member)``, else a :class:`~sklearn.utils.Bunch`.
    as_frame : bool, default=False
        If True, ``X`` is a DataFrame (columns ``e0, e1, ...``) and ``ids``,
        ``member`` are Series.
    random_state : int, RandomState instance, Generator or None, default=None
        Seed; an int gives bit-identical output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Unit-norm embeddings, members first,
        ``n_samples = (n_members + n_nonmembers) * n_samples_per_identity``.
    ids : ndarray of shape (n_samples,)
        Integer identity labels: ``0 .. n_members - 1`` are members.
    member : ndarray of shape (n_samples,), dtype=bool
        Membership of each row's identity.
    bunch : :class:`~sklearn.utils.Bunch`
        When ``return_X_y=False``: ``data``, ``identity``, ``member``,
        ``noise_scale`` and ``hub_cos`` (per identity), ``identity_means``,
        ``hub`` and ``DESCR``.

    Examples
    --------
    >>> from skprivacy.datasets import make_membership_embeddings
    >>> X, ids, member = make_membership_embeddings(
    ...     n_members=3, n_nonmembers=2, n_samples_per_identity=4, random_state=0)
    >>> X.shape, ids[:5], member.sum()
    ((20, 128), array([0, 0, 0, 0, 1]), np.int64(12))
    """
    seed = seed_from(check_legacy_rng(random_state))
    hub_ss, mem_ss, non_ss = np.random.SeedSequence(seed).spawn(3)
    d, k = n_features, n_samples_per_identity
    hub = check_generator(hub_ss).standard_normal(d)
    hub /= np.linalg.norm(hub)

    def draw(ss, n, is_member):
        g = check_generator(ss)
        z_scale = g.standard_normal(n)
        z_hub = g.standard_normal(n)
        u = g.standard_normal((n, d))
        eps = g.standard_normal((n, k, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        c = _HUB_COS + _HUB_SPREAD * z_hub
        log_sigma = np.log(noise) + identity_spread * z_scale
        if is_member:
            c = c - isolation_gap
            log_sigma = log_sigma - concentration_gap
        else:
            log_sigma = log_sigma + domain_shift
        c = np.clip(c, 0.0, 0.95)
        mu = c[:, None] * hub + np.sqrt(1.0 - c * c)[:, None] * u
        mu /= np.linalg.norm(mu, axis=1, keepdims=True)
        sigma = np.exp(log_sigma)
        rows = mu[:, None, :] + sigma[:, None, None] * eps / np.sqrt(d)
        rows /= np.linalg.norm(rows, axis=2, keepdims=True)
        return rows.reshape(n * k, d), mu, sigma, c

    Xm, mu_m, s_m, c_m = draw(mem_ss, n_members, True)
    Xn, mu_n, s_n, c_n = draw(non_ss, n_nonmembers, False)
    n_ids = n_members + n_nonmembers
    X = np.vstack([Xm, Xn])
    ids = np.repeat(np.arange(n_ids), k)
    member = ids < n_members
    if as_frame:
        X = pd.DataFrame(X, columns=[f"e{j}" for j in range(d)])
        ids = pd.Series(ids, name="identity")
        member = pd.Series(member, name="member")
    if return_X_y:
        return X, ids, member
    return Bunch(
        data=X,
        identity=ids,
        member=member,
        noise_scale=np.concatenate([s_m, s_n]),
        hub_cos=np.concatenate([c_m, c_n]),
        identity_means=np.vstack([mu_m, mu_n]),
        hub=hub,
        DESCR=(
            "Synthetic member/non-member identity clusters "
            f"(concentration_gap={concentration_gap}, isolation_gap={isolation_gap},"
            f" domain_shift={domain_shift})."
        ),
    )
