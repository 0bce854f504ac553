# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by skprivacy."""

__all__ = [
    "DroppedRowsWarning",
    "ExcludedColumnsWarning",
    "ExcludedIdentitiesWarning",
    "UnresolvableRateWarning",
]


class DroppedRowsWarning(UserWarning):
    """Rows were removed because they are non-finite or have (almost) zero norm.

    The counts by reason are also stored on the estimator (``drop_report_``), so
    nothing is dropped silently.
    """


class ExcludedColumnsWarning(UserWarning):
    """Columns of an input table were not used as embedding dimensions.

    Raised by the file readers when automatic column selection leaves out
    metadata (integer, boolean, index-like, low-cardinality or text columns);
    the message names each column and the reason, and the same list is
    recorded in the reader's ``info["excluded_columns"]`` and in provenance.
    """


class ExcludedIdentitiesWarning(UserWarning):
    """Identities with too few usable rows were left out of an audit."""


class UnresolvableRateWarning(UserWarning):
    """A requested error rate cannot be resolved with the number of trials available.

    For example, a false-accept rate of 1e-4 needs at least about 1/1e-4 impostor
    comparisons before a threshold at that rate means anything.
    """
