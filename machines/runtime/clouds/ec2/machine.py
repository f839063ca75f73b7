"""A pool's EC2 machine, written once: what the runtime's RunInstances and the stack's
``aws.ec2.Instance`` both launch for the pool's options
(``machines.runtime.clouds.ec2.options.Ec2Options``).

``launch`` turns (pool, options, image) into one ``Launch``; ``run_instances`` renders it as
RunInstances' arguments, and the program (``machines.program.clouds.ec2.components``) renders the
same ``Launch`` as the Instance's ``root_block_device``, ``metadata_options``,
``instance_initiated_shutdown_behavior`` and tags. ``tests/ec2/test_ec2_options.py`` and
the engine test read both machines back with boto3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from machines.runtime.clouds.ec2.options import Ec2Options, Metadata, RootVolume
from machines.runtime.clouds.ec2.settings import NAME_TAG

RUNTIME_SHUTDOWN = "terminate"
"""What a shutdown from inside does to a machine the runtime made, whatever the pool says:
a stopped instance keeps billing its volume, and no one would ever start it again."""


@dataclass(frozen=True)
class Launch:
    """One pool machine's launch options, for either layer to render."""

    root_device: str
    """The AMI's root device name (``/dev/sda1`` on Ubuntu): the mapping that replaces it."""
    volume: RootVolume
    metadata: Metadata
    shutdown: str
    tags: dict[str, str]


def launch(
    options: Ec2Options, name: str, labels: dict[str, str], root_device: str, *, runtime: bool
) -> Launch:
    """The launch of one machine named ``name`` with the orca ``labels``: the pool's extra
    tags first, so the orca tags and ``Name`` always win; the runtime's machines terminate on
    shutdown, the stack's do what the pool says."""
    return Launch(
        root_device=root_device,
        volume=options.root_volume,
        metadata=options.metadata,
        shutdown=RUNTIME_SHUTDOWN if runtime else options.shutdown,
        tags={**options.tags, NAME_TAG: name, **labels},
    )


def ebs(volume: RootVolume) -> dict[str, Any]:
    """The root volume as EC2's ``Ebs`` mapping; unset IOPS and throughput are EC2's
    defaults for the type (gp3: 3000 and 125)."""
    mapping: dict[str, Any] = {
        "VolumeSize": volume.size,
        "VolumeType": volume.type,
        "Encrypted": volume.encrypted,
        "DeleteOnTermination": True,
    }
    if volume.iops is not None:
        mapping["Iops"] = volume.iops
    if volume.throughput is not None:
        mapping["Throughput"] = volume.throughput
    if volume.kms_key:
        mapping["KmsKeyId"] = volume.kms_key
    return mapping


def metadata_options(metadata: Metadata) -> dict[str, Any]:
    """EC2's ``MetadataOptions``: the endpoint on, tokens as the pool says, its hop limit."""
    return {
        "HttpEndpoint": "enabled",
        "HttpTokens": metadata.tokens,
        "HttpPutResponseHopLimit": metadata.hop_limit,
    }


def run_instances(chosen: Launch) -> dict[str, Any]:
    """RunInstances' arguments for the launch's options (the caller adds image, type,
    subnet, group, profile, market, user data and token)."""
    tag_list = [{"Key": key, "Value": value} for key, value in chosen.tags.items()]
    return {
        "BlockDeviceMappings": [{"DeviceName": chosen.root_device, "Ebs": ebs(chosen.volume)}],
        "MetadataOptions": metadata_options(chosen.metadata),
        "InstanceInitiatedShutdownBehavior": chosen.shutdown,
        "TagSpecifications": [
            {"ResourceType": kind, "Tags": tag_list} for kind in ("instance", "volume")
        ],
    }


def too_small(volume: RootVolume, image_id: str, image_size: int | None) -> str:
    """Why the root volume cannot hold the AMI's snapshot; empty when it can."""
    if image_size is None or volume.size >= image_size:
        return ""
    return (
        f"rootVolume.size is {volume.size} GiB, smaller than the {image_size} GiB snapshot of "
        f"AMI {image_id}: set rootVolume.size to {image_size} or more"
    )
