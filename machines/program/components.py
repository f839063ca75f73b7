"""Pulumi component resources: a deployment's pools and the shared infrastructure they use.

A pool's machines are made exactly as the runtime's ``Provider.create`` makes them (same
image, keys, firewall or security group, user data, labels and tags), so ``machines(pool)``
sees a stack's machines like the autoscaler's own. The only module of the package that
imports Pulumi: ``import machines`` stays free of it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pulumi
import pulumi_aws as aws
import pulumi_hcloud as hcloud
from pulumi.runtime.config import CONFIG

from machines.arch import AMD64, ARM64, UBUNTU_OWNER, docker_arch, ubuntu_ami_name
from machines.labels import machine_name, owner_labels, pool_labels
from machines.models import machine_address
from machines.program.deployment import (
    Deployment,
    Ec2Deployment,
    Firewall,
    HetznerDeployment,
    InstanceProfile,
    Pool,
    SecurityGroup,
    StackConfig,
)

POOL_TYPE = "orca:machines:Pool"
HETZNER_SHARED_TYPE = "orca:machines:HetznerShared"
EC2_SHARED_TYPE = "orca:machines:Ec2Shared"

EC2_ASSUME_ROLE = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "ec2.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ],
}


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


class Cloud(Protocol):
    """How one cloud makes a pool's machines, given what the deployment shares."""

    def arch(self, machine_type: str, parent: pulumi.Resource) -> pulumi.Output[str]:
        """Docker's name of the machine type's architecture."""
        ...

    def image(self, arch: pulumi.Output[str], parent: pulumi.Resource) -> pulumi.Output[str]:
        """The image the pool's machines boot, for the pool's architecture."""
        ...

    def machine(
        self,
        name: str,
        pool: Pool,
        labels: dict[str, str],
        image: pulumi.Output[str],
        parent: pulumi.Resource,
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        """Declare one machine; return its id and address."""
        ...


def _secret_user_data(pool: Pool) -> pulumi.Output[str] | None:
    user_data = pool.user_data.get_secret_value()
    return pulumi.Output.secret(user_data) if user_data else None


def _named(parent: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
    """Options of a resource with a fixed cloud name: the old one goes before a replacement."""
    return pulumi.ResourceOptions(parent=parent, delete_before_replace=True, **options)


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
        name: str,
        pool: Pool,
        labels: dict[str, str],
        image: pulumi.Output[str],
        parent: pulumi.Resource,
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        server = hcloud.Server(
            name,
            name=name,
            server_type=pool.machine_type,
            location=pool.location,
            image=image,
            ssh_keys=self._ssh_keys,
            firewall_ids=self._firewall_ids,
            user_data=_secret_user_data(pool),
            labels=labels,
            opts=_named(parent),
        )
        address = pulumi.Output.all(server.ipv4_address, server.ipv6_network).apply(
            lambda ips: machine_address(*ips)
        )
        return server.id, address


def _ec2_arch(supported: Sequence[str]) -> str:
    """Docker's name of an instance type's architecture, preferring 64-bit ones."""
    archs = [docker_arch(a) for a in supported]
    return next((a for a in archs if a in (AMD64, ARM64)), next((a for a in archs if a), ""))


class Ec2Cloud:
    """EC2 instances like the runtime's: Ubuntu 24.04 for the type's architecture (or the
    configured image), the location's subnet, the security group and instance profile.
    """

    def __init__(
        self,
        subnets: dict[str, str],
        security_group_id: pulumi.Input[str],
        instance_profile: pulumi.Input[str],
        image: str,
    ) -> None:
        self._subnets = subnets
        self._security_group_id = security_group_id
        self._instance_profile = instance_profile
        self._image = image

    def arch(self, machine_type: str, parent: pulumi.Resource) -> pulumi.Output[str]:
        instance_type = aws.ec2.get_instance_type_output(
            instance_type=machine_type, opts=pulumi.InvokeOptions(parent=parent)
        )
        return instance_type.supported_architectures.apply(_ec2_arch)

    def image(self, arch: pulumi.Output[str], parent: pulumi.Resource) -> pulumi.Output[str]:
        if self._image:
            return pulumi.Output.from_input(self._image)

        def newest_ubuntu(name: str) -> pulumi.Output[str]:
            ami = aws.ec2.get_ami_output(
                owners=[UBUNTU_OWNER],
                most_recent=True,
                filters=[aws.ec2.GetAmiFilterArgs(name="name", values=[ubuntu_ami_name(name)])],
                opts=pulumi.InvokeOptions(parent=parent),
            )
            return ami.id

        return arch.apply(newest_ubuntu)

    def machine(
        self,
        name: str,
        pool: Pool,
        labels: dict[str, str],
        image: pulumi.Output[str],
        parent: pulumi.Resource,
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        tags = {"Name": name, **labels}
        # A newer Ubuntu image must not replace running instances; a configured one may.
        keep_image = [] if self._image else ["ami"]
        instance = aws.ec2.Instance(
            name,
            ami=image,
            instance_type=pool.machine_type,
            subnet_id=self._subnets[pool.location],
            vpc_security_group_ids=[self._security_group_id],
            iam_instance_profile=self._instance_profile,
            user_data=_secret_user_data(pool),
            tags=tags,
            volume_tags=tags,
            opts=_named(parent, ignore_changes=keep_image),
        )
        address = pulumi.Output.all(instance.public_ip, instance.private_ip).apply(
            lambda ips: machine_address(*ips)
        )
        return instance.id, address


@dataclass(frozen=True)
class MachinePoolArgs:
    """A pool component's inputs: the pool, its owner and how its cloud makes machines."""

    pool: Pool
    owner: str
    cloud: Cloud


class MachinePool(pulumi.ComponentResource):
    """A pool: ``size`` machines named ``<owner>-<pool>-<n>``, n from 1.

    Names depend on the index only, so a new size adds or removes machines at the end and
    leaves the others alone.
    """

    arch: pulumi.Output[str]
    machines: list[DeclaredMachine]
    listing: list[pulumi.Output[dict[str, str]]]

    def __init__(
        self, name: str, args: MachinePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(POOL_TYPE, name, None, opts)
        pool = args.pool
        labels = pool_labels(pool.name, args.owner)
        self.arch = args.cloud.arch(pool.machine_type, self)
        image = args.cloud.image(self.arch, self)
        self.machines = []
        for index in range(1, pool.size + 1):
            host = machine_name(args.owner, pool.name, index)
            machine_id, address = args.cloud.machine(host, pool, labels, image, self)
            self.machines.append(DeclaredMachine(machine_id, host, address, self.arch))
        self.listing = [m.output() for m in self.machines]
        self.register_outputs({"arch": self.arch, "machines": self.listing})

    def output(self, pool: Pool) -> dict[str, Any]:
        """The pool as the stack's ``pools`` output shows it."""
        return {
            "machineType": pool.machine_type,
            "location": pool.location,
            "size": pool.size,
            "arch": self.arch,
            "machines": self.listing,
        }


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
                opts=_named(self),
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
        created = hcloud.Firewall(name, name=name, rules=rules, labels=labels, opts=_named(self))
        return created.id.apply(lambda i: [int(i)])


@dataclass(frozen=True)
class Ec2SharedArgs:
    """What an EC2 deployment shares: the deployment's security group and profile settings."""

    deployment: Ec2Deployment


class Ec2Shared(pulumi.ComponentResource):
    """The security group and instance profile an EC2 deployment's instances use.

    Created ones are named ``<owner>-<name>`` and tagged with the owner only; existing ones
    are used as given (a group's id, a profile's name).
    """

    security_group_id: pulumi.Output[str]
    instance_profile: pulumi.Output[str]

    def __init__(
        self, name: str, args: Ec2SharedArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(EC2_SHARED_TYPE, name, None, opts)
        d = args.deployment
        self.security_group_id = self._security_group(d)
        self.instance_profile = self._instance_profile(d)
        self.register_outputs(
            {"securityGroup": self.security_group_id, "instanceProfile": self.instance_profile}
        )

    def _tags(self, d: Ec2Deployment, name: str) -> dict[str, str]:
        return {"Name": name, **owner_labels(d.owner)}

    def _security_group(self, d: Ec2Deployment) -> pulumi.Output[str]:
        group = d.security_group
        if not isinstance(group, SecurityGroup):
            return pulumi.Output.from_input(group)
        name = d.owned(group.name)
        everywhere = aws.ec2.SecurityGroupEgressArgs(
            protocol="-1",
            from_port=0,
            to_port=0,
            cidr_blocks=["0.0.0.0/0"],
            ipv6_cidr_blocks=["::/0"],
        )
        ingress = []
        for rule in group.ingress:
            from_port, to_port = rule.ports()
            ingress.append(
                aws.ec2.SecurityGroupIngressArgs(
                    protocol=rule.ip_protocol(),
                    from_port=from_port,
                    to_port=to_port,
                    cidr_blocks=[ip for ip in rule.source_ips if ":" not in ip] or None,
                    ipv6_cidr_blocks=[ip for ip in rule.source_ips if ":" in ip] or None,
                    description=rule.description or None,
                )
            )
        created = aws.ec2.SecurityGroup(
            name,
            name=name,
            description=f"orca pool machines of {d.owner}",
            vpc_id=group.vpc,
            ingress=ingress,
            egress=[everywhere],
            tags=self._tags(d, name),
            opts=_named(self),
        )
        return created.id

    def _instance_profile(self, d: Ec2Deployment) -> pulumi.Output[str]:
        profile = d.instance_profile
        if not isinstance(profile, InstanceProfile):
            return pulumi.Output.from_input(profile)
        name = d.instance_profile_name()
        role = aws.iam.Role(
            name,
            name=name,
            assume_role_policy=json.dumps(EC2_ASSUME_ROLE),
            tags=self._tags(d, name),
            opts=_named(self),
        )
        for arn in profile.policies:
            aws.iam.RolePolicyAttachment(
                f"{name}-{arn.rsplit('/', 1)[-1]}",
                role=role.name,
                policy_arn=arn,
                opts=pulumi.ResourceOptions(parent=self),
            )
        created = aws.iam.InstanceProfile(
            name, name=name, role=role.name, tags=self._tags(d, name), opts=_named(self)
        )
        return created.name


def deploy(deployment: Deployment) -> list[MachinePool]:
    """Declare the deployment's shared infrastructure and pools; export the stack outputs.

    Outputs: ``provider``, ``owner``, ``env`` (the runtime's settings, ``settings.*_env``)
    and ``pools`` (per pool: type, location, size, arch and machines with id, name,
    address and arch).
    """
    env: pulumi.Input[dict[str, str]]
    cloud: Cloud
    if isinstance(deployment, HetznerDeployment):
        hetzner = HetznerShared("shared", HetznerSharedArgs(deployment))
        cloud = HetznerCloud(deployment.image, hetzner.ssh_keys, hetzner.firewall_ids)
        env = deployment.env()
    else:
        ec2 = Ec2Shared("shared", Ec2SharedArgs(deployment))
        cloud = Ec2Cloud(
            deployment.subnets, ec2.security_group_id, ec2.instance_profile, deployment.image
        )
        env = ec2.security_group_id.apply(deployment.env)
    pools = [
        MachinePool(pool.name, MachinePoolArgs(pool, deployment.owner, cloud))
        for pool in deployment.pools
    ]
    pulumi.export("provider", deployment.provider)
    pulumi.export("owner", deployment.owner)
    pulumi.export("env", env)
    pulumi.export(
        "pools", {p.name: c.output(p) for p, c in zip(deployment.pools, pools, strict=True)}
    )
    return pools
