# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shared pair-audit base class of every ε auditor over identity pairs.

:class:`BasePairAuditor` owns everything that is the same for GaussMech, KDE-LR,
MMD-TV and ROC-HT: the input layer (:func:`~skprivacy.utils.validate_identity_data`),
the pair protocol (:func:`~skprivacy.utils.identity_pairs`), the ``n_jobs`` loop
through joblib over *chunks* of pairs, the ``results_`` DataFrame, and
``score``. A concrete auditor only says how to audit a chunk of pairs.

Subclass contract (stable; other modules rely on it)
----------------------------------------------------
Class attributes

``_summary`` : {"median", "max"}
    How ``score()`` summarises the per-pair column ``_score_column``.
``_guarantee`` : {"point estimate", "certificate"}
    What that summary is. Exposed after fit as ``summary_kind_`` and
    ``guarantee_``. Override the methods ``_summary_kind()``,
    ``_guarantee_kind()`` or ``_score_column_name()`` when they depend on
    parameters (e.g. a ``confidence`` parameter turning on a certificate).
``_score_column`` : str, default "epsilon"
    Column of ``results_`` summarised by ``score``.
``_min_samples_per_identity`` : int, default 2
    Passed to ``validate_identity_data``.

Hooks

``_audit_pairs(self, data, pairs, context) -> dict[str, ndarray]`` (required)
    Audit a chunk of pairs. ``data`` is the :class:`~skprivacy.utils.IdentityData`
    of the whole audit, ``pairs`` an ``(n_chunk, 2)`` int array of identity
    codes ``(a, b)`` with ``a < b`` (rows of identity ``a`` are
    ``data.X[data.codes == a]``), ``context`` a :class:`PairAuditContext`.
    Return a dict whose values are arrays with first dimension ``n_chunk``,
    aligned with ``pairs``. It must contain ``"epsilon"``. 1-D values become
    columns of ``results_`` (in dict order, after ``id_a, id_b``); values with
    more dimensions (e.g. per-dimension maxima) are stacked into the fitted
    dict ``pair_details_`` (first axis aligned with ``results_`` rows).
    The hook runs in joblib workers: it must not modify ``self``, and a pair's
    values must not depend on which other pairs share its chunk. Randomness
    must come from ``context.pair_rng(a, b)`` (seeded by ``random_state`` and
    the pair), so results are identical for any ``n_jobs`` or backend.
``_prepare_audit(self, data, pairs) -> object`` (optional)
    Runs once in the calling process before the chunks are dispatched; its
    return value is ``context.state`` (e.g. per-identity means). Default None.
``_make_chunks(self, data, pairs) -> list[ndarray]`` (optional)
    Index arrays into ``pairs``, one per joblib task; together a partition of
    ``range(len(pairs))``. The default splits the audit order into contiguous
    chunks of about ``_CHUNK_SECONDS`` of estimated work each (see
    ``_estimate_seconds``); the size depends only on the data and the pairs
    (never on ``n_jobs``), so the same computations run whatever the parallel
    setting.
``_estimate_seconds(self, data, pairs) -> float or None`` (optional)
    Cost model: estimated single-core seconds of the whole audit. An audit
    estimated below ``_IN_PROCESS_SECONDS`` runs its chunks in the calling
    process whatever ``n_jobs`` says (starting workers and shipping them the
    data would cost more than the work); so does any audit when joblib
    resolves ``n_jobs`` to one worker. Results are identical either way: the
    same chunks run. The default ``None`` (unknown cost) always dispatches.

Subclasses declare their own ``__init__`` (storing parameters only, including
``n_pairs``, ``n_jobs`` and ``random_state``) and extend
``BasePairAuditor._parameter_constraints``.
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator

from skprivacy.utils import (
    IdentityData,
    identity_pairs,
    limit_blas_threads,
    map_blas_threads,
    spawn_generator,
    validate_identity_data,
)
from skprivacy.utils._identity import group_by_identity
from skprivacy.utils._random import seed_from
from skprivacy.utils._sklearn import (
    RANDOM_STATE,
    Interval,
    _fit_context,
    check_is_fitted,
)

__all__ = [
    "BasePairAuditor",
    "PairAuditContext",
    "grouped_rows",
    "pair_identity_rows",
    "pair_row_index",
    "summarize",
]

# Audits estimated below this many single-core seconds run in the calling
# process whatever n_jobs says: starting a worker pool and memory-mapping the
# embeddings costs a good part of a second (benchmarks/README.md, "Kernel
# constants"), more than the work they would share.
_IN_PROCESS_SECONDS = 1.0
# Target estimated cost of one chunk (one joblib task): large enough that the
# per-task overhead (across loky workers the arguments are hashed to reuse
# their memory maps) is negligible, small enough that two workers share the
# work evenly.
_CHUNK_SECONDS = 0.5
# Cost-model rates, single core, about half the rates of float64 products of
# 100 x 512 blocks, elementwise exponentials and streaming elementwise
# arithmetic (benchmarks/bench_kernels.py, section rates; benchmarks/README.md).
FLOP_RATE = 2e10
ELEMENT_RATE = 2e8
STREAM_RATE = 1e9

_SUMMARIES = {"median", "max"}
_GUARANTEES = {"point estimate", "certificate"}


def summarize(values, kind):
    """Summarise per-pair values as ``"median"`` or ``"max"``, ignoring NaN.

    Parameters
    ----------
    values : array-like of shape (n_pairs,)
        Per-pair values; ``inf`` is kept (the maximum of a set containing
        ``inf`` is ``inf``), NaN is ignored.
    kind : {"median", "max"}
        The summary.

    Returns
    -------
    summary : float
        NaN when every value is NaN.

    Examples
    --------
    >>> from skprivacy.auditors._base import summarize
    >>> summarize([1.0, 3.0, float("nan"), 2.0], "median")
    2.0
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan")
    if kind == "median":
        return float(np.median(values))
    if kind == "max":
        return float(np.max(values))
    raise ValueError(f"Unknown summary {kind!r}; expected 'median' or 'max'.")


def grouped_rows(data, dtype=np.float64):
    """Rows of ``data.X`` grouped by identity code, and the group offsets.

    Returns ``(Xs, starts)``: rows of identity ``i`` are
    ``Xs[starts[i]:starts[i + 1]]``. No copy is made when the rows are
    already grouped (e.g. sorted by identity), which is the common case.

    Parameters
    ----------
    data : IdentityData
        Validated data.
    dtype : dtype or None, default=np.float64
        Dtype of ``Xs``; ``None`` keeps the dtype of ``data.X``.

    Returns
    -------
    Xs : ndarray of shape (n_samples, n_features)
        Grouped rows (C-contiguous).
    starts : ndarray of shape (n_identities + 1,)
        Group offsets.
    """
    order, starts, _ = group_by_identity(data.codes, data.n_identities)
    grouped = data.codes.size < 2 or np.all(data.codes[1:] >= data.codes[:-1])
    return data.normalized_rows(None if grouped else order, dtype), starts


def pair_row_index(data, pairs):
    """Which rows an audit of ``pairs`` needs, grouped by identity.

    The index part of :func:`pair_identity_rows`, for auditors that read the
    rows without normalising them first (e.g. folding deferred norms into a
    weighted reduction).

    Returns
    -------
    slot : ndarray of shape (n_identities,)
        As in :func:`pair_identity_rows`.
    rows : ndarray of int or None
        Indices into ``data.X`` of the gathered rows, grouped, in slot order;
        None means every row of ``data.X`` in place (already grouped).
    starts : ndarray of shape (n_used + 1,)
        Group offsets into the gathered rows.
    """
    k = data.n_identities
    used = np.unique(np.asarray(pairs, dtype=np.intp))
    codes = data.codes
    grouped = codes.size < 2 or bool(np.all(codes[1:] >= codes[:-1]))
    if len(used) == k or (grouped and 2 * data.counts[used].sum() >= codes.size):
        # (Nearly) every row is needed: all identities, in place when the
        # rows are grouped, rather than copying most of them.
        order, starts, _ = group_by_identity(codes, k)
        return np.arange(k, dtype=np.intp), None if grouped else order, starts
    slot = np.full(k, -1, dtype=np.intp)
    slot[used] = np.arange(len(used))
    row_slot = slot[codes]
    rows = np.flatnonzero(row_slot >= 0)
    rows = rows[np.argsort(row_slot[rows], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(data.counts[used])])
    return slot, rows, starts


def pair_identity_rows(data, pairs, dtype=np.float64):
    """Return the grouped rows of only the identities that occur in ``pairs``.

    An audit of a few pairs among many identities must not cost time or
    memory in the number of identities: this gathers the rows of the
    identities the pairs need (all of them, without a copy, when every
    identity occurs and the rows are already grouped).

    Parameters
    ----------
    data : IdentityData
        Validated data.
    pairs : ndarray of shape (n_pairs, 2)
        Identity codes.
    dtype : dtype or None, default=np.float64
        Dtype of ``Xs``; ``None`` keeps the dtype of ``data.X``.

    Returns
    -------
    slot : ndarray of shape (n_identities,)
        ``slot[code]`` is the index of identity ``code`` among the gathered
        identities (-1 for identities not gathered). When the rows are
        grouped and the pairs need at least half of them, every identity is
        gathered, without a copy.
    Xs : ndarray of shape (n_gathered_rows, n_features)
        The rows of the gathered identities, grouped, in code order.
    starts : ndarray of shape (n_used + 1,)
        Rows of gathered identity ``s`` are ``Xs[starts[s]:starts[s + 1]]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from skprivacy.auditors._base import pair_identity_rows
    >>> from skprivacy.utils import validate_identity_data
    >>> data = validate_identity_data(
    ...     BaseEstimator(), np.eye(10) + 1, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    ... )
    >>> slot, Xs, starts = pair_identity_rows(data, np.array([[0, 2]]))
    >>> slot.tolist(), Xs.shape, starts.tolist()
    ([0, -1, 1, -1, -1], (4, 10), [0, 2, 4])
    """
    slot, rows, starts = pair_row_index(data, pairs)
    # With deferred normalisation only the gathered rows are normalised.
    return slot, data.normalized_rows(rows, dtype), starts


@dataclass(frozen=True)
class PairAuditContext:
    """What every chunk of one audit shares (passed to ``_audit_pairs``).

    Parameters
    ----------
    n_pairs_total : int
        Number of pairs in the whole audit (``K`` for a Bonferroni correction
        over pairs).
    seed : int
        Entropy of the audit, derived from ``random_state``.
    state : object, default=None
        The return value of ``_prepare_audit``.

    Examples
    --------
    >>> from skprivacy.auditors import PairAuditContext
    >>> context = PairAuditContext(n_pairs_total=3, seed=0)
    >>> float(context.pair_rng(0, 1).random()) == float(
    ...     PairAuditContext(n_pairs_total=99, seed=0).pair_rng(0, 1).random()
    ... )
    True
    """

    n_pairs_total: int
    seed: int
    state: object = None

    def pair_rng(self, a, b):
        """Return the generator of pair ``(a, b)``, independent of chunking.

        Parameters
        ----------
        a, b : int
            Identity codes of the pair.

        Returns
        -------
        rng : numpy.random.Generator
            Seeded by ``(seed, a, b)`` only.
        """
        return spawn_generator(self.seed, a, b)


_DATA_FIELDS = ("X", "y", "codes", "identities", "counts", "kept", "norms")


def _flatten(state):
    """Split a state into (layout, values) so that arrays travel as arguments."""
    if isinstance(state, dict):
        return ("dict", tuple(state)), list(state.values())
    if isinstance(state, tuple):
        return ("tuple", len(state)), list(state)
    return ("object", None), [state]


def _unflatten(layout, values):
    kind, info = layout
    if kind == "dict":
        return dict(zip(info, values))
    if kind == "tuple":
        return tuple(values)
    return values[0]


def _run_chunk(auditor, pairs, n_pairs_total, seed, drop_report, layout, *arrays):
    # Every array (embeddings, per-identity state) is a top-level argument, so
    # loky memory-maps it and joblib's dask backend scatters it once per audit
    # instead of pickling it into every task.
    n = len(_DATA_FIELDS)
    data = IdentityData(**dict(zip(_DATA_FIELDS, arrays[:n])), drop_report=drop_report)
    context = PairAuditContext(
        n_pairs_total=n_pairs_total, seed=seed, state=_unflatten(layout, arrays[n:])
    )
    out = auditor._audit_pairs(data, pairs, context)
    if "epsilon" not in out:
        raise RuntimeError(
            f"{type(auditor).__name__}._audit_pairs must return an 'epsilon' entry."
        )
    return {k: np.asarray(v) for k, v in out.items()}


class BasePairAuditor(BaseEstimator):
    """Base class of the ε auditors over identity pairs (not for direct use).

    ``fit(X, y)`` validates and cleans the embeddings, draws the seeded pair
    ordering (a prefix of ``n_pairs`` pairs, or every pair when
    ``n_pairs=None``), audits the pairs in chunks through joblib and stores one
    row per pair in ``results_``. See the module docstring for the subclass
    contract.

    Attributes
    ----------
    results_ : pandas.DataFrame
        One row per audited pair, in audit order: ``id_a``, ``id_b`` (identity
        labels), ``epsilon``, then method columns.
    pairs_ : ndarray of shape (n_pairs_audited, 2)
        Identity codes of the audited pairs (indices into ``identities_``).
    identities_ : ndarray of shape (n_identities,)
        Identity labels audited (identities with too few usable rows excluded).
    drop_report_ : dict
        Rows dropped by the input layer, by reason.
    summary_ : float
        The summary returned by ``score()``.
    summary_kind_ : {"median", "max"}
        How ``summary_`` summarises the per-pair values.
    guarantee_ : {"point estimate", "certificate"}
        Whether ``summary_`` is a point estimate or a certificate.
    pair_details_ : dict of ndarray
        Multi-dimensional per-pair outputs (first axis aligned with
        ``results_``); empty for most auditors.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

    Examples
    --------
    A minimal auditor: the distance between identity means, summarised by its
    maximum.

    >>> import numpy as np
    >>> from skprivacy.auditors import BasePairAuditor
    >>> class MeanGapAuditor(BasePairAuditor):
    ...     _summary = "max"
    ...
    ...     def __init__(self, *, n_pairs=None, n_jobs=None, random_state=0):
    ...         self.n_pairs = n_pairs
    ...         self.n_jobs = n_jobs
    ...         self.random_state = random_state
    ...
    ...     def _audit_pairs(self, data, pairs, context):
    ...         means = np.array([data.rows_of(i).mean(0) for i in range(data.n_identities)])
    ...         gap = np.linalg.norm(means[pairs[:, 0]] - means[pairs[:, 1]], axis=1)
    ...         return {"epsilon": gap}
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> auditor = MeanGapAuditor().fit(X, ["a", "a", "b", "b"])
    >>> list(auditor.results_.columns), auditor.summary_kind_
    (['id_a', 'id_b', 'epsilon'], 'max')
    """

    _summary = "median"
    _guarantee = "point estimate"
    _score_column = "epsilon"
    _min_samples_per_identity = 2
    # Subclasses whose hooks read rows only through pair_identity_rows,
    # grouped_rows or IdentityData.normalized_rows set this: the input layer
    # then skips the normalised copy of X and only the rows an audit uses are
    # normalised (or the norms are folded into a reduction).
    _defer_normalization = False
    # Subclasses whose _audit_pairs is safe to run on concurrent threads (no
    # shared mutable state, BLAS limits not changed inside) set this: audits
    # run in the calling process then spread their chunks over the BLAS threads.
    _threaded_chunks = False

    _parameter_constraints: dict = {
        "n_pairs": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE,
    }

    # ------------------------------------------------------------------ hooks
    def _audit_pairs(self, data, pairs, context):  # pragma: no cover - abstract
        raise NotImplementedError

    def _prepare_audit(self, data, pairs):
        return None

    def _estimate_seconds(self, data, pairs):
        return None

    def _make_chunks(self, data, pairs):
        n = len(pairs)
        # Size depends on the data and the pairs only, so chunking (and hence
        # every floating-point operation) is the same for any n_jobs/backend.
        seconds = self._estimate_seconds(data, pairs)
        if seconds is None:
            size = int(np.clip(-(-n // 64), 16, 2048))
        else:
            per_pair = max(float(seconds), 1e-12) / max(n, 1)
            size = int(np.clip(_CHUNK_SECONDS / per_pair, 1, 1 << 16))
        return [np.arange(s, min(s + size, n)) for s in range(0, n, size)]

    def _in_process(self, data, pairs):
        """Whether the chunks run in the calling process (see the cost model)."""
        if effective_n_jobs(self.n_jobs) == 1:
            return True
        seconds = self._estimate_seconds(data, pairs)
        return seconds is not None and seconds < _IN_PROCESS_SECONDS

    def _summary_kind(self):
        return self._summary

    def _guarantee_kind(self):
        return self._guarantee

    def _score_column_name(self):
        return self._score_column

    # ----------------------------------------------------------------- engine
    def _validate(self, X, y, reset):
        return validate_identity_data(
            self,
            X,
            y,
            reset=reset,
            min_samples_per_identity=self._min_samples_per_identity,
            normalize="defer" if self._defer_normalization else True,
        )

    def _protocol_pairs(self, data, random_state):
        return identity_pairs(
            data.n_identities, self.n_pairs, random_state=random_state
        )

    def _audit_table(self, data, pairs, seed):
        """Audit explicit ``pairs`` of ``data``; return ``(results, details)``."""
        pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        context = PairAuditContext(
            n_pairs_total=len(pairs),
            seed=int(seed),
            state=self._prepare_audit(data, pairs),
        )
        chunks = [np.asarray(c, dtype=np.intp) for c in self._make_chunks(data, pairs)]
        layout, state_values = _flatten(context.state)
        arrays = [getattr(data, f) for f in _DATA_FIELDS] + state_values
        # What every chunk shares, after its pairs.
        shared = (context.n_pairs_total, context.seed, data.drop_report, layout)
        if self._in_process(data, pairs):

            def run(idx):
                return _run_chunk(self, pairs[idx], *shared, *arrays)

            # Work too small for worker processes still uses the cores the
            # BLAS would: chunks on threads, each product single-threaded.
            if self._threaded_chunks:
                outs = map_blas_threads(run, chunks)
            else:
                outs = [run(idx) for idx in chunks]
        else:
            tasks = (
                delayed(_run_chunk)(self, pairs[idx], *shared, *arrays)
                for idx in chunks
            )
            if self._threaded_chunks:
                # Threads share the arrays instead of memory-mapping them into
                # worker processes (faster for exhaustive MMD-TV); a
                # configured backend such as dask still applies.
                with limit_blas_threads(1):
                    outs = Parallel(n_jobs=self.n_jobs, prefer="threads")(tasks)
            else:
                outs = Parallel(n_jobs=self.n_jobs)(tasks)
        order = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.intp)
        if len(order) != len(pairs) or (
            len(order) and not np.array_equal(np.sort(order), np.arange(len(pairs)))
        ):
            raise RuntimeError("_make_chunks must partition the pairs.")
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        columns = {
            "id_a": data.identities[pairs[:, 0]],
            "id_b": data.identities[pairs[:, 1]],
        }
        details = {}
        keys = list(outs[0]) if outs else ["epsilon"]
        keys = ["epsilon"] + [k for k in keys if k != "epsilon"]
        for key in keys:
            if outs:
                stacked = np.concatenate([o[key] for o in outs], axis=0)[inverse]
            else:  # pragma: no cover - there is always at least one pair
                stacked = np.zeros(0)
            if stacked.ndim == 1:
                if stacked.dtype.kind == "f":
                    stacked = stacked.astype(np.float64, copy=False)
                columns[key] = stacked
            else:
                details[key] = stacked
        return pd.DataFrame(columns), details

    def _audit(self, data, random_state):
        pairs = self._protocol_pairs(data, random_state)
        seed = seed_from(random_state)
        results, details = self._audit_table(data, pairs, seed)
        return pairs, results, details

    # ----------------------------------------------------------------- public
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Audit the identity pairs of ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings (rows are L2-normalised; unusable rows are dropped and
            reported).
        y : array-like of shape (n_samples,)
            Identity label of each row.

        Returns
        -------
        self : object
            The fitted auditor.
        """
        data = self._validate(X, y, reset=True)
        pairs, results, details = self._audit(data, self.random_state)
        self.identities_ = data.identities
        self.drop_report_ = data.drop_report
        self.pairs_ = pairs
        self.results_ = results
        self.pair_details_ = details
        self.summary_kind_ = self._summary_kind()
        self.guarantee_ = self._guarantee_kind()
        self.summary_ = summarize(
            results[self._score_column_name()], self.summary_kind_
        )
        return self

    def score(self, X=None, y=None):
        """Return the audited leakage (higher = leakier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Embeddings to audit with the fitted settings. ``None`` returns the
            summary of the fitted audit.
        y : array-like of shape (n_samples,), default=None
            Identity labels of ``X``; required when ``X`` is given.

        Returns
        -------
        score : float
            ``summary_kind_`` (median or maximum) of the per-pair ε column;
            ``guarantee_`` says whether it is a point estimate or a
            certificate. To select settings that minimise leakage with
            scikit-learn's model selection tools, use
            :func:`skprivacy.metrics.leakage_scorer`.
        """
        check_is_fitted(self)
        if X is None and y is None:
            return float(self.summary_)
        if X is None or y is None:
            raise ValueError(
                f"{type(self).__name__}.score needs both X and y (the identity "
                "labels), or neither (the summary of the fitted audit)."
            )
        data = self._validate(X, y, reset=False)
        _, results, _ = self._audit(data, self.random_state)
        return summarize(results[self._score_column_name()], self._summary_kind())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # Rows with NaN/inf are dropped and reported, not rejected.
        tags.input_tags.allow_nan = True
        return tags
