# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""The method order and the protocol names: plain data, importable without numpy.

The command line builds its parser from these (so ``skprivacy --help`` does
not load the scientific stack); the registry declares one method per name and
its tests check that it declares exactly these.
"""

__all__ = ["METHOD_NAMES", "PROTOCOL_HELP", "SHARED_SETTINGS"]

#: The registered methods in the one order used everywhere: run order, the
#: order of results in the report and summary.json, of Table I's columns and
#: of the per-pair ε columns that rank the most leaky pairs (point estimates,
#: most trusted first, then certificates).
METHOD_NAMES = (
    "rocht",
    "mmdtv",
    "gaussmech",
    "kdelr",
    "reid",
    "rocht_certificate",
    "mmdtv_certificate",
    "permutation",
    "controls",
    "rocht_controls",
    "classifier_sensitivity",
    "gaussianity",
    "witness",
)

#: Protocol name -> one line (command-line help, user guide).
PROTOCOL_HELP = {
    "quick": "a first look: well under 30 s on the bundled data on 2 cores",
    "paper": "the pair and permutation counts of the paper the auditors come from "
    "(\u201cPicture the Epsilon\u201d)",
    "exhaustive": "every pair for the methods with an exhaustive engine",
}

#: Settings every certificate shares (CLI ``--confidence`` and ``--test-size``).
SHARED_SETTINGS = {"confidence": 0.95, "test_size": 0.3}
