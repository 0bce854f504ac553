# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Progress of long computations on a text stream: the one helper and its protocol.

The protocol every long computation reports to is four methods:
``plan(total)`` (the sum of the stage weights), ``start(stage, weight)``,
``finish()`` and ``message(text)``; :class:`Progress` implements it, and any
object with these methods can stand in for it (e.g. a GUI's progress bar).
Loops that only print a line per step call the helper itself:
``say = Progress("sweep", verbose); say("scale 0.5")``.
"""

import math
import sys
import threading
import time
from numbers import Integral, Real

__all__ = ["Progress", "SharedPlan"]


def _amount(value, name, *, positive=False):
    """Return a finite number >= 0 (> 0 with ``positive``) as a float, or raise."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number; got {type(value).__name__}.")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be a finite number {bound}; got {value!r}.")
    return value


def _clock(seconds):
    seconds = int(round(max(seconds, 0)))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:d}:{s:02d}"


class Progress:
    """Report the progress of a long computation: lines, or weighted stages and an ETA.

    Called as a function it writes ``[name] text (elapsed s)`` (the lines of a
    loop, printed like scikit-learn's ``verbose`` output). After
    :meth:`plan`, stages started with :meth:`start` and ended with
    :meth:`finish` advance a share of the planned total: in a ``with`` block
    the stream gets a redrawn bar with elapsed time and ETA when it is a
    terminal, else one line per stage plus a "still running" line every
    ``interval`` seconds (CI logs, files).

    Parameters
    ----------
    name : str, default="skprivacy"
        Prefix of every line.
    verbose : int or bool, default=1
        Nothing is written unless positive.
    stream : file-like or None, default=None
        Where to write; ``sys.stdout`` when None.
    tty : bool or None, default=None
        Force bar mode (True) or line mode (False); detect with ``isatty`` if
        None.
    interval : float, default=10.0
        Seconds between "still running" lines in line mode.

    Examples
    --------
    >>> import io
    >>> from skprivacy.utils import Progress
    >>> out = io.StringIO()
    >>> progress = Progress("audit", stream=out, tty=False)
    >>> progress.plan(2.0)
    >>> progress.start("first stage", 1.0)
    >>> progress.finish()
    >>> print(out.getvalue().splitlines()[-1])
    [audit ...]  50%, ETA ... | first stage done in ... s
    """

    def __init__(
        self, name="skprivacy", verbose=1, *, stream=None, tty=None, interval=10.0
    ):
        if not isinstance(verbose, Integral):  # bool is an Integral too
            raise TypeError(
                f"verbose must be an int or a bool; got {type(verbose).__name__}."
            )
        self.name = name
        self.verbose = verbose
        self.stream = sys.stdout if stream is None else stream
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty()) if callable(isatty) else False
        self.tty = tty
        self.interval = _amount(interval, "interval", positive=True)
        self.total = None
        self.done = 0.0
        self.stage = ""
        self.stage_weight = 0.0
        self.running = False
        self.t0 = time.monotonic()
        self.stage_t0 = self.t0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def elapsed(self):
        """Return the seconds since the helper was created.

        Returns
        -------
        seconds : float
            Elapsed wall time.
        """
        return time.monotonic() - self.t0

    @property
    def quiet(self):
        """bool: Whether nothing is written."""
        return not (self.verbose and self.verbose > 0)

    # -- the protocol ------------------------------------------------------------
    def plan(self, total):
        """Set the sum of the stage weights (before the first stage).

        Parameters
        ----------
        total : float
            The sum of the weights of every stage to come.
        """
        total = _amount(total, "total")
        with self._lock:
            self.total = float(max(total, 1e-12))

    def start(self, stage, weight=1.0):
        """Begin a stage.

        Parameters
        ----------
        stage : str
            What the stage does, as shown.
        weight : float, default=1.0
            Its expected cost, in the units of :meth:`plan` (e.g. seconds).
        """
        weight = _amount(weight, "weight")
        with self._lock:
            self.running = True
            self.stage = stage
            self.stage_weight = weight
            self.stage_t0 = time.monotonic()
        self._show(f"{stage} ...")

    def finish(self):
        """Mark the current stage as done (nothing when no stage is running).

        A computation that reports its own steps as stages inside a caller's
        stage finishes them itself; the caller's closing ``finish`` then
        does nothing.
        """
        with self._lock:
            if not self.running:
                return
            self.running = False
            self.done = min(self.total or 0.0, self.done + self.stage_weight)
            self.stage_weight = 0.0
            text = f"{self.stage} done in {time.monotonic() - self.stage_t0:.1f} s"
        self._show(text)

    def message(self, text, *, timed=True):
        """Write one line.

        Parameters
        ----------
        text : str
            The line.
        timed : bool, default=True
            Before :meth:`plan`: append the elapsed seconds.
        """
        if self.quiet:
            return
        if self.total is None:
            suffix = f" ({self.elapsed():.1f} s)" if timed else ""
            self._write(f"[{self.name}] {text}{suffix}\n")
            return
        if self.tty:
            self._write("\r\033[K")
        self._line(text)

    __call__ = message

    # -- a ticker for long stages -------------------------------------------------
    def __enter__(self):
        if not self.quiet:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if not self.quiet and self.tty and self.total is not None:
            self._draw(final=True)
            self._write("\n")
        return False

    # -- internals ----------------------------------------------------------------
    def _write(self, text):
        self.stream.write(text)
        self.stream.flush()

    def _show(self, text):
        if self.quiet:
            return
        if self.tty and self.total is not None:
            self._draw()
        else:
            self.message(text)

    def _fraction(self):
        """Completed share, counting the running stage as partly done.

        The running stage's progress is estimated from its elapsed time and the
        time per unit of weight of the stages already finished (capped below
        the stage's end), so the bar and the ETA keep moving during a long
        stage instead of freezing.
        """
        done = self.done
        if self.stage_weight and done > 0:
            expected = (self.stage_t0 - self.t0) / done * self.stage_weight
            if expected > 0:
                elapsed = time.monotonic() - self.stage_t0
                done += self.stage_weight * min(elapsed / expected, 0.9)
        return min(done / (self.total or 1.0), 1.0)

    def _eta(self):
        elapsed = time.monotonic() - self.t0
        frac = self._fraction()
        return elapsed, (elapsed * (1 - frac) / frac if frac > 0 else None)

    def _line(self, text):
        elapsed, eta = self._eta()
        eta_txt = f", ETA {_clock(eta)}" if eta is not None else ""
        self._write(
            f"[{self.name} {_clock(elapsed)}] {100 * self._fraction():3.0f}%"
            f"{eta_txt} | {text}\n"
        )

    def _draw(self, final=False):
        with self._lock:
            elapsed, eta = self._eta()
            frac = 1.0 if final else self._fraction()
            stage = "done" if final else self.stage
        filled = int(round(28 * frac))
        eta_txt = "--:--" if eta is None else _clock(eta)
        self._write(
            f"\r\033[K[{'#' * filled}{'-' * (28 - filled)}] {100 * frac:3.0f}% "
            f"{_clock(elapsed)} ETA {eta_txt} {stage[:40]}"
        )

    def _tick(self):
        last_line = time.monotonic()
        while not self._stop.wait(0.5 if self.tty else 1.0):
            if self.total is None:
                continue
            if self.tty:
                self._draw()
            elif time.monotonic() - last_line >= self.interval:
                last_line = time.monotonic()
                with self._lock:
                    stage = self.stage if self.running else ""
                    stage_elapsed = time.monotonic() - self.stage_t0
                if stage:
                    self._line(f"{stage} still running ({stage_elapsed:.0f} s)")


class SharedPlan:
    """Progress over ``n`` runs of one plan: the first run's plan, times n, is the total."""

    def __init__(self, sink, n_runs):
        self.sink, self.n_runs, self.planned = sink, n_runs, False
        self.start, self.finish, self.message = sink.start, sink.finish, sink.message

    def plan(self, total):
        if not self.planned:
            self.sink.plan(total * self.n_runs)
            self.planned = True
