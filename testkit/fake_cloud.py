"""A third cloud that is only the provider interface: what a new cloud gets from the base
class when it implements nothing more (no price list of its own, offers as it says)."""

from __future__ import annotations

from collections.abc import Mapping

from machines.budget import Budget
from machines.models import Created, Machine, MachineSpec
from machines.provider import Provider

TARGET = "testkit.fake_cloud:FakeProvider"
"""Its line in ``machines.clouds.PROVIDERS``."""


class FakeProvider(Provider):
    """Sells ``small`` (amd64) in ``here``; makes nothing."""

    kind = "fake"
    cloud = "Fake"

    @classmethod
    def from_env(cls, owner: str = "", environ: Mapping[str, str] | None = None) -> FakeProvider:
        return cls(owner, "")

    def arch(self, machine_type: str) -> str:
        return "amd64"

    def create(self, spec: MachineSpec) -> Created:
        return Created.failure("the fake cloud makes nothing")

    def machines(self, pool: str) -> list[Machine]:
        return []

    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        return ["here"] if machine_type == "small" else []

    def sells(self, machine_type: str, location: str) -> str | None:
        return None if (machine_type, location) == ("small", "here") else "not sold"

    def budget(self) -> Budget:
        return Budget(stated=False, note="the fake cloud states no budget")

    def delete(self, machine_id: str) -> bool:
        return True
