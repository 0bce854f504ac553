# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Provenance of one run: software versions, start and end time, command line.

Also what the data cannot carry themselves: the fingerprint of an in-memory
array and the user's own metadata.
"""

import hashlib
import importlib.metadata
import math
import platform
import sys
from datetime import datetime, timezone

import numpy as np

__all__ = [
    "GENERATION_FIELDS",
    "RunProvenance",
    "array_fingerprint",
    "check_metadata",
    "software_versions",
]

#: Generation metadata a reproduction of a run on generated images needs and
#: that an embeddings file does not carry: supplied as ``metadata``
#: (``--meta KEY=VALUE``); :meth:`RunProvenance.metadata_record` lists those
#: not supplied.
GENERATION_FIELDS = {
    "encoder": "embedding model that produced the vectors (name and version)",
    "encoder_checkpoint_sha256": "SHA-256 of the embedding model's checkpoint",
    "generator": "image generator (name)",
    "generator_revision": "generator code or model revision",
    "generator_checkpoint_sha256": "SHA-256 of the generator's checkpoint",
    "prompts": "prompts used (or the SHA-256 of the prompt file)",
    "seeds": "generation seeds",
}

_PACKAGES = (
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "joblib",
    "matplotlib",
)


def software_versions():
    """Versions of Python, the platform and skprivacy's dependencies.

    Returns
    -------
    versions : dict of str to str or None
        ``python``, ``platform`` and one entry per package (None if absent).

    Examples
    --------
    >>> from skprivacy.utils import software_versions
    >>> sorted(software_versions())[:3]
    ['joblib', 'matplotlib', 'numpy']
    """
    out = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        # The running package's own version (an installed copy's metadata may
        # be stale in a development checkout).
        "skprivacy": getattr(sys.modules.get("skprivacy"), "__version__", None),
    }
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            out[name] = None
    return out


def _now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RunProvenance:
    """The provenance every command records: started now, finished by :meth:`record`.

    Parameters
    ----------
    command_line : str or None, default=None
        The command that started the run (the command line passes its own;
        None for a call from Python).
    metadata : dict or None, default=None
        What the data cannot say about themselves (encoder, generator,
        prompts, seeds, ...), checked by :func:`check_metadata`.

    Attributes
    ----------
    start_time : str
        When the object was created (UTC, ISO 8601, seconds).
    metadata : dict
        The checked metadata (``{}`` for None).

    Examples
    --------
    >>> from skprivacy.utils import RunProvenance
    >>> run = RunProvenance("skprivacy audit data.csv")
    >>> record = run.record()
    >>> sorted(record)
    ['command_line', 'end_time', 'start_time', 'versions']
    >>> record["start_time"] <= record["end_time"]
    True
    >>> RunProvenance(metadata={"seeds": "0-9"}).metadata_record()["missing_generation_fields"][:2]
    ['encoder', 'encoder_checkpoint_sha256']
    """

    def __init__(self, command_line=None, *, metadata=None):
        if command_line is not None and not isinstance(command_line, str):
            raise TypeError(
                "command_line must be the command as one str (e.g. "
                f"shlex.join(argv)) or None; got {type(command_line).__name__}."
            )
        self.command_line = command_line
        self.metadata = check_metadata(metadata)
        self.start_time = _now()

    def metadata_record(self):
        """Return ``metadata`` and the :data:`GENERATION_FIELDS` it lacks.

        Returns
        -------
        record : dict
            ``metadata`` and ``missing_generation_fields`` (those given no
            value: absent, None, ``""`` or ``[]``).
        """
        missing = [
            k for k in GENERATION_FIELDS if self.metadata.get(k) in (None, "", [])
        ]
        return {"metadata": self.metadata, "missing_generation_fields": missing}

    def record(self):
        """Return ``versions``, ``start_time``, ``end_time`` (now) and ``command_line``.

        Returns
        -------
        record : dict
            JSON-ready.
        """
        return {
            "versions": software_versions(),
            "start_time": self.start_time,
            "end_time": _now(),
            "command_line": self.command_line,
        }


def array_fingerprint(a):
    """Return the SHA-256, shape and dtype of an array as given.

    Numbers and booleans are hashed as their C-order bytes in their own dtype
    (``hashlib.sha256(np.ascontiguousarray(a)).hexdigest()``), so a float32
    matrix and its float64 copy differ, as their audits may; text and object
    labels as their ``str`` values, one UTF-8 line each.

    Parameters
    ----------
    a : array-like
        The array (embeddings or labels).

    Returns
    -------
    fingerprint : dict
        ``sha256``, ``shape``, ``dtype`` and ``hashed`` (what was hashed).

    Examples
    --------
    >>> import hashlib
    >>> import numpy as np
    >>> from skprivacy.utils import array_fingerprint
    >>> X = np.eye(2)
    >>> array_fingerprint(X)["sha256"] == hashlib.sha256(X.tobytes()).hexdigest()
    True
    >>> array_fingerprint(["a", "b"])["hashed"]
    'str of each element, one UTF-8 line each'
    """
    a = np.asarray(a)
    if a.dtype.kind in "biufc":
        digest = hashlib.sha256(np.ascontiguousarray(a)).hexdigest()
        hashed = "C-order bytes"
    else:
        text = "\n".join(map(str, a.ravel().tolist()))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        hashed = "str of each element, one UTF-8 line each"
    shape = [int(n) for n in a.shape]
    return {"sha256": digest, "shape": shape, "dtype": str(a.dtype), "hashed": hashed}


def check_metadata(metadata):
    """Return user-supplied provenance checked: str keys, JSON scalar values.

    Parameters
    ----------
    metadata : dict or None
        E.g. ``{"generator_revision": "abc123", "seeds": [0, 1]}``: non-empty
        str keys; values str, numbers, bools, None or lists of these.

    Returns
    -------
    metadata : dict
        A copy with stripped keys and lists for tuples (``{}`` for None).

    Raises
    ------
    TypeError
        For a non-mapping or a value of another type (the key is named).
    ValueError
        For an empty key or a non-finite number.

    Examples
    --------
    >>> from skprivacy.utils import check_metadata
    >>> check_metadata({" seeds ": (0, 1)})
    {'seeds': [0, 1]}
    """
    if metadata is None:
        return {}
    if not hasattr(metadata, "items"):
        raise TypeError(
            "metadata must be a dict of str to str/number/bool (e.g. "
            f"{{'generator_revision': 'abc123'}}); got {type(metadata).__name__}."
        )
    scalar = str | int | float | bool
    out = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"metadata keys must be non-empty strings; got {key!r}.")
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, list | tuple):
            bad = [v for v in value if not isinstance(v, scalar)]
            if bad:
                raise TypeError(
                    f"metadata[{key!r}] holds {bad[0]!r}; use str, numbers or bools."
                )
            value = list(value)
        elif value is not None and not isinstance(value, scalar):
            raise TypeError(
                f"metadata[{key!r}] is a {type(value).__name__}; use a str, a number, "
                "a bool or a list of these."
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"metadata[{key!r}] is {value!r}; give a finite number.")
        out[key.strip()] = value
    return out
