"""What a create names, looked up once per provider: one cache keyed by kind and key.

A create names an image, SSH keys, a firewall, a network and a placement group; each is
asked of the API the first time only, so a ``create`` is one request after the first.
hcloud-python's ``get_by_name`` asks every time, so the answers are kept here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar, cast

from machines.runtime.errors import MachinesError

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Named:
    """A network or placement group found by name: its id, a network's subnets' network
    zones, a placement group's servers (what the check and the create compare)."""

    id: int
    zones: frozenset[str] = frozenset()
    members: frozenset[int] = frozenset()


class Lookups:
    """Answers of look-ups by (kind, key), each asked once; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a look-up may keep what else its answer told
        self._found: dict[tuple[str, Hashable], object] = {}
        self._asked: dict[tuple[str, Hashable], float] = {}

    def once(
        self,
        kind: str,
        key: Hashable,
        find: Callable[[], T],
        *,
        fresh_for: float | None = None,
        now: float = 0.0,
    ) -> T:
        """``find()``'s answer for ``key`` of ``kind``, asked the first time only, or, with
        ``fresh_for``, again once that many seconds have passed since it was asked (``now``):
        a refresh that raises keeps the answer it had. A first look-up that raises keeps
        nothing: the next one asks again. One at a time, so two threads creating at once ask
        once."""
        with self._lock:
            at = self._asked.get((kind, key))
            if (kind, key) in self._found:
                if fresh_for is None or at is None or now - at < fresh_for:
                    return cast(T, self._found[(kind, key)])
                try:
                    self._found[(kind, key)] = find()
                except MachinesError as error:  # the answer it had stands until the next
                    log.info("kept %s %s: its refresh failed: %s", kind, key, error)
                self._asked[(kind, key)] = now
                return cast(T, self._found[(kind, key)])
            self._found[(kind, key)] = find()
            self._asked[(kind, key)] = now
            return cast(T, self._found[(kind, key)])

    def forget(self, kind: str, key: Hashable) -> None:
        """Ask for ``key`` of ``kind`` again next time (what it names may have changed)."""
        with self._lock:
            self._found.pop((kind, key), None)
            self._asked.pop((kind, key), None)

    def put(self, kind: str, key: Hashable, value: object) -> None:
        """Keep what an answer told besides (a snapshot's description, found with its id)."""
        with self._lock:
            self._found[(kind, key)] = value

    def get(self, kind: str, key: Hashable) -> object | None:
        """What was kept for ``key`` of ``kind``, None when nothing was."""
        with self._lock:
            return self._found.get((kind, key))
