# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Progress reporting on stderr for long audit stages.

Three modes: a redrawn bar with elapsed time and ETA when the stream is a
terminal, one plain line per stage (plus a "still running" line every
``interval`` seconds) when it is not (CI logs, files), and nothing at all when
quiet.
"""

import sys
import threading
import time

__all__ = ["Progress"]


def _fmt(seconds):
    seconds = int(round(max(seconds, 0)))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:d}:{s:02d}"


class Progress:
    """Weighted stage progress with an ETA.

    Parameters
    ----------
    total : float or None
        Sum of the weights (expected relative costs) of all stages; None until
        :meth:`plan` sets it (:func:`skprivacy.audit` does, from the method
        registry's cost estimates).
    stream : file-like or None, default=None
        Where to write; ``sys.stderr`` when None.
    quiet : bool, default=False
        Write nothing.
    tty : bool or None, default=None
        Force bar mode (True) or line mode (False); detect with ``isatty`` if None.
    interval : float, default=10.0
        Seconds between "still running" lines in line mode.
    """

    def __init__(self, total, *, stream=None, quiet=False, tty=None, interval=10.0):
        self.total = 1.0 if total is None else float(max(total, 1e-12))
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty()) if callable(isatty) else False
        self.tty = tty
        self.interval = interval
        self.done = 0.0
        self.stage = ""
        self.stage_weight = 0.0
        self.t0 = time.monotonic()
        self.stage_t0 = self.t0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    # -- public ----------------------------------------------------------------
    def __enter__(self):
        if not self.quiet:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if not self.quiet and self.tty:
            self._draw(final=True)
            self.stream.write("\n")
            self.stream.flush()
        return False

    def plan(self, total):
        """Set the sum of the stage weights (before the first stage)."""
        with self._lock:
            self.total = float(max(total, 1e-12))

    def start(self, stage, weight=1.0):
        """Begin a stage of expected relative cost ``weight``."""
        with self._lock:
            self.stage = stage
            self.stage_weight = float(weight)
            self.stage_t0 = time.monotonic()
        if self.quiet:
            return
        if self.tty:
            self._draw()
        else:
            self._line(f"{stage} ...")

    def finish(self):
        """Mark the current stage as done."""
        with self._lock:
            self.done = min(self.total, self.done + self.stage_weight)
            self.stage_weight = 0.0
            elapsed = time.monotonic() - self.stage_t0
            stage = self.stage
        if self.quiet:
            return
        if self.tty:
            self._draw()
        else:
            self._line(f"{stage} done in {elapsed:.1f} s")

    def message(self, text):
        """Write a one-off informational line."""
        if self.quiet:
            return
        if self.tty:
            self.stream.write("\r\033[K")
        self._line(text)

    # -- internals ---------------------------------------------------------------
    def _fraction(self):
        """Completed share, counting the running stage as partly done.

        The running stage's progress is estimated from its elapsed time and the
        time per unit of weight of the stages already finished (capped below
        the stage's end), so the bar and the ETA keep moving during a long
        stage instead of freezing.
        """
        now = time.monotonic()
        done = self.done
        if self.stage_weight and done > 0:
            per_weight = (self.stage_t0 - self.t0) / done
            expected = per_weight * self.stage_weight
            if expected > 0:
                done += self.stage_weight * min((now - self.stage_t0) / expected, 0.9)
        return min(done / self.total, 1.0)

    def _eta(self):
        elapsed = time.monotonic() - self.t0
        frac = self._fraction()
        if frac <= 0:
            return elapsed, None
        return elapsed, elapsed * (1 - frac) / frac

    def _line(self, text):
        elapsed, eta = self._eta()
        pct = 100 * self._fraction()
        eta_txt = f", ETA {_fmt(eta)}" if eta is not None else ""
        self.stream.write(
            f"[skprivacy {_fmt(elapsed)}] {pct:3.0f}%{eta_txt} | {text}\n"
        )
        self.stream.flush()

    def _draw(self, final=False):
        with self._lock:
            elapsed, eta = self._eta()
            frac = 1.0 if final else self._fraction()
            stage = "done" if final else self.stage
        width = 28
        filled = int(round(width * frac))
        bar = "#" * filled + "-" * (width - filled)
        eta_txt = "--:--" if eta is None else _fmt(eta)
        self.stream.write(
            f"\r\033[K[{bar}] {100 * frac:3.0f}% {_fmt(elapsed)} ETA {eta_txt} "
            f"{stage[:40]}"
        )
        self.stream.flush()

    def _tick(self):
        last_line = time.monotonic()
        while not self._stop.wait(0.5 if self.tty else 1.0):
            if self.tty:
                self._draw()
            elif time.monotonic() - last_line >= self.interval:
                last_line = time.monotonic()
                with self._lock:
                    stage = self.stage
                    stage_elapsed = time.monotonic() - self.stage_t0
                if stage:
                    self._line(f"{stage} still running ({stage_elapsed:.0f} s)")
