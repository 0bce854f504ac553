# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Table I of per-pair results, its identity-level bootstrap intervals, per-row rates.

:func:`table_i` and :func:`compare_conditions` read the same input: per
condition, a table of per-pair values (``id_a``, ``id_b``, one column per
method). The audited pairs share identities (every pair of an identity reuses its
rows), so pairs are not independent and resampling pairs would understate the
uncertainty. These functions resample *identities*: a replicate draws the
audited identities with replacement, and an identity pair enters it as many
times as both of its identities were drawn together. Draws are shared by every
method and every condition (same identity label, same draw), so comparisons
between conditions of the same identities are paired.
"""

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd

from skprivacy.utils import check_generator, check_identity_labels, check_scores
from skprivacy.utils._resample import multinomial_draws, order_statistic_interval
from skprivacy.utils._sklearn import RANDOM_STATE, Interval, StrOptions, validate_params

__all__ = [
    "ConditionComparison",
    "compare_conditions",
    "comparison_sentence",
    "identity_rate_interval",
    "table_i",
]

_ID_COLUMNS = ("id_a", "id_b")
# Columns of the comparison table of compare_conditions.
_COMPARISON_COLUMNS = (
    "condition_a",
    "condition_b",
    "method",
    "difference",
    "ci_low",
    "ci_high",
    "resolved",
)
# Columns of a per-pair table that are never a per-method statistic.
_NOT_METHODS = frozenset({"id_a", "id_b", "pair_rank", "condition"})
# Bound on the cells of one block of replicates (weights x pairs), ~32 MB.
_BLOCK_CELLS = 1 << 22
# The columns of ConditionComparison's two tables.
_TABLES = {
    "table_i_intervals": ["condition", "method", "median", "ci_low", "ci_high"],
    "comparison": list(_COMPARISON_COLUMNS),
}


# ----------------------------------------------------------------- core maths
def _weighted_medians(values, counts_of):
    """Median of every replicate's multiset of pairs.

    ``counts_of(block, order)`` returns, for the replicates ``block`` (a
    slice) and the pairs in value order ``order``, how many times each pair
    appears in each replicate (block, n_pairs); the result is ``np.median``
    of that multiset (mean of the two middle values for an even count; NaN
    when no pair survives), one value per replicate. ``values`` must not
    hold NaN.
    """
    order = np.argsort(values, kind="stable")
    v = values[order]
    n_rep = counts_of(None, None)
    out = np.empty(n_rep)
    step = max(1, _BLOCK_CELLS // max(len(v), 1))
    for start in range(0, n_rep, step):
        counts = counts_of(slice(start, start + step), order)
        cum = np.cumsum(counts, axis=1, dtype=np.int64)
        total = cum[:, -1]
        lo = (total - 1) // 2  # 0-based positions of the two middle elements
        hi = total // 2
        # First pair whose cumulative count exceeds a position: one sorted
        # search over the rows laid end to end (row r shifted by r * big).
        big = int(total.max()) + 1
        shift = np.arange(len(cum), dtype=np.int64) * big
        flat = (cum + shift[:, None]).ravel()
        first = np.arange(len(cum)) * cum.shape[1]
        j_lo = np.searchsorted(flat, lo + shift, side="right") - first
        j_hi = np.searchsorted(flat, hi + shift, side="right") - first
        j_lo = np.minimum(j_lo, len(v) - 1)  # rows with no pair (NaN below)
        j_hi = np.minimum(j_hi, len(v) - 1)
        with np.errstate(invalid="ignore"):
            med = (v[j_lo] + v[j_hi]) / 2.0
        med[total == 0] = np.nan
        out[start : start + len(counts)] = med
    return out


def _identity_counts(draws, ia, ib):
    """Pair multiplicities ``w_a * w_b`` from identity draws (for _weighted_medians)."""

    def counts_of(rows, order):
        if rows is None:
            return draws.shape[0]
        d = draws[rows]
        return d[:, ia[order]] * d[:, ib[order]]

    return counts_of


def _pair_counts(draws, pair_codes):
    """Pair multiplicities drawn per pair (the pair-level bootstrap)."""

    def counts_of(rows, order):
        if rows is None:
            return draws.shape[0]
        return draws[rows][:, pair_codes[order]]

    return counts_of


def _shrinkage(identity_reps, pair_reps):
    """Factor that removes the pair-level excess of the identity bootstrap.

    With product weights the identity bootstrap's variance is about
    ``S + P`` where the dyadic-robust variance is ``S - P`` and the pair
    bootstrap's is ``P`` (``S``: sum over identities of squared summed
    influences, ``P``: sum of squared influences). The factor scales the
    identity replicates' spread to ``max(V_id - 2 V_pair, V_pair)``; 1 when
    either variance is not finite or the identity one is 0.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        v_id, v_pair = np.var(identity_reps), np.var(pair_reps)
    if not (np.isfinite(v_id) and np.isfinite(v_pair)) or v_id <= 0:
        return 1.0
    return float(np.sqrt(min(1.0, max(v_id - 2.0 * v_pair, v_pair) / v_id)))


def _interval(estimate, replicates, tail, n_identities, shrink=1.0):
    """Percentile interval from order statistics, with the small-sample scaling.

    The endpoints are :func:`order_statistic_interval`'s; finite ones are
    moved away from the estimate by ``shrink * sqrt(N / (N - 1))``, where
    ``sqrt(N / (N - 1))`` is the factor by which resampling ``N`` identities
    understates a variance and ``shrink`` that of :func:`_shrinkage`.
    """
    if np.isnan(estimate):
        return np.full(2, np.nan)
    q = order_statistic_interval(replicates, tail)
    scale = np.sqrt(n_identities / (n_identities - 1)) if n_identities > 1 else 1.0
    scale *= shrink
    finite = np.isfinite(q) & np.isfinite(estimate)
    q[finite] = estimate + scale * (q[finite] - estimate)
    return q


# ------------------------------------------------------------ Table I intervals
def _method_columns(tables, methods):
    if methods is None:  # numeric columns of any table, in order of appearance
        return {
            c: c
            for t in tables.values()
            for c in t.columns
            if c not in _NOT_METHODS and pd.api.types.is_numeric_dtype(t[c])
        }
    if isinstance(methods, dict):
        return {str(k): str(v) for k, v in methods.items()}
    return {str(c): str(c) for c in methods}


def _check_tables(pairs):
    if not isinstance(pairs, dict) or not pairs:
        raise ValueError(
            "pairs must be a non-empty dict {condition: per-pair DataFrame}; got "
            f"{type(pairs).__name__}{' (empty)' if isinstance(pairs, dict) else ''}."
        )
    out = {}
    for name, table in pairs.items():
        if not isinstance(table, pd.DataFrame):
            raise TypeError(
                f"pairs[{name!r}] must be a DataFrame with columns id_a, id_b and "
                f"one column per method; got {type(table).__name__}."
            )
        missing = [c for c in _ID_COLUMNS if c not in table.columns]
        if missing:
            raise ValueError(f"pairs[{name!r}] has no column(s) {missing}.")
        for column in _ID_COLUMNS:
            check_identity_labels(table[column], name=f"pairs[{name!r}][{column!r}]")
        same = (table["id_a"] == table["id_b"]).to_numpy()
        if same.any():
            raise ValueError(
                f"pairs[{name!r}] pairs an identity with itself in {int(same.sum())} "
                "row(s); every row must be a pair of two different identities."
            )
        out[str(name)] = table
    # Labels of one kind across every table: 1 and "1" are not one identity.
    check_identity_labels(
        pd.concat([t[c] for t in out.values() for c in _ID_COLUMNS], ignore_index=True),
        name="the id_a and id_b columns of pairs",
    )
    return out


def _method_values(table, column, condition):
    """Return a method's per-pair values as floats (NaN: a pair not audited)."""
    values = table[column]
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=np.float64)
    numbers = pd.to_numeric(values, errors="coerce")
    bad = np.flatnonzero((values.notna() & numbers.isna()).to_numpy())
    if bad.size:
        raise TypeError(
            f"pairs[{condition!r}][{column!r}] must hold numbers (NaN for a pair "
            f"not audited); got {values.iloc[bad[0]]!r} at row(s) "
            f"{', '.join(map(str, bad[:10]))}."
        )
    return numbers.to_numpy(dtype=np.float64)


@validate_params(
    {"pairs": [dict], "methods": [dict, list, tuple, None]},
    prefer_skip_nested_validation=True,
)
def table_i(pairs, *, methods=None):
    """Table I: each method's median and maximum per-pair value, per condition.

    Parameters
    ----------
    pairs : dict of str to DataFrame
        Per condition, the per-pair rows the table summarises (e.g. the first
        100 pairs of the ordering): columns ``id_a``, ``id_b`` and one column
        per method, as for :func:`compare_conditions`.
    methods : dict, list or None, default=None
        Method columns, as for :func:`compare_conditions` (None: every
        numeric column except ``id_a``, ``id_b`` and ``pair_rank``).

    Returns
    -------
    table : DataFrame
        One row per condition (index ``condition``, in the dict's order):
        ``"<method> median"`` for every method, then ``"<method> max"``. A
        method with a missing value (NaN) or no column in a condition did not
        audit every pair there: NaN, as in :func:`compare_conditions`.

    See Also
    --------
    compare_conditions : Intervals for these medians and their differences.

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.stats import table_i
    >>> a = pd.DataFrame({"id_a": [0, 0, 1], "id_b": [1, 2, 2], "eps": [1.0, 2.0, 4.0]})
    >>> table_i({"a": a, "b": a.assign(eps=[1.0, None, 2.0])}).to_dict("index")
    {'a': {'eps median': 2.0, 'eps max': 4.0}, 'b': {'eps median': nan, 'eps max': nan}}
    """
    tables = _check_tables(pairs)
    columns = _method_columns(tables, methods)
    table = pd.DataFrame(index=pd.Index(list(tables), name="condition"))
    for stat, f in (("median", np.median), ("max", np.max)):
        for column, method in columns.items():
            table[f"{method} {stat}"] = [
                _statistic(t, column, f, name) for name, t in tables.items()
            ]
    return table


def _statistic(table, column, f, condition):
    """``f`` of a column when every pair has a value, else NaN."""
    v = _method_values(table, column, condition) if column in table else np.zeros(0)
    return float(f(v)) if v.size and not np.isnan(v).any() else np.nan


@dataclass
class ConditionComparison:
    """Result of :func:`compare_conditions`.

    Every field is also an attribute.

    Parameters
    ----------
    table_i_intervals : pandas.DataFrame
        One row per (condition, method): ``condition``, ``method``,
        ``median`` (the median of the per-pair values), ``ci_low``,
        ``ci_high`` (identity-bootstrap percentile interval at
        ``confidence``, one cell at a time).
    comparison : pandas.DataFrame
        One row per (pair of conditions, method): ``condition_a``,
        ``condition_b``, ``method``, ``difference`` (median in ``a`` minus
        median in ``b``; higher ε = leakier), ``ci_low``, ``ci_high``
        (simultaneous over every row of the table) and ``resolved`` (the
        interval excludes 0).
    confidence : float
        Confidence level of each interval of ``table_i_intervals`` and the
        simultaneous level of ``comparison``.
    n_resamples : int
        Bootstrap replicates.
    n_identities : int
        Distinct identity labels resampled (over every condition).

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.stats import compare_conditions
    >>> table = pd.DataFrame({"id_a": [0, 0, 1], "id_b": [1, 2, 2], "eps": [1.0, 2.0, 3.0]})
    >>> result = compare_conditions({"a": table}, n_resamples=50, random_state=0)
    >>> result.table_i_intervals["median"].tolist(), result.n_identities
    ([2.0], 3)
    """

    table_i_intervals: pd.DataFrame
    comparison: pd.DataFrame
    confidence: float
    n_resamples: int
    n_identities: int

    def sentence(self):
        """Return the comparison in words (see :func:`comparison_sentence`)."""
        return comparison_sentence(self.comparison, confidence=self.confidence)

    def to_dict(self):
        """Return the result as JSON-ready records (:meth:`from_dict` reads it back).

        Returns
        -------
        data : dict
            ``table_i_intervals`` and ``comparison`` as lists of row dicts,
            ``confidence``, ``n_resamples`` and ``n_identities``.
        """
        data = {name: getattr(self, name).to_dict("records") for name in _TABLES}
        return data | {
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "n_identities": self.n_identities,
        }

    @classmethod
    def from_dict(cls, data):
        """Rebuild a result from :meth:`to_dict`'s records.

        Parameters
        ----------
        data : dict
            As :meth:`to_dict` returns it, e.g. read back from JSON: a null
            number becomes NaN, ``resolved`` a bool; a missing table is
            empty and a missing scalar None.

        Returns
        -------
        result : ConditionComparison

        Examples
        --------
        >>> import pandas as pd
        >>> from skprivacy.stats import ConditionComparison, compare_conditions
        >>> table = pd.DataFrame({"id_a": [0, 0, 1], "id_b": [1, 2, 2], "eps": [1.0, 2.0, 3.0]})
        >>> result = compare_conditions({"a": table}, n_resamples=50, random_state=0)
        >>> back = ConditionComparison.from_dict(result.to_dict())
        >>> back.table_i_intervals.equals(result.table_i_intervals)
        True
        >>> ConditionComparison.from_dict({}).comparison.columns.tolist()[:3]
        ['condition_a', 'condition_b', 'method']
        """
        tables = {}
        for name, columns in _TABLES.items():
            frame = pd.DataFrame(data.get(name, []), columns=columns)
            numbers = {"median", "difference", "ci_low", "ci_high"} & set(columns)
            types = dict.fromkeys(numbers, float)
            if "resolved" in columns:
                types["resolved"] = bool
            tables[name] = frame.astype(types)
        scalars = ("confidence", "n_resamples", "n_identities")
        return cls(**tables, **{k: data.get(k) for k in scalars})


@validate_params(
    {
        "pairs": [dict],
        "methods": [dict, list, tuple, None],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_resamples": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def compare_conditions(
    pairs, *, methods=None, confidence=0.95, n_resamples=2000, random_state=None
):
    r"""Identity-bootstrap intervals for Table I medians and their differences.

    For every condition and method: the median of the per-pair values and a
    percentile interval. For every pair of conditions and method: the
    difference of the medians with an interval simultaneous over the whole
    comparison table, so "``a`` leaks more than ``b``" can be read off the
    intervals that exclude 0.

    Parameters
    ----------
    pairs : dict of str to DataFrame
        Per condition, its per-pair results: columns ``id_a``, ``id_b`` (the
        pair's identity labels) and one column per method (per-pair ε, higher
        = leakier). Every row is used: pass the rows Table I summarises
        (e.g. the first 100 pairs of the ordering).
    methods : dict, list or None, default=None
        Method columns: a dict ``{column: name}`` (the name is used in the
        output), a list of columns, or None for every numeric column except
        ``id_a``, ``id_b`` and ``pair_rank``. A method missing from a
        condition's table is left out of that condition's rows.
    confidence : float in (0, 1), default=0.95
        Level of each Table I interval, and simultaneous level of the
        comparison.
    n_resamples : int or "auto", default=2000
        Bootstrap replicates (the simultaneous intervals read tails of
        probability ``(1 - confidence) / (2 R)`` for ``R`` comparison rows, so
        keep ``n_resamples * (1 - confidence) / (2 R)`` at 5 or more).
        ``"auto"``: ``max(2000, ceil(20 R_max / (1 - confidence)))`` with
        ``R_max`` = (pairs of conditions) x (most method columns of one
        condition), an upper bound of ``R``: at least 10 replicates beyond
        each simultaneous tail.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the identity draws; an int gives identical results on every run.

    Returns
    -------
    result : ConditionComparison
        ``table_i_intervals`` and ``comparison`` DataFrames (see
        :class:`ConditionComparison`), and :meth:`~ConditionComparison.sentence`.

    See Also
    --------
    comparison_sentence : The comparison in words.
    identity_rate_interval : The same resampling for a per-row rate.

    Notes
    -----
    *Scheme.* Let the conditions' tables mention :math:`N` distinct identity
    labels. A replicate draws :math:`N` labels with replacement
    (:math:`w_i` copies of identity :math:`i`, multinomial) and forms every
    pair between copies of two *different* audited identities: the audited
    pair :math:`(a, b)` appears :math:`w_a w_b` times, pairs of two copies of
    one identity do not exist (no identity is compared with itself). The
    replicate's median is the median of that multiset. An identity label
    present in several conditions gets the same :math:`w_i` in all of them
    (paired conditions: two encoders of the same faces); labels present in
    one condition only are drawn independently of the others, which is
    also valid for unrelated conditions (their covariance is then estimated
    near 0).

    *Intervals.* Table I cells: percentile interval at ``confidence``, cell
    by cell. Differences: percentile interval of the replicates'
    :math:`\mathrm{median}_a^* - \mathrm{median}_b^*` at level
    :math:`1 - (1 - c)/R` for each of the :math:`R` rows of ``comparison``
    (Bonferroni), so all rows hold together at ``confidence``; ``resolved``
    rows have an interval excluding 0. The endpoints at tail probability
    :math:`p` are the :math:`k`-th smallest and :math:`k`-th largest of the
    :math:`B` replicates, :math:`k = \max(1, \lfloor Bp \rfloor)`. Finite
    endpoints are moved away from the estimate by :math:`\sqrt{N/(N-1)}`,
    the factor by which resampling :math:`N` identities understates a
    variance (with few identities the percentile interval is otherwise too
    narrow). Quantiles are order statistics, so an infinite median (e.g. an
    ROC-HT ε of ``inf``) stays infinite; a row whose difference or any
    replicate is undefined (``inf - inf``, no pair in a replicate, a NaN
    value) has no interval and is not resolved.

    *Validity.* When every pair of the :math:`N` identities is audited (an
    exhaustive audit), the per-pair values form a jointly exchangeable
    array and resampling identities is the bootstrap whose validity
    Davezies, D'Haultfœuille and Guyonvarch (Ann. Statist. 2021) establish
    for such arrays; the median follows by the functional delta method
    (positive density at the median). The uncertainty it captures is that of
    drawing other identities (and their rows) from the same population.

    Product weights also count each pair's own variation three times
    (:math:`\mathrm{Var}(w_a w_b) = 3` for Poisson-like draws, against 1):
    writing :math:`\psi_{ab}` for a pair's influence on the median and
    :math:`S_i` for the sum of :math:`\psi` over identity :math:`i`'s pairs,
    the identity bootstrap estimates :math:`\sum_i S_i^2 + \sum \psi^2`
    where the variance is :math:`\sum_i S_i^2 - \sum \psi^2` (the
    dyadic-robust variance of Fafchamps and Gubert, 2007, and Aronow, Samii
    and Assenova, 2015), and a bootstrap of pairs gives
    :math:`\sum \psi^2`. The excess is negligible for a Table I cell of an
    exhaustive audit, where the identity terms dominate, so cells keep the
    plain (slightly conservative) identity bootstrap. It dominates a paired
    difference, where the identity terms largely cancel, and a sparse
    design (each identity in one pair or none). Differences therefore scale
    the identity replicates' spread around the estimate by
    :math:`\sqrt{\max(V_{id} - 2V_{pair}, V_{pair}) / V_{id}}` (at most 1),
    with :math:`V_{id}` and :math:`V_{pair}` the variances of the identity
    and of the pair bootstrap (pairs drawn with replacement; the same
    unordered pair of labels in several conditions gets one draw). The
    floor :math:`V_{pair}` is the variance with no identity effect at all.
    The simulations in the package's tests check the level of the whole
    procedure: no difference declared between conditions of one
    distribution beyond the nominal rate, and simultaneous coverage of
    planted differences, for exhaustive and sparse designs.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skprivacy.stats import compare_conditions
    >>> rng = np.random.default_rng(0)
    >>> a, b = np.triu_indices(12, 1)
    >>> leak = rng.normal(size=12)  # identity effects shared by both encoders
    >>> base = leak[a] + leak[b] + rng.normal(size=a.size)
    >>> pairs = {
    ...     "resnet": pd.DataFrame({"id_a": a, "id_b": b, "GaussMech": 10 + base}),
    ...     "hog": pd.DataFrame({"id_a": a, "id_b": b, "GaussMech": 5 + base}),
    ... }
    >>> result = compare_conditions(pairs, random_state=0)
    >>> result.comparison[["condition_a", "condition_b", "method", "resolved"]]
      condition_a condition_b     method  resolved
    0      resnet         hog  GaussMech      True
    >>> result.sentence()
    'resnet leaks more than hog on 1 of 1 method (95 % simultaneous)'
    """
    tables = _check_tables(pairs)
    columns = _method_columns(tables, methods)
    if n_resamples == "auto":
        widest = max(sum(c in t.columns for c in columns) for t in tables.values())
        n_rows = math.comb(len(tables), 2) * widest
        n_resamples = max(2000, math.ceil(20 * n_rows / (1 - confidence)))
    labels = pd.concat(
        [t[c] for t in tables.values() for c in _ID_COLUMNS], ignore_index=True
    )
    codes, uniques = pd.factorize(labels)
    n_ids = len(uniques)
    # The same unordered pair of labels in several conditions: one pair draw.
    rng = check_generator(random_state)
    draws = multinomial_draws(rng, n_ids, n_resamples) if n_ids else None

    offset = 0
    pair_keys = []
    per_table = []
    for name, table in tables.items():
        n = len(table)
        ia = codes[offset : offset + n]
        ib = codes[offset + n : offset + 2 * n]
        offset += 2 * n
        per_table.append((name, table, ia, ib))
        pair_keys.append(np.minimum(ia, ib) * n_ids + np.maximum(ia, ib))
    pair_codes, pair_uniques = pd.factorize(np.concatenate(pair_keys))
    n_pairs = len(pair_uniques)
    pair_draws = multinomial_draws(rng, n_pairs, n_resamples) if n_pairs else None

    start = 0
    cells = []  # (condition, method, median, identity replicates, pair replicates)
    for name, table, ia, ib in per_table:
        n = len(table)
        pc = pair_codes[start : start + n]
        start += n
        for column, method in columns.items():
            if column not in table.columns:
                continue
            values = _method_values(table, column, name)
            if n == 0 or np.isnan(values).any():
                empty = np.full(n_resamples, np.nan)
                cells.append((name, method, np.nan, empty, empty))
                continue
            cells.append(
                (
                    name,
                    method,
                    float(np.median(values)),
                    _weighted_medians(values, _identity_counts(draws, ia, ib)),
                    # Only differences use the pair-level replicates.
                    _weighted_medians(values, _pair_counts(pair_draws, pc))
                    if len(tables) > 1
                    else None,
                )
            )

    alpha = 1.0 - confidence
    rows = []
    for name, method, median, reps, _ in cells:
        lo, hi = _interval(median, reps, alpha / 2.0, n_ids)
        rows.append(
            {
                "condition": name,
                "method": method,
                "median": median,
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    intervals = pd.DataFrame(rows, columns=_TABLES["table_i_intervals"])

    by_cell = {(c, m): rest for c, m, *rest in cells}
    names = list(tables)
    diffs = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            for method in dict.fromkeys(columns.values()):
                if (first, method) in by_cell and (second, method) in by_cell:
                    ma, ra, pa = by_cell[first, method]
                    mb, rb, pb = by_cell[second, method]
                    with np.errstate(invalid="ignore"):
                        diffs.append((first, second, method, ma - mb, ra - rb, pa - pb))
    level = alpha / max(len(diffs), 1)
    rows = []
    for first, second, method, diff, reps, pair_reps in diffs:
        shrink = _shrinkage(reps, pair_reps)
        lo, hi = _interval(diff, reps, level / 2.0, n_ids, shrink)
        rows.append(
            {
                "condition_a": first,
                "condition_b": second,
                "method": method,
                "difference": diff,
                "ci_low": lo,
                "ci_high": hi,
                "resolved": bool(lo > 0 or hi < 0),
            }
        )
    comparison = pd.DataFrame(rows, columns=_TABLES["comparison"])
    comparison["resolved"] = comparison["resolved"].astype(bool)
    return ConditionComparison(
        table_i_intervals=intervals,
        comparison=comparison,
        confidence=float(confidence),
        n_resamples=int(n_resamples),
        n_identities=int(n_ids),
    )


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@validate_params(
    {
        "comparison": [pd.DataFrame],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def comparison_sentence(comparison, *, confidence=0.95):
    """Say which condition leaks more, from a comparison table.

    Parameters
    ----------
    comparison : DataFrame
        The ``comparison`` table of :func:`compare_conditions` (columns
        ``condition_a``, ``condition_b``, ``method``, ``difference``,
        ``ci_low``, ``ci_high``, ``resolved``).
    confidence : float in (0, 1), default=0.95
        The simultaneous level the table was computed at (for the wording).

    Returns
    -------
    sentence : str
        One clause per pair of conditions, joined by ``"; "``: e.g. ``"a
        leaks more than b on 4 of 5 methods (95 % simultaneous)"``, or ``"no
        difference resolved between a and b (95 % simultaneous over 5
        methods)"`` when every interval contains 0. Methods without an
        interval are counted apart.

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.stats import comparison_sentence
    >>> table = pd.DataFrame({
    ...     "condition_a": ["a"] * 3, "condition_b": ["b"] * 3,
    ...     "method": ["GaussMech", "MMD-TV", "KDE-LR"],
    ...     "difference": [80.0, 0.3, -1.0], "ci_low": [40.0, 0.1, -3.0],
    ...     "ci_high": [120.0, 0.5, 1.0], "resolved": [True, True, False]})
    >>> comparison_sentence(table)
    'a leaks more than b on 2 of 3 methods (95 % simultaneous)'
    """
    missing = [c for c in _COMPARISON_COLUMNS if c not in comparison.columns]
    if missing:
        raise ValueError(
            f"comparison has no column(s) {missing}: pass the comparison table "
            "of compare_conditions."
        )
    pct = f"{100 * confidence:g} %"
    clauses = []
    groups = comparison.groupby(["condition_a", "condition_b"], sort=False)
    for (first, second), g in groups:
        defined = g[g["ci_low"].notna() & g["ci_high"].notna()]
        n = len(defined)
        more = int((defined["resolved"] & (defined["ci_low"] > 0)).sum())
        less = int((defined["resolved"] & (defined["ci_high"] < 0)).sum())
        if n == 0:
            text = f"no interval for {first} against {second}"
        elif more == 0 and less == 0:
            text = (
                f"no difference resolved between {first} and {second} ({pct} "
                f"simultaneous over {_plural(n, 'method')})"
            )
        elif less == 0:
            text = (
                f"{first} leaks more than {second} on {more} of "
                f"{_plural(n, 'method')} ({pct} simultaneous)"
            )
        elif more == 0:
            text = (
                f"{second} leaks more than {first} on {less} of "
                f"{_plural(n, 'method')} ({pct} simultaneous)"
            )
        else:
            text = (
                f"{first} leaks more than {second} on {more} of "
                f"{_plural(n, 'method')} and less on {less} ({pct} simultaneous)"
            )
        missing = len(g) - n
        if missing:
            text += f"; {_plural(missing, 'method')} without an interval"
        clauses.append(text)
    return "; ".join(clauses)


# ------------------------------------------------------------------ rate
@validate_params(
    {
        "hits": ["array-like"],
        "groups": ["array-like"],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_resamples": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def identity_rate_interval(
    hits, groups, *, confidence=0.95, n_resamples=2000, random_state=None
):
    r"""Identity-bootstrap interval of a per-row success rate.

    For rates measured on rows that come in identities (a re-identification
    rate: one hit or miss per query row), rows of one identity are not
    independent, so a binomial interval over rows is too narrow when
    identities differ in how re-identifiable they are. This resamples
    identities.

    Parameters
    ----------
    hits : array-like of shape (n_rows,)
        Per-row outcome in [0, 1] (1 = success, e.g. correctly
        re-identified).
    groups : array-like of shape (n_rows,)
        Identity label of each row.
    confidence : float in (0, 1), default=0.95
        Level of the two-sided percentile interval.
    n_resamples : int, default=2000
        Bootstrap replicates.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the identity draws.

    Returns
    -------
    rate : float
        The mean of ``hits`` over all rows.
    ci_low, ci_high : float
        Percentile interval of the replicates' rates.

    Notes
    -----
    A replicate draws the :math:`N` identities with replacement
    (:math:`w_i` copies of identity :math:`i`) and computes
    :math:`\sum_i w_i h_i / \sum_i w_i n_i`, with :math:`h_i` the hits and
    :math:`n_i` the rows of identity :math:`i` (the cluster bootstrap of a
    ratio estimator); endpoints are moved away from the rate by
    :math:`\sqrt{N/(N-1)}` and clipped to [0, 1]. Each row's outcome is taken as given: when it depends
    on the other rows (a leave-one-out nearest-neighbour attack searches a
    gallery made of every other row), the interval covers the sampling of
    identities and their rows around these outcomes, not the change of
    gallery a new sample would bring. With few identities (say under 20)
    percentile intervals undercover; at a rate of 0 or 1 every replicate
    equals it and the interval is degenerate.

    Examples
    --------
    >>> from skprivacy.stats import identity_rate_interval
    >>> hits = [1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1]
    >>> ids = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    >>> rate, low, high = identity_rate_interval(hits, ids, random_state=0)
    >>> round(rate, 3), bool(low < rate < high)
    (0.667, True)
    """
    hits = check_scores(hits, name="hits")
    n_groups = len(groups) if hasattr(groups, "__len__") else None
    if n_groups is not None and n_groups != hits.size:
        raise ValueError(
            "hits and groups must have one entry per row; got "
            f"{hits.size} hits and {n_groups} group labels."
        )
    groups = check_identity_labels(groups, name="groups", n_samples=hits.size)
    if not np.all((hits >= 0) & (hits <= 1)):
        raise ValueError("hits must hold per-row outcomes in [0, 1].")
    codes, uniques = pd.factorize(groups)
    n_ids = len(uniques)
    h = np.bincount(codes, weights=hits, minlength=n_ids)
    n = np.bincount(codes, minlength=n_ids).astype(np.float64)
    draws = multinomial_draws(check_generator(random_state), n_ids, n_resamples)
    reps = (draws @ h) / (draws @ n)
    alpha = 1.0 - confidence
    rate = float(hits.mean())
    lo, hi = _interval(rate, reps, alpha / 2.0, n_ids)
    return rate, float(np.clip(lo, 0.0, 1.0)), float(np.clip(hi, 0.0, 1.0))
