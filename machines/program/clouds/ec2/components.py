"""EC2's part of the program: its shared security group and instance profile, the queue of
EC2's notices where pools buy spot, its instances."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from machines.program.clouds.ec2.config import Ec2Deployment, InstanceProfile, SecurityGroup
from machines.program.components import (
    SHARED_DELETE_TIMEOUT,
    Built,
    MachineArgs,
    named,
    secret_user_data,
    shared_options,
)
from machines.program.config.models import PoolConfig
from machines.runtime.arch import preferred_arch
from machines.runtime.clouds.ec2.events import QUEUE_RETENTION, RULES, queue_name, rule_name
from machines.runtime.clouds.ec2.machine import ebs, launch, metadata_options
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.clouds.ec2.settings import (
    SPOT_INSTANCE_TYPE,
    SPOT_INTERRUPTION_BEHAVIOR,
    UBUNTU_OWNER,
    ec2_arch,
    ubuntu_ami_name,
)
from machines.runtime.labels import owner_labels
from machines.runtime.models import Market, machine_address

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


class Ec2Cloud:
    """EC2 instances like the runtime's, from the same launch (``clouds.ec2.machine``):
    the pool's AMI (by id, by owner and name filter, else Ubuntu 24.04 for the type's
    architecture or the configured image), the location's subnet, the security group and
    instance profile, the root volume, metadata options and shutdown behaviour.
    """

    def __init__(
        self,
        subnets: dict[str, str],
        shared: Ec2Shared,
        image: str,
    ) -> None:
        self._subnets = subnets
        self._shared = shared
        self._security_group_id = shared.security_group_id
        self._instance_profile = shared.instance_profile
        self._image = image

    def shared(self, pool: PoolConfig) -> list[pulumi.Resource]:
        return list(self._shared.made)

    def shared_names(self, pool: PoolConfig) -> list[str]:
        return [*self._shared.names, f"subnet:{self._subnets[pool.location]}"]

    def arch(self, pool: PoolConfig, parent: pulumi.Resource) -> pulumi.Output[str]:
        instance_type = aws.ec2.get_instance_type_output(
            instance_type=pool.machine_type, opts=pulumi.InvokeOptions(parent=parent)
        )
        return instance_type.supported_architectures.apply(preferred_arch)

    def _by_id(self, pool: PoolConfig) -> str:
        """The AMI id the pool names (its ``ec2.image``, else the deployment's), or empty
        when it is looked up by a name filter."""
        options = pool.options_of(Ec2Options)
        if options.image:
            return options.image
        return "" if options.image_name else self._image

    def image(
        self, pool: PoolConfig, arch: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[str]:
        by_id = self._by_id(pool)
        if by_id:
            return pulumi.Output.from_input(by_id)
        options = pool.options_of(Ec2Options)

        def newest(docker: str) -> pulumi.Output[str]:
            ami = aws.ec2.get_ami_output(
                owners=[options.image_owner or UBUNTU_OWNER],
                most_recent=True,
                filters=[
                    aws.ec2.GetAmiFilterArgs(
                        name="name", values=[options.image_name or ubuntu_ami_name(docker)]
                    ),
                    aws.ec2.GetAmiFilterArgs(name="architecture", values=[ec2_arch(docker)]),
                ],
                opts=pulumi.InvokeOptions(parent=parent),
            )
            return ami.id

        return arch.apply(newest)

    def machine(
        self, machine: MachineArgs, parent: pulumi.Resource
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        key, name, pool, labels = machine.key, machine.name, machine.pool, machine.labels
        chosen = launch(pool.options_of(Ec2Options), name, labels, "", runtime=False)
        # A newer image of a filter must not replace running instances; an AMI by id may.
        keep_image = [] if self._by_id(pool) else ["ami"]
        instance = aws.ec2.Instance(
            key,
            ami=machine.image,
            instance_type=pool.machine_type,
            subnet_id=self._subnets[pool.location],
            vpc_security_group_ids=[self._security_group_id],
            iam_instance_profile=self._instance_profile,
            user_data=secret_user_data(pool),
            instance_market_options=_market_options(pool),
            root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(
                **{EBS_ARGS[k]: v for k, v in ebs(chosen.volume).items()}
            ),
            metadata_options=aws.ec2.InstanceMetadataOptionsArgs(
                **{METADATA_ARGS[k]: v for k, v in metadata_options(chosen.metadata).items()}
            ),
            instance_initiated_shutdown_behavior=chosen.shutdown,
            tags=chosen.tags,
            volume_tags=chosen.tags,
            opts=named(parent, ignore_changes=keep_image),
        )
        address = pulumi.Output.all(instance.public_ip, instance.private_ip).apply(
            lambda ips: machine_address(*ips)
        )
        return instance.id, address


EBS_ARGS = {
    "VolumeSize": "volume_size",
    "VolumeType": "volume_type",
    "Iops": "iops",
    "Throughput": "throughput",
    "Encrypted": "encrypted",
    "KmsKeyId": "kms_key_id",
    "DeleteOnTermination": "delete_on_termination",
}
"""RunInstances' ``Ebs`` keys as the Instance's ``rootBlockDevice`` arguments."""

METADATA_ARGS = {
    "HttpEndpoint": "http_endpoint",
    "HttpTokens": "http_tokens",
    "HttpPutResponseHopLimit": "http_put_response_hop_limit",
}
"""RunInstances' ``MetadataOptions`` keys as the Instance's ``metadataOptions`` arguments."""


def _market_options(pool: PoolConfig) -> aws.ec2.InstanceInstanceMarketOptionsArgs | None:
    """A kept machine of a pool that buys spot as the runtime launches one: a one-time spot
    request that terminates on interruption (``Market.kept``: spot pools only)."""
    if pool.market.kept != Market.SPOT:
        return None
    return aws.ec2.InstanceInstanceMarketOptionsArgs(
        market_type=Market.SPOT.value,
        spot_options=aws.ec2.InstanceInstanceMarketOptionsSpotOptionsArgs(
            spot_instance_type=SPOT_INSTANCE_TYPE,
            instance_interruption_behavior=SPOT_INTERRUPTION_BEHAVIOR,
        ),
    )


@dataclass(frozen=True)
class Ec2SharedArgs:
    """What an EC2 deployment shares: the deployment's security group and profile settings."""

    deployment: Ec2Deployment


class Ec2Shared(pulumi.ComponentResource):
    """The security group and instance profile an EC2 deployment's instances use, and, when
    a pool buys spot, the queue of EC2's notices (``clouds.ec2.events``).

    Created ones are named ``<owner>-<name>`` and tagged with the owner only; existing ones
    are used as given (a group's id, a profile's name).
    """

    security_group_id: pulumi.Output[str]
    instance_profile: pulumi.Output[str]
    events_queue: pulumi.Output[str]

    def __init__(
        self, name: str, args: Ec2SharedArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(EC2_SHARED_TYPE, name, None, opts)
        d = args.deployment
        self.made: list[pulumi.Resource] = []
        """The security group, role, its policies and the profile the stack creates: every
        instance uses them."""
        self.names = [
            f"securityGroup:{_group_name(d)}",
            f"instanceProfile:{d.instance_profile_name()}",
        ]
        """The security group (its id, or the name of the one created) and the profile."""
        self.security_group_id = self._security_group(d)
        self.instance_profile = self._instance_profile(d)
        self.events_queue = self._events(d)
        self.register_outputs(
            {
                "securityGroup": self.security_group_id,
                "instanceProfile": self.instance_profile,
                "eventsQueue": self.events_queue,
            }
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
            opts=shared_options(self),
        )
        self.made.append(created)
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
            opts=shared_options(self),
        )
        self.made.append(role)
        timeouts = pulumi.CustomTimeouts(delete=SHARED_DELETE_TIMEOUT)
        for arn in profile.policies:
            attached = aws.iam.RolePolicyAttachment(
                f"{name}-{arn.rsplit('/', 1)[-1]}",
                role=role.name,
                policy_arn=arn,
                opts=pulumi.ResourceOptions(parent=self, custom_timeouts=timeouts),
            )
            self.made.append(attached)
        created = aws.iam.InstanceProfile(
            name, name=name, role=role.name, tags=self._tags(d, name), opts=shared_options(self)
        )
        self.made.append(created)
        return created.name

    def _events(self, d: Ec2Deployment) -> pulumi.Output[str]:
        """Where any pool buys spot on EC2 (a spanning pool's spot places on EC2 too): an
        SQS queue named by owner, an EventBridge rule per kind of EC2's notice sending to it
        (``events.RULES``: spot interruption warnings, rebalance recommendations, state
        changes to a going state, AWS Health's scheduled changes of EC2) and the queue
        policy that lets EventBridge send, from those rules only; the queue's URL, the
        runtime's ``ORCA_EC2_EVENTS_QUEUE``. Else nothing, and an empty URL."""
        if all(pool.market == Market.ON_DEMAND for pool in d.pools):
            return pulumi.Output.from_input("")
        name = queue_name(d.owner)
        queue = aws.sqs.Queue(
            name,
            name=name,
            message_retention_seconds=QUEUE_RETENTION,
            sqs_managed_sse_enabled=True,
            tags=self._tags(d, name),
            opts=shared_options(self),
        )
        self.made.append(queue)
        rules = []
        for kind, pattern in RULES.items():
            ruled = rule_name(d.owner, kind)
            rule = aws.cloudwatch.EventRule(
                ruled,
                name=ruled,
                description=f"EC2's notices ({kind}) for the orca pool machines of {d.owner}",
                event_pattern=json.dumps(pattern),
                tags=self._tags(d, ruled),
                opts=shared_options(self),
            )
            target = aws.cloudwatch.EventTarget(
                ruled,
                rule=rule.name,
                target_id=QUEUE_TARGET,
                arn=queue.arn,
                opts=pulumi.ResourceOptions(parent=self),
            )
            rules.append(rule)
            self.made += [rule, target]
        policy = aws.sqs.QueuePolicy(
            name,
            queue_url=queue.url,
            policy=pulumi.Output.all(queue.arn, *(r.arn for r in rules)).apply(
                lambda arns: json.dumps(_events_policy(arns[0], arns[1:]))
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.made.append(policy)
        return queue.url


QUEUE_TARGET = "machine-events"
"""The id of the queue among each rule's targets."""


def _events_policy(queue_arn: str, rule_arns: list[str]) -> dict[str, object]:
    """The queue's policy: EventBridge may send to it for these rules, and nothing else may
    (an SQS target needs it: the EventBridge User Guide, "Permissions for Amazon SQS")."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "EventBridgeSendsEC2Notices",
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": sorted(rule_arns)}},
            }
        ],
    }


def _group_name(d: Ec2Deployment) -> str:
    """The security group as the pools' reapers name it: the id given, or the created one's
    name."""
    group = d.security_group
    return d.owned(group.name) if isinstance(group, SecurityGroup) else str(group)


def build(deployment: Ec2Deployment) -> Built:
    """The deployment's security group and profile (and the queue of EC2's notices where
    pools buy spot), and a cloud that makes its instances."""
    shared = Ec2Shared("shared", Ec2SharedArgs(deployment))
    cloud = Ec2Cloud(deployment.subnets, shared, deployment.image)
    env = pulumi.Output.all(shared.security_group_id, shared.events_queue).apply(
        lambda made: deployment.env(made[0], events_queue=made[1])
    )
    return Built(cloud, env)
