# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The four membership statistics against naive per-identity loops and hand cases."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from skprivacy.datasets import load_yale_faces, make_membership_embeddings
from skprivacy.exceptions import DroppedRowsWarning, ExcludedIdentitiesWarning
from skprivacy.membership import (
    membership_statistics,
    pair_cos,
    penalised_logit,
    prototype_ce,
    vmf_kappa,
)

RTOL = 1e-9


# ---------------------------------------------------------------------------
# Independent naive implementations, written from the formulas (paper 001 /
# DESIGN.md) with Python loops over identities, probes and pairs.
# ---------------------------------------------------------------------------
def _g(head, c, m):
    c = min(1.0, max(-1.0, c))
    if head == "arcface":
        return math.cos(math.acos(c) + m)
    if head == "cosface":
        return c - m
    if head == "sphereface":
        return math.cos(m * math.acos(c))
    return float(head(np.array(c), m))


def _unit(v):
    return v / math.sqrt(sum(x * x for x in v))


def _groups(X, ids):
    Z = np.array([_unit(row) for row in np.asarray(X, dtype=float)])
    ids = np.asarray(ids)
    labels = sorted(set(ids.tolist()))
    return Z, {lab: Z[ids == lab] for lab in labels}


def naive_pair_cos(X, ids):
    _, groups = _groups(X, ids)
    out = {}
    for lab, E in groups.items():
        k = len(E)
        vals = [float(np.dot(E[i], E[j])) for i in range(k) for j in range(i + 1, k)]
        out[lab] = math.fsum(vals) / len(vals)
    return pd.Series(out)


def naive_vmf_kappa(X, ids):
    Z, groups = _groups(X, ids)
    d = Z.shape[1]
    out = {}
    for lab, E in groups.items():
        R = float(np.linalg.norm(E.mean(axis=0)))
        out[lab] = R * (d - R * R) / (1 - R * R)
    return pd.Series(out)


def naive_penalised_logit(X, ids, head="arcface", s=64.0, m=0.5):
    _, groups = _groups(X, ids)
    out = {}
    for lab, E in groups.items():
        ells = []
        for i in range(len(E)):
            others = np.delete(E, i, axis=0).mean(axis=0)
            w = others / np.linalg.norm(others)
            ells.append(s * _g(head, float(np.dot(E[i], w)), m))
        out[lab] = math.fsum(ells) / len(ells)
    return pd.Series(out)


def naive_prototype_ce(X, ids, head="arcface", s=64.0, m=0.5, loo=False):
    _, groups = _groups(X, ids)
    protos = {lab: _unit(E.mean(axis=0)) for lab, E in groups.items()}
    out = {}
    for lab, E in groups.items():
        losses = []
        for i, e in enumerate(E):
            if loo:
                own_w = _unit(np.delete(E, i, axis=0).mean(axis=0))
            else:
                own_w = protos[lab]
            own = s * _g(head, float(np.dot(e, own_w)), m)
            neg = [s * float(np.dot(e, w)) for j, w in protos.items() if j != lab]
            # -L = log(e^own / (e^own + sum e^neg)) = -log(1 + sum e^(neg - own))
            losses.append(-math.log1p(math.fsum(math.exp(v - own) for v in neg)))
        out[lab] = math.fsum(losses) / len(losses)
    return pd.Series(out)


# ---------------------------------------------------------------------------
# Data: real (Yale faces, dlib ResNet embeddings) and synthetic.
# ---------------------------------------------------------------------------
def _yale():
    try:
        bunch = load_yale_faces()
        return np.asarray(bunch.data, dtype=float), np.asarray(bunch.identity)
    except Exception:  # pragma: no cover - fallback while the loader evolves
        import pathlib

        path = (
            pathlib.Path(__file__).parents[1]
            / "skprivacy/datasets/data/yale-faces/dlib_resnet128.csv.gz"
        )
        df = pd.read_csv(path)
        feats = [c for c in df.columns if c.startswith(("e", "f", "x"))]
        return df[feats].to_numpy(float), df["identity"].to_numpy()


def _synthetic():
    X, ids, _ = make_membership_embeddings(
        n_members=12,
        n_nonmembers=12,
        n_samples_per_identity=6,
        n_features=24,
        concentration_gap=0.5,
        random_state=3,
    )
    return X, ids


def _ragged():
    # Unnormalised rows, unequal k (2..7), string labels, rows shuffled.
    rng = np.random.default_rng(7)
    ks = rng.integers(2, 8, size=15)
    means = rng.normal(size=(15, 16))
    X = np.vstack([means[i] + 0.7 * rng.normal(size=(k, 16)) for i, k in enumerate(ks)])
    X *= rng.uniform(0.5, 3.0, size=(len(X), 1))
    ids = np.repeat([f"id{i:02d}" for i in range(15)], ks)
    perm = rng.permutation(len(X))
    return X[perm], ids[perm]


DATASETS = {"yale": _yale, "synthetic": _synthetic, "ragged": _ragged}


@pytest.fixture(scope="module", params=list(DATASETS))
def data(request):
    return DATASETS[request.param]()


def _check(fast, naive):
    assert list(fast.index) == list(naive.index)
    assert_allclose(fast.to_numpy(), naive.to_numpy(), rtol=RTOL, atol=0)


def test_pair_cos_matches_naive(data):
    _check(pair_cos(*data), naive_pair_cos(*data))


def test_vmf_kappa_matches_naive(data):
    _check(vmf_kappa(*data), naive_vmf_kappa(*data))


@pytest.mark.parametrize(
    "head, margin",
    [("arcface", 0.5), ("cosface", 0.35), ("sphereface", 1.35), ("callable", 0.2)],
)
def test_penalised_logit_matches_naive(data, head, margin):
    h = (lambda c, m: c**3 - m) if head == "callable" else head
    fast = penalised_logit(*data, head=h, scale=30.0, margin=margin)
    _check(fast, naive_penalised_logit(*data, head=h, s=30.0, m=margin))


@pytest.mark.parametrize("loo", [False, True])
@pytest.mark.parametrize("head", ["arcface", "cosface"])
def test_prototype_ce_matches_naive(data, head, loo):
    fast = prototype_ce(*data, head=head, leave_one_out=loo, batch_size=17)
    _check(fast, naive_prototype_ce(*data, head=head, loo=loo))


def test_membership_statistics_table_matches_functions(data):
    table = membership_statistics(*data, head="cosface", scale=20.0, margin=0.3)
    assert_allclose(table["pair_cos"], naive_pair_cos(*data).to_numpy(), rtol=RTOL)
    assert_allclose(
        table["prototype_ce"],
        naive_prototype_ce(*data, head="cosface", s=20.0, m=0.3).to_numpy(),
        rtol=RTOL,
    )
    counts = pd.Series(data[1]).value_counts().sort_index()
    assert table["k"].tolist() == counts.tolist()


# ---------------------------------------------------------------------------
# Hand-worked cases
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("phi_deg", [30.0, 60.0, 100.0])
def test_two_vectors_at_known_angle(phi_deg):
    phi = math.radians(phi_deg)
    X = np.array([[1.0, 0.0, 0.0], [math.cos(phi), math.sin(phi), 0.0]])
    ids = [0, 0]
    assert pair_cos(X, ids).iloc[0] == pytest.approx(math.cos(phi), rel=1e-12)
    s, m = 64.0, 0.5
    # With k = 2 the leave-one-out prototype of each vector is the other one.
    expected = {
        "arcface": s * math.cos(phi + m),
        "cosface": s * (math.cos(phi) - m),
        "sphereface": s * math.cos(4 * phi),
    }
    for head, value in expected.items():
        margin = 4 if head == "sphereface" else m
        got = penalised_logit(X, ids, head=head, scale=s, margin=margin).iloc[0]
        assert got == pytest.approx(value, rel=1e-12, abs=1e-12)
    got = penalised_logit(X, ids, head=lambda c, mm: 2 * c + mm, scale=1.0, margin=m)
    assert got.iloc[0] == pytest.approx(2 * math.cos(phi) + m, rel=1e-12)


def test_arcface_is_plain_beyond_pi():
    # theta + m > pi: plain cos(theta + m), no easy-margin fallback.
    phi = math.radians(170)
    X = np.array([[1.0, 0.0], [math.cos(phi), math.sin(phi)]])
    got = penalised_logit(X, [0, 0], head="arcface", scale=1.0, margin=0.5).iloc[0]
    assert got == pytest.approx(math.cos(phi + 0.5), rel=1e-12)
    assert got > math.cos(phi)  # cos is increasing past pi: the plain head's quirk


def test_vmf_kappa_by_hand():
    # k orthonormal vectors in d = k dims: R = 1/sqrt(k), kappa = R (d - R^2)/(1 - R^2)
    for k in (2, 4):
        X = np.eye(k)
        R = 1 / math.sqrt(k)
        expected = R * (k - R * R) / (1 - R * R)
        assert vmf_kappa(X, [0] * k).iloc[0] == pytest.approx(expected, rel=1e-12)
    assert vmf_kappa(np.eye(4), [0] * 4).iloc[0] == pytest.approx(2.5, rel=1e-12)
    # identical probes: R = 1, the limit kappa = +inf
    assert vmf_kappa(np.ones((3, 5)), [0, 0, 0]).iloc[0] == np.inf


def test_prototype_ce_by_hand():
    X = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.6, 0.8]])
    s, m = 4.0, 0.1
    w0 = np.array([1.8, 0.6]) / math.hypot(1.8, 0.6)
    w1 = np.array([0.6, 1.8]) / math.hypot(0.6, 1.8)
    losses = []
    for e in X[:2]:
        own = s * math.cos(math.acos(e @ w0) + m)
        neg = s * (e @ w1)
        losses.append(own - math.log(math.exp(own) + math.exp(neg)))
    got = prototype_ce(X, [0, 0, 1, 1], scale=s, margin=m)
    assert got.iloc[0] == pytest.approx(np.mean(losses), rel=1e-12)
    assert got.iloc[0] == pytest.approx(got.iloc[1], rel=1e-12)  # mirror image


# ---------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------
def test_drops_and_exclusions_are_reported():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [np.nan, 1.0], [1.0, 1.0], [0.0, 0.0]])
    ids = ["a", "a", "b", "b", "c"]
    with pytest.warns(DroppedRowsWarning), pytest.warns(ExcludedIdentitiesWarning):
        out = pair_cos(X, ids)
    assert out.index.tolist() == ["a"]


def test_bad_input_messages():
    with pytest.raises(ValueError, match="one identity label per row"):
        pair_cos(np.eye(3), [0, 0])
    with pytest.raises(ValueError, match="no identity has at least 2"):
        with pytest.warns(ExcludedIdentitiesWarning):
            vmf_kappa(np.eye(3), [0, 1, 2])
    with pytest.raises(ValueError, match="same shape"):
        penalised_logit(np.eye(2), [0, 0], head=lambda c, m: np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="head"):
        penalised_logit(np.eye(2), [0, 0], head="magface")


def test_prototype_ce_negative_sampling_is_the_rescaled_formula():
    X, ids = _synthetic()
    G = len(np.unique(ids))
    fast = prototype_ce(X, ids, n_negatives=G - 5, random_state=0)
    exact = prototype_ce(X, ids)
    # an approximation: same sign, same order of magnitude and highly rank-correlated
    assert (fast < 0).all()
    assert np.corrcoef(fast.rank(), exact.rank())[0, 1] > 0.9
    # n_negatives >= G - 1 is the exact statistic
    assert_allclose(prototype_ce(X, ids, n_negatives=G - 1), exact, rtol=RTOL)


def test_prototype_ce_threads_and_blocks_do_not_change_values():
    X, ids = _ragged()
    ref = prototype_ce(X, ids)
    assert_allclose(prototype_ce(X, ids, n_jobs=2, batch_size=5), ref, rtol=1e-13)


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n_ids=st.integers(2, 5),
    k=st.integers(2, 5),
    d=st.integers(2, 9),
)
def test_invariances(seed, n_ids, k, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_ids * k, d))
    ids = np.repeat(np.arange(n_ids), k)
    base = membership_statistics(X, ids).set_index("identity")
    # rotation, positive row scaling and row order leave every statistic unchanged
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    perm = rng.permutation(len(X))
    X2 = (X @ Q * rng.uniform(0.1, 10, size=(len(X), 1)))[perm]
    other = membership_statistics(X2, ids[perm]).set_index("identity")
    assert_allclose(other.to_numpy(), base.to_numpy(), rtol=1e-7, atol=1e-10)
    # bounds: PairCos in [-1/(k-1), 1], ProtoCE <= 0
    assert (base["pair_cos"] <= 1 + 1e-12).all()
    assert (base["pair_cos"] >= -1 / (k - 1) - 1e-12).all()
    assert (base["prototype_ce"] <= 0).all()


# ---------------------------------------------------------------------------
# float32 input: float32 Gram blocks, float64 sums, stated accuracy
# ---------------------------------------------------------------------------
def test_float32_path_matches_float64_path_within_stated_tolerance():
    # The float32 path keeps the rows (and ProtoCE's Gram blocks, exponentials
    # and row sums) in float32 and accumulates the per-identity sums in
    # float64; the user guide states rtol 1e-4 against the float64 path on the
    # same values (measured: ~1e-8 for the three linear statistics, ~3e-6
    # for ProtoCE at s = 64).
    from skprivacy.membership._statistics import _prepare

    rng = np.random.default_rng(3)
    n_ids, k, d = 60, 7, 128
    X = np.repeat(rng.normal(size=(n_ids, d)), k, axis=0)
    X += rng.normal(size=X.shape)
    X32 = X.astype(np.float32)
    ids = np.repeat(np.arange(n_ids), k)
    assert _prepare(X32, ids, caller="t").Z.dtype == np.float32
    assert _prepare(X32.astype(np.float16), ids, caller="t").Z.dtype == np.float64
    for scale in (64.0, 150.0):  # 150: float32 needs the max-shifted logsumexp
        f32 = membership_statistics(X32, ids, scale=scale, n_jobs=2)
        f64 = membership_statistics(X32.astype(np.float64), ids, scale=scale)
        for c in ["pair_cos", "vmf_kappa", "penalised_logit", "prototype_ce"]:
            assert f32[c].dtype == np.float64
            assert_allclose(f32[c], f64[c], rtol=1e-4, err_msg=c)
        assert_allclose(f32["pair_cos"], f64["pair_cos"], rtol=1e-6)
    # the sampled-negatives approximation keeps working in float32
    a = prototype_ce(X32, ids, n_negatives=20, random_state=0)
    b = prototype_ce(X32.astype(np.float64), ids, n_negatives=20, random_state=0)
    assert_allclose(a, b, rtol=1e-4)
    # against the naive float64 loop as well
    got = prototype_ce(X32[:70], ids[:70], scale=20.0)
    want = naive_prototype_ce(X32[:70].astype(np.float64), ids[:70], s=20.0)
    assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-5)


def test_float32_sums_are_blockwise_float64():
    from skprivacy.membership._statistics import _identity_sums64

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(1000, 5)).astype(np.float32)
    codes = rng.integers(0, 7, size=1000)
    got = _identity_sums64(Z, codes, 7, block=64)
    assert got.dtype == np.float64
    want = np.array([Z[codes == g].astype(np.float64).sum(axis=0) for g in range(7)])
    assert_allclose(got, want, rtol=1e-12)


# ---------------------------------------------------------------------------
# Magnitude-aware heads: MagFace
# ---------------------------------------------------------------------------
def _magface_m(a, l_a=10.0, u_a=110.0, l_m=0.45, u_m=0.8):
    # MagFace (Meng et al. 2021): m(a) linear between (l_a, l_m) and (u_a, u_m),
    # the norm clipped to [l_a, u_a] as in the reference implementation
    a = min(max(a, l_a), u_a)
    return (u_m - l_m) / (u_a - l_a) * (a - l_a) + l_m


def test_magface_margin_by_hand():
    from skprivacy.membership import MagFaceHead, apply_head

    head = MagFaceHead()
    norms = [0.5, 10.0, 35.0, 60.0, 110.0, 500.0]
    assert_allclose(head.margin(norms), [_magface_m(a) for a in norms], rtol=1e-15)
    assert head.margin(60.0) == pytest.approx(0.45 + 0.35 * 50 / 100)
    other = MagFaceHead(lower_norm=1, upper_norm=3, lower_margin=0.1, upper_margin=0.5)
    assert other.margin(2.0) == pytest.approx(0.3)
    c = np.array([0.9, 0.2, -0.5])
    a = np.array([20.0, 80.0, 300.0])
    want = [math.cos(math.acos(ci) + _magface_m(ai)) for ci, ai in zip(c, a)]
    assert_allclose(apply_head("magface", c, 0.123, norms=a), want, rtol=1e-14)
    assert_allclose(apply_head(head, c, None, norms=a), want, rtol=1e-14)
    with pytest.raises(ValueError, match="keep_norms=True"):
        apply_head("magface", c, 0.5)
    with pytest.raises(ValueError, match="lower_norm < upper_norm"):
        MagFaceHead(lower_norm=5, upper_norm=5)
    assert MagFaceHead() == MagFaceHead() and "upper_norm=110" in repr(head)


def _magface_data():
    # unnormalised features whose norms span the clipped range
    rng = np.random.default_rng(7)
    n_ids, k, d = 5, 4, 6
    X = np.repeat(rng.normal(size=(n_ids, d)), k, axis=0) + rng.normal(size=(20, d))
    X *= rng.uniform(2, 150, size=(20, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.repeat(np.array(list("abcde")), k)


def test_magface_penalised_logit_and_prototype_ce_by_hand():
    X, ids = _magface_data()
    s = 64.0
    norms = np.linalg.norm(X, axis=1)
    E = X / norms[:, None]
    labels = sorted(set(ids))
    protos = {g: _unit(E[ids == g].mean(axis=0)) for g in labels}
    pen, ce = {}, {}
    for g in labels:
        rows = np.flatnonzero(ids == g)
        ells, losses = [], []
        for i in rows:
            m_i = _magface_m(norms[i])
            others = E[[r for r in rows if r != i]].mean(axis=0)
            c_loo = float(E[i] @ _unit(others))
            ells.append(s * math.cos(math.acos(c_loo) + m_i))
            own = s * math.cos(math.acos(min(1.0, float(E[i] @ protos[g]))) + m_i)
            neg = [s * float(E[i] @ w) for h, w in protos.items() if h != g]
            losses.append(-math.log1p(math.fsum(math.exp(v - own) for v in neg)))
        pen[g], ce[g] = np.mean(ells), np.mean(losses)
    got_pen = penalised_logit(X, ids, head="magface", keep_norms=True)
    got_ce = prototype_ce(X, ids, head="magface", keep_norms=True)
    assert_allclose(got_pen.to_numpy(), [pen[g] for g in labels], rtol=1e-10)
    assert_allclose(got_ce.to_numpy(), [ce[g] for g in labels], rtol=1e-9)
    # the norms change the value: the same rows normalised give the lower margin
    with pytest.warns(UserWarning, match="norm 1"):
        flat = penalised_logit(E, ids, head="magface", keep_norms=True)
    assert_allclose(flat, penalised_logit(E, ids, head="arcface", margin=0.45))
    # keep_norms leaves the norm-free heads and statistics unchanged
    table = membership_statistics(X, ids, keep_norms=True).set_index("identity")
    assert_allclose(table, membership_statistics(X, ids).set_index("identity"))
    mag = membership_statistics(X, ids, head="magface", keep_norms=True)
    assert_allclose(mag["penalised_logit"], got_pen.to_numpy(), rtol=1e-12)
    assert_allclose(mag["prototype_ce"], got_ce.to_numpy(), rtol=1e-12)


def test_magface_needs_kept_norms():
    X, ids = _magface_data()
    with pytest.raises(ValueError, match="keep_norms=True"):
        penalised_logit(X, ids, head="magface")
    with pytest.raises(ValueError, match="keep_norms=True"):
        membership_statistics(X, ids, head="magface")


def test_magface_in_membership_geometry_with_matched_k():
    from skprivacy.membership import MembershipGeometry

    X, ids = _magface_data()
    X = np.vstack([X, X[:3] * 0.7])  # identity "a" gets k = 7, the others 4
    ids = np.concatenate([ids, ids[:3]])
    member = np.isin(ids, ["a", "b", "c"]).astype(int)
    with pytest.raises(ValueError, match="keep_norms=True"):
        MembershipGeometry(head="magface", cv=2).fit(X, ids, member=member)
    mg = MembershipGeometry(
        head="magface", keep_norms=True, cv=2, n_permutations=9, random_state=0
    ).fit(X, ids, member=member)
    # the k-matched rows carry their own norms: equal to the function on them
    from skprivacy.membership._statistics import _matched_rows

    codes = np.unique(ids, return_inverse=True)[1]
    keep = _matched_rows(codes, 5, 4, 0)
    want = membership_statistics(X[keep], ids[keep], head="magface", keep_norms=True)
    got = mg.statistics_.set_index("identity")
    for c in ["penalised_logit", "prototype_ce"]:
        assert_allclose(got[c], want.set_index("identity")[c], rtol=1e-12)


def test_prototype_ce_identity_without_prototype_is_no_negative():
    # identity 0's probes are antipodal: its mean is zero, so it has no
    # prototype direction. It must not poison the other identities' sums.
    rng = np.random.default_rng(5)
    other = rng.normal(size=(8, 4))
    X = np.vstack([[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], other])
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    got = prototype_ce(X, ids)
    assert np.isnan(got.loc[0])
    # the others equal the statistic without identity 0 at all
    assert_allclose(got.loc[1:], prototype_ce(other, ids[2:]), rtol=1e-12)
    assert_allclose(
        prototype_ce(X, ids, n_negatives=3, random_state=0).loc[1:].to_numpy(),
        prototype_ce(other, ids[2:], n_negatives=3, random_state=0).to_numpy(),
        rtol=1e-12,  # 3 negatives = every other identity with a prototype: exact
    )
    # sampled: negatives drawn among identities with a prototype only
    many = np.vstack([X, rng.normal(size=(12, 4))])
    ids_many = np.concatenate([ids, np.repeat(np.arange(5, 11), 2)])
    sampled = prototype_ce(many, ids_many, n_negatives=4, random_state=1)
    assert np.isnan(sampled.loc[0]) and np.isfinite(sampled.loc[1:]).all()
    loo = prototype_ce(X, ids, leave_one_out=True)
    assert np.isfinite(loo).all()
    assert_allclose(
        loo.loc[1:], prototype_ce(other, ids[2:], leave_one_out=True), rtol=1e-12
    )


def test_prototype_ce_auto_blocks_bound_the_logit_memory(monkeypatch):
    from skprivacy.membership import _statistics as st

    X, ids = _ragged()
    ref = prototype_ce(X, ids, batch_size=10_000)
    sizes = []
    block = st._proto_block

    def spy(Zb, cb, Ws, *args):
        sizes.append(Zb.shape[0] * Ws.shape[0] * Ws.dtype.itemsize)
        return block(Zb, cb, Ws, *args)

    monkeypatch.setattr(st, "_proto_block", spy)
    monkeypatch.setattr(st, "_BLOCK_BYTES", 20 * 8 * len(np.unique(ids)))
    got = prototype_ce(X, ids)
    assert len(sizes) > 1 and max(sizes) <= st._BLOCK_BYTES
    assert_allclose(got, ref, rtol=1e-13)
