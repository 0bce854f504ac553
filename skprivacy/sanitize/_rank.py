# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audit's erasure loop, cross-fitted: rank suggestion and after-erasure audit.

An eraser fitted on the audited identities removes exactly their mean
differences, so an audit of its in-sample output looks clean however
re-identifiable the rows remain. Everything here measures erasure on
identities the eraser never saw: the rank the audit report suggests
(:func:`suggest_isp_rank`, through :func:`select_rank`), the data the audit
reads after erasure (:func:`cross_fitted_erasure`) and the warning on a file
whose projector was fitted on the identities being audited
(:func:`in_sample_note`).
"""

import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from skprivacy.auditors import ReidentificationAuditor
from skprivacy.sanitize._cross_fit import _cross_fit, _identity_splits
from skprivacy.sanitize._isp import ISP
from skprivacy.sanitize._select import _n_impostor_pairs, _rank_grid, select_rank
from skprivacy.utils import array_fingerprint, encode_identities
from skprivacy.utils._validation import validate_audit_data

__all__ = [
    "FARS",
    "TARGET_TAR",
    "cross_fitted_erasure",
    "erasure_line",
    "erasure_notes",
    "erased_audit_data",
    "in_sample_note",
    "kept_rows",
    "suggest_isp_rank",
]

#: Largest TAR at the FAR below that the suggested rank must bring the upper
#: confidence bound, on identities held out of the projector's fit.
TARGET_TAR = 0.1
#: FARs tried for the suggestion: the smallest the within-fold impostor pairs
#: resolve (at least ``1 / far`` of them) is used.
FARS = (1e-3, 1e-2, 1e-1)


def _folds(n_identities, cv=5):
    """Identity folds for a sweep: at most ``cv``, at least 2 identities each."""
    return min(cv, n_identities // 2)


def _eraser_name(eraser):
    """``ISP(n_components=14)``: class and the parameters that differ from default."""
    params = eraser.get_params(deep=False)
    try:
        default = type(eraser)().get_params(deep=False)
    except TypeError:
        default = {}
    shown = {k: v for k, v in params.items() if default.get(k, object()) != v}
    args = ", ".join(f"{k}={v!r}" for k, v in shown.items())
    return f"{type(eraser).__name__}({args})"


def _json_params(eraser):
    return {
        k: v if isinstance(v, str | int | float | bool | type(None)) else repr(v)
        for k, v in eraser.get_params(deep=False).items()
    }


def _reid(Z, y, random_state):
    auditor = ReidentificationAuditor(n_bootstrap=0, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auditor.fit(Z, y)
    return {
        "rate": float(auditor.rate_),
        "chance": float(auditor.chance_),
        "ci": [float(v) for v in auditor.ci_],
        "n_queries": int(auditor.n_queries_),
    }


def cross_fitted_erasure(eraser, X, y, *, cv=5, random_state=0, n_jobs=None):
    """Cross-fitted output of an eraser, and the record an audit of it carries.

    Parameters
    ----------
    eraser : estimator
        An unfitted eraser (e.g. ``ISP(n_components=8)``).
    X : ndarray of shape (n_samples, n_features)
        Cleaned embeddings.
    y : ndarray of shape (n_samples,)
        Identity labels.
    cv : int, default=5
        Identity folds (fewer when there are fewer than ``2 * cv`` identities).
    random_state : int, default=0
        Seed of the re-identification query sample.
    n_jobs : int or None, default=None
        Folds fitted in parallel.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_output_features)
        Every row transformed by an eraser fitted on the other folds'
        identities (:func:`cross_fit_transform`).
    record : dict
        ``eraser`` (as text), ``class``, ``params``, ``audited`` (what the
        audit reads, in words), ``cv``, ``n_identities``,
        ``min_training_identities``, ``reid_before`` / ``reid_after``
        (leave-one-out 1-NN re-identification of the rows before erasure and
        of the cross-fitted output: ``rate``, ``chance``, ``ci``,
        ``n_queries``; point estimates with exact binomial intervals) and
        ``erased_sha256``.

    Raises
    ------
    ValueError
        With fewer than two identities, or an ``n_components`` the training
        folds cannot support (the message gives how many identities they
        hold).
    """
    y = np.asarray(y)
    n_ids = int(pd.unique(y).size)
    k = _folds(n_ids, cv)
    if k < 2:
        raise ValueError(
            f"cross-fitted erasure needs at least 4 identities (2 folds of 2); got "
            f"{n_ids}"
        )
    splits = _identity_splits(X, y, cv=k)
    m_train = min(pd.unique(y[tr]).size for tr, _ in splits)
    rank = eraser.get_params(deep=False).get("n_components")
    top = min(X.shape[1], m_train - 1)
    if isinstance(rank, int | np.integer) and not isinstance(rank, bool) and rank > top:
        raise ValueError(
            f"{_eraser_name(eraser)} cannot be cross-fitted on these data: with "
            f"{n_ids} identities in {k} folds, the training folds hold as few as "
            f"{m_train} identities, so at most {top} directions can be estimated; "
            f"use a rank up to {top} or 'full'"
        )
    Z = np.asarray(_cross_fit(clone(eraser), X, y, splits, n_jobs=n_jobs))
    record = {
        "mode": "cross-fitted",
        "eraser": _eraser_name(eraser),
        "class": type(eraser).__name__,
        "params": _json_params(eraser),
        "audited": (
            f"cross-fitted output: the identities were split into {k} folds and "
            "each fold's rows were transformed by an eraser fitted on the other "
            "folds' identities only, so no row was erased by a projector that "
            "saw its identity"
        ),
        "cv": k,
        "n_identities": n_ids,
        "min_training_identities": int(m_train),
        "reid_before": _reid(X, y, random_state),
        "reid_after": _reid(Z, y, random_state),
        "erased_sha256": array_fingerprint(Z)["sha256"],
    }
    return Z, record


def erased_audit_data(eraser, data, cleaning, caught, random_state, n_jobs=None):
    """Return the audit's data after cross-fitted erasure, cleaning counts merged.

    ``data``, ``cleaning`` and ``caught`` are those of
    ``validate_audit_data`` on the input; the erased rows go through it
    again (a row the eraser maps to zero is dropped and counted). Returns the
    erased data, the merged cleaning record (rows and identities before = the
    input's, after = the erased data's, drops summed), the warnings and
    :func:`cross_fitted_erasure`'s record.
    """
    Z, erasure = cross_fitted_erasure(
        eraser, data.X, data.y, random_state=random_state, n_jobs=n_jobs
    )
    erased, after, more = validate_audit_data(Z, data.y)
    merged = {**cleaning, **{k: after[k] for k in after if k.endswith("_after")}}
    merged["dropped_rows"] = {
        k: v + after["dropped_rows"].get(k, 0)
        for k, v in cleaning["dropped_rows"].items()
    }
    merged["excluded_identities"] = [
        *cleaning["excluded_identities"],
        *after["excluded_identities"],
    ]
    return erased, merged, [*caught, *more], erasure


def kept_rows(original, erased):
    """Return the positions in the input of the audited rows (after erasure)."""
    rows = np.flatnonzero(original.kept)
    return rows if erased is original else rows[erased.kept]


def erasure_line(record):
    """One sentence on what the audit read and what erasure did to re-identification."""
    b, a = record["reid_before"], record["reid_after"]
    return (
        f"Audited after cross-fitted erasure by {record['eraser']} ({record['cv']} "
        "identity folds; each row erased by a projector fitted without its "
        "identity): leave-one-out 1-NN re-identification "
        f"{b['rate']:.3f} before, {a['rate']:.3f} after [{a['ci'][0]:.3f}, "
        f"{a['ci'][1]:.3f}] (chance {a['chance']:.3f}; point estimates)."
    )


def erasure_notes(verdict, steps, erasure, note):
    """Say in the verdict (and next steps) what erasure the audited rows went through.

    ``erasure`` is :func:`cross_fitted_erasure`'s record, ``note``
    :func:`in_sample_note`'s; either may be None. ``steps`` is changed in
    place; the verdict is returned.
    """
    if erasure is None and note is None:
        return verdict
    if erasure is not None:
        r = erasure["reid_after"]
        lead = (
            f"After cross-fitted erasure by {erasure['eraser']} (leave-one-out 1-NN "
            f"re-identification {r['rate']:.3f}, chance {r['chance']:.3f}): "
        )
        text = erasure_line(erasure)
        for step in steps:  # not the command that produced this report again
            if "--erase" in (step["command"] or ""):
                step["command"] = None
    else:
        r, text = note["reid"], note["text"]
        lead = (
            "In-sample audit of a sanitised file (optimistic; leave-one-out 1-NN "
            f"still re-identifies {r['rate']:.3f}, chance {r['chance']:.3f}): "
        )
        steps.insert(0, {"action": "audit", "command": note["command"], "text": (
            "Measure the erasure on people the projector never saw: audit the "
            "original file with cross-fitted erasure."
        )})  # fmt: skip
    verdict["headline"] = lead + verdict["headline"]
    verdict["lines"].insert(0, {"family": "point estimates", "text": text})
    return verdict


def _far(y, splits):
    """Return the smallest of :data:`FARS` the within-fold impostor pairs resolve."""
    codes = encode_identities(y)[1]
    n_imp = sum(_n_impostor_pairs(np.unique(codes[te], return_inverse=True)[1])
                for _, te in splits)  # fmt: skip
    return next((f for f in FARS if n_imp * f >= 1), FARS[-1])


def suggest_isp_rank(
    X,
    y,
    *,
    target=TARGET_TAR,
    confidence=0.95,
    cv=5,
    source="FILE",
    random_state=0,
    n_jobs=None,
):
    """Suggest an ISP rank from a cross-fitted sweep, with the sentence to show.

    :func:`select_rank` runs ISP over ranks ``0, 1, 2, 4, ...`` up to the
    largest the training folds allow that keeps a dimension; each rank is measured on identities held
    out of the projector's fit. The suggested rank is the smallest whose upper
    confidence bound on the TAR at the smallest resolvable FAR of
    :data:`FARS` is at most ``target`` (bounds jointly at ``confidence`` over
    the ranks tried).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Cleaned embeddings.
    y : ndarray of shape (n_samples,)
        Identity labels.
    target : float, default=TARGET_TAR
        Largest acceptable TAR (upper bound) on held-out identities.
    confidence : float, default=0.95
        Joint confidence over the ranks tried.
    cv : int, default=5
        Identity folds (fewer with fewer than ``2 * cv`` identities).
    source : str, default="FILE"
        The input file named in the suggested command.
    random_state : int, default=0
        Seed of the impostor and query samples.
    n_jobs : int or None, default=None
        Folds fitted in parallel.

    Returns
    -------
    suggestion : dict or None
        None with fewer than 4 identities. Otherwise ``rank`` (None when no
        rank meets the target, 0 when no erasure is needed), ``far``,
        ``target``, ``confidence``, ``cv``, ``table`` (the :func:`select_rank`
        table as records), ``text`` (what was measured, in words; None when
        no erasure is needed) and ``command``.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.sanitize._rank import suggest_isp_rank
    >>> X, ids = make_identity_embeddings(40, 6, 16, n_identity_dims=4,
    ...                                   separation=2.0, random_state=0)
    >>> s = suggest_isp_rank(X, ids, target=0.2)
    >>> s["rank"], s["far"]
    (4, 0.001)
    >>> "held out" in s["text"]
    True
    """
    y = np.asarray(y)
    n_ids = int(pd.unique(y).size)
    k = _folds(n_ids, cv)
    if k < 2:
        return None
    splits = _identity_splits(X, y, cv=k)
    far = _far(y, splits)
    # At least one dimension must remain, or every erased row is 0.
    m_train = min(pd.unique(y[tr]).size for tr, _ in splits)
    ranks = _rank_grid(min(X.shape[1] - 1, m_train - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_rank(
            ISP(), X, y, target=target, far=far, confidence=confidence, cv=k,
            ranks=ranks, random_state=random_state, n_jobs=n_jobs,
        )  # fmt: skip
    table = result.table_
    s = {
        "rank": result.rank_,
        "far": far,
        "target": float(target),
        "confidence": float(confidence),
        "cv": k,
        "table": table.to_dict(orient="records"),
    }
    s["text"], s["command"] = _sentence(table, result, s, n_ids, source)
    return s


def _sentence(table, result, s, n_ids, source):
    """Return what the sweep measured and what to do, in words, and the command."""
    rank, far, target = s["rank"], s["far"], s["target"]
    conf = f"{100 * s['confidence']:g}%"
    t0 = table.iloc[0]
    what = (
        f"TAR@FAR={far:g} on identities held out of the projector's fit "
        f"({s['cv']}-fold cross-fitting over {n_ids} identities; upper bounds "
        f"jointly at {conf} over {len(table)} ranks)"
    )
    if rank == 0:
        return None, None
    if rank is not None:
        row = table.loc[table["rank"] == rank].iloc[0]
        text = (
            f"Remove identity directions with ISP: rank {rank} is the smallest "
            f"whose {what} is at most {target:g} (upper bound {row['tar_upper']:.3f}"
            f", point estimate {row['tar']:.3f}; {t0['tar']:.3f} without erasure; "
            f"1-NN re-identification within held-out folds {row['reid_rate']:.3f}, "
            f"chance {row['reid_chance']:.3f}). Check the erased data with 'skprivacy audit {source} --erase "
            f"isp:{rank}'."
        )
        return (
            text,
            f"skprivacy sanitize {source} --n-components {rank} --out sanitized",
        )
    best = table.loc[table["tar_upper"].idxmin()]
    top = int(table["rank"].max())
    m = int(best["n_genuine_identities"])
    floor = 1.0 - (result.alpha_per_rank / 2) ** (1.0 / m)
    text = (
        f"No ISP rank up to {top} brings the {what} to {target:g} or below "
        f"(smallest upper bound {best['tar_upper']:.3f} at rank "
        f"{int(best['rank'])}, point estimate {best['tar']:.3f}; {t0['tar']:.3f} "
        "without erasure; 1-NN re-identification within held-out folds "
        f"{best['reid_rate']:.3f}, chance {best['reid_chance']:.3f})"
    )
    if best["tar"] > target:
        text += ": erasure by ISP does not protect these identities."
    else:
        text += (
            f": the point estimate is below the target, but with {m} identities no "
            f"bound can fall below {floor:.3f}; audit more identities to confirm."
        )
    return text, f"skprivacy audit {source} --erase isp:full"


def in_sample_note(record, X, y, source="ORIGINAL", random_state=0):
    """Return the warning for an audit of a file whose projector saw the audited ids.

    Parameters
    ----------
    record : dict or None
        The provenance of a sanitised file (:func:`sanitize_provenance`).
    X : ndarray of shape (n_samples, n_features)
        The audited (sanitised, cleaned) rows.
    y : ndarray of shape (n_samples,)
        Their identities.
    source : str, default="ORIGINAL"
        The original file, when the record does not name it.
    random_state : int, default=0
        Seed of the re-identification query sample.

    Returns
    -------
    note : dict or None
        ``mode`` (``"in-sample"``), ``eraser``, ``text``, ``command`` (the
        cross-fitted audit of the original, at the file's rank or ``full``
        when the folds cannot support it), ``n_shared`` (audited identities
        the projector was fitted on) and ``reid`` (leave-one-out 1-NN
        re-identification of the audited rows: ``rate``, ``chance``, ``ci``,
        ``n_queries``); None when the projector's identities are unknown or
        none of them is audited.
    """
    known = ((record or {}).get("fitted_on") or {}).get("identities")
    if known is None:
        return None
    y = np.asarray(y)
    audited = {str(v) for v in pd.unique(y.astype(object))}
    shared = audited & {str(v) for v in known}
    if not shared:
        return None
    rank, k = record.get("rank"), _folds(len(audited))
    if k >= 2:
        splits = _identity_splits(X, y, cv=k)
        top = min(X.shape[1], min(pd.unique(y[tr]).size for tr, _ in splits) - 1)
        rank = rank if isinstance(rank, int) and rank <= top else "full"
    reid = _reid(X, y, random_state)
    original = (record.get("input") or {}).get("path") or source
    text = (
        f"This file was sanitised by {record.get('eraser', 'ISP')} fitted on "
        f"{len(shared)} of the {len(audited)} identities audited here: the erasure "
        "removed exactly their mean differences, so this audit is in-sample and "
        "optimistic (mean-based tests miss what the rows still give away: "
        f"leave-one-out 1-NN re-identifies {reid['rate']:.3f} of them, chance "
        f"{reid['chance']:.3f})."
    )
    return {
        "mode": "in-sample",
        "eraser": record.get("eraser"),
        "text": text,
        "command": f"skprivacy audit {original} --erase isp:{rank}",
        "n_shared": len(shared),
        "reid": reid,
    }
