"""``file:///path``: the fence's objects as files, each step under an OS file lock, for
processes on one host (the embedded default: a stack's ``.pulumi-state``).

``flock`` holds between every process (and thread) of the host that opens the lock file, and
the kernel ends a process's lock when it dies, so a SIGKILLed process blocks nobody. A
file system shared between hosts (NFS) may not honour it: there, use ``s3://``.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import IO, TypeVar

from machines.runtime.backoff import backoff
from machines.runtime.errors import FenceError
from machines.runtime.fence.held import Held
from machines.runtime.fence.store import Decide, Store

T = TypeVar("T")

LOCK_WAIT = 0.002
"""Seconds of the first wait for a lock another process holds (doubling, with jitter)."""


class FileStore(Store):
    """The objects under ``root`` (``<root>/<owner>/<pool>.json``, beside its lock file)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.where = root.as_uri()

    def transact(self, key: str, decide: Decide[T], deadline: float) -> T:
        path = self.root / f"{key}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.with_suffix(".lock").open("a+") as lock:
                waited = _lock(lock, deadline, self.where)
                if waited:
                    self.counts.add(lost=1, seconds=waited)
                try:
                    raw = path.read_bytes() if path.exists() else None
                    self.counts.add(reads=1)
                    new, answer = decide(Held.read(raw, path.as_uri()))
                    if new is not None:
                        _replace(path, new.dump())
                        self.counts.add(writes=1)
                    return answer
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        except OSError as error:
            raise FenceError(
                f"the fence at {self.where} could not be read or written ({error.strerror or error}"
                f"): the directory must be writable by every process that creates"
            ) from None


def _lock(lock: IO[str], deadline: float, where: str) -> float:
    """Take ``lock``'s exclusive lock within ``deadline`` seconds; the seconds waited."""
    start = time.monotonic()
    attempt = 0
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return time.monotonic() - start if attempt else 0.0
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited >= deadline:
                raise FenceError(
                    f"the fence at {where} stayed locked by another process for {waited:.1f} s "
                    "(ORCA_CALL_TIMEOUT): nothing was made; try again"
                ) from None
            time.sleep(min(backoff(attempt, LOCK_WAIT, 0.05), deadline - waited))
            attempt += 1


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, renamed over it."""
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
