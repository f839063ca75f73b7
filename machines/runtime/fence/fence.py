"""``Fence``: a pool's ``max`` counted over every process that makes its machines.

A create of a pool with a max asks ``reserve`` before any cloud is asked. In one step of the
store (one read, one conditional write) it counts the pool's machines as the caller's
listing shows them (the deleting left out) plus every process's creates in flight whose
name that listing does not show, refuses when one more would pass the max, and records its
own create. Each entry holds its slot until ``hold`` seconds have passed (the create's time
and the longest a listing may lag behind it, ``ORCA_CALL_TIMEOUT`` + ``ORCA_LIST_MAX_AGE``):
by then every process's listing shows the machine, or the create made none. A create that
fails ends its entry at once (``release``), and so does a delete of its machine
(``forget``); a killed process's entries end at their ``hold``.

A name another process is making is not made twice: ``reserve`` answers ``InFlight`` while
that process's create may still be under way (its call time, ``Entry.making``), and the
provider returns that process's machine once a cloud shows it (asking by name), or its own
create goes on once that create has ended without one (``holds``), within its time. Past
its call time an entry still counts, but its name is free again: the create that takes it
finds a machine of that name by the cloud's own rules, or makes it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from machines.runtime.clock import Clock
from machines.runtime.fence.held import Entry, Held
from machines.runtime.fence.store import Store
from machines.runtime.fence.url import store_of
from machines.runtime.models import Machine
from machines.runtime.settings import ORCA_FENCE_URL, Freshness, Timeouts, single


@dataclass(frozen=True)
class Admitted:
    """The create may go on: its slot is recorded (``wrote``), or its name is already a
    listed machine (nothing to record: the create returns that machine)."""

    wrote: bool


@dataclass(frozen=True)
class Full:
    """One more would pass the max: ``count`` machines and creates in flight, over all
    processes."""

    count: int
    flying: int
    """Of ``count``, the creates in flight no listing of the caller's shows yet."""


@dataclass(frozen=True)
class InFlight:
    """Another process is making a machine of that name now (its entry)."""

    entry: Entry


Answer = Admitted | Full | InFlight


def fence_from(owner: str, environ: Mapping[str, str], *, clock: Clock = time.time) -> Fence | None:
    """The fence ``ORCA_FENCE_URL`` names in ``environ`` for ``owner``'s pools, its hold
    and deadline from the same settings, its entries timed by ``clock`` (a provider's own,
    so a test's clock moves both); None when it names none (each provider then counts its
    pools' max alone). ``SettingsError`` for a URL of another form."""
    url = single(environ, ORCA_FENCE_URL)
    if not url:
        return None
    timeouts, freshness = Timeouts.from_env(environ), Freshness.from_env(environ)
    return Fence(
        store_of(url, environ, ORCA_FENCE_URL),
        owner,
        hold=timeouts.call + freshness.list_max_age,
        deadline=timeouts.call,
        clock=clock,
    )


class Fence:
    """One owner's pools' creates in flight, in ``store``; see the module."""

    def __init__(
        self,
        store: Store,
        owner: str,
        *,
        hold: float,
        deadline: float,
        clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.owner = owner
        self.hold = hold
        self.deadline = deadline
        self._clock = clock
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._mine: set[tuple[str, str]] = set()
        """(pool, name) of the entries this fence wrote and has not ended."""

    def __repr__(self) -> str:
        return f"Fence(store={self.store.where!r}, owner={self.owner!r})"

    def key(self, pool: str) -> str:
        """The object of ``pool``'s entries."""
        return f"{self.owner or '-'}/{pool}"

    def reserve(
        self,
        pool: str,
        names: Sequence[str],
        *,
        cloud: str,
        place: str,
        limit: int,
        listed: Sequence[Machine],
        holder: str = "",
    ) -> Answer:
        """Count and record the creates of ``names`` (one, or a stack's new machines) in one
        step: ``Admitted`` with their entries written, ``Full`` when they would pass
        ``limit``, ``InFlight`` when another holder is making one of them. ``listed``: the
        pool as the caller's ``machines`` answers it (read once, before). ``holder``: whose
        the entries are (default: this process; a stack's machines are the stack's, whose
        operations its lock keeps one at a time, so the next one takes them as its own)."""
        holder = holder or self.holder
        alive = {m.name for m in listed if m.counts_toward_max}
        shown = {m.name for m in listed}
        wanted = [n for n in dict.fromkeys(names) if n not in alive]
        if not wanted:
            return Admitted(wrote=False)

        def decide(held: Held) -> tuple[Held | None, Answer]:
            now = self._clock()
            live = held.live(now)
            theirs = [
                e for e in live if e.name in wanted and e.holder != holder and e.being_made(now)
            ]
            if theirs:
                return None, InFlight(theirs[0])
            flying = {e.name for e in live if e.name not in shown and e.name not in wanted}
            count = len(alive) + len(flying)
            if count + len(wanted) > limit:
                return None, Full(count, len(flying))
            until = now + self.hold
            kept = tuple(e for e in live if e.name not in wanted)
            added = tuple(
                Entry(
                    name=n,
                    cloud=cloud,
                    place=place,
                    since=now,
                    until=until,
                    holder=holder,
                    making=now + self.deadline,
                )
                for n in wanted
            )
            with self._lock:
                self._mine.update((pool, n) for n in wanted)
            return Held(entries=kept + added), Admitted(wrote=True)

        return self.store.transact(self.key(pool), decide, self.deadline)

    def release(self, pool: str, names: Sequence[str], holder: str = "") -> None:
        """End ``holder``'s (default: this process's) entries of ``names``: their creates
        made nothing."""
        self._remove(pool, set(names), holder=holder or self.holder)

    def release_held(self, pool: str, holder: str = "", keep: Sequence[str] = ()) -> None:
        """End every entry of ``pool`` that ``holder`` wrote (every one, for no holder) but
        those of ``keep``: a stack's, once a run has removed its other machines; the whole
        pool's, once a destroy has reaped it."""
        self._remove(pool, None, holder=holder, keep=frozenset(keep))

    def forget(self, pool: str, name: str, created: float | None) -> None:
        """The machine ``name`` was deleted: end any entry of it now, whoever wrote it. Asks
        the store only when an entry may still hold it (this process wrote one, or the
        machine is younger than ``hold``)."""
        with self._lock:
            mine = (pool, name) in self._mine
        young = created is None or self._clock() - created < self.hold
        if mine or young:
            self._remove(pool, {name})

    def holds(self, pool: str, entry: Entry) -> bool:
        """Whether ``entry`` (another process's) may still be making its machine: one read."""

        def decide(held: Held) -> tuple[Held | None, bool]:
            now = self._clock()
            return None, any(
                e.name == entry.name and e.holder == entry.holder and e.being_made(now)
                for e in held.live(now)
            )

        return self.store.transact(self.key(pool), decide, self.deadline)

    def _remove(
        self,
        pool: str,
        names: set[str] | None,
        holder: str = "",
        keep: frozenset[str] = frozenset(),
    ) -> None:
        """End the entries of ``names`` (None: every name but ``keep``), of ``holder`` only
        when given."""

        def ends(entry: Entry) -> bool:
            named = entry.name in names if names is not None else entry.name not in keep
            return named and (not holder or entry.holder == holder)

        def decide(held: Held) -> tuple[Held | None, None]:
            kept = tuple(e for e in held.live(self._clock()) if not ends(e))
            return (None if kept == held.entries else Held(entries=kept)), None

        self.store.transact(self.key(pool), decide, self.deadline)
        with self._lock:
            self._mine -= {k for k in self._mine if k[0] == pool and (not names or k[1] in names)}
