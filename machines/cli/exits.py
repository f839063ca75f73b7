"""The CLI's exit statuses, in one place: every command and the entry point return these.

``EPILOG`` (``machines.cli.common``) shows them in ``--help``; scripts and CI test them
(``preview``: 2 for changes, ``create``/``up``/``resize``: 3 for no stock).
"""

from __future__ import annotations

import signal
from enum import IntEnum


class ExitCode(IntEnum):
    """An exit status of ``orca-machines``; an ``int``, so it is the process's status."""

    OK = 0
    """Success; for ``preview``: no changes."""
    ERROR = 1
    """An error, said in one line on stderr."""
    CHANGES = 2
    """``preview``: the stack has changes to apply."""
    NO_STOCK = 3
    """``create``, ``up``, ``resize``: the cloud has no stock of that type there now."""
    USAGE = 64
    """The command line is wrong (``EX_USAGE`` of sysexits.h)."""
    INTERRUPTED = 128 + signal.SIGINT
    """Ctrl-C: the shell's 128 + the signal."""
    TERMINATED = 128 + signal.SIGTERM
    """SIGTERM: the shell's 128 + the signal."""

    @classmethod
    def of_signal(cls, signum: int) -> int:
        """The status for a run a signal ended (an engine run it cancelled): the shell's
        128 + the signal, ``INTERRUPTED`` or ``TERMINATED`` for the signals the CLI cancels
        on."""
        status = 128 + signum
        return cls(status) if status in cls._value2member_map_ else status
