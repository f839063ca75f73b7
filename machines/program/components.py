"""Pulumi component resources: a deployment's pools, on whichever cloud it names.

A pool's machines are made exactly as the runtime's ``Provider.create`` makes them (same
image, keys, firewall or security group, user data, labels and tags), so ``machines(pool)``
sees a stack's machines like the autoscaler's own. Each cloud's shared infrastructure and
machines are in ``machines.program.<cloud>.components``; ``import machines`` loads none.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

import pulumi
from pulumi.runtime.config import CONFIG

from machines.program.clouds import CLOUDS
from machines.program.config.models import BaseDeployment, PoolConfig
from machines.program.config.stack_config import StackConfig
from machines.program.reaper import Reaper, reapers_provider
from machines.runtime.labels import machine_host, machine_name, stack_labels

POOL_TYPE = "orca:machines:Pool"
"""The pool component's type token: part of every stack's URNs, so never renamed (a new
token would replace every pool's machines), whatever the class is called."""


def stack_config() -> StackConfig:
    """The running program's configuration and which of its keys are secrets."""
    values = {**pulumi.runtime.get_config_env(), **CONFIG.get()}
    secret = set(pulumi.runtime.get_config_secret_keys_env())
    secret.update(key for key in values if pulumi.runtime.is_config_secret(key))
    return StackConfig({k: str(v) for k, v in values.items()}, frozenset(secret))


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
    configuration, its owner, how its cloud makes machines, the provider kind and runtime
    settings its reaper deletes the autoscaler's machines with, and the provider resource
    that serves reapers."""

    pool: PoolConfig
    owner: str
    cloud: Cloud
    provider: str
    env: pulumi.Input[dict[str, str]]
    reapers: pulumi.ProviderResource


class Pool(pulumi.ComponentResource):
    """A pool (``POOL_TYPE``): ``size`` machines, n from 1, and its reaper, as its
    ``PoolConfig`` asks.

    A machine is ``<owner>-<pool>-<n>`` in the stack (its host name too) and
    ``<owner>-<pool>-<n>.stack`` in the cloud (``machines.runtime.labels.machine_name``). Names
    depend on the index only, so a new size adds or removes machines at the end and leaves
    the others alone. The stack's machines carry ``orca-managed-by=pulumi``; the
    reaper (``<pool>-autoscaled``) deletes the autoscaler's machines of the pool when the
    pool leaves the stack.
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
        # The engine deletes a resource before those it depends on: the autoscaler's machines
        # (the reaper) go before the network, group or firewall they are in, as the stack's do.
        self.reaper = Reaper(
            pool.name,
            provider=args.provider,
            owner=args.owner,
            env=args.env,
            shared=args.cloud.shared_names(pool),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.reapers, depends_on=args.cloud.shared(pool)
            ),
        )
        self.arch = args.cloud.arch(pool, self)
        image = args.cloud.image(pool, self.arch, self)
        self.machines = []
        for index in range(1, pool.size + 1):
            key = machine_host(args.owner, pool.name, index)
            name = machine_name(args.owner, pool.name, index)
            machine_id, address = args.cloud.machine(
                MachineArgs(key, name, pool, labels, image), parent=self
            )
            self.machines.append(DeclaredMachine(machine_id, name, address, self.arch))
        self.listing = [m.output() for m in self.machines]
        self.register_outputs({"arch": self.arch, "machines": self.listing})

    def output(self, pool: PoolConfig) -> dict[str, Any]:
        """The pool as the stack's ``pools`` output shows it."""
        return {
            "machineType": pool.machine_type,
            "location": pool.location,
            "size": pool.size,
            "market": pool.market.value,
            "arch": self.arch,
            "machines": self.listing,
        }


def deploy(deployment: BaseDeployment) -> list[Pool]:
    """Declare the deployment's shared infrastructure and pools; export the stack outputs.

    Outputs: ``provider``, ``owner``, ``env`` (the runtime's settings, ``settings.*_env``,
    with every pool's settings as ``ORCA_POOLS``)
    and ``pools`` (per pool: type, location, size, arch and machines with id, name,
    address and arch).
    """
    components = importlib.import_module(f"{CLOUDS[deployment.provider]}.components")
    built: Built = components.build(deployment)
    env = pulumi.Output.from_input(built.env).apply(deployment.runtime_env)
    reapers = reapers_provider()
    pools = [
        Pool(
            pool.name,
            PoolArgs(pool, deployment.owner, built.cloud, deployment.provider, built.env, reapers),
        )
        for pool in deployment.pools
    ]
    pulumi.export("provider", deployment.provider)
    pulumi.export("owner", deployment.owner)
    pulumi.export("env", env)
    pulumi.export(
        "pools", {p.name: c.output(p) for p, c in zip(deployment.pools, pools, strict=True)}
    )
    return pools
