# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Test-suite settings shared by every module."""

import argparse

import pytest
from hypothesis import settings

# Property tests check invariants, not speed: on a loaded CI machine a single
# example can exceed hypothesis's default 200 ms deadline and fail a correct
# test. Speed targets live in benchmarks/.
settings.register_profile("skprivacy", deadline=None)
settings.load_profile("skprivacy")


@pytest.fixture
def argparse_says():
    """argparse's own text for a rejected option value (its wording varies by version).

    ``argparse_says("--format", "xml", choices=["csv"])`` is the message that
    follows ``error:`` when argparse refuses ``--format xml``.
    """

    def says(option, value, **kwargs):
        parser = argparse.ArgumentParser(exit_on_error=False)
        parser.add_argument(option, **kwargs)
        try:
            parser.parse_args([option, value])
        except argparse.ArgumentError as exc:
            return str(exc)
        raise AssertionError(f"argparse accepted {option} {value}")

    return says
