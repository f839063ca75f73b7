"""Any failure as one line and its exit status: the package's own message, else what went
wrong where; never a traceback, never a token (``common.fail`` masks the line)."""

from __future__ import annotations

from types import FrameType

from pydantic import ValidationError

from machines.cli.exits import ExitCode
from machines.runtime.errors import MachinesError


class Terminated(BaseException):
    """SIGTERM outside an engine run (the engine's own run cancels it its way)."""


def terminated(_signum: int, _frame: FrameType | None) -> None:
    """The SIGTERM handler while a command runs: ``Terminated`` ends it."""
    raise Terminated


def status_of(error: MachinesError) -> int:
    """``ERROR``; for an engine run a signal cancelled (``EngineInterrupted.signum``), the
    status of that signal (``INTERRUPTED``, ``TERMINATED``)."""
    signum = getattr(error, "signum", None)
    return ExitCode.of_signal(signum) if isinstance(signum, int) else ExitCode.ERROR


def explain(error: Exception) -> str:
    """One line for any failure: the package's own message, else what went wrong where."""
    if isinstance(error, ValidationError):
        return _validation(error)
    if isinstance(error, MachinesError):
        return str(error)
    if isinstance(error, OSError):
        return _os_error(error)
    if type(error).__module__.startswith("pulumi"):
        from machines.automation import engine_summary  # noqa: PLC0415 (loads pulumi)

        return f"the Pulumi engine failed: {engine_summary(str(error))}"
    return f"unexpected {type(error).__name__}: {error}"


def _validation(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or error.title}: "
        + e["msg"].removeprefix("Value error, ")
        for e in error.errors(include_url=False, include_input=False)
    ]
    return "; ".join(problems)


def _os_error(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error) or type(error).__name__
