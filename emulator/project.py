"""The one project the emulator serves: one state per resource, behind one lock.

`Project` composes the per-resource states (`emulator/resources/<name>/state.py`) and the
clock they share. Time moves lazily: every transaction first finishes the actions whose time
has come (and applies their effects, e.g. a booted server becomes `running`), so no
background thread is needed and a status read is always consistent with the actions read
next to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from emulator.capacity import Stock
from emulator.limits import Limits
from emulator.resources.actions.state import Actions
from emulator.resources.firewalls.state import Firewalls
from emulator.resources.images.state import Images
from emulator.resources.networks.state import Networks
from emulator.resources.placement_groups.state import PlacementGroups
from emulator.resources.primary_ips.state import PrimaryIPs
from emulator.resources.servers.state import Servers
from emulator.resources.ssh_keys.state import SSHKeys


@dataclass
class Timing:
    """How long emulated work takes; `action_seconds` None means the same as booting."""

    boot_seconds: float = 1.0
    action_seconds: float | None = None

    @property
    def action(self) -> float:
        """Seconds a server action (power, delete) runs."""
        return self.boot_seconds if self.action_seconds is None else self.action_seconds


class Project:
    """All resources of the one project; not thread-safe (use `State.transaction`).

    Each resource's state reaches the others through this object (a server's firewalls,
    its primary IPs, the actions it starts), as moto's backends do.
    """

    def __init__(
        self, stock: Stock, timing: Timing, seed: int = 0, limits: Limits | None = None
    ) -> None:
        self.stock = stock
        self.timing = timing
        self.limits = limits or Limits()
        self.now = time.time()
        self.epoch = (
            self.now
        )  # when the emulator started: the catalogue's deprecations count from it
        self.actions = Actions(self)
        self.servers = Servers(self, seed)
        self.ssh_keys = SSHKeys(self)
        self.firewalls = Firewalls(self)
        self.primary_ips = PrimaryIPs(self)
        self.networks = Networks(self)
        self.placement_groups = PlacementGroups(self)
        self.images = Images(self)

    def advance(self, now: float) -> None:
        """Move the clock to `now`, finishing every action whose time has come."""
        self.now = now
        self.actions.finish_due(now)

    def reset(self) -> None:
        """Drop every resource and action (ids keep counting up)."""
        for resource in (
            self.servers,
            self.ssh_keys,
            self.firewalls,
            self.actions,
            self.primary_ips,
            self.networks,
            self.placement_groups,
            self.images,
        ):
            resource.reset()


class State:
    """The one project behind a lock; every request runs inside `transaction()`."""

    def __init__(
        self,
        stock: Stock,
        timing: Timing,
        seed: int = 0,
        clock: Callable[[], float] = time.time,
        limits: Limits | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._clock = clock
        self._offset = 0.0
        self.project = Project(stock, timing, seed, limits)

    def now(self) -> float:
        """The project's time: the clock, moved by `set_now` (the control API's `/clock`)."""
        return self._clock() + self._offset

    def set_now(self, now: float | None) -> None:
        """Let the project's time be `now` from this moment on, passing as the clock does
        (None: the clock's own again), so tests place a server's `created` where they need."""
        with self._lock:
            self._offset = 0.0 if now is None else now - self._clock()

    @contextmanager
    def transaction(self) -> Iterator[Project]:
        """Hold the lock, bring time up to now, and hand out the project."""
        with self._lock:
            self.project.advance(self.now())
            yield self.project
