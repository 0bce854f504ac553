# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Named audit protocols, assembled from the method registry.

Each method declares the pair and permutation counts it reads under each
protocol; a protocol is their union plus the settings every certificate
shares. ``None`` for a pair count means every pair. Every method uses a prefix
of the same seeded pair ordering, so methods compare the same pairs.
"""

from skprivacy.report._methods import METHODS

__all__ = ["PROTOCOLS", "PROTOCOL_HELP", "SHARED_SETTINGS"]

#: Settings every certificate shares (CLI ``--confidence`` and ``--test-size``).
SHARED_SETTINGS = {"confidence": 0.95, "test_size": 0.3}

#: One line per protocol (CLI help, user guide).
PROTOCOL_HELP = {
    "quick": "a first look: well under 30 s on the bundled data on 2 cores",
    "paper": "paper 000's pair and permutation counts",
    "exhaustive": "every pair for the methods with an exhaustive engine",
}


def _assemble(name):
    settings = dict(SHARED_SETTINGS)
    for method in METHODS.values():
        settings.update(method.sizes[name])
    return settings


#: Protocol name -> settings (pair counts per method, permutations, confidence).
PROTOCOLS = {name: _assemble(name) for name in PROTOCOL_HELP}
