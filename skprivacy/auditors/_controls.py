# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Same-identity split-half controls, usable with any pair auditor."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import Bunch

from skprivacy.auditors._base import BasePairAuditor, summarize
from skprivacy.utils import IdentityData, check_generator, seed_from
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    _safe_indexing,
    validate_params,
)

__all__ = ["split_half_controls"]


@validate_params(
    {
        "auditor": [HasMethods(["fit", "score"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "p_value_column": [str],
        "min_samples_per_half": [Interval(Integral, 1, None, closed="left")],
        "n_identities": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def split_half_controls(
    auditor,
    X,
    y,
    *,
    alpha=0.05,
    p_value_column="p_value",
    min_samples_per_half=2,
    n_identities=None,
    random_state=0,
):
    """Audit each identity against itself: two random halves of its rows.

    Every identity with at least ``2 * min_samples_per_half`` usable rows is
    split uniformly at random into two halves (sizes ``floor(n/2)`` and
    ``ceil(n/2)``), and the pair of halves is audited with the same method and
    settings as ``auditor``. Both halves come from one distribution, so a
    calibrated test rejects at about the nominal rate ``alpha``, ROC AUCs are
    near 0.5 and ε values show the estimator's noise floor.

    Parameters
    ----------
    auditor : BasePairAuditor
        A pair auditor (fitted or not); only its parameters are used.
    X : array-like of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity labels.
    alpha : float, default=0.05
        Level at which ``p_value_column`` is counted as a rejection.
    p_value_column : str, default="p_value"
        Column holding the per-pair p-value, if the auditor produces one.
    min_samples_per_half : int, default=2
        Identities with fewer than twice this many rows are skipped.
    n_identities : int or None, default=None
        Control only this many of the eligible identities (those with at
        least ``2 * min_samples_per_half`` rows), drawn without replacement
        from the seed of ``random_state``; None (or at least as many as are
        eligible): all of them.
    random_state : int, RandomState instance, Generator or None, default=0
        Seeds the splits and the per-control randomness of the audit.

    Returns
    -------
    controls : :class:`~sklearn.utils.Bunch`
        ``results`` (DataFrame: ``identity``, ``n_half_a``, ``n_half_b``, then
        the auditor's per-pair columns), ``rejection_rate`` (fraction of
        controls with p-value ``<= alpha``; NaN when the auditor reports no
        p-value), ``n_rejected``, ``n_controls``, ``alpha``,
        ``epsilon_median`` and ``epsilon_max`` (the control ε distribution's
        summaries).

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.auditors import MMDTVAuditor, split_half_controls
    >>> X, ids = make_identity_embeddings(10, 20, 16, random_state=0)
    >>> ctl = split_half_controls(MMDTVAuditor(n_permutations=99), X, ids)
    >>> ctl.n_controls, 0 <= ctl.rejection_rate <= 1
    (10, True)
    """
    if not isinstance(auditor, BasePairAuditor):
        raise TypeError(
            "split_half_controls needs a skprivacy pair auditor (a BasePairAuditor "
            f"subclass); got {type(auditor).__name__}."
        )
    est = clone(auditor)
    data = est._validate(X, y, reset=True)
    seed = seed_from(random_state)
    rng = check_generator(seed)
    order, starts = data.order()
    controlled = data.counts >= 2 * min_samples_per_half
    if n_identities is not None and n_identities < controlled.sum():
        # Drawn from a generator of its own: the splits' draws stay those of
        # the same identities controlled alone.
        drawn = check_generator(seed).choice(
            data.identities[controlled], n_identities, replace=False
        )
        # The drawn identities' rows, validated alone (data-wide settings
        # such as a bandwidth heuristic see only them).
        keep = np.flatnonzero(data.kept)[np.isin(data.y, drawn)]
        data = est._validate(
            _safe_indexing(X, keep), _safe_indexing(y, keep), reset=True
        )
        order, starts = data.order()
        controlled = data.counts >= 2 * min_samples_per_half
    rows, codes, labels, halves = [], [], [], []
    for i in np.flatnonzero(controlled):
        idx = order[starts[i] : starts[i + 1]]
        idx = rng.permutation(idx)
        h = len(idx) // 2
        k = len(labels)
        rows.append(idx)
        codes.append(np.r_[np.full(h, 2 * k), np.full(len(idx) - h, 2 * k + 1)])
        labels.append(data.identities[i])
        halves.append((h, len(idx) - h))
    if len(labels) == 0:
        raise ValueError(
            "No identity has the "
            f"{2 * min_samples_per_half} usable rows a split-half control needs."
        )
    rows = np.concatenate(rows)
    codes = np.concatenate(codes).astype(np.intp)
    n_ctl = len(labels)
    counts = np.bincount(codes, minlength=2 * n_ctl)
    ctl_data = IdentityData(
        X=data.X[rows],
        y=codes,
        codes=codes,
        identities=np.arange(2 * n_ctl),
        counts=counts,
        kept=np.ones(len(rows), dtype=bool),
        drop_report=data.drop_report,
        norms=None if data.norms is None else data.norms[rows],
    )
    pairs = np.column_stack([np.arange(0, 2 * n_ctl, 2), np.arange(1, 2 * n_ctl, 2)])
    results, _ = est._audit_table(ctl_data, pairs, seed)
    identities = np.empty(n_ctl, dtype=object)
    identities[:] = labels
    halves = np.asarray(halves)
    table = pd.concat(
        [
            pd.DataFrame(
                {
                    "identity": identities,
                    "n_half_a": halves[:, 0],
                    "n_half_b": halves[:, 1],
                }
            ),
            results.drop(columns=["id_a", "id_b"]),
        ],
        axis=1,
    )
    if p_value_column in table:
        rejected = int((table[p_value_column] <= alpha).sum())
        rate = rejected / n_ctl
    else:
        rejected, rate = 0, float("nan")
    return Bunch(
        results=table,
        rejection_rate=float(rate),
        n_rejected=rejected,
        n_controls=n_ctl,
        alpha=float(alpha),
        epsilon_median=summarize(table["epsilon"], "median"),
        epsilon_max=summarize(table["epsilon"], "max"),
    )
