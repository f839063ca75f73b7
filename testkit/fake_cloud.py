"""A third cloud that lives in memory: what adding a cloud takes, and nothing more.

``FakeProvider`` implements only the hooks ``Provider`` leaves to a cloud (``from_env``,
``arch``, ``offers``, ``sells`` and the six ``_`` steps) against a ``Store`` that stands
for the cloud's API, counting each request as a cloud would bill it. ``register`` adds the
one line to ``machines.runtime.clouds.CLOUDS`` (monkeypatched), so the test reaches it through
``Provider.of`` alone. Prices and stock are left to extend it with.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from pydantic import Field

from machines.runtime.cloud import Cloud
from machines.runtime.clouds import CLOUDS
from machines.runtime.errors import InvalidMachineIdError, SettingsError, UnknownMachineTypeError
from machines.runtime.labels import belongs_to, owner_among, pool_labels
from machines.runtime.models import Created, Machine, MachineSpec, Market, Status, mismatch
from machines.runtime.options import Options
from machines.runtime.provider import Found, Provider
from machines.runtime.settings import Freshness

KIND = "fake"
TYPES = {"f1.small": "amd64", "f1.arm": "arm64"}
LOCATIONS = ("here", "there")
NO_STOCK_CODE = "sold_out"
"""What the fake cloud answers a create when it has no stock of the type in the location."""
TOKEN = "FAKE_CLOUD_TOKEN"


class FakeOptions(Options):
    """A pool's options on the fake cloud: the size of its disk, in GiB; a change of its
    image replaces the machine."""

    kind: ClassVar[str] = KIND
    replacing: ClassVar[frozenset[str]] = frozenset({"image"})

    disk: int = Field(default=10, ge=1, le=100)
    image: str = ""


FACTS = Cloud(
    kind=KIND,
    name="the fake cloud",
    provider=f"{__name__}:FakeProvider",
    options=FakeOptions,
    markets=frozenset({Market.ON_DEMAND}),
    no_stock_codes=frozenset({NO_STOCK_CODE}),
    credentials=(TOKEN,),
)
"""The fake cloud's facts: what its line in the registry names."""


@dataclass
class Server:
    id: int
    name: str
    machine_type: str
    location: str
    labels: dict[str, str]
    status: Status = Status.RUNNING


@dataclass
class Store:
    """The fake cloud's state, shared by every provider of the process, and its requests."""

    servers: dict[int, Server] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, name: str, machine_type: str, location: str, labels: dict[str, str]) -> int:
        """A server made behind the providers' backs (a stack, a person): its id."""
        with self.lock:
            server = Server(next(self.ids), name, machine_type, location, labels)
            self.servers[server.id] = server
            return server.id

    def live(self) -> list[str]:
        with self.lock:
            return [str(i) for i, s in self.servers.items() if s.status != Status.DELETING]


STORE = Store()


def register(monkeypatch: pytest.MonkeyPatch) -> Store:
    """The one line a cloud adds to ``machines.runtime.clouds.CLOUDS``; an empty store."""
    monkeypatch.setitem(CLOUDS, KIND, __name__)
    store = Store()
    monkeypatch.setattr(sys.modules[__name__], "STORE", store)
    return store


def _machine(server: Server) -> Machine:
    return Machine(
        id=str(server.id),
        name=server.name,
        status=server.status,
        machine_type=server.machine_type,
        location=server.location,
        address="",
        pool=server.labels.get("orca-pool", ""),
        managed_by=server.labels.get("orca-managed-by", ""),
    )


class FakeProvider(Provider):
    """Servers of the in-memory ``STORE``, labelled for one owner."""

    kind = KIND
    cloud = "the fake cloud"
    noun = "server"

    @classmethod
    def from_env(cls, owner: str = "", environ: Mapping[str, str] | None = None) -> FakeProvider:
        env = {} if environ is None else environ
        if env.get("FAKE_CLOUD_BROKEN"):
            raise SettingsError("FAKE_CLOUD_BROKEN is set")
        return cls(owner, "fake-image", Freshness.from_env(env))

    def arch(self, machine_type: str) -> str:
        if machine_type not in TYPES:
            raise UnknownMachineTypeError(f"the fake cloud has no type {machine_type!r}")
        return TYPES[machine_type]

    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        self.arch(machine_type)
        return list(LOCATIONS)

    def sells(self, machine_type: str, location: str) -> str | None:
        if machine_type not in TYPES:
            return f"the fake cloud has no type {machine_type!r}"
        return None if location in LOCATIONS else f"the fake cloud has no {location!r}"

    def _create(self, spec: MachineSpec) -> Created:
        self.arch(spec.machine_type)
        with STORE.lock:
            STORE.requests["create"] += 1
            taken = [s for s in STORE.servers.values() if s.name == spec.name]
            if taken:
                mine = belongs_to(taken[0].labels, self.owner, spec.pool)
                found = _machine(taken[0])
                if not mine:
                    return Created.failure(f"the name {spec.name} is taken")
                different = mismatch(spec, found)
                return Created.failure(different) if different else Created.success(found)
            server = Server(
                next(STORE.ids),
                spec.name,
                spec.machine_type,
                spec.location,
                pool_labels(spec.pool, self.owner),
            )
            STORE.servers[server.id] = server
            return Created.success(_machine(server))

    def _list(self, pool: str | None) -> list[Machine]:
        with STORE.lock:
            STORE.requests["list"] += 1
            return [
                _machine(s)
                for s in STORE.servers.values()
                if belongs_to(s.labels, self.owner, pool)
            ]

    def _list_owners(
        self, owners: Sequence[str], group: Sequence[Provider]
    ) -> list[tuple[str, Machine]]:
        with STORE.lock:
            STORE.requests["list"] += 1
            return [
                (owner, _machine(server))
                for server in STORE.servers.values()
                if (owner := owner_among(server.labels, owners)) is not None
            ]

    def _machine_id(self, machine_id: object) -> str:
        if isinstance(machine_id, str) and machine_id.isascii() and machine_id.isdigit():
            return machine_id
        raise InvalidMachineIdError(f"{machine_id!r} is not a fake server id")

    def _look_up(self, machine_id: str) -> Found | None:
        with STORE.lock:
            STORE.requests["get"] += 1
            server = STORE.servers.get(int(machine_id))
            return None if server is None else Found(_machine(server), dict(server.labels))

    def _remove(self, machine_id: str) -> None:
        with STORE.lock:
            STORE.requests["delete"] += 1
            STORE.servers.pop(int(machine_id), None)
