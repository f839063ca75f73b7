"""EC2's notices that a running machine will go, read by the listing from the owner's queue.

With ``ORCA_EC2_EVENTS_QUEUE`` set (a stack with spot pools exports it: ``clouds.ec2.events``
has its rules), each listing of the owner asks the queue once (one ReceiveMessage, up to
ten messages, no wait) within its own window: no request per pool, none between listings.
A machine a message names is listed with its notice: ``interrupting`` with ``ends_at`` (the
warning's time plus two minutes), ``rebalance``, or ``scheduled`` with the change's date; a
state change to a going state shows at once, before EC2's lagging list does.

A notice is kept here until its machine is gone, and written on an autoscaler's machine as
tags (``answers.NOTICE_TAG``), so every process that lists the owner (a restarted
autoscaler, ``orca-machines status``, a preview) sees it; a machine the stack keeps is not
tagged (its tags are the stack's: one of ours would be drift), so its notice is known to the
process that read it. A message is deleted once handled: its notice kept (and tagged), its
machine gone, or not this owner's (the rules match every instance of the account). A
listing of one pool (``ORCA_LIST_TTL=0``) cannot tell another pool's machine from another
owner's: it leaves such a message to the next listing of the owner, or to the queue's
retention (``events.QUEUE_RETENTION``), so the queue never fills.

The queue is an aid, never a condition: when it cannot be read (or a tag written), the
listing answers without it, saying so in the log once per reason.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from machines.runtime.clock import Clock
from machines.runtime.clouds.ec2.answers import (
    Instance,
    QueueMessage,
    machine,
    notice_tags,
    status_of,
)
from machines.runtime.clouds.ec2.events import Notice, Said, said
from machines.runtime.clouds.ec2.settings import ORCA_EC2_EVENTS_QUEUE
from machines.runtime.errors import MachinesError
from machines.runtime.labels import MANAGED_BY_LABEL
from machines.runtime.listing import DEFAULT_SETTLE
from machines.runtime.models import Ending, Machine, Status

log = logging.getLogger(__name__)

Receive = Callable[[], list[QueueMessage]]
Delete = Callable[[Sequence[QueueMessage]], None]
Tag = Callable[[Sequence[str], dict[str, str]], None]
Seen = Callable[[Machine, bool], None]
"""Told once per machine and notice kind this process sees: the machine as listed with it,
and whether it was read from the queue now (not from a tag another reader wrote)."""


@dataclass(frozen=True)
class _Kept:
    """What this process knows of one instance: its notice, a going state and when it was
    read, and the pool it is in."""

    pool: str
    notice: Notice | None = None
    state: str = ""
    state_at: float = 0.0


@dataclass(frozen=True)
class _Read:
    """One message received, and what it says."""

    message: QueueMessage
    said: Said


class Notices:
    """The owner's queue of EC2's notices and what it said, per instance, for one provider.

    ``receive``, ``delete`` and ``tag`` are the provider's calls (ReceiveMessage,
    DeleteMessageBatch, CreateTags), each raising ``MachinesError``; ``seen`` is told of each
    notice the first time this process lists a machine under it. Safe to share between
    threads.
    """

    def __init__(  # noqa: PLR0917 (the queue, then the provider's calls in their order)
        self,
        queue: str,
        receive: Receive,
        delete: Delete,
        tag: Tag,
        seen: Seen,
        clock: Clock,
        settle: float = DEFAULT_SETTLE,
    ) -> None:
        """``queue`` is ``ORCA_EC2_EVENTS_QUEUE``; empty, nothing is received, and machines
        are listed as EC2 lists them (with the notices their tags carry)."""
        self._queue = queue
        self._receive = receive
        self._delete = delete
        self._tag = tag
        self._seen = seen
        self._clock = clock
        self._settle = settle
        self._lock = threading.Lock()
        self._warn_lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        self._told: set[tuple[str, Ending]] = set()
        self._warned = ""

    def receive(self) -> list[_Read]:
        """The queue's messages now (one request; none without a queue, or when it cannot
        be read), each with what it says."""
        if not self._queue:
            return []
        try:
            messages = self._receive()
        except MachinesError as error:
            self._warn(
                f"EC2's notices could not be read from {ORCA_EC2_EVENTS_QUEUE}={self._queue} "
                f"({error}): machines are listed without them until it can be read"
            )
            return []
        return [_Read(m, said(m.body)) for m in messages]

    def apply(
        self, received: Sequence[_Read], instances: Iterable[Instance], pool: str | None
    ) -> list[Machine]:
        """The machines of ``instances`` (the owner's, of ``pool`` when given), each with
        what the queue said of it now and before; the messages handled deleted, the
        notices of autoscaler machines tagged."""
        listed = list(instances)
        by_id = {i.id: i for i in listed}
        with self._lock:
            settled, fresh = self._take(received, by_id, pool)
            self._forget(by_id, pool)
            tagged = self._write_tags(by_id)
            done = [
                r.message
                for r in received
                if all(i in settled and (i not in fresh or i in tagged) for i in r.said.instances)
            ]
            machines = [self._listed(i) for i in listed]
        if done:
            try:
                self._delete(done)
            except MachinesError as error:
                self._warn(
                    f"EC2's notices read could not be deleted ({error}): they are read again"
                )
        for made, read in self._firsts(machines, fresh, pool):
            self._seen(made, read)
        return machines

    def _take(
        self, received: Sequence[_Read], by_id: dict[str, Instance], pool: str | None
    ) -> tuple[set[str], set[str]]:
        """Keep what the messages say of the listed, running instances; the ids that are
        settled (kept, gone, or not the owner's), and those with a notice read now."""
        settled: set[str] = set()
        fresh: set[str] = set()
        now = self._clock()
        for read in received:
            for instance_id in read.said.instances:
                found = by_id.get(instance_id)
                if found is None:
                    if pool is None:  # the owner's listing: gone, or not the owner's
                        settled.add(instance_id)
                        self._kept.pop(instance_id, None)
                    continue
                settled.add(instance_id)
                if status_of(found.state.name) == Status.DELETING:
                    self._kept.pop(instance_id, None)
                    continue
                kept = self._kept.get(instance_id) or _Kept(pool=machine(found).pool)
                notice = read.said.notices.get(instance_id)
                if notice is not None and _stronger(notice, kept.notice):
                    kept = _Kept(kept.pool, notice, kept.state, kept.state_at)
                    fresh.add(instance_id)
                state = read.said.states.get(instance_id)
                if state:
                    kept = _Kept(kept.pool, kept.notice, state, now)
                self._kept[instance_id] = kept
        return settled, fresh

    def _forget(self, by_id: dict[str, Instance], pool: str | None) -> None:
        """Drop what is kept of machines the listing shows gone (a listing of one pool: of
        that pool's), and going states EC2's list now agrees with or that are older than
        ``settle``."""
        now = self._clock()
        for instance_id, kept in list(self._kept.items()):
            found = by_id.get(instance_id)
            if found is None:
                if pool is None or kept.pool == pool:
                    del self._kept[instance_id]
                continue
            if status_of(found.state.name) == Status.DELETING:
                del self._kept[instance_id]
                continue
            if kept.state and (
                found.state.name == kept.state or now - kept.state_at >= self._settle
            ):
                self._kept[instance_id] = _Kept(kept.pool, kept.notice)

    def _write_tags(self, by_id: dict[str, Instance]) -> set[str]:
        """Tag each autoscaler's machine whose kept notice its tags do not say yet (one
        request per notice); the ids whose tags say it now. A machine the stack keeps is
        never tagged: it counts as done."""
        done: set[str] = set()
        wanted: dict[tuple[tuple[str, str], ...], list[str]] = {}
        for instance_id, kept in self._kept.items():
            found = by_id.get(instance_id)
            if kept.notice is None or found is None:
                continue
            tags = notice_tags(kept.notice.ending, kept.notice.ends_at)
            if found.tags.get(MANAGED_BY_LABEL) or all(
                found.tags.get(k) == v for k, v in tags.items()
            ):
                done.add(instance_id)
                continue
            wanted.setdefault(tuple(sorted(tags.items())), []).append(instance_id)
        for tags_items, ids in wanted.items():
            try:
                self._tag(sorted(ids), dict(tags_items))
            except MachinesError as error:
                self._warn(
                    f"EC2's notices could not be written on the machines ({error}): this "
                    "process keeps them, others see them once they read them"
                )
                continue
            done.update(ids)
        return done

    def _listed(self, instance: Instance) -> Machine:
        """``instance`` as listed: its tags' notice or the one kept, the stronger; a going
        state read before EC2's list shows it."""
        listed = machine(instance)
        kept = self._kept.get(instance.id)
        if kept is None or listed.status == Status.DELETING:
            return listed
        update: dict[str, object] = {}
        tagged = Notice(listed.ending, listed.ends_at) if listed.ending.notice else None
        if kept.notice is not None and _stronger(kept.notice, tagged):
            update = {"ending": kept.notice.ending, "ends_at": kept.notice.ends_at}
        if kept.state:
            update["status"] = status_of(kept.state)
            if update["status"] == Status.DELETING:
                gone = listed.ending == Ending.INTERRUPTING or (
                    kept.notice is not None and kept.notice.ending == Ending.INTERRUPTING
                )
                update["ending"] = Ending.INTERRUPTED if gone else Ending.DELETED
                update["ends_at"] = None
        return listed.model_copy(update=update) if update else listed

    def _firsts(
        self, machines: Sequence[Machine], fresh: set[str], pool: str | None
    ) -> list[tuple[Machine, bool]]:
        """The machines listed under a notice this process had not seen them under yet,
        with whether it was read from the queue now (an owner's listing forgets those
        it no longer lists)."""
        firsts = []
        with self._lock:
            if pool is None:
                live = {m.id for m in machines if m.under_notice}
                self._told = {t for t in self._told if t[0] in live}
            for made in machines:
                if not made.under_notice or (made.id, made.ending) in self._told:
                    continue
                self._told.add((made.id, made.ending))
                firsts.append((made, made.id in fresh))
        return firsts

    def _warn(self, said_now: str) -> None:
        """Log ``said_now`` as a warning once, until another warning is said (a lock of its
        own: it is said while ``apply`` holds the memory's)."""
        with self._warn_lock:
            if said_now == self._warned:
                return
            self._warned = said_now
        log.warning("%s", said_now)


def _stronger(notice: Notice, other: Notice | None) -> bool:
    """Whether ``notice`` stands over ``other`` (None: no notice): a stronger kind, or
    the same kind said anew."""
    return other is None or notice.rank >= other.rank
