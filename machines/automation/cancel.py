"""The engine run so that a signal cancels it the engine's own way, and nothing is left.

SIGINT or SIGTERM to the CLI (Ctrl-C, a cancelled CI job, Kubernetes stopping a pod) is
forwarded to the engine as one SIGINT: Pulumi then cancels the operation, waits for what is
in flight, saves the state, releases the stack's lock and stops its language host and
plugins. Only when the engine has exited does the run end, with ``EngineInterrupted``. The
engine runs in its own session, so a terminal's Ctrl-C reaches it once, through here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType
from typing import IO

from pulumi import automation as auto
from pulumi.automation.errors import create_command_error

from machines.runtime.errors import MachinesError
from machines.runtime.settings import PULUMI_AUTOMATION_API

CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class EngineInterrupted(MachinesError):
    """A signal cancelled the engine's run; ``signum`` is that signal (the CLI exits with
    its status for it, ``machines.cli.exits.ExitCode.of_signal``)."""

    def __init__(self, signum: int) -> None:
        name = signal.Signals(signum).name
        super().__init__(
            f"interrupted by {name}: the engine cancelled the operation and released the "
            "stack's lock; run it again to finish"
        )
        self.signum = signum


class CancellableCommand(auto.PulumiCommand):
    """``PulumiCommand`` whose runs a signal cancels cleanly (see the module)."""

    def run(
        self,
        args: list[str],
        cwd: str,
        additional_env: Mapping[str, str],
        on_output: Callable[[str], object] | None = None,
        on_error: Callable[[str], object] | None = None,
    ) -> auto.CommandResult:
        arguments = args if "--non-interactive" in args else ["--non-interactive", *args]
        arguments = explicit_refresh(arguments)
        env = {**os.environ, **additional_env, PULUMI_AUTOMATION_API: "true"}
        if os.path.isabs(self.command):
            env["PATH"] = os.pathsep.join([os.path.dirname(self.command), env.get("PATH", "")])
        received: list[int] = []
        with subprocess.Popen(  # noqa: S603 (the engine binary engine_command found)
            [self.command, *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            encoding="utf-8",
            start_new_session=True,
        ) as process:

            def cancel(signum: int, _: FrameType | None) -> None:
                received.append(signum)
                if process.poll() is None:
                    process.send_signal(signal.SIGINT)

            out: list[str] = []
            err: list[str] = []
            readers = [
                threading.Thread(target=_read, args=(process.stdout, on_output, out)),
                threading.Thread(target=_read, args=(process.stderr, on_error, err)),
            ]
            with _forwarding(cancel):
                for reader in readers:
                    reader.start()
                for reader in readers:
                    reader.join()
                code = process.wait()
        if received:
            raise EngineInterrupted(received[0])
        result = auto.CommandResult(stdout="\n".join(out), stderr="\n".join(err), code=code)
        if code != 0:
            raise create_command_error(result)
        return result


REFRESHING = frozenset({"up", "preview", "destroy"})
"""The engine's operations that refresh first when the project says ``refresh: always``."""


def explicit_refresh(args: list[str]) -> list[str]:
    """``args`` with ``--refresh=false`` for an operation the caller asked no refresh of.

    Pulumi.yaml's ``options: refresh: always`` makes plain ``pulumi up``, ``preview`` and
    ``destroy`` read the cloud first, as operators need; the automation API says only
    ``--refresh`` (never ``--refresh=false``), so without this every run of it would
    refresh too, where it chose not to: a targeted ``resize`` after its own whole refresh
    (which the engine refuses targeted), a preview right after an update.
    """
    operation = next((a for a in args if not a.startswith("-")), "")
    if operation not in REFRESHING or any(a.split("=")[0] in ("--refresh", "-r") for a in args):
        return args
    return [*args, "--refresh=false"]


def _read(
    stream: IO[str] | None, callback: Callable[[str], object] | None, into: list[str]
) -> None:
    if stream is None:
        return
    for line in iter(stream.readline, ""):
        stripped = line.rstrip()
        if callback is not None:
            callback(stripped)
        into.append(stripped)
    stream.close()


@contextmanager
def _forwarding(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` for SIGINT and SIGTERM while inside; only the main thread can set them
    (automation called from another thread keeps the process's own handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in CANCEL_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
