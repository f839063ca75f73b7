"""The entry point: parse, run one command, turn every failure into one line and its status
(``machines.cli.exits``), and end the process without the interpreter's teardown."""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from machines.cli.common import PROG, Run, UsageError, fail
from machines.cli.exits import ExitCode
from machines.cli.failures import Terminated, explain, status_of, terminated
from machines.cli.parser import build_parser
from machines.runtime.errors import MachinesError


def command() -> NoReturn:
    """The console script (``orca-machines``, ``python -m machines``): ``main``'s status,
    then the process ends without the interpreter's teardown.

    ``main`` returns once its command is done; what is left is freeing memory the process
    is about to give back and waiting out library housekeeping (the Automation API stops
    its events server with a 5 s grace, the engine long gone): on a preview, about 0.4 s,
    more than the checks before the engine take. Exit handlers still run first (logging's,
    an OpenTelemetry SDK's flush), then the output is flushed; a flush that fails (a closed
    pipe) is an error status, as the interpreter would make it."""
    code = main()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or ExitCode.ERROR
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (``ExitCode``, see ``common.EPILOG``)."""
    logging.basicConfig(level=logging.WARNING, format=f"{PROG}: %(message)s")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        return fail(str(error), ExitCode.USAGE)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else ExitCode.ERROR
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminated) if main_thread else None
    try:
        return _run(args)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    """The command's status; every failure one line on stderr."""
    run: Run = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return fail("interrupted", ExitCode.INTERRUPTED)
    except Terminated:
        return fail("terminated", ExitCode.TERMINATED)
    except MachinesError as error:
        return fail(str(error), status_of(error))
    except Exception as error:
        return fail(explain(error))
