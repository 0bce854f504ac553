# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Provenance of one run: software versions, start and end time, command line."""

import importlib.metadata
import platform
import sys
from datetime import datetime, timezone

__all__ = ["RunProvenance", "software_versions"]

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

    Attributes
    ----------
    start_time : str
        When the object was created (UTC, ISO 8601, seconds).

    Examples
    --------
    >>> from skprivacy.utils import RunProvenance
    >>> run = RunProvenance("skprivacy audit data.csv")
    >>> record = run.record()
    >>> sorted(record)
    ['command_line', 'end_time', 'start_time', 'versions']
    >>> record["start_time"] <= record["end_time"]
    True
    """

    def __init__(self, command_line=None):
        self.command_line = command_line
        self.start_time = _now()

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
