# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Turning ``random_state`` into random numbers: the one place it is done."""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["check_generator", "seed_from"]


def check_generator(random_state):
    """Turn a ``random_state`` parameter into a :class:`numpy.random.Generator`.

    Follows scikit-learn's convention (:func:`sklearn.utils.check_random_state`)
    for what a ``random_state`` may be, and adds numpy Generators.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator or None
        An int seeds a new Generator (the same int, the same numbers). A
        Generator is returned as is. A RandomState instance, or None (numpy's
        global RandomState), is consumed to seed a new Generator, so
        ``np.random.seed`` still makes ``None`` reproducible.

    Returns
    -------
    rng : numpy.random.Generator
        The generator to draw from.

    Examples
    --------
    >>> from skprivacy.utils import check_generator
    >>> check_generator(0).integers(100) == check_generator(0).integers(100)
    np.True_
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(
                f"random_state must be a non-negative integer; got {random_state}."
            )
        return np.random.default_rng(int(random_state))
    return np.random.default_rng(seed_from(random_state))


def seed_from(random_state):
    """Derive one integer seed from a ``random_state`` parameter.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator or None
        An int is returned unchanged; a RandomState, a Generator, or None
        (numpy's global RandomState) is consumed to draw a seed.

    Returns
    -------
    seed : int
        A non-negative integer seed.

    Examples
    --------
    >>> from skprivacy.utils import seed_from
    >>> seed_from(7)
    7
    """
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
