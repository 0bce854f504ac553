# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""RenyiPressure: cumulative re-identification pressure over releases (paper 002)."""

import math
import numbers
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression

from skprivacy.exceptions import ExcludedIdentitiesWarning
from skprivacy.pressure._attackers import (
    SMALL_FIT_ENTRIES,
    RetrievalAttacker,
    attacker_ladder,
)
from skprivacy.pressure._calibration import (
    fit_temperature,
    softmax_nll,
    temperature_scale,
)
from skprivacy.pressure._measures import _arimoto, _check_alpha, _row_alpha_norms
from skprivacy.utils import (
    check_identity_labels,
    check_legacy_rng,
    l2_normalize,
    limit_blas_threads,
    seed_from,
    spawn_generator,
    validate_identity_data,
)
from skprivacy.utils._identity import group_by_identity
from skprivacy.utils._progress import Progress
from skprivacy.utils._resample import order_statistic_interval
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = ["ArtifactRelease", "RenyiPressure", "pressure_ladder"]

#: Search interval of the post-hoc temperature applied to an attacker's
#: log-posterior (a multiplicative rescaling of log-probabilities).
POSTHOC_BOUNDS = (1e-2, 1e2)
#: log-probabilities are clipped here so that exact zeros stay finite.
LOG_FLOOR = -700.0
_METRICS = (
    "vrpi",
    "vrpi_prior",
    "arimoto_entropy",
    "p_guess",
    "guessing_bound",
    "top1_accuracy",
    "nll",
    "weight",
    "temperature",
)


def _three_way_split(codes, n_identities, calibration_size, test_size, rng):
    """Split every identity's rows into train / calibration / query indices."""
    train, cal, query = [], [], []
    order, starts, _ = group_by_identity(codes, n_identities)
    for i in range(n_identities):
        rows = rng.permutation(order[starts[i] : starts[i + 1]])
        n_i = rows.size
        n_q = int(min(max(round(test_size * n_i), 1), n_i - 2))
        n_c = int(min(max(round(calibration_size * n_i), 1), n_i - n_q - 1))
        query.append(rows[:n_q])
        cal.append(rows[n_q : n_q + n_c])
        train.append(rows[n_q + n_c :])
    return (np.sort(np.concatenate(a)) for a in (train, cal, query))


def _unknown_split(rows, calibration_size, test_size, rng):
    """Calibration and query rows of a never-enrolled identity.

    The same fractions as for enrolled identities, so that every identity
    contributes the same share of its rows to the queries (the remaining rows
    of an unknown identity are not used: there is nothing to train on them).
    """
    rows = rng.permutation(rows)
    n_i = rows.size
    n_q = int(min(max(round(test_size * n_i), 1), n_i - 1))
    n_c = int(min(max(round(calibration_size * n_i), 1), n_i - n_q))
    return rows[n_q : n_q + n_c], rows[:n_q]


def _split(codes, n_identities, params, rng):
    """Return a dict of index arrays (into the cleaned rows) and code maps."""
    unknown = np.zeros(n_identities, dtype=bool)
    if params["open_world"] is not None:
        n_unknown = int(max(round(params["open_world"] * n_identities), 1))
        unknown[rng.choice(n_identities, size=n_unknown, replace=False)] = True
    known_ids = np.flatnonzero(~unknown)
    remap = np.full(n_identities, -1, dtype=np.intp)
    remap[known_ids] = np.arange(known_ids.size)
    known_rows = np.flatnonzero(~unknown[codes])
    tr, ca, qu = _three_way_split(
        remap[codes[known_rows]],
        known_ids.size,
        params["calibration_size"],
        params["test_size"],
        rng,
    )
    split = {
        "train": known_rows[tr],
        "calibration": known_rows[ca],
        "query": known_rows[qu],
        "remap": remap,
        "n_known": known_ids.size,
    }
    if unknown.any():
        cal_u, query_u = [], []
        for i in np.flatnonzero(unknown):
            c, q = _unknown_split(
                np.flatnonzero(codes == i),
                params["calibration_size"],
                params["test_size"],
                rng,
            )
            cal_u.append(c)
            query_u.append(q)
        split["calibration_unknown"] = np.sort(np.concatenate(cal_u))
        split["query_unknown"] = np.sort(np.concatenate(query_u))
    return split


def _state_features(blocks, weights):
    """L2-normalised weighted concatenation of the unit-norm release blocks."""
    parts = [w * blocks[s] for s, w in weights.items() if w > 0]
    return l2_normalize(np.hstack(parts))


def _log_posterior(est, F):
    if hasattr(est, "predict_log_proba"):
        logp = est.predict_log_proba(F)
    else:
        with np.errstate(divide="ignore"):
            logp = np.log(est.predict_proba(F))
    logp = np.asarray(logp, dtype=np.float64)
    return np.maximum(np.nan_to_num(logp, nan=LOG_FLOOR, neginf=LOG_FLOOR), LOG_FLOOR)


class _Rejector:
    """Calibrated open-world rejection: P(unknown | z) from the top posterior.

    A one-feature logistic model on ``log max_u p(u | z)`` fitted on the
    calibration rows of known (label 0) and unknown (label 1) identities.
    """

    def __init__(self, logp_known, logp_unknown):
        f = np.concatenate([logp_known.max(axis=1), logp_unknown.max(axis=1)])
        t = np.r_[np.zeros(logp_known.shape[0]), np.ones(logp_unknown.shape[0])]
        self.model = LogisticRegression(C=1e4, max_iter=1000).fit(f[:, None], t)
        a = float(self.model.coef_[0, 0])
        b = float(self.model.intercept_[0])
        # p(unknown) = 1/2 where a * log(max p) + b = 0.
        self.threshold = math.exp(min(-b / a, 0.0)) if a != 0 else float("nan")

    def extend(self, logp):
        """Return the (n, N + 1) posterior with the unknown outcome last."""
        p_unknown = self.model.predict_proba(logp.max(axis=1)[:, None])[:, 1]
        P = np.exp(logp) * (1.0 - p_unknown)[:, None]
        return np.hstack([P, p_unknown[:, None]])


def _measure_rows(P, y, alphas):
    """Rows of measures for posterior ``P`` and true outcomes ``y``."""
    n, k = P.shape
    # Renormalise away float rounding so the rows are exact probability vectors.
    P = P / P.sum(axis=1, keepdims=True)
    prior = np.bincount(y, minlength=k) / n
    p_true = np.clip(P[np.arange(n), y], 1e-300, None)
    common = {
        "p_guess": float(P.max(axis=1).mean()),
        "top1_accuracy": float(np.mean(np.argmax(P, axis=1) == y)),
        "nll": float(-np.mean(np.log(p_true))),
        "n_queries": n,
        "n_outcomes": k,
    }
    m = P.max(axis=1)
    ratio = P / m[:, None]
    rows = []
    for alpha in alphas:
        bound = float(_row_alpha_norms(P, alpha, ratio=ratio, m=m).mean())
        h = (
            -math.log(bound)
            if math.isinf(alpha)
            else alpha / (1 - alpha) * math.log(bound)
        )
        h_prior = _arimoto(prior[None, :], alpha, None)
        rows.append(
            {
                "alpha": alpha,
                "arimoto_entropy": h,
                "vrpi": math.log(k) - h,
                "vrpi_prior": h_prior - h,
                "guessing_bound": bound,
                **common,
            }
        )
    return rows


_ROW_SETS = ("calibration", "query", "calibration_unknown", "query_unknown")


def _posteriors(attacker, F, y_codes, split):
    """Fit ``attacker`` on the train rows; log-posteriors of the other rows.

    Small fits run with one thread per pool (see ``SMALL_FIT_ENTRIES``).
    Returns ``{"estimator": fitted, row set: log-posterior, ...}``.
    """
    n_entries = split["train"].size * F.shape[1]
    with limit_blas_threads(
        1 if n_entries <= SMALL_FIT_ENTRIES else None, user_api=None
    ):
        est = clone(attacker).fit(F[split["train"]], y_codes[split["train"]])
        n_known = split["n_known"]
        classes = np.asarray(getattr(est, "classes_", np.arange(n_known)))
        if classes.shape[0] != n_known or not np.array_equal(
            classes, np.arange(n_known)
        ):
            raise ValueError(
                "The attacker must output a posterior over every identity of its "
                f"training set; got classes_ of length {classes.shape[0]} for "
                f"{n_known} identities."
            )
        out = {"estimator": est}
        for key in _ROW_SETS:
            if key in split:
                out[key] = _log_posterior(est, F[split[key]])
    return out


def _combine(parts):
    """Log-posterior of a state from weighted parts ``[(w, logp), ...]``.

    Each part is one attacker's log-posterior (the embedding state's, or an
    artifact release's); the state's is their normalised weighted sum, a
    product of experts. A single part of weight 1 is used as it is.
    """
    if len(parts) == 1 and parts[0][0] == 1:
        return parts[0][1]
    logits = sum(w * logp for w, logp in parts)
    return np.maximum(temperature_scale(logits, 1.0), LOG_FLOOR)


def _calibrated(logps, y_codes, split, calibrate):
    """Post-hoc temperature, open-world rejection and query posterior."""
    n_known = split["n_known"]
    logp_cal = logps["calibration"]
    y_cal = y_codes[split["calibration"]]
    if calibrate:
        temperature = fit_temperature(
            lambda t: softmax_nll(logp_cal / t, y_cal), POSTHOC_BOUNDS
        )
    else:
        temperature = 1.0
    cal_nll = softmax_nll(logp_cal / temperature, y_cal)
    logq = temperature_scale(logps["query"], temperature)
    y_query = y_codes[split["query"]]
    rejector = None
    if "query_unknown" in split:
        logp_cal_u = temperature_scale(logps["calibration_unknown"], temperature)
        rejector = _Rejector(temperature_scale(logp_cal, temperature), logp_cal_u)
        logq_u = temperature_scale(logps["query_unknown"], temperature)
        P = np.vstack([rejector.extend(logq), rejector.extend(logq_u)])
        y_query = np.r_[y_query, np.full(logq_u.shape[0], n_known)]
    else:
        P = np.exp(logq)
    return {
        "temperature": temperature,
        "calibration_nll": cal_nll,
        "P": P,
        "y": y_query,
        "rejector": rejector,
    }


def _evaluate_state(features, artifacts, weights, y_codes, split, calibrate):
    """Measure a state from its fitted parts.

    ``features`` is the output of :func:`_posteriors` for the embedding part
    of the state (None if it has none); ``artifacts`` maps an artifact
    release to its :func:`_posteriors` output; ``weights`` gives each
    release's weight in the state.
    """
    parts = [(1.0, features)] if features is not None else []
    parts += [
        (weights[s], artifacts[s]) for s in sorted(artifacts) if weights.get(s, 0) > 0
    ]
    logps = {
        key: _combine([(w, part[key]) for w, part in parts])
        for key in _ROW_SETS
        if key in split
    }
    out = _calibrated(logps, y_codes, split, calibrate)
    out["estimator"] = None if features is None else features["estimator"]
    out["artifacts"] = {
        s: artifacts[s]["estimator"] for s in sorted(artifacts) if weights.get(s, 0) > 0
    }
    return out


def _seeded(attacker, seed):
    """Clone ``attacker``, giving it the repeat's seed if it has none."""
    attacker = clone(attacker)
    if "random_state" in attacker.get_params() and (
        attacker.get_params()["random_state"] is None
    ):
        attacker.set_params(random_state=int(seed))
    return attacker


def _vrpi2(res):
    """Return vRPI_2 of an evaluated state on its query rows (cached)."""
    if "vrpi2" not in res:
        res["vrpi2"] = _measure_rows(res["P"], res["y"], [2.0])[0]["vrpi"]
    return res["vrpi2"]


def _state_name(names, weights):
    """Readable state, e.g. ``"Z1 + 0.5*Z2"`` (releases of weight 0 left out)."""
    parts = [
        names[s] if w == 1 else f"{w:g}*{names[s]}"
        for s, w in sorted(weights.items())
        if w > 0
    ]
    return " + ".join(parts)


def _run_repeat(blocks, codes, names, seed, params, n_jobs, repeat=0):
    """One seeded audit: split, greedy release weights, stage measures."""
    artifacts = [None if a is None else _seeded(a, seed) for a in params["artifacts"]]
    say = Progress("RenyiPressure", params.get("verbose", 0))
    tag = f"repeat {repeat + 1}/{params.get('n_repeats', 1)}"
    rng = check_legacy_rng(seed)
    split = _split(codes, params["n_identities"], params, rng)
    y_codes = split["remap"][codes]
    attacker = _seeded(params["attacker"], seed)
    alphas = params["alphas_all"]
    calibrate = params["calibrate"]
    T = len(blocks)
    parallel = Parallel(n_jobs=n_jobs)

    # Artifact releases (kNN graph, prototype bank, ...): their own attacker,
    # fitted once per repeat on their own columns.
    artifact_fits = {
        s: _posteriors(art, blocks[s], y_codes, split)
        for s, art in enumerate(artifacts)
        if art is not None
    }
    # Embedding states already fitted, keyed by their embedding weights.
    fitted = {}

    def feature_key(w):
        return tuple(
            (s, float(v))
            for s, v in sorted(w.items())
            if v > 0 and artifacts[s] is None
        )

    def run(weight_list):
        keys = [feature_key(w) for w in weight_list]
        todo = list(dict.fromkeys(k for k in keys if k and k not in fitted))
        fitted.update(
            zip(
                todo,
                parallel(
                    delayed(_posteriors)(
                        attacker, _state_features(blocks, dict(k)), y_codes, split
                    )
                    for k in todo
                ),
            )
        )
        return [
            _evaluate_state(
                fitted[k] if k else None,
                {s: f for s, f in artifact_fits.items() if w.get(s, 0) > 0},
                w,
                y_codes,
                split,
                calibrate,
            )
            for w, k in zip(weight_list, keys)
        ]

    rows = []

    def record(kind, t, res, weight, state, selected_by):
        # Nominal contents of the stage; a release the attacker chose to
        # ignore (weight 0) still belongs to it (see the weight and state
        # columns).
        stage = "+".join(names[: t + 1])
        for r in _measure_rows(res["P"], res["y"], alphas):
            rows.append(
                {
                    "kind": kind,
                    "t": t + 1,
                    "release": names[t],
                    "releases": stage if kind == "cumulative" else names[t],
                    "weight": weight,
                    "temperature": res["temperature"],
                    "calibration_nll": res["calibration_nll"],
                    "state": state,
                    "selected_by": selected_by,
                    **r,
                }
            )

    weights = {0: 1.0}
    (current,) = run([weights])
    record("cumulative", 0, current, 1.0, names[0], "first release")
    say(f"{tag}: stage 1/{T} ({names[0]}) done")
    singles = [current]
    for t in range(1, T):
        previous = current
        grid = [w for w in params["weight_grid"] if w > 0]
        candidates = [{**weights, t: w} for w in grid]
        results = run(candidates + [{t: 1.0}])
        singles.append(results[-1])
        # Candidate states for Z_1:t, each as (weights, result, weight of
        # Z_t): the previous state (Z_t ignored, if 0 is in the grid), the
        # previous state plus Z_t with a grid weight, and every release
        # alone, the new one included (weight inf: earlier releases
        # dropped). With the singles among the candidates, the chosen state
        # is never worse on the calibration rows than the previous state or
        # any release alone.
        options = []
        if 0.0 in params["weight_grid"]:
            options.append(({**weights, t: 0.0}, current, 0.0))
        options += [(c, r, w) for c, r, w in zip(candidates, results[:-1], grid)]
        options += [({s: 1.0}, singles[s], 0.0) for s in range(t)]
        options.append(({t: 1.0}, results[-1], math.inf))
        # Smallest calibration NLL wins; ties go to the earlier candidate.
        best = min(range(len(options)), key=lambda i: options[i][1]["calibration_nll"])
        chosen, current, w_best = options[best]
        selected_by = "calibration"
        if params["monotone"]:
            # Held-out guard: an attacker holding Z_1:t can always act on
            # the previous state or on any single release, so the stage
            # takes the best of those on the query rows if the calibration
            # choice scores below it (vRPI at alpha = 2).
            fallback = [({**weights, t: 0.0}, previous, 0.0)] + [
                ({s: 1.0}, singles[s], math.inf if s == t else 0.0)
                for s in range(t + 1)
            ]
            scores = [_vrpi2(r) for _, r, _ in fallback]
            k = int(np.argmax(scores))
            if scores[k] > _vrpi2(current):
                chosen, current, w_best = fallback[k]
                selected_by = "held-out guard"
        weights = {s: float(chosen.get(s, 0.0)) for s in range(t + 1)}
        record(
            "cumulative", t, current, w_best, _state_name(names, weights), selected_by
        )
        say(
            f"{tag}: stage {t + 1}/{T} (+{names[t]}, {len(options)} candidates, "
            f"state {_state_name(names, weights)}) done"
        )
    if T > 1:
        for t, res in enumerate(singles):
            record("single", t, res, 1.0, names[t], "single release")
    kept = {
        "query_norms": _query_norms(current["P"], 2.0),
        "n_outcomes": current["P"].shape[1],
        "estimator": current["estimator"],
        "temperature": current["temperature"],
        "rejector": current["rejector"],
        "artifacts": current["artifacts"],
        "weights": {names[s]: float(weights.get(s, 0.0)) for s in range(T)},
        "n_known": split["n_known"],
        "remap": split["remap"],
    }
    split_out = {
        k: split[k]
        for k in (
            "train",
            "calibration",
            "query",
            "calibration_unknown",
            "query_unknown",
        )
        if k in split
    }
    return pd.DataFrame(rows), kept, split_out


def _query_norms(P, alpha):
    """Per-query ``||p||_alpha`` of the normalised posterior (as in :func:`_measure_rows`)."""
    P = P / P.sum(axis=1, keepdims=True)
    m = P.max(axis=1)
    return _row_alpha_norms(P, alpha, ratio=P / m[:, None], m=m)


def _vrpi_from_norms(mean_norm, alpha, n_outcomes):
    """vRPI_alpha from the mean query norm, the expression of :func:`_measure_rows`."""
    h = alpha / (1 - alpha) * np.log(mean_norm)
    return math.log(n_outcomes) - h


def _vrpi_interval(outs, codes, confidence, n_resamples, rng, block=256):
    """Query-level bootstrap interval of the score (vRPI_2, mean over repeats).

    Rows are resampled within each identity (stratified), once for all
    repeats: the ``n`` rows of an identity that are a query in some repeat
    get multiplicities from ``n - 1`` draws with replacement, each weighted
    ``n / (n - 1)`` (Rao and Wu's rescaled bootstrap, which removes the
    ``(n - 1) / n`` shrinkage of the plain bootstrap variance within a
    stratum), and each repeat averages its queries' norms with these
    weights. The fitted attackers, temperatures and release weights are held
    fixed.
    """
    rows_of = []
    for _, _kept, split in outs:
        rows_of.append(
            np.r_[split["query"], split.get("query_unknown", [])].astype(int)
        )
    union = np.unique(np.concatenate(rows_of))
    position = [np.searchsorted(union, rows) for rows in rows_of]
    groups = [np.flatnonzero(codes[union] == c) for c in np.unique(codes[union])]
    replicates = np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        weights = np.zeros((b, union.size))
        for members in groups:
            n = members.size
            if n == 1:
                weights[:, members] = 1.0  # a single query: no spread to resample
                continue
            # Rao-Wu rescaled bootstrap: n - 1 draws, each weighted n / (n - 1).
            draws = rng.multinomial(n - 1, np.full(n, 1.0 / n), size=b)
            weights[:, members] = draws * (n / (n - 1))
        values = np.zeros(b)
        for pos, (_, kept, _) in zip(position, outs):
            w = weights[:, pos]
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = (w @ kept["query_norms"]) / w.sum(axis=1)
                values += _vrpi_from_norms(mean, 2.0, kept["n_outcomes"])
        replicates[start : start + b] = values / len(outs)
    return tuple(
        float(v) for v in order_statistic_interval(replicates, (1 - confidence) / 2)
    )


class ArtifactRelease:
    r"""A release that publishes an artifact built from some columns of ``X``.

    A released kNN graph or prototype bank is not a block of embedding
    columns the cascade's attacker could read: it is computed from
    embeddings the releaser keeps. Declared as a stage of
    :class:`RenyiPressure`, it is attacked by its own ``attacker`` (fitted on
    the audit's training rows of ``columns``, the embeddings the artifact is
    built from) and enters a cumulative state through that attacker's
    log-posterior, added with a weight chosen like any release's.

    Parameters
    ----------
    columns : slice or list of int or list of str
        The embedding columns the artifact is computed from (same forms as
        the other releases).
    attacker : classifier with ``predict_proba``
        The attacker modelling what the artifact reveals, e.g.
        :class:`GraphAttacker` for a kNN graph or :class:`PrototypeAttacker`
        for a prototype bank (with ``n_neighbors`` for a bank plus graph).

    See Also
    --------
    RenyiPressure : Audits a sequence of releases.

    Notes
    -----
    With embedding releases weighted into the state :math:`Z` and artifact
    releases :math:`a` of weights :math:`w_a`, the state's log-posterior is
    the normalised sum
    :math:`\log \hat p_Z(u \mid z) + \sum_a w_a \log \hat p_a(u \mid z)`
    (a product of experts), then temperature-calibrated as every state is.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.pressure import ArtifactRelease, GraphAttacker, RenyiPressure
    >>> X, ids = make_identity_embeddings(8, 10, 16, random_state=0)
    >>> graph = ArtifactRelease(slice(0, 16), GraphAttacker(n_neighbors=5))
    >>> audit = RenyiPressure(
    ...     releases={"Z1": slice(0, 8), "graph": graph}, random_state=0
    ... ).fit(X, ids)
    >>> audit.release_names_
    ['Z1', 'graph']
    """

    def __init__(self, columns, attacker):
        self.columns = columns
        self.attacker = attacker

    def __repr__(self):
        return f"ArtifactRelease(columns={self.columns!r}, attacker={self.attacker!r})"


def _resolve_releases(releases, estimator, n_features):
    """Return ``(names, column index arrays, artifact attackers)``.

    The third list holds, per release, the attacker of an
    :class:`ArtifactRelease` or None for a block of embedding columns.
    """
    if releases is None:
        return ["Z1"], [np.arange(n_features)], [None]
    if isinstance(releases, dict):
        names, groups = [str(k) for k in releases], list(releases.values())
    else:
        groups = list(releases)
        names = [f"Z{t + 1}" for t in range(len(groups))]
    artifacts = []
    for name, group in zip(names, groups):
        if isinstance(group, ArtifactRelease):
            att = group.attacker
            if not (hasattr(att, "fit") and hasattr(att, "predict_proba")):
                raise TypeError(
                    f"The attacker of artifact release {name!r} must have fit and "
                    f"predict_proba; got {type(att).__name__}."
                )
            artifacts.append(att)
        else:
            artifacts.append(None)
    groups = [g.columns if isinstance(g, ArtifactRelease) else g for g in groups]
    if not groups:
        raise ValueError("releases must declare at least one column group.")
    if len(set(names)) != len(names):
        raise ValueError(f"Release names must be unique; got {names}.")
    feature_names = getattr(estimator, "feature_names_in_", None)
    out = []
    for name, group in zip(names, groups):
        if isinstance(group, slice):
            cols = np.arange(n_features)[group]
        else:
            group = [group] if np.isscalar(group) else list(np.asarray(group).ravel())
            if all(isinstance(g, numbers.Integral) for g in group):
                cols = np.asarray(group, dtype=np.intp)
                bad = cols[(cols < 0) | (cols >= n_features)]
                if bad.size:
                    raise ValueError(
                        f"Release {name!r} has column indices out of range for "
                        f"{n_features} features: {bad[:10].tolist()}."
                    )
            elif all(isinstance(g, str) for g in group):
                if feature_names is None:
                    raise ValueError(
                        f"Release {name!r} is given by column names, but X has no "
                        "column names (pass a DataFrame or use integer indices)."
                    )
                lookup = {str(f): i for i, f in enumerate(feature_names)}
                missing = [g for g in group if g not in lookup]
                if missing:
                    raise ValueError(
                        f"Release {name!r} names columns not in X: {missing[:10]}."
                    )
                cols = np.asarray([lookup[g] for g in group], dtype=np.intp)
            else:
                raise ValueError(
                    f"Release {name!r} must be a slice, a list of integer column "
                    "indices or a list of column names."
                )
        if cols.size == 0:
            raise ValueError(f"Release {name!r} selects no columns.")
        out.append(np.unique(cols))
    return names, out, artifacts


class RenyiPressure(BaseEstimator):
    r"""Cumulative re-identification pressure (vRPI) of a sequence of releases.

    Splits every identity's rows (closed world: every audited identity is
    enrolled) into attacker-train, calibration and query rows; fits the
    attacker on the train rows; rescales its log-posterior by a temperature
    fitted on the calibration rows; and computes Rényi pressure measures on
    the query rows. With ``releases``, the columns of ``X`` are a sequence of
    releases :math:`Z_1, \dots, Z_T` and the measures are computed for every
    cumulative state :math:`Z_{1:t}` and every single release :math:`Z_t`.

    Parameters
    ----------
    attacker : classifier with ``predict_proba`` or None, default=None
        The attacker (a rung of the ladder). None uses
        :class:`RetrievalAttacker` (A0). It is cloned for every fit; if it
        has a ``random_state`` left at None, it gets the repeat's seed.
    alphas : array-like of float, default=(1.5, 2, 5, 10, inf)
        Rényi orders (each > 1; ``inf`` = min-entropy).
    releases : list or dict of column groups, default=None
        Each group is a slice, a list of integer column indices, or a list of
        DataFrame column names; a dict names the releases (otherwise
        ``"Z1"``, ``"Z2"``, ...). None: all columns form one release. A
        group may also be an :class:`ArtifactRelease` (a kNN graph or a
        prototype bank built from some columns), attacked by its own
        attacker and combined into the states through its log-posterior.
    calibration_size : float, default=0.1
        Fraction of each identity's rows used for calibration (at least 1).
    test_size : float, default=0.3
        Fraction of each identity's rows used as audited queries (at least
        1). Identities need at least 3 usable rows (one per split); smaller
        ones are excluded with an :class:`~skprivacy.exceptions.ExcludedIdentitiesWarning`
        and counted in ``drop_report_``.
    n_repeats : int, default=1
        Number of independently seeded splits; results are mean and standard
        deviation (ddof=1) over repeats.
    weight_grid : array-like of float, default=(0, 0.25, 0.5, 1, 2, 4)
        Candidate weights of each newly added release in the cumulative
        state (the first release has weight 1). Chosen greedily, release by
        release, by the calibration negative log-likelihood; every release
        alone (the new one reported as weight ``inf``: earlier releases
        dropped) is always a candidate too. Including 0 lets the attacker
        ignore a release that does not help it.
    calibrate : bool, default=True
        Fit a post-hoc temperature on the calibration rows (for every rung,
        including probes whose probabilities are not calibrated).
    open_world : float or None, default=None
        Fraction of identities held out as never enrolled. The same
        fractions of their rows as for enrolled identities become
        calibration and query rows (the rest is unused), so queries mix
        enrolled and unknown identities in proportion to their numbers; the
        posterior gets an extra
        "unknown" outcome from a rejection model calibrated on the
        calibration rows, and the measures use N + 1 outcomes.
    monotone : bool, default=True
        Held-out guard on the stage choice. An attacker holding
        :math:`Z_{1:t}` can always act on the previous state or on any single
        release, so if the state chosen on the calibration rows scores a
        lower vRPI_2 on the query rows than the best of those, the stage
        uses that one instead (``selected_by`` column of
        ``repeat_results_``). With a small calibration split (one row per
        identity) the calibration choice is noisy and could otherwise put a
        cumulative stage below a release it contains. The guard lets the
        query rows pick among at most ``t + 1`` states (nothing is fitted on
        them), so the cumulative estimate is the largest of those plug-in
        estimates: biased upwards by at most their sampling spread, which
        errs on the side of more leakage. ``False`` keeps the query rows out
        of every choice.
    n_jobs : int or None, default=None
        Parallel jobs over repeats (or, with one repeat, over the weight
        candidates of a stage) through joblib.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the splits (and attackers left unseeded).
    verbose : int, default=0
        Print one progress line per stage of every repeat (with the elapsed
        time) when positive.
    confidence : float in (0, 1), default=0.95
        Level of the bootstrap interval ``vrpi_ci_``.
    n_resamples : int, default=1000
        Bootstrap replicates of ``vrpi_ci_`` (0 skips it: NaN bounds).

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per (stage, alpha): ``kind`` ("cumulative" or "single"),
        ``t``, ``release`` (the t-th release), ``releases`` (releases in the
        state), ``alpha``, then the measures ``vrpi``, ``vrpi_prior``,
        ``arimoto_entropy``, ``p_guess``, ``guessing_bound``,
        ``top1_accuracy``, ``nll``, ``weight``, ``temperature``, each with a
        ``*_std`` column over repeats (NaN with one repeat), and
        ``n_queries``, ``n_outcomes``, ``n_repeats``.
    repeat_results_ : pandas.DataFrame
        The same measures for every repeat (column ``repeat``), with the
        state each stage used (``state``, e.g. ``"Z1 + 0.5*Z2"``) and how it
        was chosen (``selected_by``: ``"calibration"`` or ``"held-out
        guard"``, see ``monotone``).
    overlap_ : pandas.DataFrame
        Indexed by alpha: ``sum_single`` (Σ_t vRPI of each single release),
        ``joint`` (vRPI of the full cumulative state), ``overlap`` =
        ``sum_single - joint`` (Δ_corr,α) and ``overlap_std``. Descriptive
        only: releases independent given the identity can give either sign
        (paper 002's Theorem 3 bound fails at finite alpha; see the user
        guide), so neither sign says anything about correlation by itself.
    vrpi_ci_ : tuple of float
        ``(low, high)``: percentile bootstrap interval at ``confidence`` of
        the score (vRPI at alpha = 2 of the full cumulative state, mean over
        repeats). Query rows are resampled within each identity, the fitted
        attackers held fixed; see Notes.
    release_names_ : list of str
        Release names in order.
    release_columns_ : dict of str to ndarray
        Column indices of each release.
    release_weights_ : pandas.DataFrame
        Weight of each release (columns) chosen in every repeat (rows).
    temperature_ : float
        Post-hoc temperature of the full cumulative state (first repeat).
    attacker_ : estimator or None
        The attacker fitted on the embedding part of the full cumulative
        state (first repeat); None if that state holds artifact releases
        only.
    artifact_attackers_ : dict of str to estimator
        The fitted attackers of the artifact releases in the full cumulative
        state (first repeat), by release name.
    rejection_threshold_ : float or None
        Open world: the top posterior probability below which a query is
        more likely unknown than enrolled (first repeat).
    splits_ : list of dict
        For every repeat, the input-row indices of ``"train"``,
        ``"calibration"`` and ``"query"`` rows (and ``"*_unknown"`` in the
        open world).
    identities_ : ndarray of shape (n_identities,)
        Audited identity labels.
    drop_report_ : dict
        Rows dropped by the input validation, by reason.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit` (DataFrame input only).

    See Also
    --------
    pressure_ladder : Several attackers on the same splits in one table.
    vrpi : The measure on a posterior matrix.

    Notes
    -----
    All measures are plug-in point estimates for the given attacker, not
    bounds on what a stronger attacker could do.

    *Interval.* The audit is closed-world: the identities are the fixed
    universe the posterior ranges over, so the estimand is the expectation
    over queries of these identities, for the fitted attacker. Given the
    identity and the training rows, an identity's query rows are
    independent draws from its distribution, so ``vrpi_ci_`` resamples
    query rows within each identity (keeping every identity's share of the
    queries, hence the prior) and recomputes the score with the attackers,
    temperatures and release weights held fixed. Resampling identities
    instead would change the universe the posterior is defined on. Within an
    identity of ``n`` queries, ``n - 1`` are drawn with replacement and
    weighted ``n / (n - 1)`` (the rescaled bootstrap of Rao and Wu, 1988,
    unbiased for the variance of a stratified mean with few rows per
    stratum). The
    interval covers query sampling only: the variation from refitting the
    attacker on other rows is what ``n_repeats`` (the ``*_std`` columns)
    shows. The guessing bound column is
    :math:`\mathbb{E}_z \lVert \hat p(\cdot\mid z)\rVert_\alpha
    \ge P_{\mathrm{guess}}` (Theorem 2), exact for the same posterior.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.pressure import RenyiPressure
    >>> X, ids = make_identity_embeddings(8, 10, 16, random_state=0)
    >>> audit = RenyiPressure(releases=[slice(0, 8), slice(8, 16)],
    ...                       random_state=0).fit(X, ids)
    >>> bool(0 <= audit.score() <= np.log(8))
    True
    """

    _parameter_constraints: dict = {
        "attacker": [HasMethods(["fit", "predict_proba"]), None],
        "alphas": ["array-like"],
        "releases": [list, tuple, dict, None],
        "calibration_size": [Interval(Real, 0, 1, closed="neither")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "weight_grid": ["array-like"],
        "calibrate": ["boolean"],
        "open_world": [Interval(Real, 0, 1, closed="neither"), None],
        "monotone": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE,
        "verbose": ["verbose"],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_resamples": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        attacker=None,
        alphas=(1.5, 2, 5, 10, np.inf),
        releases=None,
        calibration_size=0.1,
        test_size=0.3,
        n_repeats=1,
        *,
        weight_grid=(0.0, 0.25, 0.5, 1.0, 2.0, 4.0),
        calibrate=True,
        open_world=None,
        monotone=True,
        n_jobs=None,
        random_state=None,
        verbose=0,
        confidence=0.95,
        n_resamples=1000,
    ):
        self.attacker = attacker
        self.alphas = alphas
        self.releases = releases
        self.calibration_size = calibration_size
        self.test_size = test_size
        self.n_repeats = n_repeats
        self.weight_grid = weight_grid
        self.calibrate = calibrate
        self.open_world = open_world
        self.monotone = monotone
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.confidence = confidence
        self.n_resamples = n_resamples

    def _check_params(self):
        alphas = [_check_alpha(a) for a in np.atleast_1d(self.alphas).tolist()]
        if not alphas:
            raise ValueError("alphas must contain at least one order.")
        if self.calibration_size + self.test_size >= 1:
            raise ValueError(
                "calibration_size + test_size must be < 1 so that the attacker "
                f"keeps training rows; got {self.calibration_size} + "
                f"{self.test_size}."
            )
        grid = np.atleast_1d(np.asarray(self.weight_grid, dtype=np.float64))
        if grid.size == 0 or (grid < 0).any() or not np.isfinite(grid).all():
            raise ValueError("weight_grid must hold finite non-negative weights.")
        if not (grid > 0).any():
            raise ValueError("weight_grid needs at least one positive weight.")
        return alphas, grid.tolist()

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Run the audit.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Embeddings; the releases are column groups of ``X``. Non-finite
            and zero-norm rows are dropped and reported.
        y : array-like of shape (n_samples,)
            Identity label of each row.

        Returns
        -------
        self : RenyiPressure
            Fitted auditor.
        """
        alphas, grid = self._check_params()
        min_ids = 3 if self.open_world is not None else 2
        data = validate_identity_data(
            self,
            X,
            y,
            min_samples_per_identity=3,
            min_identities=min_ids,
            dtype=[np.float64, np.float32],  # float32 input stays float32
        )
        self.drop_report_ = data.drop_report
        self.identities_ = data.identities
        names, columns, artifacts = _resolve_releases(
            self.releases, self, data.X.shape[1]
        )
        self.release_names_ = names
        self.release_columns_ = dict(zip(names, columns))
        blocks = [l2_normalize(data.X[:, cols]) for cols in columns]
        attacker = RetrievalAttacker() if self.attacker is None else self.attacker
        if self.open_world is not None:
            n_unknown = max(round(self.open_world * data.n_identities), 1)
            if data.n_identities - n_unknown < 2:
                raise ValueError(
                    f"open_world={self.open_world} leaves fewer than 2 enrolled "
                    f"identities out of {data.n_identities}."
                )
        alphas_all = sorted(set(alphas) | {2.0})
        params = {
            "attacker": attacker,
            "artifacts": artifacts,
            "alphas_all": alphas_all,
            "weight_grid": grid,
            "calibrate": bool(self.calibrate),
            "calibration_size": float(self.calibration_size),
            "test_size": float(self.test_size),
            "open_world": self.open_world,
            "n_identities": data.n_identities,
            "n_repeats": int(self.n_repeats),
            "verbose": int(self.verbose),
            "monotone": bool(self.monotone),
        }
        rng = check_legacy_rng(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_repeats)
        if self.n_repeats > 1:
            outs = Parallel(n_jobs=self.n_jobs)(
                delayed(_run_repeat)(blocks, data.codes, names, s, params, None, r)
                for r, s in enumerate(seeds)
            )
        else:
            outs = [
                _run_repeat(blocks, data.codes, names, seeds[0], params, self.n_jobs)
            ]

        tables = []
        for r, (table, _, _) in enumerate(outs):
            tables.append(table.assign(repeat=r))
        raw = pd.concat(tables, ignore_index=True)
        self._score_values = raw.loc[
            (raw["kind"] == "cumulative")
            & (raw["t"] == len(names))
            & (raw["alpha"] == 2.0),
            "vrpi",
        ].to_numpy()
        raw = raw[raw["alpha"].isin(alphas)].reset_index(drop=True)
        cols = ["repeat", "kind", "t", "release", "releases", "alpha"]
        self.repeat_results_ = raw[cols + [c for c in raw.columns if c not in cols]]
        self.results_ = _aggregate(raw)
        self.overlap_ = _overlap(raw, len(names))
        kept_rows = np.flatnonzero(data.kept)
        self.splits_ = [
            {k: kept_rows[v] for k, v in split.items()} for _, _, split in outs
        ]
        self.release_weights_ = pd.DataFrame(
            [kept["weights"] for _, kept, _ in outs],
            index=pd.RangeIndex(len(outs), name="repeat"),
        )
        first = outs[0][1]
        self.attacker_ = first["estimator"]
        self.artifact_attackers_ = {
            names[s]: est for s, est in first["artifacts"].items()
        }
        self.temperature_ = first["temperature"]
        self.rejection_threshold_ = (
            first["rejector"].threshold if first["rejector"] is not None else None
        )
        self._final = first
        self._columns = columns
        if self.n_resamples:
            boot = spawn_generator(int(seeds[0]), 7)
            self.vrpi_ci_ = _vrpi_interval(
                outs, data.codes, self.confidence, self.n_resamples, boot
            )
        else:
            self.vrpi_ci_ = (math.nan, math.nan)
        return self

    def score(self, X=None, y=None):
        """Audited pressure: vRPI at alpha = 2 of the full cumulative state.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            None: the audit of the fitted data (mean over repeats). Otherwise
            held-out query rows, scored with the attacker, release weights and
            temperature of the first repeat; rows of identities not seen in
            :term:`fit` are excluded (closed world, warned) or, in the open
            world, count as "unknown".
        y : array-like of shape (n_samples,), default=None
            Identity labels of ``X``.

        Returns
        -------
        pressure : float
            The vRPI_2 in nats (higher = more re-identifiable); a plug-in point
            estimate for this attacker, not a bound.
        """
        check_is_fitted(self)
        if X is None:
            return float(np.mean(self._score_values))
        if y is None:
            raise ValueError("score(X, y) needs the identity labels y of X.")
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        y = check_identity_labels(y, n_samples=X.shape[0])
        final = self._final
        code_of = {label: i for i, label in enumerate(self.identities_.tolist())}
        codes = np.array([code_of.get(label, -1) for label in y.tolist()])
        y_codes = np.where(codes >= 0, final["remap"][np.maximum(codes, 0)], -1)
        open_world = final["rejector"] is not None
        if open_world:
            y_codes = np.where(y_codes < 0, final["n_known"], y_codes)
        else:
            unseen = y_codes < 0
            if unseen.all():
                raise ValueError("None of the labels in y were enrolled in fit.")
            if unseen.any():
                warnings.warn(
                    f"Excluded {int(unseen.sum())} row(s) of identities not "
                    "enrolled in fit (closed-world audit).",
                    ExcludedIdentitiesWarning,
                    stacklevel=2,
                )
                X, y_codes = X[~unseen], y_codes[~unseen]
        blocks = [l2_normalize(X[:, cols]) for cols in self._columns]
        weights = {
            s: final["weights"][name]
            for s, name in enumerate(self.release_names_)
            if final["weights"][name] > 0
        }
        parts = []
        embedded = {s: w for s, w in weights.items() if s not in final["artifacts"]}
        if embedded:
            F = _state_features(blocks, embedded)
            parts.append((1.0, _log_posterior(final["estimator"], F)))
        parts += [
            (weights[s], _log_posterior(est, blocks[s]))
            for s, est in sorted(final["artifacts"].items())
        ]
        logp = temperature_scale(_combine(parts), final["temperature"])
        P = final["rejector"].extend(logp) if open_world else np.exp(logp)
        return float(_measure_rows(P, y_codes, [2.0])[0]["vrpi"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = True
        return tags


def _aggregate(raw):
    keys = ["kind", "t", "release", "releases", "alpha"]
    grouped = raw.groupby(keys, sort=False)
    mean = grouped[list(_METRICS)].mean()
    std = grouped[list(_METRICS)].std(ddof=1).add_suffix("_std")
    out = pd.concat([mean, std], axis=1)
    ordered = []
    for m in _METRICS:
        ordered += [m, m + "_std"]
    out = out[ordered]
    out["n_queries"] = grouped["n_queries"].mean()
    out["n_outcomes"] = grouped["n_outcomes"].first()
    out["n_repeats"] = grouped.size()
    return out.reset_index()


def _overlap(raw, T):
    rows = []
    for (rep, alpha), g in raw.groupby(["repeat", "alpha"], sort=True):
        joint = g.loc[(g["kind"] == "cumulative") & (g["t"] == T), "vrpi"].iloc[0]
        if T > 1:
            singles = g.loc[g["kind"] == "single", "vrpi"].sum()
        else:
            singles = joint
        rows.append(
            {"repeat": rep, "alpha": alpha, "sum_single": singles, "joint": joint}
        )
    df = pd.DataFrame(rows)
    df["overlap"] = df["sum_single"] - df["joint"]
    g = df.groupby("alpha")
    out = g[["sum_single", "joint", "overlap"]].mean()
    out["overlap_std"] = g["overlap"].std(ddof=1)
    return out


def pressure_ladder(X, y, attackers=None, *, return_estimators=False, **params):
    """Audit several attackers on the same splits and return one tidy table.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity labels.
    attackers : dict of str to classifier, default=None
        Named rungs; None uses :func:`attacker_ladder`.
    return_estimators : bool, default=False
        Also return the fitted :class:`RenyiPressure` of each rung.
    **params : dict
        Other :class:`RenyiPressure` parameters. If ``random_state`` is None a
        single seed is drawn so that every rung sees the same splits. With
        ``verbose`` positive, a line is printed when each rung starts and
        ends (elapsed time and the final stage's vRPI_2), besides the
        per-stage lines of :class:`RenyiPressure`.

    Returns
    -------
    table : pandas.DataFrame
        ``RenyiPressure.results_`` of every rung, with an ``attacker`` column
        first.
    estimators : dict of str to RenyiPressure
        Only if ``return_estimators``.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.pressure import (PrototypeAttacker, RetrievalAttacker,
    ...                                 pressure_ladder)
    >>> X, ids = make_identity_embeddings(8, 10, 16, random_state=0)
    >>> table = pressure_ladder(
    ...     X, ids, {"A0": RetrievalAttacker(), "A2": PrototypeAttacker()},
    ...     alphas=[2], random_state=0)
    >>> table[["attacker", "alpha"]].values.tolist()
    [['A0', 2.0], ['A2', 2.0]]
    """
    if attackers is None:
        attackers = attacker_ladder(random_state=params.get("random_state"))
    # One integer seed for every rung: same splits for all of them.
    params["random_state"] = seed_from(params.get("random_state"))
    tables, fitted = [], {}
    say = Progress("pressure_ladder", params.get("verbose", 0))
    for r, (name, attacker) in enumerate(attackers.items()):
        say(f"rung {r + 1}/{len(attackers)} {name!r}", timed=False)
        rung_start = say.elapsed()
        est = RenyiPressure(attacker=attacker, **params).fit(X, y)
        tables.append(est.results_.assign(attacker=name))
        fitted[name] = est
        say(
            f"rung {r + 1}/{len(attackers)} {name!r} done in "
            f"{say.elapsed() - rung_start:.1f} s, vRPI_2 {est.score():.3f}"
        )
    table = pd.concat(tables, ignore_index=True)
    table = table[["attacker"] + [c for c in table.columns if c != "attacker"]]
    return (table, fitted) if return_estimators else table
