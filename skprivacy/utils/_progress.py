# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Progress lines for long loops (ladders, sweeps): the one helper."""

import time

__all__ = ["Progress"]


class Progress:
    """Print ``[name] text (elapsed s)`` lines on stdout when ``verbose > 0``.

    scikit-learn prints its ``verbose`` output with :func:`print`; so does
    this, flushed, so that progress shows up while a long loop runs (also in
    joblib workers, whose stdout is the parent's).

    Parameters
    ----------
    name : str
        Prefix of every line, e.g. the function name.
    verbose : int or bool
        Nothing is printed unless positive.
    """

    def __init__(self, name, verbose):
        self.name = name
        self.verbose = verbose
        self.start = time.perf_counter()

    def elapsed(self):
        """Seconds since the helper was created."""
        return time.perf_counter() - self.start

    def __call__(self, text, *, timed=True):
        """Print one line (with the elapsed time if ``timed``)."""
        if self.verbose and self.verbose > 0:
            suffix = f" ({self.elapsed():.1f} s)" if timed else ""
            print(f"[{self.name}] {text}{suffix}", flush=True)
