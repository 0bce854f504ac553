# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reading a saved ISP projector (``.npz``) with every field checked."""

import os
import zipfile
import zlib

import numpy as np

__all__ = ["read_projector"]

_REQUIRED = (
    "components",
    "renormalize",
    "mean",
    "singular_values",
    "explained_energy_ratio",
)
_OPTIONAL = ("projector", "feature_names_in")
# How archives and single arrays start (zip local header, empty zip, .npy).
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_NPY_MAGIC = b"\x93NUMPY"
# Tolerance of U U^T against I, and of the stored dense projector against
# I - U^T U (the orthonormality tolerance of ISP.from_components).
_PROJECTOR_ATOL = 1e-6


def _name(file):
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    return str(getattr(file, "name", "<file object>"))


def _head(file, n=8):
    if isinstance(file, (str, os.PathLike)):
        with open(file, "rb") as fh:
            return fh.read(n)
    position = file.tell()
    head = file.read(n)
    file.seek(position)
    return head


def _describe_head(head):
    text = head.decode("utf-8", errors="replace")
    if text.strip() and all(c.isprintable() or c in "\t\r\n" for c in text):
        return f"it is text starting {text!r}, e.g. a CSV file"
    return "it does not start like one"


def read_projector(file):
    r"""Read and check the arrays of a projector saved by ``ISP.to_npz``.

    The archive is opened with ``allow_pickle=False``: nothing in it is ever
    unpickled. Every failure is a one-line ``ValueError`` naming the file and
    the problem: not an ``.npz`` archive (a CSV, a single ``.npy`` array), a
    damaged archive, a pickled (object) array, a missing field, or a field of
    the wrong shape or dtype.

    Parameters
    ----------
    file : str, path-like or binary file object
        The ``.npz`` archive.

    Returns
    -------
    fields : dict
        ``components`` (float64, ``(r, d)``), ``renormalize`` (bool),
        ``mean`` (``(d,)``), ``singular_values`` and
        ``explained_energy_ratio`` (``(r,)``), and
        ``feature_names_in`` (``(d,)`` str, or None): the keyword arguments
        of ``ISP.from_components``.

    Raises
    ------
    ValueError
        If the file is not a valid projector archive (the message names the
        file and the problem).
    FileNotFoundError
        If the file does not exist.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from skprivacy.sanitize._projector import read_projector
    >>> buffer = io.BytesIO()
    >>> np.savez(buffer, components=np.eye(3)[:1], renormalize=np.asarray(True),
    ...          mean=np.zeros(3), singular_values=np.ones(1),
    ...          explained_energy_ratio=np.ones(1))
    >>> _ = buffer.seek(0)
    >>> fields = read_projector(buffer)
    >>> fields["components"].shape, fields["renormalize"]
    ((1, 3), True)
    >>> read_projector(io.BytesIO(b"e0,e1\n0.1,0.2\n"))
    Traceback (most recent call last):
    ...
    ValueError: projector file <file object>: not an .npz archive written by ISP.to_npz (it is text starting 'e0,e1\n0.', e.g. a CSV file).
    """
    name = _name(file)

    def fail(problem):
        return ValueError(f"projector file {name}: {problem}.")

    head = _head(file)
    if head.startswith(_NPY_MAGIC):
        raise fail("a single .npy array, not an .npz archive written by ISP.to_npz")
    if not head.startswith(_ZIP_MAGIC):
        raise fail(
            "not an .npz archive written by ISP.to_npz "
            f"({'it is empty' if not head else _describe_head(head)})"
        )
    try:
        archive = np.load(file, allow_pickle=False)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, zlib.error) as exc:
        raise fail(f"damaged .npz archive ({_one_line(exc)})") from None
    with archive:
        missing = [key for key in _REQUIRED if key not in archive.files]
        if missing:
            raise fail(
                f"not an archive written by ISP.to_npz: it lacks "
                f"{', '.join(missing)} (it holds "
                f"{', '.join(archive.files) or 'no arrays'})"
            )
        arrays = {}
        for key in (*_REQUIRED, *_OPTIONAL):
            if key not in archive.files:
                continue
            try:
                arrays[key] = archive[key]
            except ValueError as exc:
                if "allow_pickle" in str(exc):
                    raise fail(
                        f"array {key!r} holds Python objects, which skprivacy never "
                        "unpickles; save projectors with ISP.to_npz"
                    ) from None
                raise fail(f"damaged array {key!r} ({_one_line(exc)})") from None
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise fail(f"damaged array {key!r} ({_one_line(exc)})") from None
    return _check_fields(arrays, fail)


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def _float_array(arrays, key, shape, fail, *, finite=False):
    a = arrays[key]
    if a.dtype.kind not in "biuf" or a.dtype.kind == "b":
        raise fail(f"{key} must hold real numbers; it has dtype {a.dtype}")
    if a.shape != shape:
        want = "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
        raise fail(f"{key} must have shape {want}); it has shape {a.shape}")
    a = a.astype(np.float64)
    if finite and not np.isfinite(a).all():
        raise fail(f"{key} holds {int((~np.isfinite(a)).sum())} non-finite value(s)")
    return a


def _check_fields(arrays, fail):
    U = arrays["components"]
    if U.ndim != 2:
        raise fail(
            f"components must be a 2-D array (r, n_features); it has shape {U.shape}"
        )
    r, d = U.shape
    U = _float_array(arrays, "components", (r, d), fail, finite=True)
    if r > d:
        raise fail(f"components has {r} rows for {d} features (at most {d})")
    gram_error = float(np.abs(U @ U.T - np.eye(r)).max()) if r else 0.0
    if gram_error > _PROJECTOR_ATOL:
        raise fail(
            "components rows are not orthonormal (largest deviation of U U^T "
            f"from I: {gram_error:.3g})"
        )
    flag = arrays["renormalize"]
    if flag.size != 1 or flag.ndim > 1:
        raise fail(f"renormalize must be a single boolean; it has shape {flag.shape}")
    value = flag.reshape(()).item()
    if flag.dtype.kind not in "biu" or value not in (0, 1):
        raise fail(
            f"renormalize must be a single boolean; it holds {value!r} "
            f"(dtype {flag.dtype})"
        )
    fields = {
        "components": U,
        "renormalize": bool(value),
        "mean": _float_array(arrays, "mean", (d,), fail, finite=True),
        "singular_values": _float_array(arrays, "singular_values", (r,), fail),
        "explained_energy_ratio": _float_array(
            arrays, "explained_energy_ratio", (r,), fail
        ),
        "feature_names_in": None,
    }
    if "feature_names_in" in arrays:
        names = arrays["feature_names_in"]
        if names.dtype.kind != "U" or names.shape != (d,):
            raise fail(
                f"feature_names_in must hold {d} column name(s) (text); it has "
                f"shape {names.shape} and dtype {names.dtype}"
            )
        fields["feature_names_in"] = names
    if "projector" in arrays:
        P = _float_array(arrays, "projector", (d, d), fail, finite=True)
        expected = -(U.T @ U)
        expected[np.diag_indices_from(expected)] += 1.0
        deviation = float(np.abs(P - expected).max()) if d else 0.0
        if deviation > _PROJECTOR_ATOL:
            raise fail(
                "projector does not equal I - components^T components (largest "
                f"deviation {deviation:.3g}): the arrays come from different "
                "projectors"
            )
    return fields
