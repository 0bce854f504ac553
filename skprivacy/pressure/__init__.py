# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Re-identification pressure of cumulative releases (paper 002).

Rényi information measures on posterior matrices, attacker estimators (the
attacker ladder) and the :class:`RenyiPressure` auditor.
"""

from skprivacy.pressure._attackers import (
    GraphAttacker,
    MLPAttacker,
    PrototypeAttacker,
    RetrievalAttacker,
    attacker_ladder,
)
from skprivacy.pressure._measures import (
    arimoto_entropy,
    check_posterior,
    guessing_bound,
    guessing_probability,
    pressure_profile,
    renyi_entropy,
    sibson_information,
    vrpi,
)
from skprivacy.pressure._pressure import ArtifactRelease, RenyiPressure, pressure_ladder

__all__ = [
    "ArtifactRelease",
    "GraphAttacker",
    "MLPAttacker",
    "PrototypeAttacker",
    "RenyiPressure",
    "RetrievalAttacker",
    "arimoto_entropy",
    "attacker_ladder",
    "check_posterior",
    "guessing_bound",
    "guessing_probability",
    "pressure_ladder",
    "pressure_profile",
    "renyi_entropy",
    "sibson_information",
    "vrpi",
]
