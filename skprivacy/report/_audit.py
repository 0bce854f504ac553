# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The unified audit: every registered method on one cleaned dataset and pair list."""

import json
import platform
import sys
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from skprivacy.report._methods import METHODS, _jsonable, available_methods
from skprivacy.report._protocols import PROTOCOLS
from skprivacy.utils import identity_pairs, validate_identity_data

__all__ = ["AuditReport", "NoAuditablePairsError", "run_audit"]


class NoAuditablePairsError(ValueError):
    """Fewer than two identities with at least two usable rows remain."""


class _Input(BaseEstimator):
    """Stand-in estimator so the shared input layer can validate the audit's data."""


@dataclass
class _Context:
    X: np.ndarray
    y: np.ndarray
    codes: np.ndarray
    identities: np.ndarray
    counts: np.ndarray
    protocol: dict
    random_state: int
    n_jobs: object
    # The input as given: estimators clean it themselves (the same shared input
    # layer), so their numbers are bit-identical to fitting them on the file.
    X_input: object = None
    y_input: object = None

    @property
    def n_identities(self):
        return len(self.identities)


@dataclass
class AuditReport:
    """Result of :func:`run_audit`: summary, per-pair table, provenance, plot data.

    The constructor arguments are stored as attributes of the same names.

    Parameters
    ----------
    summary : dict
        One entry per method result: ``value``, ``kind`` (``"point estimate"``,
        ``"certificate"``, ``"hypothesis test"``, ``"control"`` or
        ``"diagnostic"``), ``statistic`` (what the value is, in words),
        ``parameters`` and method-specific extras.
    pairs : DataFrame
        One row per audited identity pair (``id_a``, ``id_b``, ``pair_rank``
        = position in the shared seeded ordering), one column per method output.
    provenance : dict
        Cleaning counts and drop reasons, seed, pair list, software versions,
        start and end time.
    extra : dict
        Plot data per method (used by :meth:`to_html`).

    Examples
    --------
    >>> import tempfile
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.report import run_audit
    >>> X, ids = make_identity_embeddings(5, 8, 8, random_state=0)
    >>> report = run_audit(X, ids, methods=["gaussianity"])
    >>> sorted(report.save(tempfile.mkdtemp() + "/out"))
    ['pairs', 'provenance', 'report', 'summary']
    >>> report.to_html().startswith("<!DOCTYPE html>")
    True
    """

    summary: dict
    pairs: pd.DataFrame
    provenance: dict
    extra: dict = field(default_factory=dict, repr=False)

    def to_html(self):
        """Return the self-contained HTML report (inline CSS, base64 PNG plots)."""
        from skprivacy.report._html import render_html

        return render_html(self)

    def save(self, directory, *, force=False):
        """Write ``report.html``, ``summary.json``, ``pairs.csv``, ``provenance.json``.

        Parameters
        ----------
        directory : str or path-like
            Output directory; created if missing.
        force : bool, default=False
            Allow writing into an existing directory (files are overwritten).

        Returns
        -------
        paths : dict
            The four written paths by name.
        """
        out = Path(directory)
        if out.exists() and not force:
            raise FileExistsError(
                f"Output directory {out} already exists; use --force (force=True) "
                "to overwrite it."
            )
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "summary": out / "summary.json",
            "pairs": out / "pairs.csv",
            "provenance": out / "provenance.json",
            "report": out / "report.html",
        }
        paths["summary"].write_text(_dumps(self.summary))
        self.pairs.to_csv(paths["pairs"], index=False)
        paths["provenance"].write_text(_dumps(self.provenance))
        paths["report"].write_text(self.to_html(), encoding="utf-8")
        return paths


def _dumps(obj):
    return json.dumps(_jsonable(obj), indent=2, allow_nan=False) + "\n"


def _versions():
    import importlib.metadata as md

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in [
        "skprivacy",
        "numpy",
        "scipy",
        "pandas",
        "scikit-learn",
        "joblib",
        "matplotlib",
    ]:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:  # pragma: no cover
            out[name] = None
    return out


def _now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_audit(
    X,
    y,
    *,
    protocol="quick",
    methods=None,
    random_state=0,
    n_jobs=None,
    progress=None,
):
    """Run every selected audit method on one dataset with one seeded pair list.

    The data go through the shared input layer once (non-finite and
    near-zero rows dropped, rows L2-normalised, identities with fewer than two
    rows excluded; every drop counted), then each method fits its public
    skprivacy estimator on the cleaned data with the same ``random_state``, so
    all methods audit prefixes of the same seeded pair ordering.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Identity label of each row.
    protocol : {"quick", "paper", "exhaustive"} or dict, default="quick"
        Pair counts and permutation counts per method (see the user guide);
        a dict overrides entries of ``"quick"``.
    methods : list of str or None, default=None
        Registered method names (``"gaussmech"``, ``"kdelr"``, ``"mmdtv"``,
        ``"permutation"``, ``"rocht"``, ``"certificate"``, ...). None runs every
        method whose estimator is available.
    random_state : int, default=0
        Seed of the pair ordering and of every estimator.
    n_jobs : int or None, default=None
        Passed to every estimator that accepts it.
    progress : object or None, default=None
        Object with ``start(stage, weight)`` and ``finish()`` (the CLI's
        progress bar); None reports nothing.

    Returns
    -------
    report : AuditReport
        Summary, per-pair table, provenance and plot data.

    Raises
    ------
    NoAuditablePairsError
        If fewer than two identities have at least two usable rows.
    ValueError
        For an unknown protocol or method, or invalid data.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy.report import run_audit
    >>> X, ids = make_identity_embeddings(6, 10, 16, random_state=0)
    >>> report = run_audit(X, ids, methods=["gaussianity"])
    >>> report.summary["residual_gaussianity"]["kind"]
    'diagnostic'
    >>> report.provenance["n_identities_after"]
    6
    """
    started = _now()
    if isinstance(protocol, str):
        if protocol not in PROTOCOLS:
            raise ValueError(
                f"Unknown protocol {protocol!r}; choose from {sorted(PROTOCOLS)}."
            )
        name, settings = protocol, dict(PROTOCOLS[protocol])
    else:
        name, settings = "custom", {**PROTOCOLS["quick"], **dict(protocol)}
    if methods is None:
        selected = available_methods()
    else:
        unknown = [m for m in methods if m not in METHODS]
        if unknown:
            raise ValueError(
                f"Unknown method(s) {unknown}; registered methods: {sorted(METHODS)}."
            )
        missing = {m: METHODS[m].missing() for m in methods if METHODS[m].missing()}
        if missing:
            raise ValueError(
                "Method(s) not available in this installation: "
                + "; ".join(f"{m} needs {', '.join(v)}" for m, v in missing.items())
            )
        selected = list(dict.fromkeys(methods))

    n_rows_in = int(np.asarray(y).shape[0])
    ids_in = pd.unique(pd.Series(np.asarray(y, dtype=object)))
    caught = []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            data = validate_identity_data(_Input(), X, y)
        except ValueError as exc:
            text = " ".join(str(exc).split())
            if "every row was dropped" in text.lower():
                raise NoAuditablePairsError(
                    f"no auditable identity pairs: {text}"
                ) from exc
            if "identit" in text and "at least" in text:
                raise NoAuditablePairsError(
                    "no auditable identity pairs: fewer than 2 identities have at "
                    f"least 2 usable rows ({n_rows_in} rows, {len(ids_in)} "
                    "identities before cleaning)"
                ) from exc
            raise
        caught = [f"{w.category.__name__}: {w.message}" for w in record]

    ctx = _Context(
        X=data.X,
        y=np.asarray(data.y),
        codes=data.codes,
        identities=data.identities,
        counts=data.counts,
        protocol=settings,
        random_state=random_state,
        n_jobs=n_jobs,
        X_input=X,
        y_input=np.asarray(y),
    )
    if progress is not None and hasattr(progress, "message"):
        progress.message(
            f"{data.X.shape[0]} of {n_rows_in} rows, {ctx.n_identities} of "
            f"{len(ids_in)} identities and {data.X.shape[1]} dimensions after "
            f"cleaning; protocol {name}: {', '.join(selected)}"
        )
    # The shared ordering, long enough for the largest prefix any method uses.
    pair_keys = [k for k in settings if k.endswith("_pairs")]
    total = ctx.n_identities * (ctx.n_identities - 1) // 2
    longest = max(
        (total if settings[k] is None else min(int(settings[k]), total))
        for k in pair_keys
    )
    shared = identity_pairs(ctx.n_identities, longest, random_state=random_state)
    rank = pd.DataFrame(
        {
            "id_a": data.identities[shared[:, 0]],
            "id_b": data.identities[shared[:, 1]],
            "pair_rank": np.arange(len(shared)),
        }
    )

    summary, extra, frames, timings = {}, {}, [], {}
    seen = set(caught)
    for m in selected:
        spec = METHODS[m]
        if progress is not None:
            progress.start(spec.title, spec.weight(ctx))
        t0 = datetime.now(timezone.utc)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            result = spec.run(ctx)
        timings[m] = (datetime.now(timezone.utc) - t0).total_seconds()
        for w in record:
            text = f"{w.category.__name__}: {w.message}"
            # The estimators re-run the shared cleaning: report each drop once.
            if text not in seen and not issubclass(w.category, DeprecationWarning):
                seen.add(text)
                caught.append(f"{m}: {text}")
        for key, entry in result.summaries.items():
            entry.setdefault("method", m)
            entry.setdefault("certifies", spec.certifies)
            entry.setdefault("does_not_certify", spec.does_not_certify)
            summary[key] = entry
        extra[m] = result.extra
        if result.pairs is not None:
            frames.append(result.pairs)
        if progress is not None:
            progress.finish()

    pairs = rank.iloc[:0]
    if frames:
        pairs = frames[0]
        for f in frames[1:]:
            pairs = pairs.merge(f, on=["id_a", "id_b"], how="outer")
        pairs = rank.merge(pairs, on=["id_a", "id_b"], how="right")
        pairs = pairs.sort_values("pair_rank", kind="stable").reset_index(drop=True)
        if {"rocht_tv", "mmdtv_mmd"} <= set(pairs.columns):
            pairs["witness_ratio"] = _witness_ratio(pairs)
            witness = _witness_summary(pairs["witness_ratio"])
            if witness is not None:
                summary["classifier_witness"] = witness

    report_drop = data.drop_report
    provenance = {
        "protocol": name,
        "protocol_settings": settings,
        "methods": selected,
        "unavailable_methods": {
            k: v.missing() for k, v in METHODS.items() if v.missing()
        },
        "n_rows_before": n_rows_in,
        "n_rows_after": int(data.X.shape[0]),
        "n_identities_before": len(ids_in),
        "n_identities_after": ctx.n_identities,
        "n_features": int(data.X.shape[1]),
        "dropped_rows": {
            "non_finite": report_drop.get("non_finite", 0),
            "low_norm": report_drop.get("low_norm", 0),
            "small_identity": report_drop.get("small_identity", 0),
        },
        "excluded_identities": report_drop.get("excluded_identities", []),
        "warnings": caught,
        "seed": random_state,
        "pair_ordering": (
            "skprivacy.utils.identity_pairs(n_identities, n_pairs, "
            "random_state=seed) over the sorted auditable identities; every method "
            "uses a prefix"
        ),
        "n_pairs_total": total,
        "pairs": rank[["id_a", "id_b"]].to_numpy().tolist(),
        "n_jobs": n_jobs,
        "method_seconds": timings,
        "versions": _versions(),
        "start_time": started,
        "end_time": _now(),
    }
    return AuditReport(summary=summary, pairs=pairs, provenance=provenance, extra=extra)


def _witness_ratio(pairs):
    """Ratio of ROC-HT's classifier TV witness to the MMD-TV bound, per pair.

    DESIGN.md (MMD-TV): the classifier witness ``d_TV,h = max_t (TPR - FPR)``
    from out-of-fold scores lower-bounds the total variation, and
    ``MMD / 2 <= TV``; the ratio ``d_TV,h / (MMD / 2)`` says how much of the
    TV the kernel bound captures (above 1: the classifier sees more than the
    MMD chain can express). NaN where either method did not audit the pair
    (they share the seeded prefix) or the MMD is 0.
    """
    half_mmd = pairs["mmdtv_mmd"] / 2
    return pairs["rocht_tv"] / half_mmd.where(half_mmd > 0)


def _witness_summary(ratio):
    """Summary entry of the witness ratio over the pairs both methods audited."""
    both = ratio.dropna()
    if both.empty:
        return None
    return {
        "value": float(both.median()),
        "kind": "diagnostic",
        "statistic": (
            "median over pairs audited by both ROC-HT and MMD-TV of the classifier "
            "TV witness divided by MMD/2"
        ),
        "max": float(both.max()),
        "n_pairs": int(both.size),
        "method": "classifier_witness",
        "certifies": (
            "Nothing: it compares two point estimates of the total variation "
            "distance between the identities' embedding distributions."
        ),
        "does_not_certify": (
            "Not a bound; a ratio far above 1 says the kernel (MMD) chain is loose "
            "for these embeddings, not that either number is wrong."
        ),
    }
