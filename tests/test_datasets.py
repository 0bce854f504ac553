# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
import json
from importlib import resources

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import pdist

from skprivacy.datasets import (
    load_cropped_yale_b,
    load_yale_faces,
    make_identity_embeddings,
    read_embeddings,
    select_feature_columns,
    select_features,
)
from skprivacy.exceptions import ExcludedColumnsWarning


def _between_identity_distance(X, ids):
    means = np.array([X[ids == i].mean(axis=0) for i in np.unique(ids)])
    return pdist(means).mean()


def test_generator_shapes_unit_norm_and_seed():
    X, ids = make_identity_embeddings(7, 5, 24, random_state=0)
    assert X.shape == (35, 24)
    assert_array_equal(np.bincount(ids), [5] * 7)
    assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
    X2, _ = make_identity_embeddings(7, 5, 24, random_state=0)
    assert_array_equal(X, X2)


def test_separation_increases_between_identity_distance():
    distances = []
    for separation in [0.0, 0.5, 1.0, 2.0]:
        X, ids = make_identity_embeddings(
            30, 20, 64, separation=separation, noise=1.0, random_state=1
        )
        distances.append(_between_identity_distance(X, ids))
    assert np.all(np.diff(distances) > 0)


def test_noise_increases_within_identity_spread():
    spreads = []
    for noise in [0.1, 0.5, 1.0]:
        X, ids = make_identity_embeddings(10, 30, 32, noise=noise, random_state=2)
        spreads.append(np.mean([X[ids == i].std(axis=0).sum() for i in range(10)]))
    assert np.all(np.diff(spreads) > 0)


def test_zero_noise_puts_identity_on_one_point():
    X, ids = make_identity_embeddings(4, 6, 16, noise=0.0, random_state=0)
    for i in range(4):
        assert_allclose(X[ids == i], np.tile(X[ids == i][0], (6, 1)), atol=1e-12)


def test_attribute_subspace_orthogonal_and_ground_truth():
    bunch = make_identity_embeddings(
        20,
        10,
        64,
        n_identity_dims=8,
        n_attribute_classes=3,
        return_X_y=False,
        random_state=0,
    )
    U, V = bunch.identity_basis, bunch.attribute_basis
    assert U.shape == (64, 8) and V.shape == (64, 3)
    assert_allclose(U.T @ U, np.eye(8), atol=1e-12)
    assert_allclose(U.T @ V, 0.0, atol=1e-12)
    # Identity means live in span(U): projecting onto the complement leaves 0.
    residual = bunch.identity_means - bunch.identity_means @ U @ U.T
    assert_allclose(residual, 0.0, atol=1e-12)
    assert set(np.unique(bunch.attribute)) == {0, 1, 2}


@pytest.mark.parametrize("dist", ["gaussian", "laplace", "student_t"])
def test_noise_distributions_have_the_documented_scale(dist):
    X, ids = make_identity_embeddings(
        1,
        4000,
        50,
        separation=0.0,
        noise=3.0,
        offset=10.0,
        noise_distribution=dist,
        random_state=0,
    )
    assert X.shape == (4000, 50)
    assert_allclose(np.linalg.norm(X, axis=1), 1.0)


def test_variable_samples_per_identity_and_frame():
    X, ids = make_identity_embeddings(6, (3, 9), 10, as_frame=True, random_state=0)
    counts = ids.value_counts()
    assert counts.min() >= 3 and counts.max() <= 9
    assert list(X.columns[:2]) == ["e0", "e1"]


def test_generator_rejects_impossible_subspaces():
    with pytest.raises(ValueError, match="must fit"):
        make_identity_embeddings(5, 2, 8, n_identity_dims=6, n_attribute_classes=3)


def _provenance_counts(dataset):
    summary = json.loads(
        (
            resources.files("skprivacy.datasets") / "data" / dataset / "summary.json"
        ).read_text()
    )
    return summary


@pytest.mark.parametrize("encoder", ["dlib_resnet128", "hog_pca128"])
def test_cropped_yale_b_counts_from_provenance(encoder):
    faces = load_cropped_yale_b(encoder=encoder)
    # PROVENANCE.md: rows kept 1703; identities 38; per identity 38/44/52.
    assert faces.data.shape == (1703, 128)
    counts = pd.Series(faces.identity).value_counts()
    assert len(counts) == 38
    assert (counts.min(), counts.median(), counts.max()) == (38, 44, 52)
    assert faces.azimuth.shape == faces.elevation.shape == (1703,)
    assert "Extended Yale Face Database B" in faces.DESCR
    assert _provenance_counts("cropped-yale-b")["rows"] == 1703


def test_yale_faces_counts_and_sanity():
    faces = load_yale_faces()
    assert faces.data.shape == (164, 128)
    counts = pd.Series(faces.identity).value_counts()
    assert len(counts) == 15 and counts.min() == 10 and counts.max() == 11
    assert len(set(faces.condition)) == 11
    # PROVENANCE sanity table: leave-one-out 1-NN identity accuracy (cosine) is 1.0.
    Z = faces.data / np.linalg.norm(faces.data, axis=1, keepdims=True)
    S = Z @ Z.T
    np.fill_diagonal(S, -np.inf)
    assert np.mean(faces.identity[S.argmax(axis=1)] == faces.identity) == 1.0


def test_loader_as_frame():
    faces = load_yale_faces(as_frame=True)
    assert isinstance(faces.data, pd.DataFrame)
    assert faces.frame.shape[0] == 164
    assert faces.condition.name == "condition"


def test_read_embeddings_csv_gz_and_parquet(tmp_path):
    frame = pd.DataFrame(
        {
            "person": ["a", "a", "b", None],
            "img": list("wxyz"),
            "e0": [0.12, -0.7, 0.33, 0.4],
            "e1": [0.5, 0.1, 0.2, 0.3],
            "other": [9, 9, 9, 9],
        }
    )
    path = tmp_path / "emb.csv.gz"
    frame.to_csv(path, index=False)
    with pytest.warns(UserWarning, match="1 row"):
        X, ids, info = read_embeddings(path, id_column="person", features="^e")
    assert list(X.columns) == ["e0", "e1"] and ids.tolist() == ["a", "a", "b"]
    assert set(info["excluded_columns"]) == {"img", "other"}
    assert info["n_rows_missing_id"] == 1 and len(info["sha256"]) == 64
    parquet = tmp_path / "emb.parquet"
    frame.dropna().to_parquet(parquet)
    # Automatic selection: the integer column is metadata, named with its reason.
    with pytest.warns(ExcludedColumnsWarning, match="'other' .integer-valued"):
        X, ids, info = read_embeddings(parquet, id_column="person")
    assert list(X.columns) == ["e0", "e1"] and info["format"] == "parquet"
    assert set(info["excluded_columns"]) == {"img", "other"}


def test_read_embeddings_npy_and_npz(tmp_path):
    matrix = np.arange(12.0).reshape(4, 3)
    np.save(tmp_path / "x.npy", matrix)
    np.save(tmp_path / "y.npy", np.array([1, 1, 2, 2]))
    X, ids, _ = read_embeddings(tmp_path / "x.npy", labels=tmp_path / "y.npy")
    assert_array_equal(X.to_numpy(), matrix)
    assert ids.tolist() == [1, 1, 2, 2]
    np.savez(tmp_path / "z.npz", X=matrix, identity=np.array(list("aabb")))
    X, ids, _ = read_embeddings(tmp_path / "z.npz")
    assert ids.tolist() == list("aabb")


@pytest.mark.parametrize(
    "content, kwargs, error, match",
    [
        (None, {}, FileNotFoundError, "not found"),
        ("identity,e0\na,1\n", {"id_column": "who"}, ValueError, "'who' not found"),
        ("identity,name\na,x\n", {}, ValueError, "no embedding column found"),
        ("identity,e0\na,1\n", {"features": "^z"}, ValueError, "no column matches"),
    ],
)
def test_read_embeddings_errors(tmp_path, content, kwargs, error, match):
    path = tmp_path / "f.csv"
    if content is not None:
        path.write_text(content)
    with pytest.raises(error, match=match):
        read_embeddings(path, **kwargs)


def test_read_embeddings_unreadable(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="Could not read"):
        read_embeddings(path)
    with pytest.raises(ValueError, match="labels"):
        np.save(tmp_path / "x.npy", np.eye(3))
        read_embeddings(tmp_path / "x.npy")


def test_read_embeddings_label_count_mismatch(tmp_path):
    np.save(tmp_path / "x.npy", np.eye(3))
    np.save(tmp_path / "y.npy", np.array([1, 2]))
    with pytest.raises(ValueError, match="has 2 labels but .* has 3 rows"):
        read_embeddings(tmp_path / "x.npy", labels=tmp_path / "y.npy")
    np.savez(tmp_path / "z.npz", X=np.eye(3), identity=np.array(["a"]))
    with pytest.raises(ValueError, match="'identity' has 1 labels but 'X' has 3 rows"):
        read_embeddings(tmp_path / "z.npz")


def _messy_frame(n_ids=20, per_id=2, dim=6, seed=0):
    """A table as users save it: metadata columns around the embedding."""
    rng = np.random.default_rng(seed)
    n = n_ids * per_id
    frame = pd.DataFrame(
        rng.normal(size=(n, dim)), columns=[f"e{j}" for j in range(dim)]
    )
    frame.insert(0, "identity", np.repeat([f"p{i}" for i in range(n_ids)], per_id))
    frame.insert(1, "image", [f"img/{i:04d}.png" for i in range(n)])
    frame.insert(2, "shot", np.tile(np.arange(1, per_id + 1), n_ids))
    frame["is_train"] = np.arange(n) % 3 == 0
    frame["yaw"] = np.tile([-30.5, 0.0, 30.5, 15.25], n // 4 + 1)[:n]
    frame["frame_no"] = np.arange(n, dtype=float)
    frame["const"] = 0.5
    return frame


def test_select_feature_columns_names_every_metadata_column(tmp_path):
    frame = _messy_frame()
    path = tmp_path / "messy.csv.gz"
    frame.to_csv(path)  # with the pandas index: an "Unnamed: 0" column
    with pytest.warns(ExcludedColumnsWarning) as record:
        X, ids, info = read_embeddings(path)
    assert info["feature_columns"] == [f"e{j}" for j in range(6)]
    assert list(X.columns) == info["feature_columns"]
    reasons = info["excluded_columns"]
    assert set(reasons) == {
        "Unnamed: 0",
        "image",
        "shot",
        "is_train",
        "yaw",
        "frame_no",
        "const",
    }
    assert "index column" in reasons["Unnamed: 0"]
    assert reasons["image"] == "text" and reasons["is_train"] == "boolean"
    assert "integer" in reasons["shot"] and "low cardinality" in reasons["yaw"]
    assert "index-like" in reasons["frame_no"] and reasons["const"] == "constant"
    message = str(record[0].message)
    assert all(f"'{name}'" in message for name in reasons)


def test_select_feature_columns_explicit_and_exclude():
    frame = _messy_frame()
    cols, excluded = select_feature_columns(
        frame, id_column="identity", features="^e", exclude="e5"
    )
    assert cols == [f"e{j}" for j in range(5)]
    assert (
        excluded["e5"].startswith("matches exclude")
        and "does not match" in (excluded["shot"])
    )
    # Explicit selection trusts integer columns but never booleans.
    cols, _ = select_feature_columns(frame, id_column="identity", features="^(e|shot)")
    assert "shot" in cols
    with pytest.raises(ValueError, match="'is_train' .*boolean"):
        select_feature_columns(frame, id_column="identity", features="is_train|e0")


def test_select_features_in_memory():
    frame = _messy_frame().drop(columns="identity")
    with pytest.warns(ExcludedColumnsWarning, match="Pass features=") as record:
        X, names, excluded = select_features(frame)
    assert names == [f"e{j}" for j in range(6)] and list(X.columns) == names
    assert set(excluded) == set(frame.columns) - set(names)
    assert all(f"'{c}'" in str(record[0].message) for c in excluded)
    X, names, excluded = select_features(frame, features="^e[01]$")  # no warning
    assert names == ["e0", "e1"] and "e2" in excluded
    X, names, excluded = select_features([[1.0, 2.0, 3.0]])
    assert isinstance(X, np.ndarray) and names == ["0", "1", "2"] and excluded == {}
    with pytest.raises(ValueError, match="DataFrame columns by name"):
        select_features(np.zeros((2, 2)), exclude="x")


@pytest.mark.parametrize("features", [None, "^e"])
def test_text_cell_in_feature_column_is_an_error(tmp_path, features):
    frame = _messy_frame().astype({"e3": object})
    frame.loc[7, "e3"] = "oops"
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="column 'e3' .*row 7 holds 'oops'"):
        read_embeddings(path, features=features)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"features": "["}, "invalid regular expression for features"),
        ({"exclude": "("}, "invalid regular expression for exclude"),
        ({"features": "^zzz"}, "no column matches"),
    ],
)
def test_select_feature_columns_bad_patterns(kwargs, match):
    with pytest.raises(ValueError, match=match):
        select_feature_columns(_messy_frame(), id_column="identity", **kwargs)


def test_only_metadata_columns_is_an_error():
    frame = pd.DataFrame({"identity": ["a", "b"], "shot": [1, 2], "ok": [True, False]})
    with pytest.raises(ValueError, match="no embedding column found.*--features"):
        select_feature_columns(frame, id_column="identity")


def test_array_files_use_every_matrix_column(tmp_path):
    # An integer (quantised) matrix in an .npz is still the embedding.
    X = np.arange(24).reshape(6, 4) % 5
    np.savez(tmp_path / "q.npz", X=X, ids=np.arange(6) % 3)
    out, _, info = read_embeddings(tmp_path / "q.npz")
    assert info["feature_columns"] == ["e0", "e1", "e2", "e3"]
    assert info["excluded_columns"] == {}
    np.savez(tmp_path / "flat.npz", X=np.arange(5.0), ids=np.arange(5))
    with pytest.raises(ValueError, match="'X' holds a 1-D array .*expected a 2-D"):
        read_embeddings(tmp_path / "flat.npz")
