"""A pool's EC2 options (``ORCA_POOLS``) on the runtime's machines, read back with boto3 from
moto's server: the root volume, IMDSv2 and its hop limit, shutdown behaviour, the AMI and
extra tags; and bad options refused before RunInstances."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from machines.runtime.clouds.ec2.client import kms_client
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.errors import SettingsError
from machines.runtime.provider import Provider
from testkit.moto_server import (
    CANONICAL,
    NEW_AMD64,
    NEW_ARM64,
    OLD_AMD64,
    MotoServer,
    client,
    count_calls,
    deny,
)
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
    make_ec2_provider: Callable[[str], Ec2Provider],
    aws: Any,
    moto: MotoServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kms = client(moto.url, "kms")
    kms.create_alias(AliasName="alias/ci", TargetKeyId=kms.create_key()["KeyMetadata"]["KeyId"])
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
            f"pool ci: ec2.image {NEW_ARM64} is an arm64 AMI, but t3.micro is amd64",
        ),
        (
            {"imageOwner": CANONICAL, "imageName": "no-such-image-*"},
            "pool ci: ec2.imageOwner 099720109477 has no AMI named 'no-such-image-*' for amd64",
        ),
        (
            {"rootVolume": {"kmsKey": "alias/nope"}},
            "pool ci: ec2.rootVolume.kmsKey 'alias/nope' is no KMS key in region eu-central-1",
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


@pytest.mark.usefixtures("ec2_world")
@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        ({"type": "st1", "size": 100}, "type st1 cannot be a root volume"),
        ({"type": "sc1", "size": 500}, "type sc1 cannot be a root volume"),
        ({"type": "gp2", "size": 20000}, "size 20000 GiB is outside what a gp2 volume can be"),
        ({"type": "standard", "size": 2000}, "outside what a standard volume can be (1 to 1024"),
        ({"type": "io1", "size": 2, "iops": 100}, "outside what a io1 volume can be (4 to"),
        ({"iops": 1000}, "iops 1000 is outside what a gp3 volume takes (3000 to 16000)"),
        ({"iops": 20000, "size": 100}, "iops 20000 is outside what a gp3 volume takes"),
        ({"iops": 16000, "size": 30}, "more than a 30 GiB gp3 volume takes (500 per GiB"),
        (
            {"type": "io1", "size": 30, "iops": 2000},
            "iops 2000 is more than a 30 GiB io1 volume takes (50 per GiB: at most 1500)",
        ),
        ({"type": "io2", "size": 10, "iops": 6000}, "(500 per GiB: at most 5000)"),
        ({"throughput": 1500}, "throughput 1500 MiB/s is outside what a gp3 volume takes"),
        ({"throughput": 1000}, "throughput 1000 MiB/s is more than 3000 IOPS allow"),
    ],
)
def test_a_root_volume_outside_ec2s_limits_is_refused_when_loaded(
    monkeypatch: pytest.MonkeyPatch, volume: dict[str, Any], expected: str
) -> None:
    """moto's server launches every one of these; EC2 refuses them (``VOLUME_LIMITS``)."""
    pools(monkeypatch, rootVolume=volume)

    with pytest.raises(SettingsError) as refused:
        Provider.of("ec2", "prod")

    assert "ec2.rootVolume" in str(refused.value)
    assert expected in str(refused.value)


def test_a_kms_key_that_cannot_be_described_is_a_warning_and_the_launch_goes_on(
    make_ec2_provider: Callable[[str], Ec2Provider],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A caller without kms:DescribeKey may still launch with the key (EC2 asks KMS itself):
    the runtime says it could not check, and launches."""
    pools(monkeypatch, rootVolume={"kmsKey": "alias/theirs"})
    provider = make_ec2_provider("prod")
    provider._kms = kms_client(provider._settings, provider._credentials)
    deny(provider._kms, "DescribeKey")

    machine_id = made(provider)

    assert machine_id.startswith("i-")
    assert "pool ci: ec2.rootVolume.kmsKey 'alias/theirs' could not be checked (" in caplog.text
    assert "AccessDeniedException" in caplog.text


@pytest.mark.usefixtures("ec2_world")
@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ({"aws:team": "ci"}, "ec2.tags: tag key 'aws:team' starts with aws:, which is AWS's own"),
        ({"team": "a" * 300}, "the value of tag 'team' has 300 characters, more than EC2's 256"),
    ],
)
def test_tags_ec2_refuses_are_refused_when_loaded(
    monkeypatch: pytest.MonkeyPatch, tags: dict[str, str], expected: str
) -> None:
    pools(monkeypatch, tags=tags)

    with pytest.raises(SettingsError) as refused:
        Provider.of("ec2", "prod")

    assert expected in str(refused.value)


def test_a_tag_value_written_as_a_number_is_its_text(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools(monkeypatch, tags={"version": 2})

    found = instance(aws, made(make_ec2_provider("prod")))

    assert {t["Key"]: t["Value"] for t in found["Tags"]}["version"] == "2"
