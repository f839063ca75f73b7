"""One listing of an owner's machines, shared by every pool and thread while it is fresh.

An autoscaler asks ``machines(pool)`` for every pool on every tick. Listing each pool costs
a request per pool and page; listing the owner once costs a request per page for all pools
(the cluster-autoscaler's Hetzner provider keeps such a listing too). ``Listing`` keeps the
last listing while its window lasts, lets one thread list at a time (the others wait for its
answer), and lays this provider's own writes over it: a machine it created is listed, one it
deleted is listed as ``deleting``, at once, until a listing that began after the write shows
the cloud agrees (or ``settle`` seconds have passed, for clouds whose lists lag).

It is the one home of what this provider created, is creating and deleted: a pool's count
for its ``max`` (``reserve``: the listed machines plus the creates in flight), what a create
of a name already made returns while the cloud does not list it yet (``launched``), and
whether a delete must ask the cloud whose machine it is (``known``).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from machines.runtime.clock import Clock
from machines.runtime.models import Ending, Machine, Status

DEFAULT_SETTLE = 60.0
"""Seconds a write is laid over listings that do not show it yet (EC2's lists lag)."""


@dataclass(frozen=True)
class _Write:
    seq: int
    at: float
    machine: Machine | None = None


class Listing:
    """The owner's machines from one listing, answered per pool while ``window()`` lasts.

    ``fetch`` lists every machine of the owner (all pages); ``window`` says how many seconds
    a listing stays fresh now (it may change with the cloud's budget), 0 meaning never.
    """

    def __init__(
        self,
        fetch: Callable[[], list[Machine]],
        window: Callable[[], float],
        clock: Clock = time.time,
        settle: float = DEFAULT_SETTLE,
    ) -> None:
        self._fetch = fetch
        self._window = window
        self._clock = clock
        self._settle = settle
        self._changed = threading.Condition()
        self._snapshot: tuple[Machine, ...] | None = None
        self._listed_at = 0.0
        self._listed_seq = 0
        self._seq = 0
        self._attempts = 0
        self._failure: BaseException | None = None
        self._in_flight = False
        self._created: dict[str, _Write] = {}
        self._deleted: dict[str, _Write] = {}
        self._creating: Counter[tuple[str, str]] = Counter()
        self._reserving = threading.Lock()

    @property
    def listings(self) -> int:
        """Listings asked of the cloud so far (each may span several pages)."""
        with self._changed:
            return self._attempts

    def age(self) -> float | None:
        """Seconds since the current listing began, or None before the first."""
        with self._changed:
            return None if self._snapshot is None else self._clock() - self._listed_at

    def machines(self, pool: str) -> list[Machine]:
        """The machines of ``pool``: from the fresh listing, else from a new one.

        A thread that finds a listing in flight waits for it; when that listing fails, the
        waiters get its error rather than each trying again at once.
        """
        with self._changed:
            waited_for = None
            while True:
                if self._fresh():
                    return self._view(pool)
                if waited_for is not None and self._attempts > waited_for and self._failure:
                    raise self._failure
                if not self._in_flight:
                    break
                waited_for = self._attempts
                self._changed.wait()
            self._in_flight = True
            started_at, started_seq = self._clock(), self._seq
        try:
            found = self._fetch()
        except BaseException as error:
            with self._changed:
                self._attempts += 1
                self._failure = error
                self._in_flight = False
                self._changed.notify_all()
            raise
        with self._changed:
            self._attempts += 1
            self._failure = None
            self._in_flight = False
            self._snapshot = tuple(found)
            self._listed_at, self._listed_seq = started_at, started_seq
            self._settle_writes()
            self._changed.notify_all()
            return self._view(pool)

    def created(self, machine: Machine) -> None:
        """This provider made ``machine``: list it from now on."""
        with self._changed:
            self._seq += 1
            self._created[machine.id] = _Write(self._seq, self._clock(), machine)

    def deleted(self, machine_id: str) -> None:
        """This provider deleted ``machine_id``: list it as ``deleting`` from now on."""
        with self._changed:
            self._seq += 1
            self._deleted[machine_id] = _Write(self._seq, self._clock())

    def launched(self, name: str, pool: str) -> Machine | None:
        """The machine this provider made as ``name`` in ``pool`` and has not deleted, while
        the listing may not show it yet (its write is not settled), else None."""
        with self._changed:
            made = [
                w
                for i, w in self._created.items()
                if w.machine is not None
                and (w.machine.name, w.machine.pool) == (name, pool)
                and i not in self._deleted
            ]
            newest = max(made, key=lambda w: w.seq, default=None)
            return None if newest is None else newest.machine

    def known(self, machine_id: str) -> Machine | None:
        """``machine_id`` as this provider made it or the fresh listing shows it (this owner's
        pool machine, since the listing holds no other), this provider's writes laid over;
        None when the listing is not fresh and this provider did not make it."""
        with self._changed:
            write = self._created.get(machine_id)
            found = write.machine if write is not None else None
            if found is None and self._fresh():
                assert self._snapshot is not None
                found = next((m for m in self._snapshot if m.id == machine_id), None)
            if found is not None and machine_id in self._deleted:
                return _deleting(found)
            return found

    def reserve(
        self, pool: str, name: str, limit: int, listed: Callable[[], list[Machine]]
    ) -> int | None:
        """Hold a place in ``pool`` for a create of ``name`` unless the pool is at ``limit``:
        None when held (``release`` ends it), else the count that is at the limit.

        The count is ``listed()`` (the pool as ``machines`` answers it, less the machines
        that do not count toward a max: ``Machine.counts_toward_max``) plus the creates in
        flight of names not listed yet; one check at a time, so threads never pass ``limit``
        together. A name listed or in flight makes no new
        machine, so it is let through (a create retried after a lost answer).
        """
        with self._reserving:
            machines = [m for m in listed() if m.counts_toward_max]
            names = {m.name for m in machines}
            with self._changed:
                flying = {n for (p, n) in self._creating if p == pool}
                count = len(machines) + len(flying - names)
                if count >= limit and name not in names | flying:
                    return count
                self._creating[pool, name] += 1
        return None

    def release(self, pool: str, name: str) -> None:
        """End the place ``reserve`` held; the create has ended (what it made is listed)."""
        with self._changed:
            self._creating[pool, name] -= 1
            if self._creating[pool, name] <= 0:
                del self._creating[pool, name]

    def forget(self) -> None:
        """Drop the listing: the next ``machines`` lists again (writes stay laid over it)."""
        with self._changed:
            self._snapshot = None

    def _fresh(self) -> bool:
        if self._snapshot is None:
            return False
        return self._clock() - self._listed_at < self._window()

    def _view(self, pool: str) -> list[Machine]:
        assert self._snapshot is not None
        listed = [m for m in self._snapshot if m.pool == pool]
        seen = {m.id for m in self._snapshot}
        listed += [
            w.machine
            for w in self._created.values()
            if w.machine is not None and w.machine.pool == pool and w.machine.id not in seen
        ]
        return [_deleting(m) if m.id in self._deleted else m for m in listed]

    def _settle_writes(self) -> None:
        """Drop the writes the new listing agrees with, or that are older than ``settle``."""
        assert self._snapshot is not None
        by_id = {m.id: m for m in self._snapshot}
        now = self._clock()

        def settled(write: _Write, agrees: bool) -> bool:
            return write.seq <= self._listed_seq and (agrees or now - write.at >= self._settle)

        gone = {
            i
            for i, w in self._deleted.items()
            if settled(w, i not in by_id or by_id[i].status == Status.DELETING)
        }
        self._deleted = {i: w for i, w in self._deleted.items() if i not in gone}
        self._created = {
            i: w for i, w in self._created.items() if i not in gone and not settled(w, i in by_id)
        }


def _deleting(machine: Machine) -> Machine:
    """``machine`` as listed once this provider has deleted it."""
    if machine.status == Status.DELETING:
        return machine
    return machine.model_copy(update={"status": Status.DELETING, "ending": Ending.DELETED})
