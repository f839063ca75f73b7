"""The fake cloud's ``Provider``: only the hooks ``Provider`` leaves to a cloud (``from_env``,
``arch``, ``offers``, ``sells`` and the six ``_`` steps), against its ``Store``."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from machines.runtime.clock import Clock
from machines.runtime.errors import InvalidMachineIdError, UnknownMachineTypeError
from machines.runtime.labels import belongs_to, owner_among, pool_labels
from machines.runtime.models import Created, Machine, MachineSpec, Status, mismatch
from machines.runtime.prices import PriceList
from machines.runtime.provider import Found, Provider
from machines.runtime.settings import Freshness
from testkit.fake_cloud.options import KIND
from testkit.fake_cloud.prices import BILLING, FakePrices
from testkit.fake_cloud.settings import CLOUD, store_path
from testkit.fake_cloud.store import LOCATIONS, TYPES, NameTaken, Server, SoldOut, Store


def machine(server: Server) -> Machine:
    return Machine(
        id=str(server.id),
        name=server.name,
        status=Status.DELETING if server.deleting else Status.RUNNING,
        machine_type=server.machine_type,
        location=server.location,
        address="",
        pool=server.labels.get("orca-pool", ""),
        managed_by=server.labels.get("orca-managed-by", ""),
    )


class FakeProvider(Provider):
    """Servers of the fake cloud's store, labelled for one owner."""

    kind = KIND
    cloud = CLOUD
    noun = "server"
    billing = BILLING

    def __init__(
        self, owner: str, store: Store, freshness: Freshness, clock: Clock = time.time
    ) -> None:
        super().__init__(owner, "fake-image", freshness, clock)
        self.store = store

    @classmethod
    def from_env(cls, owner: str = "", environ: Mapping[str, str] | None = None) -> FakeProvider:
        env = os.environ if environ is None else environ
        return cls(owner, Store(Path(store_path(env))), Freshness.from_env(env))

    def prices(self) -> PriceList:
        return FakePrices()

    def arch(self, machine_type: str) -> str:
        if machine_type not in TYPES:
            raise UnknownMachineTypeError(f"the fake cloud has no type {machine_type!r}")
        return TYPES[machine_type]

    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        self.arch(machine_type)
        return list(LOCATIONS)

    def sells(self, machine_type: str, location: str) -> str | None:
        if machine_type not in TYPES:
            return f"the fake cloud has no type {machine_type!r}: use {', '.join(TYPES)}"
        if location not in LOCATIONS:
            return f"the fake cloud has no location {location!r}: use {', '.join(LOCATIONS)}"
        return None

    def _create(self, spec: MachineSpec) -> Created:
        self.arch(spec.machine_type)
        labels = pool_labels(spec.pool, self.owner)
        try:
            made = self.store.create(spec.name, spec.machine_type, spec.location, labels)
        except SoldOut as error:
            return Created.out_of_stock(str(error))
        except NameTaken:
            taken = next(s for s in self.store.servers_listed() if s.name == spec.name)
            if not belongs_to(taken.labels, self.owner, spec.pool):
                return Created.failure(f"the name {spec.name} is taken")
            found = machine(taken)
            different = mismatch(spec, found)
            return Created.failure(different) if different else Created.success(found)
        server = self.store.get(made)
        assert server is not None
        return Created.success(machine(server))

    def _list(self, pool: str | None) -> list[Machine]:
        return [
            machine(s)
            for s in self.store.servers_listed()
            if belongs_to(s.labels, self.owner, pool)
        ]

    def _list_owners(
        self, owners: Sequence[str], group: Sequence[Provider]
    ) -> list[tuple[str, Machine]]:
        return [
            (owner, machine(server))
            for server in self.store.servers_listed()
            if (owner := owner_among(server.labels, owners)) is not None
        ]

    def _machine_id(self, machine_id: object) -> str:
        if isinstance(machine_id, str) and machine_id.isascii() and machine_id.isdigit():
            return machine_id
        raise InvalidMachineIdError(f"{machine_id!r} is not a fake server id")

    def _look_up(self, machine_id: str) -> Found | None:
        server = self.store.get(int(machine_id))
        return None if server is None else Found(machine(server), dict(server.labels))

    def _remove(self, machine_id: str) -> None:
        self.store.delete(int(machine_id))
