# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The ``skprivacy`` command line; see ``skprivacy audit --help``."""

from skprivacy.cli._main import main

__all__ = ["main"]
