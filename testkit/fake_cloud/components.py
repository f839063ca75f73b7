"""The fake cloud's part of the program: its servers, as Python dynamic resources.

A dynamic resource needs no plugin of its own (the engine serves it with Python's), so a
stack on the fake cloud runs through the real engine: preview, up, a killed run, destroy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from machines.program.components import Built, MachineArgs, named
from machines.program.config.models import PoolConfig
from testkit.fake_cloud.config import FakeDeployment
from testkit.fake_cloud.options import FakeOptions
from testkit.fake_cloud.store import TYPES, Store

REPLACING = ("name", "location", "image", "disk")
"""What a server cannot change in place: the cloud makes another."""


class ServerProvider(ResourceProvider):
    """The fake cloud's servers, created and deleted in the store the inputs name."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        store = Store(Path(props["store"]))
        made = store.create(props["name"], props["machineType"], props["location"], props["labels"])
        return CreateResult(id_=str(made), outs={**props, "address": ""})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in {*olds, *news} if olds.get(key) != news.get(key)]
        changed = [key for key in changed if key != "address"]
        replaces = [key for key in changed if key in REPLACING]
        return DiffResult(changes=bool(changed), replaces=replaces, delete_before_replace=True)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs={**news, "address": ""})

    def delete(self, id: str, props: dict[str, Any]) -> None:
        Store(Path(props["store"])).delete(int(id))


class Server(Resource, module="fake", name="Server"):
    """One fake server (``pulumi-python:dynamic/fake:Server``)."""

    address: pulumi.Output[str]

    def __init__(self, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(ServerProvider(), name, {**props, "address": None}, opts)


class FakeCloud:
    """Fake servers like the runtime's: the same name, type, location and labels."""

    def __init__(self, deployment: FakeDeployment) -> None:
        self._deployment = deployment

    def arch(self, pool: PoolConfig, parent: pulumi.Resource) -> pulumi.Output[str]:
        return pulumi.Output.from_input(TYPES.get(pool.machine_type, ""))

    def shared(self, pool: PoolConfig) -> list[pulumi.Resource]:
        """The fake cloud has no shared infrastructure."""
        return []

    def shared_names(self, pool: PoolConfig) -> list[str]:
        return []

    def image(
        self, pool: PoolConfig, arch: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[str]:
        return pulumi.Output.from_input(pool.options_of(FakeOptions).image or "fake-image")

    def machine(
        self, machine: MachineArgs, parent: pulumi.Resource
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        key, name, pool, labels = machine.key, machine.name, machine.pool, machine.labels
        options = pool.options_of(FakeOptions)
        props = {
            "name": name,
            "machineType": pool.machine_type,
            "location": pool.location,
            "labels": labels,
            "image": machine.image,
            "disk": options.disk,
            "store": self._deployment.store,
        }
        server = Server(key, props, named(parent))
        return server.id, server.address


def build(deployment: FakeDeployment) -> Built:
    """No shared infrastructure: a cloud that makes the deployment's servers."""
    return Built(FakeCloud(deployment), deployment.env())
