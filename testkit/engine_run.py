"""A deployment's engine run seen from outside: its processes, its lock files, and waiting
for an event of it, for the tests that signal or kill a run."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def wait_for(condition: Callable[[], bool], what: str, seconds: float) -> None:
    """Return once ``condition()`` holds; fail the test naming ``what`` after ``seconds``."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"{what} did not happen")
        time.sleep(0.1)


def engine_processes(state: Path) -> dict[int, str]:
    """Each process of this deployment's engine run (they carry its backend URL in their
    environment), by pid, with its command line; never this process."""
    marker = f"PULUMI_BACKEND_URL={state.as_uri()}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found[int(entry.name)] = command
    return found


def lock_files(state: Path, pattern: str = "*") -> list[Path]:
    """The stack lock files of a ``file://`` backend at ``state``."""
    return [p for p in (state / ".pulumi" / "locks").rglob(pattern) if p.is_file()]


_COUNTED = re.compile(r"^\s*(?:\+-|[+~-])\s*(\d+) (?:to )?(create|update|replace|delete)d?$")


def engine_counts(progress: str) -> dict[str, int]:
    """What the engine's own summary (the ``Resources:`` lines that end its progress) counts
    per op, ``create``, ``update``, ``replace``, ``delete``: a preview's ``+ 16 to create``
    and an update's ``+ 16 created`` alike; an op it does not name counts 0."""
    _, _, summary = progress.rpartition("\nResources:\n")
    counts = dict.fromkeys(("create", "update", "replace", "delete"), 0)
    for line in summary.splitlines():
        found = _COUNTED.match(line)
        if found:
            counts[found[2]] = int(found[1])
    return counts
