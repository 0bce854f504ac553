# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command-line entry point: ``skprivacy`` / ``python -m skprivacy``."""

import sys

from skprivacy.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
