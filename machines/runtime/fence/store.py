"""What a fence's store does: read an object, decide, and write what was decided only if
nobody wrote between, as one step (``Store.transact``).

S3 does it with a conditional write (``If-Match`` the version read, or ``If-None-Match: *``
for an object not written yet) and a read again when it lost the race; a file on one host
does it under an OS lock. Either way a process that decides has counted what every other
process recorded before it, and nothing written since can be overwritten.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from machines.runtime.fence.held import Held

T = TypeVar("T")

FOLDER = ".orca-fence"
"""The folder (key prefix) of the fence's objects in the place its URL names: beside a
stack's state in its backend, never inside it."""

Decide = Callable[[Held], tuple[Held | None, T]]
"""What to write given what is held (None: nothing to write) and what to answer."""


@dataclass
class Counts:
    """What a store was asked, for the benchmarks: objects read, written (conditional
    writes sent, accepted or not), races lost (a write refused because another process
    wrote first), the seconds lost races cost (waits and the reads and writes again), and
    the writes of its one probe (``S3Store.probe``)."""

    reads: int = 0
    writes: int = 0
    lost: int = 0
    lost_seconds: float = 0.0
    probes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(
        self,
        *,
        reads: int = 0,
        writes: int = 0,
        lost: int = 0,
        seconds: float = 0.0,
        probes: int = 0,
    ) -> None:
        with self._lock:
            self.reads += reads
            self.writes += writes
            self.lost += lost
            self.lost_seconds += seconds
            self.probes += probes


class Store(ABC):
    """Where a fence keeps its objects, one per key (``<owner>/<pool>``)."""

    where: str
    """The store in messages: its URL without credentials."""

    def __init__(self) -> None:
        self.counts = Counts()

    @abstractmethod
    def transact(self, key: str, decide: Decide[T], deadline: float) -> T:
        """Read the object at ``key``, ``decide``, and write its new object (if any) only
        if nobody wrote since the read; read and decide again after a lost race, until
        ``deadline`` seconds have passed. ``FenceError`` when the store cannot be read or
        written (or the races outlast the deadline): nothing was decided."""
