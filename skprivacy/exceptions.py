# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by skprivacy."""

__all__ = [
    "DroppedRowsWarning",
    "ExcludedColumnsWarning",
    "ExcludedIdentitiesWarning",
    "FewDimensionsLeftWarning",
    "NoAuditablePairsError",
    "OutputBusyError",
    "ProbeCountWarning",
    "ReportFileError",
    "StaleOutputWarning",
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


class FewDimensionsLeftWarning(UserWarning):
    """An identity eraser removed so many directions that few dimensions survive.

    Raised by :class:`~skprivacy.sanitize.ISP`, :class:`~skprivacy.sanitize.LEACE`
    and :class:`~skprivacy.sanitize.INLP` when the fitted rank leaves fewer than
    half of the embedding dimensions: the output may no longer be useful for
    anything but erasure. The default rank rule (``n_components="auto"``) never
    goes below half; explicit ranks and ``"full"`` may.
    """


class NoAuditablePairsError(ValueError):
    """Fewer than two identities with at least two usable rows remain."""


class OutputBusyError(FileExistsError):
    """Another running skprivacy process is writing the same output.

    Raised when an output directory is claimed (see
    :meth:`skprivacy.AuditReport.save`): two runs into one directory would
    otherwise replace each other's output. The message names the path and the
    other process.
    """


class ProbeCountWarning(UserWarning):
    """Probe counts differ between the groups a membership statistic compares.

    The vMF concentration (and the leave-one-out and own prototypes of PenLogit
    and ProtoCE) depend on how many probes ``k`` an identity has: at d = 512
    the mean vMF-kappa of ``k`` probes overstates the true kappa about 1.5
    times at k = 10 and 2 times at k = 5 when kappa = 200, and 3.8 and 5.9
    times when kappa = 50. Members and non-members probed with different ``k``
    then separate by ``k`` alone. Raised by
    :class:`~skprivacy.membership.MembershipGeometry` when that correction
    (``match_k=True``, the default) is switched off, or when new identities
    have fewer probes than the fitted matched count.
    """


class ReportFileError(ValueError):
    """A file of a saved report cannot be read back.

    Raised by :meth:`skprivacy.AuditReport.load` and
    :meth:`skprivacy.report.ConditionsReport.load` for a file that is damaged
    (truncated, not UTF-8, not the JSON or CSV it should be), that does not
    follow its layout (``summary_schema()``; the message gives the field), or
    that belongs to another run than the folder's other files (their
    ``run_id`` differ). The message is one line naming the file and the
    problem.
    """


class StaleOutputWarning(UserWarning):
    """Leftovers of an interrupted skprivacy run were found beside an output.

    A run killed while writing (e.g. ``kill -9``) leaves its claim file and a
    hidden staging directory ``.<out>.<pid>.<token>.tmp`` beside the output.
    The next run writing the same output takes over the claim and removes the
    staging directories of processes that no longer run, naming them in this
    warning; leftovers of a process still running are named and kept.
    """


class UnresolvableRateWarning(UserWarning):
    """A requested error rate cannot be resolved with the number of trials available.

    For example, a false-accept rate of 1e-4 needs at least about 1/1e-4 impostor
    comparisons before a threshold at that rate means anything.
    """
