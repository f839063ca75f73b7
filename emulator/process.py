"""Run the emulator as a subprocess for the length of a `with` block.

    with running_emulator("T" * 64, "--boot-seconds", "0.1") as emu:
        client = hcloud.Client(token="T" * 64, api_endpoint=emu.url)
        emu.control.set_stock([...])

The child is `python -m emulator --port 0 --token ...` started from the project root; its
first stdout line is the URL. Its log goes to a temporary file (a pipe nobody reads would
block it), which is shown if the child dies before it is ready.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from emulator.control.client import Control

PROJECT_ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 120.0
"""Seconds an emulator may stay silent before it counts as hung. Its start is bound by an
event (the URL line, or the process's exit), so this only ends a start that will never
come; a loaded machine can take well over 20 s to import and bind."""


class EmulatorStartError(RuntimeError):
    """The emulator subprocess exited or stayed silent instead of printing its URL."""


@dataclass(frozen=True)
class Emulator:
    """A running emulator: its API URL (ending in /v1), a control client and the process."""

    url: str
    control: Control
    process: subprocess.Popen[str]
    log_path: Path

    def log(self) -> str:
        """What the emulator has logged so far (one line per request)."""
        return self.log_path.read_text(errors="replace")


def _read_url(process: subprocess.Popen[str], timeout: float) -> str | None:
    """The first stdout line, or None if the process ends or the time runs out first."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=0.1):
                line = process.stdout.readline().strip()
                return line or None
            if process.poll() is not None:
                return None
    return None


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


@contextmanager
def running_emulator(
    token: str, *extra_args: str, timeout: float = START_TIMEOUT
) -> Iterator[Emulator]:
    """Start the emulator with `--port 0 --token token *extra_args`, yield it, then stop it."""
    log_file: IO[bytes] = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the child
        prefix="hcloud-emulator-", suffix=".log", delete=False
    )
    log_path = Path(log_file.name)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONUNBUFFERED"] = "1"
    command = [sys.executable, "-m", "emulator", "--port", "0", "--token", token, *extra_args]
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
        command,
        cwd=PROJECT_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log_file,
        text=True,
    )
    log_file.close()
    try:
        url = _read_url(process, timeout)
        if url is None:
            _stop(process)
            raise EmulatorStartError(
                f"emulator did not start (exit code {process.returncode}); its stderr:\n"
                + log_path.read_text(errors="replace")
            )
        yield Emulator(url, Control(url), process, log_path)
    finally:
        _stop(process)
        log_path.unlink(missing_ok=True)
