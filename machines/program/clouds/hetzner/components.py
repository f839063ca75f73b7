"""Hetzner's part of the program: its shared SSH keys and firewall, and its servers.

A ``serverType`` change is applied in place by the official plugin (power off,
``change_type``, power on), and Hetzner refuses a type of another architecture, after the
plugin has powered the server off (terraform-provider-hcloud #853): such a change is refused
here while the program is evaluated, before the engine touches a server.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_hcloud as hcloud

from machines.program.clouds.hetzner.config import Firewall, HetznerDeployment
from machines.program.components import Built, MachineArgs, named, secret_user_data, shared_options
from machines.program.config.models import PoolConfig
from machines.runtime.arch import docker_arch
from machines.runtime.clouds.hetzner.machine import AVAILABLE, Server, shape
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.clouds.hetzner.settings import hetzner_arch
from machines.runtime.labels import MANAGED_BY_LABEL, MANAGED_BY_PULUMI, owner_labels, pool_selector
from machines.runtime.models import machine_address

HETZNER_SHARED_TYPE = "orca:machines:HetznerShared"


class ArchitectureChangeError(Exception):
    """A pool's new server type runs another architecture than its kept servers."""


class HetznerCloud:
    """Hetzner servers like the runtime's, from the same shape (``clouds.hetzner.machine``):
    image by name, id or newest snapshot of a selector, keys by name, firewall by id, public
    addresses, network and placement group as the pool's options say."""

    def __init__(
        self,
        archs: pulumi.Output[dict[str, str]],
        deployment: HetznerDeployment,
        shared: HetznerShared,
    ) -> None:
        self._archs = archs
        self._deployment = deployment
        self._shared = shared

    def arch(self, pool: PoolConfig, parent: pulumi.Resource) -> pulumi.Output[str]:
        return self._archs.apply(lambda archs: archs[pool.name])

    def _shape(self, pool: PoolConfig) -> Server:
        runtime = self._deployment.runtime_pool(pool).options_of(HetznerOptions)
        return shape(runtime, self._deployment.image, "image", {})

    def image(
        self, pool: PoolConfig, arch: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[str]:
        """The pool's image: by name (the plugin picks it for the server type's
        architecture), by id, or the newest snapshot of the selector for the pool's
        architecture (``getImage`` with ``withSelector``, ``mostRecent``,
        ``withArchitecture``). It waits for ``arch``, so no server is declared before the
        pool's architecture check has passed."""
        choice = self._shape(pool).image

        def chosen(docker: str) -> pulumi.Output[str]:
            if choice.selector:
                found = hcloud.get_image_output(
                    with_selector=choice.selector,
                    most_recent=True,
                    with_architecture=hetzner_arch(docker),
                    with_statuses=[AVAILABLE],
                    opts=pulumi.InvokeOptions(parent=parent),
                )
                return found.id.apply(str)
            return pulumi.Output.from_input(str(choice.id) if choice.id else choice.name)

        return arch.apply(chosen)

    def machine(
        self, machine: MachineArgs, parent: pulumi.Resource
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        key, name, pool, labels = machine.key, machine.name, machine.pool, machine.labels
        chosen = self._shape(pool)
        network = self._shared.network(chosen.network)
        group = self._shared.placement_group(chosen.placement_group)
        server = hcloud.Server(
            key,
            name=name,
            server_type=pool.machine_type,
            location=pool.location,
            image=machine.image,
            ssh_keys=self._shared.ssh_keys,
            firewall_ids=self._shared.firewall_ids,
            user_data=secret_user_data(pool),
            labels={**chosen.labels, **labels},
            public_nets=(
                None
                if chosen.default_public_net
                else [
                    hcloud.ServerPublicNetArgs(ipv4_enabled=chosen.ipv4, ipv6_enabled=chosen.ipv6)
                ]
            ),
            networks=(
                None if network is None else [hcloud.ServerNetworkArgs(network_id=network.id)]
            ),
            placement_group_id=group,
            # The plugin cannot take a running server out of a placement group (it refuses,
            # and the update fails): a server joins or leaves one by being made anew.
            opts=named(
                parent,
                depends_on=[] if network is None else network.ready,
                replace_on_changes=["placementGroupId"],
            ),
        )
        address = pulumi.Output.all(
            server.ipv4_address, server.ipv6_network, server.networks
        ).apply(lambda ips: machine_address(ips[0], ips[1], _private_ip(ips[2])))
        return server.id, address

    def shared(self, pool: PoolConfig) -> list[pulumi.Resource]:
        chosen = self._shape(pool)
        return self._shared.used_by(chosen.network, chosen.placement_group)

    def shared_names(self, pool: PoolConfig) -> list[str]:
        chosen = self._shape(pool)
        d = self._deployment
        names = [f"sshKey:{name}" for name in d.ssh_key_names()]
        if d.firewall is not None:
            names.append(f"firewall:{d.firewall_name()}")
        if chosen.network:
            names.append(f"network:{chosen.network}")
        if chosen.placement_group:
            names.append(f"placementGroup:{chosen.placement_group}")
        return names


def _private_ip(networks: object) -> str | None:
    """The first network's address of a server's ``networks`` output, if any."""
    if not isinstance(networks, list) or not networks:
        return None
    first = networks[0]
    ip = first.get("ip") if isinstance(first, dict) else getattr(first, "ip", None)
    return str(ip) if ip else None


@dataclass(frozen=True)
class JoinedNetwork:
    """A network the servers join: its id, and what must exist before they do (a network
    the stack creates needs its subnet first); ``made``: the network and subnet the stack
    creates, none for an existing one."""

    id: pulumi.Output[int]
    ready: list[pulumi.Resource]
    made: tuple[pulumi.Resource, ...] = ()


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
        self._made: list[pulumi.Resource] = []
        """The keys and firewall the stack creates: every server uses them."""
        for key, key_name in zip(d.ssh_keys, d.ssh_key_names(), strict=True):
            if isinstance(key, str):
                self.ssh_keys.append(pulumi.Output.from_input(key_name))
                continue
            created = hcloud.SshKey(
                key_name,
                name=key_name,
                public_key=key.public_key,
                labels=labels,
                opts=shared_options(self),
            )
            self._made.append(created)
            self.ssh_keys.append(created.name)
        self.firewall_ids = self._firewall(d.firewall, d.firewall_name(), labels)
        self._networks: dict[str, JoinedNetwork] = {}
        for net in d.networks:
            network_name = d.owned(net.name)
            made = hcloud.Network(
                network_name,
                name=network_name,
                ip_range=net.ip_range,
                labels=labels,
                opts=shared_options(self),
            )
            subnet = hcloud.NetworkSubnet(
                f"{network_name}-subnet",
                network_id=made.id.apply(int),
                type="cloud",
                network_zone=net.zone,
                ip_range=net.subnet,
                opts=shared_options(self),
            )
            self._networks[network_name] = JoinedNetwork(
                made.id.apply(int), [subnet], (made, subnet)
            )
        self._groups: dict[str, pulumi.Output[int]] = {}
        self._made_groups: dict[str, pulumi.Resource] = {}
        for group in d.placement_groups:
            group_name = d.owned(group.name)
            spread = hcloud.PlacementGroup(
                group_name, name=group_name, type="spread", labels=labels, opts=shared_options(self)
            )
            self._groups[group_name] = spread.id.apply(int)
            self._made_groups[group_name] = spread
        self.register_outputs(
            {
                "sshKeys": self.ssh_keys,
                "firewall": d.firewall_name(),
                "firewallIds": self.firewall_ids,
                "networks": {name: n.id for name, n in self._networks.items()},
                "placementGroups": self._groups,
            }
        )

    def network(self, name: str) -> JoinedNetwork | None:
        """The network of that cloud name: the stack's own, else an existing one looked up
        by name (``getNetwork``); None for none."""
        if not name:
            return None
        if name not in self._networks:
            found = hcloud.get_network_output(name=name, opts=pulumi.InvokeOptions(parent=self))
            self._networks[name] = JoinedNetwork(found.id.apply(int), [])
        return self._networks[name]

    def used_by(self, network: str, placement_group: str) -> list[pulumi.Resource]:
        """What the stack creates that servers in ``network`` and ``placement_group`` (cloud
        names, empty for none) use: the keys, the firewall, that network and its subnet, that
        group."""
        used = list(self._made)
        joined = self.network(network)
        if joined is not None:
            used.extend(joined.made)
        if placement_group in self._made_groups:
            used.append(self._made_groups[placement_group])
        return used

    def placement_group(self, name: str) -> pulumi.Output[int] | None:
        """The placement group of that cloud name: the stack's own, else an existing one
        (``getPlacementGroup``); None for none."""
        if not name:
            return None
        if name not in self._groups:
            found = hcloud.get_placement_group_output(
                name=name, opts=pulumi.InvokeOptions(parent=self)
            )
            self._groups[name] = found.id.apply(int)
        return self._groups[name]

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
        created = hcloud.Firewall(
            name, name=name, rules=rules, labels=labels, opts=shared_options(self)
        )
        self._made.append(created)
        return created.id.apply(lambda i: [int(i)])


def build(deployment: HetznerDeployment) -> Built:
    """The deployment's shared keys and firewall, and a cloud that makes its servers."""
    archs = pool_archs(deployment)
    shared = HetznerShared("shared", HetznerSharedArgs(deployment, archs))
    cloud = HetznerCloud(archs, deployment, shared)
    return Built(cloud, deployment.env())
