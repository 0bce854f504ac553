# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Display objects for audit results, in the style of scikit-learn's displays.

Each display is built by a class method from a fitted estimator or a result
table (``from_estimator``, ``from_predictions``, ``from_sweep``, ...), draws
itself with matplotlib, and keeps its artists as fitted-style attributes
(``ax_``, ``figure_``, ``line_``, ...); :meth:`plot` redraws it on other axes.
"""

from skprivacy.plotting._base import figure_png
from skprivacy.plotting._conditions import ConditionsEpsilonDisplay
from skprivacy.plotting._diagnostics import (
    PermutationPValueDisplay,
    ResidualQQDisplay,
)
from skprivacy.plotting._epsilon import EpsilonDistributionDisplay
from skprivacy.plotting._membership import (
    MembershipDistributionDisplay,
    MembershipROCDisplay,
)
from skprivacy.plotting._pressure import PressureStagesDisplay
from skprivacy.plotting._roc import PairROCDisplay
from skprivacy.plotting._sweep import BandwidthSweepDisplay
from skprivacy.plotting._tradeoff import PrivacyUtilityDisplay

__all__ = [
    "BandwidthSweepDisplay",
    "ConditionsEpsilonDisplay",
    "EpsilonDistributionDisplay",
    "MembershipDistributionDisplay",
    "MembershipROCDisplay",
    "PairROCDisplay",
    "PermutationPValueDisplay",
    "PressureStagesDisplay",
    "PrivacyUtilityDisplay",
    "ResidualQQDisplay",
    "figure_png",
]
