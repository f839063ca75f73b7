"""Hetzner's part of the program: its shared SSH keys and firewall, and its servers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_hcloud as hcloud

from machines.arch import docker_arch
from machines.labels import owner_labels
from machines.models import machine_address
from machines.program.components import Built, named, secret_user_data
from machines.program.config import Pool
from machines.program.hetzner.config import Firewall, HetznerDeployment

HETZNER_SHARED_TYPE = "orca:machines:HetznerShared"


class HetznerCloud:
    """Hetzner servers like the runtime's: image by name, keys by name, firewall by id."""

    def __init__(
        self,
        image: str,
        ssh_keys: Sequence[pulumi.Input[str]],
        firewall_ids: pulumi.Input[Sequence[pulumi.Input[int]]] | None,
    ) -> None:
        self._image = image
        self._ssh_keys = ssh_keys
        self._firewall_ids = firewall_ids

    def arch(self, machine_type: str, parent: pulumi.Resource) -> pulumi.Output[str]:
        server_type = hcloud.get_server_type_output(
            name=machine_type, opts=pulumi.InvokeOptions(parent=parent)
        )
        return server_type.architecture.apply(docker_arch)

    def image(self, arch: pulumi.Output[str], parent: pulumi.Resource) -> pulumi.Output[str]:
        return pulumi.Output.from_input(self._image)

    def machine(
        self,
        key: str,
        name: str,
        pool: Pool,
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


@dataclass(frozen=True)
class HetznerSharedArgs:
    """What a Hetzner deployment shares: the deployment's keys and firewall settings."""

    deployment: HetznerDeployment


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
        labels = owner_labels(d.owner)
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
        self, firewall: str | Firewall | None, name: str, labels: dict[str, str]
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
    shared = HetznerShared("shared", HetznerSharedArgs(deployment))
    cloud = HetznerCloud(deployment.image, shared.ssh_keys, shared.firewall_ids)
    return Built(cloud, deployment.env())
