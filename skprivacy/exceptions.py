# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by skprivacy."""

__all__ = ["DroppedRowsWarning", "ExcludedIdentitiesWarning", "UnresolvableRateWarning"]


class DroppedRowsWarning(UserWarning):
    """Rows were removed because they are non-finite or have (almost) zero norm.

    The counts by reason are also stored on the estimator (``drop_report_``), so
    nothing is dropped silently.
    """


class ExcludedIdentitiesWarning(UserWarning):
    """Identities with too few usable rows were left out of an audit."""


class UnresolvableRateWarning(UserWarning):
    """A requested error rate cannot be resolved with the number of trials available.

    For example, a false-accept rate of 1e-4 needs at least about 1/1e-4 impostor
    comparisons before a threshold at that rate means anything.
    """
