# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Test-suite settings shared by every module."""

from hypothesis import settings

# Property tests check invariants, not speed: on a loaded CI machine a single
# example can exceed hypothesis's default 200 ms deadline and fail a correct
# test. Speed targets live in benchmarks/.
settings.register_profile("skprivacy", deadline=None)
settings.load_profile("skprivacy")
