# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Limiting BLAS threads: the one helper, safe to use inside pickled estimators.

The threadpoolctl controller (which scans the loaded libraries once, a few
milliseconds) is cached at module level and never stored on an estimator or a
joblib task: module globals are not pickled, so estimators and the callables
joblib ships to workers stay picklable, and each worker process builds its own
controller on first use.
"""

import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads", "limit_blas_threads", "map_blas_threads"]


@lru_cache(maxsize=1)
def _controller():
    return ThreadpoolController()


def _usable_cpus():
    """CPUs this process may run on (its affinity mask, else the CPU count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def blas_threads():
    """Return the number of threads the loaded BLAS would use (1 if unknown).

    Returns
    -------
    n_threads : int
        At least 1 and at most the number of CPUs the process may run on (its
        affinity mask, e.g. under ``taskset`` or a container's cpuset).

    Examples
    --------
    >>> from skprivacy.utils import blas_threads
    >>> blas_threads() >= 1
    True
    """
    info = _controller().select(user_api="blas").info()
    if not info:
        return 1
    n = min(int(i.get("num_threads", 1)) for i in info)
    return max(1, min(n, _usable_cpus()))


def limit_blas_threads(limits=1, *, user_api="blas"):
    """Return a context manager limiting BLAS (by default) to ``limits`` threads.

    Small decompositions and per-pair problems gain nothing from a threaded
    BLAS and, on a shared machine, lose an order of magnitude to thread
    contention; one thread also makes floating-point results independent of
    ``n_jobs``.

    Parameters
    ----------
    limits : int, default=1
        Maximal number of threads.
    user_api : {"blas", "openmp"} or None, default="blas"
        Which thread pools to limit; None limits every pool threadpoolctl knows.

    Returns
    -------
    context : context manager
        Restores the previous limits on exit.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import limit_blas_threads
    >>> with limit_blas_threads():
    ...     _ = np.ones((3, 3)) @ np.ones((3, 3))
    """
    if (
        not isinstance(limits, numbers.Integral)
        or isinstance(limits, bool)
        or limits < 1
    ):
        raise ValueError(f"limits must be an integer >= 1 (threads); got {limits!r}.")
    return _controller().limit(limits=limits, user_api=user_api)


def map_blas_threads(function, items):
    """Return ``[function(item) for item in items]``, spread over the BLAS threads.

    Many small products gain nothing from a threaded BLAS, but the threads
    the BLAS would use can each run whole items with a single-threaded BLAS
    (numpy releases the GIL inside products and large elementwise passes).
    Every product then runs single-threaded whatever the thread count, so
    results are bit-identical to a sequential run. Called where the BLAS is
    already limited to one thread (inside a joblib worker, or inside
    another call of this function) it runs sequentially: no
    oversubscription.

    Parameters
    ----------
    function : callable
        Called once per item; must be safe to run concurrently on distinct
        items (no shared mutable state besides disjoint output slices).
    items : iterable
        The items.

    Returns
    -------
    results : list
        ``function(item)`` for each item, in order. An exception raised by
        any call is re-raised.

    Examples
    --------
    >>> import numpy as np
    >>> from skprivacy.utils import map_blas_threads
    >>> blocks = [np.ones((4, 3)) * k for k in range(3)]
    >>> [float(g.sum()) for g in map_blas_threads(lambda b: b @ b.T, blocks)]
    [0.0, 48.0, 192.0]
    """
    if not callable(function):
        raise TypeError(f"function must be callable; got {type(function).__name__}.")
    items = list(items)
    n_threads = min(blas_threads(), len(items))
    with limit_blas_threads(1):
        if n_threads <= 1:
            return [function(item) for item in items]
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            return list(pool.map(function, items))
