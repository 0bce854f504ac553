# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Audit one member set against several non-member reference sets."""

import numpy as np
import pandas as pd
from sklearn.base import clone

from skprivacy.membership._geometry import MembershipGeometry
from skprivacy.utils import check_identity_labels

__all__ = ["audit_reference_sets"]


def audit_reference_sets(
    X_members,
    ids_members,
    references,
    *,
    same_domain=None,
    estimator=None,
    return_distributions=False,
):
    """Membership AUC of one member set against each non-member reference set.

    Each reference is audited on its own: the member identities plus that
    reference's identities are passed to ``estimator.fit``, so the statistics
    (ProtoCE's negatives in particular) are those of exactly that comparison.

    Only a non-member reference drawn from the *same domain* as the training
    data (same source, capture conditions and demographics; e.g. a held-out
    split of the training corpus) measures training membership. Any other
    reference also differs from the members in pose, quality, age or
    ethnicity, which changes cluster geometry by itself, so its AUC mixes
    domain shift with membership and typically overstates the membership
    signal (paper 001, "Cross-domain benchmarks inflate the signal").

    Parameters
    ----------
    X_members : array-like of shape (n_member_rows, n_features)
        Probe embeddings of identities known to be in the training set.
    ids_members : array-like of shape (n_member_rows,)
        Their identity labels.
    references : dict of str to tuple (X_ref, ids_ref)
        Named non-member reference sets (embeddings, identity labels). Labels
        may overlap with the members' labels: they are namespaced internally.
    same_domain : str, default=None
        Name of the same-domain held-out reference, if there is one. Its rows
        get ``role="membership"``, all others ``role="membership + domain
        shift"``; without it every row is ``"unknown domain"``.
    estimator : MembershipGeometry, default=None
        Configured auditor (cloned for each reference); None means
        ``MembershipGeometry()``.
    return_distributions : bool, default=False
        Also return the per-identity statistic values behind every AUC, for
        :class:`~skprivacy.plotting.MembershipDistributionDisplay`.

    Returns
    -------
    results : pandas.DataFrame
        Tidy, one row per (reference, statistic): ``reference``, ``role``,
        ``statistic`` (the four statistics and ``"fusion"``, the
        out-of-fold fused AUC), ``auc`` (> 0.5 = members score higher),
        ``auc_se`` (DeLong; NaN for fusion), ``ci_low``/``ci_high`` (the
        estimator's ``confidence_level``; NaN for fusion), ``p_value`` (the
        identity-level permutation p-value of the AUC), ``n_members``,
        ``n_nonmembers``. Each AUC is the sample AUC, a point estimate; the
        population AUC is the lower bound on membership information.
    distributions : pandas.DataFrame
        Only with ``return_distributions=True``. Long format, one row per
        (reference, statistic, identity): ``reference``, ``role``,
        ``statistic``, ``identity`` (the label as given, members' and the
        reference's), ``member`` (bool), ``k`` (probes) and ``value`` (the
        statistic, higher = member-like). The members' values are those of
        the comparison with that reference (ProtoCE's negatives are the
        identities audited together), so members appear once per reference.
        ``MembershipDistributionDisplay.from_frame(distributions)`` draws
        them; the AUC of each (reference, statistic) group is the ``auc`` of
        ``results``.

    Examples
    --------
    >>> from skprivacy.datasets import make_membership_embeddings
    >>> from skprivacy.membership import audit_reference_sets
    >>> kw = dict(n_members=20, n_nonmembers=20, concentration_gap=0.3,
    ...           n_features=32, random_state=0)
    >>> X, ids, m = make_membership_embeddings(**kw)
    >>> Xs, ids_s, _ = make_membership_embeddings(domain_shift=0.5, **kw)
    >>> refs = {"held-out": (X[~m], ids[~m]), "other domain": (Xs[~m], ids_s[~m])}
    >>> res = audit_reference_sets(X[m], ids[m], refs, same_domain="held-out")
    >>> res.pivot(index="reference", columns="statistic", values="auc").shape
    (2, 5)
    >>> res, dist = audit_reference_sets(
    ...     X[m], ids[m], refs, same_domain="held-out", return_distributions=True)
    >>> dist.groupby(["reference", "member"]).size().tolist()  # 4 statistics x 20
    [80, 80, 80, 80]
    """
    if not isinstance(references, dict) or not references:
        raise ValueError(
            "references must be a non-empty dict {name: (X_ref, ids_ref)}; got "
            f"{type(references).__name__}."
        )
    if same_domain is not None and same_domain not in references:
        raise ValueError(
            f"same_domain={same_domain!r} is not one of the references "
            f"{sorted(map(str, references))}."
        )
    if estimator is None:
        estimator = MembershipGeometry()
    if not isinstance(estimator, MembershipGeometry):
        raise TypeError(
            "estimator must be a MembershipGeometry instance; got "
            f"{type(estimator).__name__}."
        )
    X_members = np.asarray(X_members)
    if X_members.ndim != 2:
        raise ValueError(
            f"X_members must be 2-D (n_rows, n_features); got an array of shape "
            f"{X_members.shape}."
        )
    ids_members = check_identity_labels(
        ids_members, name="ids_members", n_samples=X_members.shape[0]
    )
    rows, distributions = [], []
    member_labels = np.array([f"member/{i}" for i in ids_members], dtype=object)
    for name, ref in references.items():
        try:
            X_ref, ids_ref = ref
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Reference {name!r} must be a pair (X_ref, ids_ref)."
            ) from exc
        X_ref = np.asarray(X_ref)
        if X_ref.ndim != 2 or X_ref.shape[1] != X_members.shape[1]:
            raise ValueError(
                f"Reference {name!r} has embeddings of shape {X_ref.shape}; the "
                f"members have {X_members.shape[1]} features."
            )
        ids_ref = check_identity_labels(
            ids_ref, name=f"ids of reference {name!r}", n_samples=X_ref.shape[0]
        )
        X = np.vstack([X_members, X_ref])
        ref_labels = np.array([f"{name}/{i}" for i in ids_ref], dtype=object)
        ids = np.concatenate([member_labels, ref_labels])
        member = np.r_[np.ones(len(ids_members)), np.zeros(len(ids_ref))]
        mg = clone(estimator).fit(X, ids, member=member)
        if same_domain is None:
            role = "unknown domain"
        elif name == same_domain:
            role = "membership"
        else:
            role = "membership + domain shift"
        sep = mg.separability_
        if return_distributions:
            distributions.append(
                _long_statistics(
                    mg, name, role, member_labels, ids_members, ref_labels, ids_ref
                )
            )
        for stat in sep.index:
            rows.append(
                {
                    "reference": name,
                    "role": role,
                    "statistic": stat,
                    "auc": sep.loc[stat, "auc"],
                    "auc_se": sep.loc[stat, "auc_se"],
                    "ci_low": sep.loc[stat, "ci_low"],
                    "ci_high": sep.loc[stat, "ci_high"],
                    "p_value": sep.loc[stat, "p_value"],
                    "n_members": sep.loc[stat, "n_members"],
                    "n_nonmembers": sep.loc[stat, "n_nonmembers"],
                }
            )
        rows.append(
            {
                "reference": name,
                "role": role,
                "statistic": "fusion",
                "auc": mg.fusion_auc_,
                "auc_se": np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "p_value": mg.fusion_p_value_,
                "n_members": int(sep["n_members"].iloc[0]),
                "n_nonmembers": int(sep["n_nonmembers"].iloc[0]),
            }
        )
    results = pd.DataFrame(rows)
    if return_distributions:
        return results, pd.concat(distributions, ignore_index=True)
    return results


_DISTRIBUTION_COLUMNS = [
    "reference",
    "role",
    "statistic",
    "identity",
    "member",
    "k",
    "value",
]


def _long_statistics(mg, name, role, member_labels, ids_members, ref_labels, ids_ref):
    # The fitted per-identity table in long format, with the labels as given
    # (the auditor saw them namespaced by reference).
    original = dict(zip(member_labels, ids_members.tolist()))
    original.update(zip(ref_labels, ids_ref.tolist()))
    long = mg.statistics_.melt(
        id_vars=["identity", "member", "k"],
        value_vars=list(mg.separability_.index),
        var_name="statistic",
        value_name="value",
    )
    long["identity"] = long["identity"].map(original)
    long["member"] = long["member"].astype(bool)
    long["reference"] = name
    long["role"] = role
    return long[_DISTRIBUTION_COLUMNS]
