# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tuned numerical kernels, behind one private wall.

Each module here holds the fast implementation of one computation the public
estimators need (shared products, batched selections, blocked updates) and,
beside it, a plain reference implementation written straight from the formula;
the tests compare the two. Nothing here is public API: estimators and the
pure maths functions call these kernels, users never do. This package imports
only :mod:`skprivacy.utils`, :mod:`skprivacy.exceptions` and the scientific
stack. Measured speeds live in ``benchmarks/README.md``, not in comments here.
"""
