# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Turning ``random_state`` into random numbers: the one place it is done.

Every ``random_state`` parameter of skprivacy accepts an int, a
:class:`numpy.random.RandomState`, a :class:`numpy.random.Generator` or None.
Code that draws random numbers gets them from one of these helpers, never
from numpy's or scikit-learn's constructors directly:

* :func:`check_generator`: a :class:`numpy.random.Generator`;
* :func:`check_legacy_rng`: a :class:`numpy.random.RandomState`, for code
  whose documented stream is the legacy one (the same int, the same numbers
  as before Generators were accepted);
* :func:`spawn_generator`: the generator of one independent stream of an
  integer seed (a pair, a fold), whatever else is drawn;
* :func:`seed_from`: one integer seed, e.g. for a scikit-learn estimator;
* :func:`sklearn_random_state`: a ``random_state`` scikit-learn accepts.
"""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "check_generator",
    "check_legacy_rng",
    "seed_from",
    "sklearn_random_state",
    "spawn_generator",
]


def check_generator(random_state):
    """Turn a ``random_state`` parameter into a :class:`numpy.random.Generator`.

    Follows scikit-learn's convention (:func:`sklearn.utils.check_random_state`)
    for what a ``random_state`` may be, and adds numpy Generators.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator, SeedSequence or None
        An int (or a :class:`numpy.random.SeedSequence`) seeds a new
        Generator (the same int, the same numbers; the stream of
        ``numpy.random.default_rng(int)``). A Generator is returned as is. A
        RandomState instance, or None (numpy's global RandomState), is
        consumed to seed a new Generator, so ``np.random.seed`` still makes
        ``None`` reproducible.

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
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(
                f"random_state must be a non-negative integer; got {random_state}."
            )
        return np.random.default_rng(int(random_state))
    return np.random.default_rng(seed_from(random_state))


def check_legacy_rng(random_state):
    """Turn a ``random_state`` parameter into a :class:`numpy.random.RandomState`.

    For code whose random stream is numpy's legacy one: an int, a RandomState
    or None give exactly what :func:`sklearn.utils.check_random_state` gives;
    a Generator seeds a new RandomState from one draw (so it is consumed,
    like a RandomState would be).

    Parameters
    ----------
    random_state : int, RandomState instance, Generator or None
        The parameter.

    Returns
    -------
    rng : numpy.random.RandomState
        The generator to draw from.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import check_legacy_rng
    >>> int(check_legacy_rng(0).randint(100)) == int(
    ...     np.random.RandomState(0).randint(100))
    True
    >>> isinstance(check_legacy_rng(np.random.default_rng(0)), np.random.RandomState)
    True
    """
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(seed_from(random_state))
    return check_random_state(random_state)


def spawn_generator(seed, *key):
    """Return the generator of the independent stream ``key`` of an integer ``seed``.

    ``numpy.random.Generator(PCG64(SeedSequence(seed, spawn_key=key)))``: the
    numbers depend on ``seed`` and ``key`` only, not on what else was drawn,
    so a per-pair or per-fold stream is the same whatever the chunking or the
    number of jobs.

    Parameters
    ----------
    seed : int
        Non-negative entropy (e.g. from :func:`seed_from`).
    *key : int
        Non-negative integers naming the stream.

    Returns
    -------
    rng : numpy.random.Generator
        The stream's generator.

    Examples
    --------
    >>> from skprivacy.utils import spawn_generator
    >>> int(spawn_generator(0, 1, 2).integers(1000)) == int(
    ...     spawn_generator(0, 1, 2).integers(1000))
    True
    """
    ss = np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key))
    return np.random.Generator(np.random.PCG64(ss))


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
        A non-negative integer seed; drawn seeds are below ``2**31 - 1``, so
        any of them is a valid scikit-learn and legacy numpy seed.

    Examples
    --------
    >>> from skprivacy.utils import seed_from
    >>> seed_from(7)
    7
    """
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def sklearn_random_state(random_state):
    """Return a ``random_state`` that scikit-learn estimators and splitters accept.

    scikit-learn takes an int, a RandomState or None but not a Generator: a
    Generator is turned into an int seed (one draw); anything else is passed
    through unchanged, so an int gives the numbers it always gave.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator or None
        The parameter.

    Returns
    -------
    random_state : int, RandomState instance or None
        For scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import sklearn_random_state
    >>> sklearn_random_state(3)
    3
    >>> 0 <= sklearn_random_state(np.random.default_rng(0)) < 2**32
    True
    """
    if isinstance(random_state, np.random.Generator):
        return seed_from(random_state)
    # Anything else scikit-learn would reject later: refused here, by name.
    check_random_state(random_state)
    return random_state
