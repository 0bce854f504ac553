# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command-line entry point: ``skprivacy`` / ``python -m skprivacy``."""

import sys

try:
    from skprivacy.cli import main as _command
except KeyboardInterrupt:
    # Ctrl-C while the command line loads: said by main() below, without a
    # traceback (nothing can have been written yet).
    _command = None

__all__ = ["main"]


def main(argv=None):
    """Run the ``skprivacy`` command line; return its exit status.

    The command line (:func:`skprivacy.cli.main`) handles Ctrl-C and SIGTERM
    from argument parsing on; this entry point also covers the moment before,
    while the command line loads: Ctrl-C there exits 130 with one line.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments without the program name; ``sys.argv[1:]`` if None.

    Returns
    -------
    status : int
        The exit status.
    """
    if _command is None:
        print("skprivacy: interrupted (Ctrl-C); nothing was written", file=sys.stderr)
        return 130
    return _command(argv)


if __name__ == "__main__":
    sys.exit(main())
