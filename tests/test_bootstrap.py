# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Identity-level bootstrap: exact replicates, paired draws, simulated validity."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import binom

from skprivacy.stats import (
    ConditionComparison,
    compare_conditions,
    comparison_sentence,
    identity_rate_interval,
    table_i,
)
from skprivacy.stats._bootstrap import (
    _identity_counts,
    _pair_counts,
    _weighted_medians,
)


# ------------------------------------------------------------------ planted model
def _design(rng, n_identities, n_pairs=None):
    a, b = np.triu_indices(n_identities, 1)
    if n_pairs is not None and n_pairs < a.size:
        keep = rng.choice(a.size, n_pairs, replace=False)
        a, b = a[keep], b[keep]
    return a, b


def _conditions(rng, n_identities, n_pairs=None, shift=0.0, n_methods=3):
    """Two conditions of the same identities (shared identity effects).

    Per pair and method ``exp(0.6 (f_a + f_b) + 0.5 g + 0.3 h + shift)``
    with ``f`` per identity (shared by both conditions), ``g`` per pair and
    condition, ``h`` per pair, condition and method: log-normal with
    population median ``exp(shift)`` (1 for condition "x").
    """
    a, b = _design(rng, n_identities, n_pairs)
    f = rng.normal(size=n_identities)
    out = {}
    for name, s in (("x", 0.0), ("y", shift)):
        g = rng.normal(size=a.size)
        cols = {"id_a": a, "id_b": b}
        for j in range(n_methods):
            h = rng.normal(size=a.size)
            cols[f"m{j}"] = np.exp(0.6 * (f[a] + f[b]) + 0.5 * g + 0.3 * h + s)
        out[name] = pd.DataFrame(cols)
    return out


def _upper_margin(p, runs, level=0.99):
    """Largest rate a Binomial(runs, p) count stays below with probability ``level``."""
    return binom.ppf(level, runs, p) / runs


def _order_interval(reps, k, estimate, n_ids):
    """k-th smallest and k-th largest replicate, scaled by sqrt(N / (N - 1))."""
    ordered = sorted(reps)
    q = np.array([ordered[k - 1], ordered[len(ordered) - k]])
    return estimate + math.sqrt(n_ids / (n_ids - 1)) * (q - estimate)


def _naive_interval(values, a, b, draws, k, estimate, n_ids):
    reps = []
    for w in draws:
        expanded = np.repeat(values, w[a] * w[b])
        reps.append(np.median(expanded) if expanded.size else np.nan)
    return _order_interval(reps, k, estimate, n_ids), np.array(reps)


# --------------------------------------------------------------------- exactness
@given(
    seed=st.integers(0, 10_000),
    n_ids=st.integers(2, 9),
    n_rep=st.integers(1, 30),
)
def test_weighted_medians_equal_median_of_the_expanded_pairs(seed, n_ids, n_rep):
    rng = np.random.default_rng(seed)
    a, b = np.triu_indices(n_ids, 1)
    values = rng.choice([0.5, 1.0, 2.0, np.inf], size=a.size)  # ties and inf
    draws = rng.integers(0, 3, size=(n_rep, n_ids)).astype(np.int32)
    got = _weighted_medians(values, _identity_counts(draws, a, b))
    per_pair = rng.integers(0, 3, size=(n_rep, a.size)).astype(np.int32)
    got_pairs = _weighted_medians(values, _pair_counts(per_pair, np.arange(a.size)))
    for r in range(n_rep):
        expanded = np.repeat(values, draws[r, a] * draws[r, b])
        want = np.median(expanded) if expanded.size else np.nan
        assert_array_equal(got[r], want)
        expanded = np.repeat(values, per_pair[r])
        want = np.median(expanded) if expanded.size else np.nan
        assert_array_equal(got_pairs[r], want)


def test_intervals_equal_a_naive_loop():
    rng = np.random.default_rng(3)
    pairs = _conditions(rng, 9)
    res = compare_conditions(pairs, methods=["m0"], n_resamples=400, random_state=11)
    # The same draws, by the formula: one multinomial row per replicate over
    # the 9 identity labels (in order of first appearance: id_a, then id_b),
    # then one over the 36 distinct pairs (both conditions audit the same).
    labels = pd.factorize(
        pd.concat([pairs[c][k] for c in ("x", "y") for k in ("id_a", "id_b")])
    )[1]
    draw = np.random.default_rng(11)
    draws = draw.multinomial(9, np.full(9, 1 / 9), size=400)
    pair_draws = draw.multinomial(36, np.full(36, 1 / 36), size=400)
    pos = {v: i for i, v in enumerate(labels)}
    reps, pair_reps = {}, {}
    for name in ("x", "y"):
        t = pairs[name]
        a = t["id_a"].map(pos).to_numpy()
        b = t["id_b"].map(pos).to_numpy()
        med = np.median(t["m0"])
        (lo, hi), reps[name] = _naive_interval(
            t["m0"].to_numpy(),
            a,
            b,
            draws,
            10,
            med,
            9,  # 400 * 0.025 = 10
        )
        pair_reps[name] = np.array(
            [np.median(np.repeat(t["m0"].to_numpy(), w)) for w in pair_draws]
        )
        row = res.table_i_intervals.query("condition == @name").iloc[0]
        assert row["median"] == med
        assert_allclose([row["ci_low"], row["ci_high"]], [lo, hi], rtol=1e-12)
    diff = np.median(pairs["x"]["m0"]) - np.median(pairs["y"]["m0"])
    d_id = reps["x"] - reps["y"]
    d_pair = pair_reps["x"] - pair_reps["y"]
    v_id, v_pair = np.var(d_id), np.var(d_pair)
    shrink = math.sqrt(min(1.0, max(v_id - 2 * v_pair, v_pair) / v_id))
    ordered = np.sort(d_id)
    q = np.array([ordered[9], ordered[-10]])
    want = diff + shrink * math.sqrt(9 / 8) * (q - diff)
    row = res.comparison.iloc[0]
    assert_allclose([row["ci_low"], row["ci_high"]], want, rtol=1e-12)
    assert row["difference"] == diff
    assert shrink < 1  # paired: the identity effects cancel, the excess is removed


def test_same_seed_same_result_and_table_columns():
    pairs = _conditions(np.random.default_rng(0), 8)
    r1 = compare_conditions(pairs, n_resamples=200, random_state=5)
    r2 = compare_conditions(pairs, n_resamples=200, random_state=5)
    pd.testing.assert_frame_equal(r1.comparison, r2.comparison)
    pd.testing.assert_frame_equal(r1.table_i_intervals, r2.table_i_intervals)
    assert list(r1.comparison.columns) == [
        "condition_a",
        "condition_b",
        "method",
        "difference",
        "ci_low",
        "ci_high",
        "resolved",
    ]
    assert list(r1.table_i_intervals.columns) == [
        "condition",
        "method",
        "median",
        "ci_low",
        "ci_high",
    ]
    assert r1.comparison["resolved"].dtype == bool


def test_paired_conditions_share_identity_draws():
    # Identical tables under the same labels: every replicate difference is 0.
    t = _conditions(np.random.default_rng(1), 10)["x"]
    res = compare_conditions({"a": t, "b": t.copy()}, n_resamples=300, random_state=0)
    assert (res.comparison[["difference", "ci_low", "ci_high"]] == 0).all().all()
    assert not res.comparison["resolved"].any()
    # The same values under other labels are drawn independently: not all 0.
    other = t.assign(id_a=t["id_a"] + 100, id_b=t["id_b"] + 100)
    res = compare_conditions({"a": t, "b": other}, n_resamples=300, random_state=0)
    assert (res.comparison["ci_low"] < 0).all() and (
        res.comparison["ci_high"] > 0
    ).all()


def test_method_mapping_missing_values_and_infinities():
    t = pd.DataFrame(
        {
            "id_a": ["p", "p", "q"],
            "id_b": ["q", "r", "r"],
            "gauss": [1.0, 2.0, 3.0],
            "roc": [np.inf, np.inf, 1.0],
        }
    )
    u = t.assign(gauss=[1.0, np.nan, 3.0])
    res = compare_conditions(
        {"a": t, "b": u},
        methods={"gauss": "GaussMech", "roc": "ROC-HT"},
        n_resamples=100,
        random_state=0,
    )
    ti = res.table_i_intervals.set_index(["condition", "method"])
    assert ti.loc[("a", "ROC-HT"), "median"] == np.inf
    assert np.isnan(ti.loc[("b", "GaussMech"), "median"])  # incomplete, as Table I
    cmp = res.comparison.set_index("method")
    # inf - inf is undefined: no interval, not resolved.
    assert np.isnan(cmp.loc["ROC-HT", "difference"])
    assert not cmp["resolved"].any()


def test_table_i_is_the_naive_median_and_max_the_intervals_read():
    pairs = _conditions(np.random.default_rng(4), 7)
    pairs["y"].loc[2, "m1"] = np.nan  # incomplete: NaN, as compare_conditions
    pairs["y"] = pairs["y"].drop(columns="m2").assign(m3=1.0)  # only in "y"
    table = table_i(pairs)
    methods = ["m0", "m1", "m2", "m3"]
    expected = {}
    for name, t in pairs.items():
        for m in methods:
            v = sorted(t[m]) if m in t else []
            n, ok = len(v), len(v) > 0 and not any(math.isnan(x) for x in v)
            expected[name, f"{m} median"] = (
                (v[(n - 1) // 2] + v[n // 2]) / 2 if ok else np.nan
            )
            expected[name, f"{m} max"] = v[-1] if ok else np.nan
    assert list(table.index) == ["x", "y"] and table.index.name == "condition"
    assert list(table.columns) == [
        f"{m} {s}" for s in ("median", "max") for m in methods
    ]
    got = {(n, c): table.loc[n, c] for n in table.index for c in table.columns}
    assert sorted(got) == sorted(expected)
    assert_allclose([got[k] for k in expected], list(expected.values()), rtol=1e-15)
    assert np.isnan(table.loc["y", "m1 median"]) and np.isnan(table.loc["x", "m3 max"])
    intervals = compare_conditions(pairs, n_resamples=20, random_state=0)
    ti = intervals.table_i_intervals
    assert len(ti) == 6  # m0, m1, m2 in "x"; m0, m1, m3 in "y"
    for row in ti.itertuples():
        assert_array_equal(row.median, table.loc[row.condition, f"{row.method} median"])


@pytest.mark.parametrize(
    "pairs, match",
    [
        ({}, "non-empty dict"),
        ({"a": np.zeros((2, 3))}, "must be a DataFrame"),
        ({"a": pd.DataFrame({"id_a": [0], "x": [1.0]})}, "no column"),
        ({"a": pd.DataFrame({"id_a": [0], "id_b": [0], "x": [1.0]})}, "itself"),
    ],
)
def test_bad_pairs_are_named(pairs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        compare_conditions(pairs)


# ----------------------------------------------------------------------- sentence
def _table(lows, highs, a="a", b="b"):
    n = len(lows)
    lows, highs = np.asarray(lows, float), np.asarray(highs, float)
    return pd.DataFrame(
        {
            "condition_a": [a] * n,
            "condition_b": [b] * n,
            "method": [f"m{i}" for i in range(n)],
            "difference": (lows + highs) / 2,
            "ci_low": lows,
            "ci_high": highs,
            "resolved": (lows > 0) | (highs < 0),
        }
    )


@pytest.mark.parametrize(
    "lows, highs, want",
    [
        ([1, 2, 3, 4, -1], [2, 3, 4, 5, 1], "a leaks more than b on 4 of 5 methods"),
        (
            [-1, -2],
            [1, 2],
            "no difference resolved between a and b (95 % simultaneous over 2 methods)",
        ),
        ([-3, -1], [-1, 1], "b leaks more than a on 1 of 2 methods"),
        ([1, -3], [2, -1], "a leaks more than b on 1 of 2 methods and less on 1"),
        (
            [1, np.nan],
            [2, np.nan],
            "a leaks more than b on 1 of 1 method (95 % "
            "simultaneous); 1 method without an interval",
        ),
    ],
)
def test_sentence(lows, highs, want):
    assert want in comparison_sentence(_table(lows, highs))


def test_sentence_joins_condition_pairs_and_level():
    table = pd.concat([_table([1], [2]), _table([-1], [1], a="a", b="c")])
    text = comparison_sentence(table, confidence=0.9)
    assert text == (
        "a leaks more than b on 1 of 1 method (90 % simultaneous); no difference "
        "resolved between a and c (90 % simultaneous over 1 method)"
    )


# ------------------------------------------------------------------ simulations
@pytest.mark.slow
@pytest.mark.parametrize("n_identities, n_pairs", [(15, None), (200, 100)])
def test_same_distribution_rarely_declares_a_difference(n_identities, n_pairs):
    rng = np.random.default_rng(20)
    runs = 200
    declared = 0
    for r in range(runs):
        pairs = _conditions(rng, n_identities, n_pairs)
        res = compare_conditions(pairs, n_resamples=1000, random_state=r)
        declared += bool(res.comparison["resolved"].any())
    assert declared / runs <= _upper_margin(0.05, runs)


@pytest.mark.slow
@pytest.mark.parametrize("n_identities, n_pairs", [(25, None), (200, 100)])
def test_median_intervals_cover_the_population_median(n_identities, n_pairs):
    rng = np.random.default_rng(21)
    runs = 300
    covered = 0
    for r in range(runs):
        pairs = {"x": _conditions(rng, n_identities, n_pairs, n_methods=1)["x"]}
        row = compare_conditions(
            pairs, n_resamples=1000, random_state=r
        ).table_i_intervals.iloc[0]
        covered += bool(row["ci_low"] <= 1.0 <= row["ci_high"])  # exp(0) = 1
    # Coverage at least nominal minus the 1 % binomial margin.
    assert covered / runs >= 1 - _upper_margin(0.05, runs)


@pytest.mark.slow
@pytest.mark.parametrize("n_identities, n_pairs", [(20, None), (38, 100), (200, 100)])
def test_difference_intervals_cover_the_true_differences_together(
    n_identities, n_pairs
):
    # Condition y's medians are 1.5 times x's: the true difference of every
    # method is 1 - 1.5; the three intervals must hold together.
    rng = np.random.default_rng(23)
    runs = 200
    covered = 0
    for r in range(runs):
        pairs = _conditions(rng, n_identities, n_pairs, shift=math.log(1.5))
        cmp = compare_conditions(pairs, n_resamples=1000, random_state=r).comparison
        covered += bool(((cmp["ci_low"] <= -0.5) & (cmp["ci_high"] >= -0.5)).all())
    assert covered / runs >= 1 - _upper_margin(0.05, runs)


@pytest.mark.slow
def test_a_planted_difference_is_found():
    rng = np.random.default_rng(22)
    runs = 50
    found = 0
    for r in range(runs):
        # Condition y leaks more: its per-pair values are doubled.
        pairs = _conditions(rng, 38, 100, shift=math.log(2))
        cmp = compare_conditions(pairs, n_resamples=1000, random_state=r).comparison
        found += bool((cmp["resolved"] & (cmp["ci_high"] < 0)).any())
        assert not (cmp["resolved"] & (cmp["ci_low"] > 0)).any()  # never reversed
    assert found / runs >= 0.9


# --------------------------------------------------------------------- rate
def test_rate_interval_equals_a_naive_loop():
    rng = np.random.default_rng(4)
    ids = np.repeat(np.arange(12), rng.integers(1, 6, 12))
    p = rng.uniform(0.2, 0.9, 12)[ids]
    hits = (rng.random(ids.size) < p).astype(float)
    rate, lo, hi = identity_rate_interval(hits, ids, n_resamples=300, random_state=9)
    assert rate == hits.mean()
    draws = np.random.default_rng(9).multinomial(12, np.full(12, 1 / 12), size=300)
    reps = [np.repeat(hits, w[ids]).mean() if w[ids].sum() else np.nan for w in draws]
    want = np.clip(_order_interval(reps, 7, rate, 12), 0, 1)  # 300 * 0.025 = 7.5
    assert_allclose([lo, hi], want, rtol=1e-12)


@pytest.mark.slow
def test_rate_interval_covers_when_identities_differ():
    # Identities differ in re-identifiability: a row-level binomial interval
    # would be too narrow; the identity bootstrap covers the population rate.
    rng = np.random.default_rng(5)
    runs, covered = 300, 0
    for r in range(runs):
        p_id = rng.beta(2, 2, 40)  # population mean rate 0.5
        ids = np.repeat(np.arange(40), 10)
        hits = rng.random(ids.size) < p_id[ids]
        _, lo, hi = identity_rate_interval(hits, ids, n_resamples=1000, random_state=r)
        covered += bool(lo <= 0.5 <= hi)
    assert covered / runs >= 1 - _upper_margin(0.05, runs)


def test_rate_interval_bad_input():
    with pytest.raises(ValueError, match="one entry per row"):
        identity_rate_interval([1, 0], [0])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        identity_rate_interval([1, 2], [0, 1])


@pytest.mark.slow
def test_two_encoders_of_the_bundled_faces_are_ordered():
    # The same 164 Yale face images through two encoders: paired by identity.
    import warnings

    from skprivacy import audit_conditions
    from skprivacy.datasets import load_yale_faces

    conditions = {}
    for encoder in ("dlib_resnet128", "hog_pca128"):
        data = load_yale_faces(encoder=encoder)
        conditions[encoder] = (data.data, data.identity)
    columns = {
        "gaussmech_epsilon": "GaussMech",
        "kdelr_a0_epsilon": "KDE-LR alpha=0",
        "kdelr_a0.01_epsilon": "KDE-LR alpha=0.01",
        "mmdtv_epsilon": "MMD-TV",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_conditions(
            conditions,
            methods=["gaussmech", "kdelr", "mmdtv"],
            suggest_rank=False,
            random_state=0,
        )
    pairs = {}
    for name, r in report.reports.items():
        prefix = r.pairs[r.pairs["pair_rank"] < 100]
        pairs[name] = prefix[["id_a", "id_b", *[c for c in columns if c in prefix]]]
    result = compare_conditions(pairs, methods=columns, random_state=0)
    cmp = result.comparison
    assert len(cmp) == 4
    assert (cmp["resolved"] & (cmp["ci_low"] > 0)).all()  # ResNet leaks more
    assert result.sentence().startswith("dlib_resnet128 leaks more than hog_pca128")

    # The report carries the same comparison, orders the encoders and says so.
    def by_method(frame):
        return frame.sort_values(list(frame.columns[:3])).reset_index(drop=True)

    pd.testing.assert_frame_equal(by_method(report.comparison), by_method(cmp))
    ours, theirs = report.table_i_intervals, result.table_i_intervals
    pd.testing.assert_frame_equal(by_method(ours), by_method(theirs))
    sentence = "dlib_resnet128 leaks more than hog_pca128 on 4 of 4 methods"
    assert report.comparison_sentence.startswith(sentence)
    assert f"<strong>{sentence} (95 % simultaneous).</strong>" in report.to_html()
    # Every Table I interval brackets its median, which equals Table I's.
    ti = result.table_i_intervals
    assert ((ti["ci_low"] <= ti["median"]) & (ti["median"] <= ti["ci_high"])).all()
    for _, row in ti.iterrows():
        assert (
            row["median"]
            == report.table_i.loc[row["condition"], f"{row['method']} median"]
        )


def test_auto_replicates_leave_ten_beyond_each_simultaneous_tail():
    # Three conditions, two method columns: R = C(3, 2) * 2 = 6 comparison
    # rows; at 0.99 the rule gives ceil(20 * 6 / 0.01) = 12000 (> 2000).
    pairs = _conditions(np.random.default_rng(1), 6, n_methods=2)
    pairs["z"] = pairs["x"].copy()
    result = compare_conditions(
        pairs, confidence=0.99, n_resamples="auto", random_state=0
    )
    assert len(result.comparison) == 6
    assert result.n_resamples == 12000
    # Each simultaneous tail (0.01 / 6 / 2 per side) holds at least 10 replicates.
    assert result.n_resamples * 0.01 / 6 / 2 >= 10
    few = compare_conditions({"x": pairs["x"]}, n_resamples="auto", random_state=0)
    assert few.n_resamples == 2000
    with pytest.raises(ValueError, match="n_resamples"):
        compare_conditions(pairs, n_resamples="many")


def test_condition_comparison_round_trips_through_json():
    import json

    pairs = _conditions(np.random.default_rng(2), 6)
    result = compare_conditions(pairs, n_resamples=300, random_state=0)
    text = json.dumps(result.to_dict())
    back = ConditionComparison.from_dict(json.loads(text))
    pd.testing.assert_frame_equal(back.comparison, result.comparison)
    pd.testing.assert_frame_equal(back.table_i_intervals, result.table_i_intervals)
    assert (back.confidence, back.n_resamples, back.n_identities) == (
        result.confidence,
        result.n_resamples,
        result.n_identities,
    )
    # A JSON null (an undefined interval) comes back as NaN, resolved as bool.
    records = result.to_dict()
    records["comparison"][0] |= {"ci_low": None, "resolved": 0}
    row = ConditionComparison.from_dict(records).comparison.iloc[0]
    assert np.isnan(row["ci_low"]) and row["resolved"] is np.False_
    empty = ConditionComparison.from_dict({})
    assert empty.comparison.empty and list(empty.comparison.columns) == list(
        result.comparison.columns
    )
