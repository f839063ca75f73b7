"""Pulumi component resources: a deployment's pools, on whichever cloud it names.

A pool's machines are made exactly as the runtime's ``Provider.create`` makes them (same
image, keys, firewall or security group, user data, labels and tags), so ``machines(pool)``
sees a stack's machines like the autoscaler's own. Each cloud's shared infrastructure and
machines are in ``machines.program.clouds.<cloud>.components``, built on what this module
shares with them; ``machines.program.compose`` puts them together (``import machines``
loads none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import pulumi
from pulumi.runtime.config import CONFIG

from machines.program.clouds import credentials
from machines.program.config.models import PoolConfig
from machines.program.config.stack_config import StackConfig
from machines.program.placement import Placement
from machines.program.reaper import Reaper
from machines.runtime.labels import machine_host, machine_name, stack_labels
from machines.runtime.pool import Place
from machines.runtime.span import spanned_id

POOL_TYPE = "orca:machines:Pool"
"""The pool component's type token: part of every stack's URNs, so never renamed (a new
token would replace every pool's machines), whatever the class is called."""


def stack_config() -> StackConfig:
    """The running program's configuration and which of its keys are secrets."""
    values = {**pulumi.runtime.get_config_env(), **CONFIG.get()}
    secret = set(pulumi.runtime.get_config_secret_keys_env())
    secret.update(key for key in values if pulumi.runtime.is_config_secret(key))
    return StackConfig({k: str(v) for k, v in values.items()}, frozenset(secret))


def config_credentials(config: StackConfig) -> dict[str, str]:
    """The credentials the stack's configuration holds (secrets, decrypted by the engine),
    as the variables the runtime reads, for the program's own read-only questions to the
    clouds (``machines.program.placement``); never exported or kept."""
    return {var: config.values[key] for key, var in credentials().items() if config.values.get(key)}


@dataclass(frozen=True)
class DeclaredMachine:
    """One machine a pool declared, as the stack's ``pools`` output lists it."""

    id: pulumi.Output[str]
    name: str
    address: pulumi.Output[str]
    arch: pulumi.Output[str]

    def output(self) -> pulumi.Output[dict[str, str]]:
        return pulumi.Output.all(
            id=self.id, name=self.name, address=self.address, arch=self.arch
        ).apply(lambda values: {k: str(v) for k, v in values.items()})


@dataclass(frozen=True)
class MachineArgs:
    """One machine a pool declares: ``key`` in the stack (its host name), ``name`` in the
    cloud, its pool, the stack's labels and the image it boots."""

    key: str
    name: str
    pool: PoolConfig
    labels: dict[str, str]
    image: pulumi.Output[str]


class Cloud(Protocol):
    """How one cloud makes a pool's machines, given what the deployment shares."""

    def arch(self, pool: PoolConfig, parent: pulumi.Resource) -> pulumi.Output[str]:
        """Docker's name of the pool's machine type's architecture; a cloud that cannot
        change a kept machine's architecture refuses such a change here."""
        ...

    def image(
        self, pool: PoolConfig, arch: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[str]:
        """The image the pool's machines boot, for the pool's architecture."""
        ...

    def machine(
        self, machine: MachineArgs, parent: pulumi.Resource
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        """Declare one machine; return its id and address."""
        ...

    def shared(self, pool: PoolConfig) -> list[pulumi.Resource]:
        """The shared resources the stack creates that the pool's machines use (network and
        subnet, placement group, firewall, keys, security group, profile): the pool's
        reaper depends on them, so the autoscaler's machines go before any of them."""
        ...

    def shared_names(self, pool: PoolConfig) -> list[str]:
        """``kind:name`` of every shared resource the pool's machines use, created or not
        (known while the program runs): a pool that stops using one has its reaper
        replaced, which deletes the autoscaler's machines there first."""
        ...


@dataclass(frozen=True)
class Built:
    """What a cloud's ``build`` declared: how it makes machines, and the runtime's settings."""

    cloud: Cloud
    env: pulumi.Input[dict[str, str]]


def secret_user_data(pool: PoolConfig) -> pulumi.Output[str] | None:
    """The pool's user data as a secret, so it never reaches state or a preview in plain."""
    user_data = pool.user_data.get_secret_value()
    return pulumi.Output.secret(user_data) if user_data else None


def named(parent: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
    """Options of a resource with a fixed cloud name: the old one goes before a replacement."""
    return pulumi.ResourceOptions(parent=parent, delete_before_replace=True, **options)


SHARED_DELETE_TIMEOUT = "1m"
"""How long the delete of a shared resource (network, subnet, placement group, firewall,
key, security group, profile) may take. The machines using it are deleted before it (the
stack's, and the autoscaler's by the pools' reapers), so a delete that still waits is held by
something else; the plugins would retry it for 15 or 20 minutes, a stack left half-deleted
all that time, where this says so in a minute."""


def shared_options(parent: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
    """Options of a shared resource with a fixed cloud name: ``named``, and a delete bounded
    by ``SHARED_DELETE_TIMEOUT``."""
    timeouts = pulumi.CustomTimeouts(delete=SHARED_DELETE_TIMEOUT)
    return named(parent, custom_timeouts=timeouts, **options)


@dataclass(frozen=True)
class PoolArgs:
    """A ``Pool`` component's inputs (Pulumi's component and args pair): the pool's
    configuration, its owner, how each cloud of the stack makes machines (by kind), the
    provider kind (the stack's home cloud) and runtime settings its reaper deletes the
    autoscaler's machines with, the provider resource that serves reapers, and, for a pool
    that names its places, where each of its machines is (``placement``)."""

    pool: PoolConfig
    owner: str
    clouds: Mapping[str, Cloud]
    provider: str
    env: pulumi.Input[dict[str, str]]
    reapers: pulumi.ProviderResource
    placement: Placement | None = None


class Pool(pulumi.ComponentResource):
    """A pool (``POOL_TYPE``): ``size`` machines, n from 1, and its reaper, as its
    ``PoolConfig`` asks.

    A machine is ``<owner>-<pool>-<n>`` in the stack (its host name too) and
    ``<owner>-<pool>-<n>.stack`` in the cloud (``machines.runtime.labels.machine_name``). Names
    depend on the index only, so a new size adds or removes machines at the end and leaves
    the others alone. The stack's machines carry ``orca-managed-by=pulumi``; the
    reaper (``<pool>-autoscaled``) deletes the autoscaler's machines of the pool when the
    pool leaves the stack. A pool that names its places makes each machine on the cloud of
    its place (``machines.program.placement``), and its reaper deletes the autoscaler's
    machines on every cloud of its places.
    """

    arch: pulumi.Output[str]
    machines: list[DeclaredMachine]
    listing: list[pulumi.Output[dict[str, str]]]

    def __init__(
        self, name: str, args: PoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(POOL_TYPE, name, None, opts)
        pool = args.pool
        labels = stack_labels(pool.name, args.owner)
        views = pool.on_each_cloud(args.provider)
        # The engine deletes a resource before those it depends on: the autoscaler's machines
        # (the reaper) go before the network, group or firewall they are in, as the stack's do.
        self.reaper = Reaper(
            pool.name,
            provider=args.provider,
            owner=args.owner,
            env=args.env,
            shared=[n for k, v in views.items() for n in args.clouds[k].shared_names(v)],
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.reapers,
                depends_on=[r for k, v in views.items() for r in args.clouds[k].shared(v)],
            ),
        )
        first = next(iter(views))
        self.arch = args.clouds[first].arch(views[first], self)
        images: dict[str, pulumi.Output[str]] = {}
        places = args.placement.places if args.placement else ()
        self.machines = []
        self.listing = []
        for index in range(1, pool.size + 1):
            place = places[index - 1] if places else None
            kind = place.cloud if place else first
            at = pool.at(place) if place else pool
            if kind not in images:
                images[kind] = args.clouds[kind].image(views[kind], self.arch, self)
            key = machine_host(args.owner, pool.name, index)
            machine_name_ = machine_name(args.owner, pool.name, index)
            machine_id, address = args.clouds[kind].machine(
                MachineArgs(key, machine_name_, at, labels, images[kind]), parent=self
            )
            declared = DeclaredMachine(machine_id, machine_name_, address, self.arch)
            self.machines.append(declared)
            self.listing.append(
                declared.output() if place is None else _placed(declared, args.provider, place)
            )
        self.register_outputs({"arch": self.arch, "machines": self.listing})

    def output(self, pool: PoolConfig) -> dict[str, Any]:
        """The pool as the stack's ``pools`` output shows it (and its places, if it names them)."""
        shown: dict[str, Any] = {
            "machineType": pool.machine_type,
            "location": pool.location,
            "size": pool.size,
            "market": pool.market.value,
            "arch": self.arch,
            "machines": self.listing,
        }
        if pool.places:
            shown["places"] = [p.model_dump(mode="json", by_alias=True) for p in pool.places]
        return shown


def _placed(machine: DeclaredMachine, home: str, place: Place) -> pulumi.Output[dict[str, str]]:
    """A machine of a pool that names its places as the ``pools`` output lists it: its id as
    the runtime's spanning provider gives it, its cloud, type and location."""
    return pulumi.Output.all(
        id=machine.id, name=machine.name, address=machine.address, arch=machine.arch
    ).apply(
        lambda v: {
            **{k: str(x) for k, x in v.items()},
            "id": spanned_id(home, place.cloud, str(v["id"])),
            "cloud": place.cloud,
            "machineType": place.machine_type,
            "location": place.location,
        }
    )
