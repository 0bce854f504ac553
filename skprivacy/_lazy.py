# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Lazy package attributes (PEP 562): importing a package loads nothing heavy.

A package lists where each public name is defined; the defining module is
imported on the first access to the name (``from skprivacy import ISP``), so
``import skprivacy`` and the command line's ``--help`` do not load numpy,
pandas or scikit-learn.
"""

import importlib
import sys

__all__ = ["attach"]


def attach(package, origins):
    """Return a package's ``__getattr__`` and ``__dir__`` for names loaded on use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    origins : dict of str to str
        Public name -> the module that defines it.

    Returns
    -------
    getattr, dir : callable
        Assign them to the package's ``__getattr__`` and ``__dir__``.

    Examples
    --------
    >>> from skprivacy._lazy import attach
    >>> getattr_, dir_ = attach("skprivacy", {"ISP": "skprivacy.sanitize"})
    >>> getattr_("ISP").__name__
    'ISP'
    """

    def __getattr__(name):
        if name not in origins:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origins[name]), name)
        setattr(sys.modules[package], name, value)  # later accesses skip this
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(origins))

    return __getattr__, __dir__
