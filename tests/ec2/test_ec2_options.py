"""A pool's EC2 options (``ORCA_POOLS``) on the runtime's machines, read back with boto3 from
moto's server: the root volume, IMDSv2 and its hop limit, shutdown behaviour, the AMI and
extra tags; and bad options refused before RunInstances."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.errors import SettingsError
from machines.runtime.provider import Provider
from testkit.moto_server import CANONICAL, NEW_AMD64, NEW_ARM64, OLD_AMD64, count_calls
from testkit.specs import ec2_spec


def pools(monkeypatch: pytest.MonkeyPatch, **ec2: Any) -> None:
    """``ORCA_POOLS`` with pool ``ci`` of these EC2 options."""
    monkeypatch.setenv("ORCA_POOLS", json.dumps([{"name": "ci", "ec2": ec2}]))


def instance(aws: Any, instance_id: str) -> dict[str, Any]:
    [found] = [
        i
        for r in aws.describe_instances(InstanceIds=[instance_id])["Reservations"]
        for i in r["Instances"]
    ]
    return dict(found)


def root_volume(aws: Any, instance_id: str) -> dict[str, Any]:
    [volume] = aws.describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [instance_id]}]
    )["Volumes"]
    return dict(volume)


def shutdown_behaviour(aws: Any, instance_id: str) -> str:
    answer = aws.describe_instance_attribute(
        InstanceId=instance_id, Attribute="instanceInitiatedShutdownBehavior"
    )
    return str(answer["InstanceInitiatedShutdownBehavior"]["Value"])


def made(provider: Ec2Provider, **fields: str) -> str:
    created = provider.create(ec2_spec("ci-1", **fields))
    assert created.machine is not None, created.reason
    return created.machine.id


def test_the_defaults_are_a_ci_workers(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any
) -> None:
    machine_id = made(make_ec2_provider("prod"))

    volume = root_volume(aws, machine_id)
    assert (volume["Size"], volume["VolumeType"], volume["Encrypted"]) == (30, "gp3", True)
    assert volume["Attachments"][0]["Device"] == "/dev/sda1"
    [mapping] = instance(aws, machine_id)["BlockDeviceMappings"]
    assert mapping["Ebs"]["DeleteOnTermination"] is True
    metadata = instance(aws, machine_id)["MetadataOptions"]
    assert (metadata["HttpTokens"], metadata["HttpPutResponseHopLimit"]) == ("required", 1)
    assert metadata["HttpEndpoint"] == "enabled"
    assert shutdown_behaviour(aws, machine_id) == "terminate"
    assert instance(aws, machine_id)["ImageId"] == NEW_AMD64


def test_every_option_reaches_the_instance(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools(
        monkeypatch,
        rootVolume={
            "size": 80,
            "type": "gp3",
            "iops": 4000,
            "throughput": 250,
            "kmsKey": "alias/ci",
        },
        metadata={"hopLimit": 2},
        shutdown="stop",
        image=OLD_AMD64,
        tags={"team": "ci", "cost-centre": "42"},
    )
    machine_id = made(make_ec2_provider("prod"))

    volume = root_volume(aws, machine_id)
    assert (volume["Size"], volume["VolumeType"], volume["Encrypted"]) == (80, "gp3", True)
    assert volume["KmsKeyId"] == "alias/ci"
    found = instance(aws, machine_id)
    assert found["MetadataOptions"]["HttpPutResponseHopLimit"] == 2
    assert found["MetadataOptions"]["HttpTokens"] == "required"
    assert found["ImageId"] == OLD_AMD64
    tags = {t["Key"]: t["Value"] for t in found["Tags"]}
    assert tags["team"] == "ci"
    assert tags["cost-centre"] == "42"
    assert tags["orca-pool"] == "ci"
    # The runtime's machines terminate on shutdown whatever the pool says of the stack's.
    assert shutdown_behaviour(aws, machine_id) == "terminate"


def test_iops_and_throughput_are_sent(
    make_ec2_provider: Callable[[str], Ec2Provider], monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto keeps no volume's IOPS or throughput: what RunInstances carried is checked."""
    pools(monkeypatch, rootVolume={"size": 40, "iops": 4000, "throughput": 250})
    provider = make_ec2_provider("prod")
    sent: list[dict[str, Any]] = []
    provider._client.meta.events.register(
        "provide-client-params.ec2.RunInstances", lambda params, **_: sent.append(dict(params))
    )

    made(provider)

    [params] = sent
    assert params["BlockDeviceMappings"] == [
        {
            "DeviceName": "/dev/sda1",
            "Ebs": {
                "VolumeSize": 40,
                "VolumeType": "gp3",
                "Encrypted": True,
                "DeleteOnTermination": True,
                "Iops": 4000,
                "Throughput": 250,
            },
        }
    ]
    assert params["InstanceInitiatedShutdownBehavior"] == "terminate"


def test_an_ami_by_owner_and_name_is_the_newest_of_the_types_architecture(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools(
        monkeypatch,
        imageOwner=CANONICAL,
        imageName="ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-*",
    )
    provider = make_ec2_provider("prod")

    arm = made(provider, machine_type="t4g.micro")

    assert instance(aws, arm)["ImageId"] == NEW_ARM64


def test_extra_tags_never_override_the_orca_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    pools(monkeypatch, tags={"orca-owner": "someone"})

    own = "ORCA_POOLS item 1: ec2: .*orca-owner is orca's own tag"
    with pytest.raises(SettingsError, match=own):
        Provider.of("ec2", "prod")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"rootVolume": {"size": 10}},
            "pool ci: ec2.rootVolume.size is 10 GiB, smaller than the 15 GiB snapshot of AMI",
        ),
        ({"image": "ami-0123456789abcdef0"}, "pool ci: ec2.image ami-0123456789abcdef0 is no AMI"),
        (
            {"image": NEW_ARM64},
            f"pool ci: ec2.image {NEW_ARM64} is a arm64 AMI, but t3.micro is amd64",
        ),
        (
            {"imageOwner": CANONICAL, "imageName": "no-such-image-*"},
            "pool ci: ec2.imageOwner 099720109477 has no AMI named 'no-such-image-*' for amd64",
        ),
    ],
)
def test_a_bad_option_fails_naming_the_key_before_any_launch(
    make_ec2_provider: Callable[[str], Ec2Provider],
    aws: Any,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
    expected: str,
) -> None:
    """moto's images say their root snapshot has 15 GiB (Ubuntu's real ones have 8)."""
    pools(monkeypatch, **options)
    provider = make_ec2_provider("prod")
    calls = count_calls(provider._client)

    created = provider.create(ec2_spec("ci-1"))

    assert created.failed
    assert expected in created.reason
    assert calls["RunInstances"] == 0
    assert aws.describe_instances()["Reservations"] == []
