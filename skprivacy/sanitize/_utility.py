# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Utility of sanitised embeddings, the privacy-utility trade-off, and transfer."""

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_val_score
from sklearn.utils import check_array

from skprivacy.plotting import PrivacyUtilityDisplay
from skprivacy.sanitize._isp import ISP
from skprivacy.sanitize._verification import (
    OpenSetVerificationAuditor,
    _clopper_pearson,
)
from skprivacy.utils import (
    check_class_labels,
    check_identity_labels,
    l2_normalize,
    sklearn_random_state,
)
from skprivacy.utils._progress import Progress
from skprivacy.utils._sklearn import RANDOM_STATE, HasMethods, Interval, validate_params

__all__ = [
    "attribute_probe_accuracy",
    "plot_privacy_utility",
    "privacy_utility_tradeoff",
    "retrieval_precision_at_k",
    "transfer_audit",
]


def _check_rows(X, **columns):
    """Validate ``X`` and 1-D per-row columns (None passes through unchanged).

    ``ids*`` and ``groups`` are identity labels, any other column class labels
    (both through the input layer: no missing label, one kind of label).
    Returns ``X`` followed by the columns, in the order given.
    """
    X = check_array(X, dtype=(np.float64, np.float32), input_name="X")
    out = [X]
    for name, col in columns.items():
        if col is not None:
            check = (
                check_identity_labels
                if name.startswith(("ids", "groups"))
                else check_class_labels
            )
            col = check(col, name=name)
            if col.shape[0] != X.shape[0]:
                raise ValueError(
                    f"{name} has {col.shape[0]} entries for {X.shape[0]} rows of X."
                )
        out.append(col)
    return out


@validate_params(
    {
        "X": ["array-like"],
        "labels": ["array-like"],
        "groups": ["array-like", None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "estimator": [HasMethods(["fit", "score"]), None],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def attribute_probe_accuracy(
    X, labels, *, groups=None, cv=5, estimator=None, random_state=0
):
    """Cross-validated accuracy of a linear probe for a non-identity label.

    This is the "utility" side of sanitisation: how well a downstream linear
    model still predicts an attribute or capture condition from the embeddings.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (sanitised or not).
    labels : array-like of shape (n_samples,)
        The non-identity target (attribute, condition, ...).
    groups : array-like of shape (n_samples,), default=None
        Identity labels. If given, folds are identity-disjoint
        (``GroupKFold``): the probe is scored on people it never saw, which is
        how a deployed attribute classifier meets new faces. Otherwise
        ``StratifiedKFold(shuffle=True)`` over rows.
    cv : int, default=5
        Number of folds (capped at the number of groups).
    estimator : estimator, default=None
        The probe; None uses ``LogisticRegression(max_iter=1000)``.
    random_state : int, RandomState instance, Generator or None, default=0
        Shuffling seed of the stratified folds.

    Returns
    -------
    accuracy : float
        Mean held-out accuracy over the folds (a point estimate).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import attribute_probe_accuracy
    >>> X, ids, attr = make_identity_embeddings(
    ...     20, 10, 32, n_identity_dims=4, n_attribute_classes=2, random_state=0)
    >>> acc = attribute_probe_accuracy(X, attr, groups=ids)
    >>> bool(acc > 0.9)
    True
    """
    X, labels, groups = _check_rows(X, labels=labels, groups=groups)
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError(
            f"labels has a single class ({classes[0]!r}); a probe needs at least two."
        )
    estimator = LogisticRegression(max_iter=1000) if estimator is None else estimator
    if groups is not None:
        n_splits = min(cv, np.unique(groups).size)
        if n_splits < 2:
            raise ValueError("groups must contain at least two identities.")
        splitter = GroupKFold(n_splits=n_splits)
    else:
        splitter = StratifiedKFold(
            n_splits=cv, shuffle=True, random_state=sklearn_random_state(random_state)
        )
    scores = cross_val_score(clone(estimator), X, labels, groups=groups, cv=splitter)
    return float(np.mean(scores))


@validate_params(
    {
        "X": ["array-like"],
        "labels": ["array-like"],
        "k": [Interval(Integral, 1, None, closed="left")],
        "groups": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def retrieval_precision_at_k(X, labels, *, k=5, groups=None):
    """Mean precision@k of cosine retrieval on a non-identity label.

    Every row queries all other rows; the ``k`` most cosine-similar are
    retrieved and the share with the query's label is averaged over queries.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings (rows are L2-normalised here).
    labels : array-like of shape (n_samples,)
        The non-identity label defining relevance.
    k : int, default=5
        Number of retrieved rows per query.
    groups : array-like of shape (n_samples,), default=None
        Identity labels. If given, rows of the query's own identity are not
        retrievable, so the score measures retrieval *across* people (otherwise
        identity similarity dominates the neighbours of raw face embeddings).

    Returns
    -------
    precision : float
        Mean precision@k over queries (queries with fewer than ``k`` candidates
        use all of them).

    Examples
    --------
    >>> from skprivacy.sanitize import retrieval_precision_at_k
    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]
    >>> retrieval_precision_at_k(X, ["a", "a", "b", "b"], k=1)
    1.0
    """
    X, labels, groups = _check_rows(X, labels=labels, groups=groups)
    Z = l2_normalize(np.asarray(X, dtype=np.float64))
    n = Z.shape[0]
    _, lab = np.unique(labels, return_inverse=True)
    if groups is not None:
        _, grp = np.unique(groups, return_inverse=True)
    kk = min(k, n - 1)
    if kk == 0:  # a single row has nothing to retrieve
        return 0.0
    hits = np.zeros(n)
    block = max(1, (1 << 22) // max(n, 1))
    for s in range(0, n, block):
        e = min(s + block, n)
        S = Z[s:e] @ Z.T
        S[np.arange(e - s), np.arange(s, e)] = -np.inf
        if groups is not None:
            S[grp[s:e, None] == grp[None, :]] = -np.inf
        valid = np.isfinite(S).sum(axis=1)
        top = np.argpartition(-S, kk - 1, axis=1)[:, :kk]
        top_scores = np.take_along_axis(S, top, axis=1)
        rel = (lab[top] == lab[s:e, None]) & np.isfinite(top_scores)
        denom = np.minimum(kk, valid)
        hits[s:e] = np.where(denom > 0, rel.sum(axis=1) / np.maximum(denom, 1), np.nan)
    return float(np.nanmean(hits))


# Settings of the pooled identity-disjoint audit shared by the sweep and the
# transfer audit (both hand them straight to _pooled_audit).
_POOLED_AUDIT_PARAMS = {
    "auditor": [HasMethods(["fit", "score"]), None],
    "n_splits": [Interval(Integral, 2, None, closed="left")],
    "k": [Interval(Integral, 1, None, closed="left")],
    "cv": [Interval(Integral, 2, None, closed="left")],
}


def _pooled_audit(X, ids, labels, fit_transformer, auditor, n_splits, k, cv):
    """Identity-disjoint folds: fit sanitiser and attacker on one side, audit the other.

    Returns a dict of pooled counts (TAR over all folds' genuine pairs at each
    fold's own threshold) and mean utility over folds.
    """
    n_ta = n_gen = n_fa = n_imp = 0
    resolvable = True
    accs, precs, ranks = [], [], []
    for tr, te in GroupKFold(n_splits=n_splits).split(X, groups=ids):
        transformer = fit_transformer(X[tr], ids[tr])
        if transformer is None:
            Xtr, Xte = X[tr], X[te]
        else:
            Xtr, Xte = transformer.transform(X[tr]), transformer.transform(X[te])
            ranks.append(getattr(transformer, "n_components_", np.nan))
        res = clone(auditor).fit(Xtr, ids[tr]).audit(Xte, ids[te])
        n_gen += res.n_genuine_pairs
        n_ta += int(round(res.tar * res.n_genuine_pairs))
        n_imp += res.n_impostor_pairs
        n_fa += int(round(res.far_achieved * res.n_impostor_pairs))
        resolvable &= bool(res.resolvable)
        if labels is not None:
            accs.append(
                attribute_probe_accuracy(Xte, labels[te], groups=ids[te], cv=cv)
            )
            precs.append(retrieval_precision_at_k(Xte, labels[te], k=k, groups=ids[te]))
    lo, hi = _clopper_pearson(n_ta, n_gen, auditor.confidence)
    out = {
        "n_components_": float(np.mean(ranks)) if ranks else 0.0,
        "tar": n_ta / n_gen,
        "tar_lower": lo,
        "tar_upper": hi,
        "far_achieved": n_fa / n_imp,
        "n_genuine_pairs": n_gen,
        "n_impostor_pairs": n_imp,
        "resolvable": resolvable,
    }
    if labels is not None:
        out["attribute_accuracy"] = float(np.mean(accs))
        out[f"precision_at_{k}"] = float(np.mean(precs))
    return out


@validate_params(
    {
        "X": ["array-like"],
        "ids": ["array-like"],
        "labels": ["array-like", None],
        "sanitizer": [HasMethods(["fit", "transform"]), None],
        "param_name": [str],
        "param_values": ["array-like", None],
        **_POOLED_AUDIT_PARAMS,
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=False,
)
def privacy_utility_tradeoff(
    X,
    ids,
    labels=None,
    *,
    sanitizer=None,
    param_name="n_components",
    param_values=None,
    auditor=None,
    n_splits=2,
    k=5,
    cv=5,
    verbose=0,
):
    """Leakage (TAR at FAR) and utility of a sanitiser over a parameter sweep.

    For each value, and each of ``n_splits`` identity-disjoint folds, the
    sanitiser and the attacker's probe are fitted on the training identities
    and the audit and utility are measured on the held-out identities (the
    transfer setting of paper 003: the projector never saw the audited people).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings.
    ids : array-like of shape (n_samples,)
        Identity labels.
    labels : array-like of shape (n_samples,), default=None
        A non-identity label (attribute, condition) for the utility columns.
    sanitizer : transformer, default=None
        The identity eraser; None uses ``ISP()``. It is fitted as
        ``fit(X, ids)``.
    param_name : str, default="n_components"
        Parameter of ``sanitizer`` to sweep.
    param_values : array-like, default=None
        Values to sweep. None sweeps ``0, 1, 2, 4, ...`` up to the largest
        rank the training folds allow. A value of ``None`` inside the list,
        or ``0`` for ``n_components``, gives the unsanitised baseline
        (``None`` skips the sanitiser altogether).
    auditor : estimator, default=None
        The audit; None uses ``OpenSetVerificationAuditor(random_state=0)``.
    n_splits : int, default=2
        Identity-disjoint folds (``GroupKFold``).
    k : int, default=5
        ``k`` of the retrieval precision.
    cv : int, default=5
        Folds of the attribute probe inside each held-out side.
    verbose : int, default=0
        Print a line per parameter value (its TAR and the elapsed time) when
        positive.

    Returns
    -------
    table : DataFrame
        One row per value: ``param_name``, ``n_components_`` (mean rank
        removed), ``tar`` (pooled over folds, a point estimate), ``tar_lower``
        / ``tar_upper`` (Clopper-Pearson, nominal), ``far_achieved``,
        ``n_genuine_pairs``, ``n_impostor_pairs``, ``resolvable`` and, with
        ``labels``, ``attribute_accuracy`` and ``precision_at_{k}``.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import OpenSetVerificationAuditor
    >>> from skprivacy.sanitize import privacy_utility_tradeoff
    >>> X, ids, attr = make_identity_embeddings(
    ...     30, 6, 16, n_identity_dims=4, n_attribute_classes=2,
    ...     attribute_strength=0.3, random_state=0)
    >>> table = privacy_utility_tradeoff(
    ...     X, ids, attr, param_values=[0, 4], cv=2,
    ...     auditor=OpenSetVerificationAuditor(far=1e-2, random_state=0))
    >>> list(table.columns[:3])
    ['n_components', 'n_components_', 'tar']
    >>> bool(table.tar.iloc[1] < table.tar.iloc[0])
    True
    """
    X, ids, labels = _check_rows(X, ids=ids, labels=labels)
    sanitizer = ISP() if sanitizer is None else sanitizer
    auditor = OpenSetVerificationAuditor(random_state=0) if auditor is None else auditor
    if param_values is None:
        n_train_ids = min(
            np.unique(ids[tr]).size
            for tr, _ in GroupKFold(n_splits=n_splits).split(X, groups=ids)
        )
        top = min(X.shape[1], n_train_ids - 1)
        param_values = [0] + [2**j for j in range(int(np.log2(max(top, 1))) + 1)]
        param_values = sorted({v for v in param_values if v <= top} | {top})
    say = Progress("privacy_utility_tradeoff", verbose)
    rows = []
    for value in param_values:
        if value is None:

            def fit_transformer(Xf, idf):
                return None

        else:

            def fit_transformer(Xf, idf, value=value):
                return clone(sanitizer).set_params(**{param_name: value}).fit(Xf, idf)

        row = {param_name: value}
        row.update(
            _pooled_audit(X, ids, labels, fit_transformer, auditor, n_splits, k, cv)
        )
        rows.append(row)
        say(
            f"{param_name}={value} ({len(rows)}/{len(param_values)}): "
            f"tar {row.get('tar', float('nan')):.3f}"
        )
    return pd.DataFrame(rows)


@validate_params(
    {
        "sanitizer": [HasMethods(["fit", "transform"])],
        "X_source": ["array-like"],
        "ids_source": ["array-like"],
        "X_target": ["array-like"],
        "ids_target": ["array-like"],
        "labels_target": ["array-like", None],
        **_POOLED_AUDIT_PARAMS,
    },
    prefer_skip_nested_validation=False,
)
def transfer_audit(
    sanitizer,
    X_source,
    ids_source,
    X_target,
    ids_target,
    labels_target=None,
    *,
    auditor=None,
    n_splits=2,
    k=5,
    cv=5,
):
    """Fit a sanitiser on one set of identities, audit it on a disjoint set.

    The sanitiser is fitted once on the source data. On the target data, the
    attacker's probe is trained on part of the identities and the open-set
    audit runs on the rest (``n_splits`` identity-disjoint folds, pooled),
    once on the raw target embeddings and once on the sanitised ones.

    Parameters
    ----------
    sanitizer : transformer
        The identity eraser (e.g. ``ISP(16)``), fitted as
        ``fit(X_source, ids_source)``.
    X_source : array-like of shape (n_source, n_features)
        Embeddings the sanitiser is fitted on.
    ids_source : array-like of shape (n_source,)
        Their identity labels.
    X_target : array-like of shape (n_target, n_features)
        Embeddings of other identities (same encoder).
    ids_target : array-like of shape (n_target,)
        Their identity labels.
    labels_target : array-like of shape (n_target,), default=None
        A non-identity label of the target rows, for the utility columns.
    auditor : estimator, default=None
        The audit; None uses ``OpenSetVerificationAuditor(random_state=0)``.
    n_splits : int, default=2
        Identity-disjoint folds on the target side.
    k : int, default=5
        ``k`` of the retrieval precision.
    cv : int, default=5
        Folds of the attribute probe.

    Returns
    -------
    table : DataFrame
        Two rows, ``stage`` = ``"before"`` and ``"after"``, with the columns
        of :func:`privacy_utility_tradeoff`.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize import ISP, OpenSetVerificationAuditor
    >>> from skprivacy.sanitize import transfer_audit
    >>> X, ids = make_identity_embeddings(60, 8, 32, n_identity_dims=4,
    ...                                   random_state=0)
    >>> src, tgt = ids < 20, ids >= 20
    >>> table = transfer_audit(
    ...     ISP(4), X[src], ids[src], X[tgt], ids[tgt],
    ...     auditor=OpenSetVerificationAuditor(far=1e-2, random_state=0))
    >>> list(table.stage)
    ['before', 'after']
    """
    Xs, ids_s = _check_rows(X_source, ids_source=ids_source)
    Xt, ids_t, labels_t = _check_rows(
        X_target, ids_target=ids_target, labels_target=labels_target
    )
    overlap = np.intersect1d(ids_s.astype(str), ids_t.astype(str))
    if overlap.size:
        raise ValueError(
            f"{overlap.size} identity label(s) occur in both source and target "
            f"(e.g. {overlap[0]!r}); a transfer audit needs disjoint identities."
        )
    auditor = OpenSetVerificationAuditor(random_state=0) if auditor is None else auditor
    fitted = clone(sanitizer).fit(Xs, ids_s)
    rows = []
    for stage, transformer in (("before", None), ("after", fitted)):
        row = {"stage": stage}
        row.update(
            _pooled_audit(
                Xt,
                ids_t,
                labels_t,
                lambda Xf, idf, t=transformer: t,
                auditor,
                n_splits,
                k,
                cv,
            )
        )
        rows.append(row)
    return pd.DataFrame(rows)


def plot_privacy_utility(table, *, x=None, utility=None, ax=None):
    """Plot leakage (TAR with its interval) and utility against the swept parameter.

    A shortcut for :meth:`skprivacy.plotting.PrivacyUtilityDisplay.from_tradeoff`
    that returns the display's leakage axes.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`privacy_utility_tradeoff`.
    x : str, default=None
        Column for the horizontal axis; None uses the first column.
    utility : str or list of str, default=None
        Utility column(s) for the right axis; None uses every column named
        ``attribute_accuracy`` or ``precision_at_*`` present.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure if None.

    Returns
    -------
    ax : matplotlib Axes
        The leakage axes (the utility axes is ``ax.right_ax``).

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.sanitize import plot_privacy_utility
    >>> table = pd.DataFrame({"n_components": [0, 4], "tar": [0.6, 0.0],
    ...                       "tar_lower": [0.5, 0.0], "tar_upper": [0.7, 0.1],
    ...                       "attribute_accuracy": [0.9, 0.89]})
    >>> ax = plot_privacy_utility(table)
    """
    display = PrivacyUtilityDisplay.from_tradeoff(table, x=x, utility=utility, ax=ax)
    display.ax_.right_ax = display.right_ax_
    return display.ax_
