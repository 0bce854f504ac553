# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Loaders for the real face embeddings shipped with skprivacy.

The files live in ``skprivacy/datasets/data/<dataset>/`` with their
``PROVENANCE.md`` (source, licence situation, encoder, counts) and
``summary.json``. Nothing is downloaded.
"""

import json
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from skprivacy.utils._sklearn import StrOptions, validate_params

__all__ = ["load_cropped_yale_b", "load_yale_faces"]

ENCODERS = ("dlib_resnet128", "hog_pca128")
#: The parameters every loader takes.
_LOADER_PARAMS = {"encoder": [StrOptions(set(ENCODERS))], "as_frame": ["boolean"]}


def _data_dir(dataset):
    return resources.files("skprivacy.datasets") / "data" / dataset


def _provenance(dataset):
    """Return the PROVENANCE.md text of a bundled dataset."""
    return (_data_dir(dataset) / "PROVENANCE.md").read_text(encoding="utf-8")


def _summary(dataset):
    return json.loads((_data_dir(dataset) / "summary.json").read_text("utf-8"))


def _load(dataset, encoder, label_columns, as_frame):
    with resources.as_file(_data_dir(dataset) / f"{encoder}.csv.gz") as path:
        frame = pd.read_csv(path, dtype={"identity": str, "image": str})
    feature_names = [c for c in frame.columns if c.startswith("e") and c[1:].isdigit()]
    if as_frame:
        data, columns, extra = frame[feature_names], frame, {"frame": frame}
    else:
        data = frame[feature_names].to_numpy(dtype=np.float64)
        columns = {col: frame[col].to_numpy() for col in frame.columns}
        columns["identity"] = columns["identity"].astype(object)
        columns["image"] = columns["image"].astype(object)
        extra = {}
    return Bunch(
        **extra,
        data=data,
        identity=columns["identity"],
        **{col: columns[col] for col in label_columns},
        image=columns["image"],
        feature_names=feature_names,
        label_columns=list(label_columns),
        encoder=encoder,
        DESCR=_provenance(dataset),
    )


@validate_params(_LOADER_PARAMS, prefer_skip_nested_validation=True)
def load_yale_faces(*, encoder="dlib_resnet128", as_frame=False):
    """Load face embeddings of the Yale Face Database (15 people, 164 images).

    Real photographs of real people, encoded by a pretrained face-recognition
    model; derived data only (no images). Treat them as biometric-derived data,
    for testing and demonstrating identity-leakage audits.

    Parameters
    ----------
    encoder : {"dlib_resnet128", "hog_pca128"}, default="dlib_resnet128"
        ``"dlib_resnet128"``: 128-d face-recognition descriptors of dlib's
        ResNet model. ``"hog_pca128"``: a generic, non-face-recognition
        representation of the same images in the same row order (HOG, PCA to
        128 components).
    as_frame : bool, default=False
        If True, ``data`` is a DataFrame, labels are Series and ``frame`` holds
        the whole table.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (164 x 128), ``identity`` (15 subjects), ``condition`` (one
        of 11 capture conditions: lighting, expression, glasses), ``image``
        (source file name), ``feature_names``, ``encoder`` and ``DESCR`` (the
        full provenance and attribution text).

    Notes
    -----
    Source: the Yale Face Database (Yale Center for Computational Vision and
    Control), P. N. Belhumeur, J. P. Hespanha, D. J. Kriegman, "Eigenfaces vs.
    Fisherfaces: Recognition Using Class Specific Linear Projection", IEEE
    TPAMI 19(7), 1997; copy from github.com/leecarraher/pattern_recognition at
    commit b072a1f. No explicit licence was found; the database is customarily
    distributed for research use with the citation above. Encoder: dlib 20.0.1
    ResNet face descriptor (``face_recognition_models`` 0.3.0 weights). The
    copy lacks ``subject01.centerlight`` (164 of 165 images). Nine pairs of
    source images are byte-identical (e.g. ``subject02.noglasses`` and
    ``subject02.normal``), so their rows are identical. See ``DESCR``.

    Examples
    --------
    >>> from skprivacy.datasets import load_yale_faces
    >>> faces = load_yale_faces()
    >>> faces.data.shape, len(set(faces.identity)), sorted(set(faces.condition))[:3]
    ((164, 128), 15, ['centerlight', 'glasses', 'happy'])
    """
    return _load("yale-faces", encoder, ("condition",), as_frame)


@validate_params(_LOADER_PARAMS, prefer_skip_nested_validation=True)
def load_cropped_yale_b(*, encoder="dlib_resnet128", as_frame=False):
    """Load face embeddings of the Extended Yale Face Database B, cropped.

    38 people photographed frontally under 64 point-light illuminations; 1,703
    images in which a face was detected are encoded (38 to 52 per person). This
    is skprivacy's default real audit set: its sample size per identity is
    close to that of the paper's CelebA condition.

    Parameters
    ----------
    encoder : {"dlib_resnet128", "hog_pca128"}, default="dlib_resnet128"
        ``"dlib_resnet128"``: 128-d face-recognition descriptors of dlib's
        ResNet model. ``"hog_pca128"``: a generic, non-face-recognition
        representation of the same images in the same row order (HOG, PCA to
        128 components).
    as_frame : bool, default=False
        If True, ``data`` is a DataFrame, labels are Series and ``frame`` holds
        the whole table.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (1703 x 128), ``identity`` (38 subjects), ``azimuth`` and
        ``elevation`` (light-source direction in degrees; 0/0 = frontal),
        ``image``, ``feature_names``, ``encoder`` and ``DESCR`` (the full
        provenance and attribution text).

    Notes
    -----
    Source: the cropped Extended Yale Face Database B; A. S. Georghiades, P. N.
    Belhumeur, D. J. Kriegman, "From Few to Many: Illumination Cone Models for
    Face Recognition under Variable Lighting and Pose", IEEE TPAMI 23(6), 2001;
    K. C. Lee, J. Ho, D. J. Kriegman, "Acquiring Linear Subspaces for Face
    Recognition under Variable Lighting", IEEE TPAMI 27(5), 2005; copy from
    github.com/Uranium2/recognition at commit 55008b5. No explicit licence was
    found; the database is customarily distributed for research use with these
    citations. 711 of 2,414 images had no detectable face (mostly the darkest,
    most side-lit ones) and are absent, so extreme lighting is
    under-represented. See ``DESCR``.

    Examples
    --------
    >>> from skprivacy.datasets import load_cropped_yale_b
    >>> faces = load_cropped_yale_b()
    >>> faces.data.shape, len(set(faces.identity))
    ((1703, 128), 38)
    """
    return _load("cropped-yale-b", encoder, ("azimuth", "elevation"), as_frame)
