"""Hetzner's part of the program: its shared SSH keys and firewall, and its servers.

A ``serverType`` change is applied in place by the official plugin (power off,
``change_type``, power on), and Hetzner refuses a type of another architecture, after the
plugin has powered the server off (terraform-provider-hcloud #853): such a change is refused
here while the program is evaluated, before the engine touches a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_hcloud as hcloud

from machines.arch import docker_arch
from machines.labels import MANAGED_BY_LABEL, MANAGED_BY_PULUMI, owner_labels, pool_selector
from machines.models import machine_address
from machines.program.components import Built, named, secret_user_data
from machines.program.config.models import PoolConfig
from machines.program.hetzner.config import Firewall, HetznerDeployment

HETZNER_SHARED_TYPE = "orca:machines:HetznerShared"


class ArchitectureChangeError(Exception):
    """A pool's new server type runs another architecture than its kept servers."""


class HetznerCloud:
    """Hetzner servers like the runtime's: image by name, keys by name, firewall by id."""

    def __init__(
        self,
        archs: pulumi.Output[dict[str, str]],
        image: str,
        ssh_keys: Sequence[pulumi.Input[str]],
        firewall_ids: pulumi.Input[Sequence[pulumi.Input[int]]] | None,
    ) -> None:
        self._archs = archs
        self._image = image
        self._ssh_keys = ssh_keys
        self._firewall_ids = firewall_ids

    def arch(self, pool: PoolConfig, parent: pulumi.Resource) -> pulumi.Output[str]:
        return self._archs.apply(lambda archs: archs[pool.name])

    def image(self, arch: pulumi.Output[str], parent: pulumi.Resource) -> pulumi.Output[str]:
        """The image by name; it waits for ``arch``, so no server is declared before the
        pool's architecture check has passed."""
        return arch.apply(lambda _: self._image)

    def machine(
        self,
        key: str,
        name: str,
        pool: PoolConfig,
        labels: dict[str, str],
        image: pulumi.Output[str],
        *,
        parent: pulumi.Resource,
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        server = hcloud.Server(
            key,
            name=name,
            server_type=pool.machine_type,
            location=pool.location,
            image=image,
            ssh_keys=self._ssh_keys,
            firewall_ids=self._firewall_ids,
            user_data=secret_user_data(pool),
            labels=labels,
            opts=named(parent),
        )
        address = pulumi.Output.all(server.ipv4_address, server.ipv6_network).apply(
            lambda ips: machine_address(*ips)
        )
        return server.id, address


def _type_arch(machine_type: str) -> pulumi.Output[str]:
    return hcloud.get_server_type_output(name=machine_type).architecture.apply(docker_arch)


def pool_archs(deployment: HetznerDeployment) -> pulumi.Output[dict[str, str]]:
    """Each pool's architecture, known only once no pool's type change would move kept
    servers to another architecture: everything the deployment declares waits for it."""

    def checked(pool: PoolConfig) -> pulumi.Output[str]:
        selector = (
            f"{pool_selector(pool.name, deployment.owner)},{MANAGED_BY_LABEL}={MANAGED_BY_PULUMI}"
        )
        kept = hcloud.get_servers_output(with_selector=selector)
        others = kept.servers.apply(
            lambda servers: sorted({s.server_type for s in servers} - {pool.machine_type})
        )
        return pulumi.Output.all(_type_arch(pool.machine_type), others).apply(
            lambda values: _same_arch(pool, str(values[0]), [str(t) for t in values[1]])
        )

    names = [pool.name for pool in deployment.pools]
    return pulumi.Output.all(*(checked(pool) for pool in deployment.pools)).apply(
        lambda archs: dict(zip(names, (str(a) for a in archs), strict=True))
    )


def _same_arch(pool: PoolConfig, new_arch: str, old_types: list[str]) -> pulumi.Output[str]:
    old_archs = [_type_arch(t) for t in old_types]
    return pulumi.Output.all(*old_archs).apply(
        lambda archs: _refuse_other_arch(pool, new_arch, dict(zip(old_types, archs, strict=True)))
    )


def _refuse_other_arch(pool: PoolConfig, new_arch: str, old: dict[str, str]) -> str:
    """``new_arch``, unless a kept server's type runs another architecture."""
    other = {t: a for t, a in old.items() if a != new_arch}
    if other:
        was = ", ".join(f"{t} ({a})" for t, a in sorted(other.items()))
        raise ArchitectureChangeError(
            f"pool {pool.name}: machineType {pool.machine_type} ({new_arch}) runs another "
            f"architecture than the pool's servers of {was}; Hetzner cannot change a server's "
            "architecture in place (the plugin would power it off and leave it off), so this "
            "change is refused before anything is touched: keep a type of the same "
            "architecture, or add a new pool of the new type and remove this one"
        )
    return new_arch


@dataclass(frozen=True)
class HetznerSharedArgs:
    """What a Hetzner deployment shares: the deployment's keys and firewall settings, made
    once ``ready`` is known (the pools' architecture check)."""

    deployment: HetznerDeployment
    ready: pulumi.Output[object]


class HetznerShared(pulumi.ComponentResource):
    """The SSH keys and firewall a Hetzner deployment's servers use.

    Created ones are named ``<owner>-<name>`` and labelled with the owner only; existing
    ones are used by name.
    """

    ssh_keys: list[pulumi.Output[str]]
    firewall_ids: pulumi.Output[list[int]] | None

    def __init__(
        self, name: str, args: HetznerSharedArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(HETZNER_SHARED_TYPE, name, None, opts)
        d = args.deployment
        labels = args.ready.apply(lambda _: owner_labels(d.owner))
        self.ssh_keys = []
        for key, key_name in zip(d.ssh_keys, d.ssh_key_names(), strict=True):
            if isinstance(key, str):
                self.ssh_keys.append(pulumi.Output.from_input(key_name))
                continue
            created = hcloud.SshKey(
                key_name,
                name=key_name,
                public_key=key.public_key,
                labels=labels,
                opts=named(self),
            )
            self.ssh_keys.append(created.name)
        self.firewall_ids = self._firewall(d.firewall, d.firewall_name(), labels)
        self.register_outputs(
            {
                "sshKeys": self.ssh_keys,
                "firewall": d.firewall_name(),
                "firewallIds": self.firewall_ids,
            }
        )

    def _firewall(
        self, firewall: str | Firewall | None, name: str, labels: pulumi.Output[dict[str, str]]
    ) -> pulumi.Output[list[int]] | None:
        if firewall is None:
            return None
        if isinstance(firewall, str):
            found = hcloud.get_firewall_output(name=name, opts=pulumi.InvokeOptions(parent=self))
            return found.id.apply(lambda i: [int(i)])
        rules = [
            hcloud.FirewallRuleArgs(
                direction=rule.direction,
                protocol=rule.protocol,
                port=rule.port or None,
                source_ips=list(rule.source_ips) or None,
                destination_ips=list(rule.destination_ips) or None,
                description=rule.description or None,
            )
            for rule in firewall.rules
        ]
        created = hcloud.Firewall(name, name=name, rules=rules, labels=labels, opts=named(self))
        return created.id.apply(lambda i: [int(i)])


def build(deployment: HetznerDeployment) -> Built:
    """The deployment's shared keys and firewall, and a cloud that makes its servers."""
    archs = pool_archs(deployment)
    shared = HetznerShared("shared", HetznerSharedArgs(deployment, archs))
    cloud = HetznerCloud(archs, deployment.image, shared.ssh_keys, shared.firewall_ids)
    return Built(cloud, deployment.env())
