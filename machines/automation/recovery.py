"""After an engine run that was killed outright (SIGKILL: no cancellation ran), the stack is
locked by a process that is gone, and the creates it had in flight are pending in the
checkpoint while their machines may exist. This finds both and puts them right, the
engine's own way, saying so in one line each.

* The lock: the engine records who holds it (user, host, pid, time; pulumi's diy backend).
  A holder on this host whose pid is not running, or is running a process started after
  the lock was taken, is provably gone: its lock file is deleted (``file://`` backends) or
  the engine's ``pulumi cancel`` releases it (buckets). A holder on another host, or alive,
  is never touched: the error names it.
* Pending creates (``pending_operations`` of type ``creating``): a machine's create carries
  the stack's labels and its name, so the stack's machine of that name is found by the
  runtime's listing and adopted into the checkpoint (``pulumi stack export``, the
  operation turned into the resource with the cloud's id, ``pulumi stack import``); a create
  that never reached the cloud is cleared. A pending create of anything else stops the run
  with what to do, since clearing it could leave it behind. (The engine's own ``refresh
  --import-pending-creates`` only relabels the operation here: the next ``up`` still
  creates the machine again, and fails on Hetzner's unique names or makes a second EC2
  instance.)
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote, urlparse

from machines.automation.engine import EngineError
from machines.program.pending import PendingCreate, machine_types
from machines.runtime.labels import MANAGED_BY_PULUMI
from machines.runtime.models import Machine
from machines.runtime.provider import Provider

Notify = Callable[[str], object]
Cancel = Callable[[], object]
"""Releases the stack's locks through the engine (``pulumi cancel``)."""

PID_REUSE_MARGIN = timedelta(seconds=2)
"""A process of the holder's pid counts as another one only when it started this long after
the lock was taken: the holder itself started before it, whatever the clock's grain."""

_HOLDER = re.compile(
    r"^\s*(?P<where>\S+): created by (?P<user>.*)@(?P<host>\S+) \(pid (?P<pid>\d+)\) "
    r"at (?P<at>\S+)\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Holder:
    """One lock of the stack as the engine's lock error lists it."""

    where: str
    user: str
    host: str
    pid: int
    at: datetime

    def gone(self, hostname: str | None = None) -> bool:
        """Whether the holder provably no longer runs: on this host, its pid runs no
        process, or one started after the lock was taken (the pid was reused)."""
        if self.host != (hostname or socket.gethostname()):
            return False
        started = process_start(self.pid)
        return started is None or started > self.at + PID_REUSE_MARGIN

    def text(self) -> str:
        return f"{self.user}@{self.host} (pid {self.pid}) at {self.at.isoformat()}"


def holders(lock_error: str) -> list[Holder]:
    """The locks the engine's "stack is currently locked" error names."""
    found = []
    for match in _HOLDER.finditer(lock_error):
        try:
            at = datetime.fromisoformat(match["at"])
        except ValueError:
            continue
        found.append(Holder(match["where"], match["user"], match["host"], int(match["pid"]), at))
    return found


EXITED_STATES = frozenset({"Z", "X", "x"})
"""``/proc/<pid>/stat`` states of a process that has exited: zombie, dead."""


def process_start(pid: int) -> datetime | None:
    """When process ``pid`` started, or None when there is none (Linux's ``/proc``). A
    zombie, exited but not yet reaped (a killed run's orphans wait for init), runs nothing:
    None too."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in EXITED_STATES:
        return None
    ticks = int(fields[19])
    age = uptime - ticks / os.sysconf("SC_CLK_TCK")
    return datetime.fromtimestamp(datetime.now(UTC).timestamp() - age, UTC)


def release_stale_locks(stack: str, lock_error: str, notify: Notify, cancel: Cancel) -> bool:
    """Release the stack's locks when every holder is provably gone; True when released.

    A ``file://`` lock is deleted by its path; any other backend's through the engine
    (``cancel``: ``pulumi cancel``), after the holders were found gone.
    """
    found = holders(lock_error)
    if not found or not all(h.gone() for h in found):
        return False
    for holder in found:
        url = urlparse(holder.where)
        if url.scheme == "file":
            Path(unquote(url.path)).unlink(missing_ok=True)
    if any(urlparse(h.where).scheme != "file" for h in found):
        cancel()
    who = "; ".join(h.text() for h in found)
    notify(
        f"stack {stack}: released the lock of an engine run that is gone ({who}): "
        "it was killed before it could release it"
    )
    return True


def settle_pending_creates(
    stack: str,
    deployment: Mapping[str, object],
    pending: list[PendingCreate],
    provider: Callable[[], Provider],
) -> tuple[dict[str, object], str]:
    """The checkpoint with each pending machine create the cloud has adopted and those it
    never made cleared, and the line that says so.

    An adopted machine enters the state as the resource the engine was creating: the
    program's inputs as the pending operation recorded them (so the next diff against the
    program finds nothing to change) and the id the cloud gave it; the refresh before the
    operation reads the rest through the plugin."""
    refuse_other_creates(stack, pending)
    found = stack_machines(provider(), sorted({p.pool for p in pending}))
    adopted = {p.urn: found[p.name] for p in pending if p.name in found}
    settled = settled_deployment(deployment, {p.urn for p in pending}, adopted)
    said = _said(
        [(p, adopted[p.urn]) for p in pending if p.urn in adopted],
        [p for p in pending if p.urn not in adopted],
    )
    return settled, f"stack {stack}: a killed run left {len(pending)} create(s) pending: {said}"


def refuse_other_creates(stack: str, pending: list[PendingCreate]) -> None:
    """Stop at a pending create of anything but a machine: clearing it could leave it behind."""
    machines = machine_types()
    others = [p for p in pending if p.type not in machines]
    if others:
        names = ", ".join(f"{p.type} {p.key}" for p in others)
        raise EngineError(
            f"stack {stack}: a killed run left creates pending that are not machines ({names}): "
            f"check in the cloud whether each exists, then run `pulumi refresh --stack {stack}` "
            "and answer for each (import with its id, or clear)"
        )


def stack_machines(listing: Provider, pools: list[str]) -> dict[str, Machine]:
    """The stack's own machines (``orca-managed-by=pulumi``) of ``pools``, by name."""
    found: dict[str, Machine] = {}
    for pool in pools:
        for machine in listing.machines(pool):
            if machine.managed_by == MANAGED_BY_PULUMI:
                found[machine.name] = machine
    return found


def settled_deployment(
    deployment: Mapping[str, object], settled: set[str], adopted: Mapping[str, Machine]
) -> dict[str, object]:
    """``deployment`` with the pending operations of ``settled`` URNs gone and each of
    ``adopted`` a resource with the cloud's id."""
    resources = _list(deployment.get("resources"))
    left = []
    for op in _list(deployment.get("pending_operations")):
        resource = op.get("resource") if isinstance(op, Mapping) else None
        urn = resource.get("urn") if isinstance(resource, Mapping) else None
        if not isinstance(resource, Mapping) or urn not in settled:
            left.append(op)
            continue
        made = adopted.get(str(urn))
        if made is not None:
            inputs = resource.get("inputs")
            resources.append({**resource, "id": made.id, "outputs": inputs or {}})
    return {**deployment, "resources": resources, "pending_operations": left}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _said(
    adopted: Iterable[tuple[PendingCreate, Machine]], cleared: Iterable[PendingCreate]
) -> str:
    parts = [f"adopted {p.key} ({m.id}, made before the kill)" for p, m in adopted]
    parts += [f"cleared {p.key} (never made)" for p in cleared]
    return ", ".join(parts)
