"""``create``: one instance per name, owner and pool, tagged at launch, idempotent per call."""

from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

import pytest
from botocore.exceptions import ConnectionClosedError, EndpointConnectionError, ReadTimeoutError
from botocore.stub import Stubber

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.models import Created, MachineSpec
from testkit.moto_server import (
    NEW_AMD64,
    NEW_ARM64,
    OLD_AMD64,
    PROFILE,
    ZONES,
    World,
    count_calls,
    launch_tagged,
)
from testkit.specs import ec2_spec

SECRET = "#cloud-config\nwrite_files: [{path: /etc/token, content: s3cr3t-t0ken}]\n"


def launched(aws: Any) -> list[dict[str, Any]]:
    """Every instance the emulator has, whoever made it."""
    return [i for r in aws.describe_instances()["Reservations"] for i in r["Instances"]]


def tags_of(resource: dict[str, Any]) -> dict[str, str]:
    return {tag["Key"]: tag["Value"] for tag in resource.get("Tags", [])}


def run_params(provider: Ec2Provider) -> list[dict[str, Any]]:
    """The parameters of each RunInstances call the provider makes from now on."""
    seen: list[dict[str, Any]] = []

    def keep(params: dict[str, Any], **_: Any) -> None:
        seen.append(dict(params))

    provider._client.meta.events.register("before-parameter-build.ec2.RunInstances", keep)
    return seen


def sent_tokens(provider: Ec2Provider) -> list[str]:
    """The ClientToken of each RunInstances request as sent, retries included."""
    tokens: list[str] = []

    def keep(request: Any, **_: Any) -> None:
        body = request.body.decode() if isinstance(request.body, bytes) else request.body
        tokens.append(parse_qs(body)["ClientToken"][0])

    provider._client.meta.events.register("before-send.ec2.RunInstances", keep)
    return tokens


def fail_to_send(provider: Ec2Provider, error: Callable[..., Exception], times: int) -> None:
    """The next ``times`` RunInstances requests fail with botocore's ``error`` as they are
    sent: ``EndpointConnectionError`` (it never connected) or ``ConnectionClosedError``
    (the connection dropped); either way EC2 never saw them."""
    left = [times]

    def fail(request: Any, **_: Any) -> None:
        if left[0] > 0:
            left[0] -= 1
            raise error(endpoint_url=request.url)

    provider._client.meta.events.register_last("before-send.ec2.RunInstances", fail)


def test_create_asks_for_exactly_one_instance(ec2_provider: Ec2Provider) -> None:
    params = run_params(ec2_provider)

    ec2_provider.create(ec2_spec("ci-1"))

    assert [(p["MinCount"], p["MaxCount"]) for p in params] == [(1, 1)]


def test_instance_and_volume_are_tagged_at_launch_in_one_call(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    calls = count_calls(ec2_provider._client)

    ec2_provider.create(ec2_spec("ci-1"))

    expected = {"Name": "ci-1", "orca": "pool", "orca-pool": "ci", "orca-owner": "prod"}
    [instance] = launched(aws)
    assert tags_of(instance) == expected
    volumes = aws.describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [instance["InstanceId"]]}]
    )["Volumes"]
    assert volumes
    assert all(tags_of(volume) == expected for volume in volumes)
    assert calls["RunInstances"] == 1
    assert "CreateTags" not in calls


def test_without_an_owner_there_is_no_owner_tag(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any
) -> None:
    make_ec2_provider("").create(ec2_spec("ci-1"))

    [instance] = launched(aws)
    assert tags_of(instance) == {"Name": "ci-1", "orca": "pool", "orca-pool": "ci"}


@pytest.mark.parametrize("zone", ZONES)
def test_instance_is_in_the_subnet_of_its_location_with_group_and_profile(
    ec2_provider: Ec2Provider, aws: Any, ec2_world: World, zone: str
) -> None:
    ec2_provider.create(ec2_spec("ci-1", location=zone))

    [instance] = launched(aws)
    assert instance["SubnetId"] == ec2_world.subnets[zone]
    assert instance["Placement"]["AvailabilityZone"] == zone
    assert [g["GroupId"] for g in instance["SecurityGroups"]] == [ec2_world.security_group]
    assert instance["IamInstanceProfile"]["Arn"] == ec2_world.profile_arn


def test_a_profile_given_by_name_is_passed_by_name(ec2_provider: Ec2Provider) -> None:
    params = run_params(ec2_provider)

    ec2_provider.create(ec2_spec("ci-1"))

    assert params[0]["IamInstanceProfile"] == {"Name": PROFILE}


def test_a_profile_given_by_arn_is_passed_by_arn(
    make_ec2_provider: Callable[[str], Ec2Provider],
    ec2_world: World,
    aws: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORCA_EC2_INSTANCE_PROFILE", ec2_world.profile_arn)
    provider = make_ec2_provider("prod")
    params = run_params(provider)

    assert provider.create(ec2_spec("ci-1")).ok

    assert params[0]["IamInstanceProfile"] == {"Arn": ec2_world.profile_arn}
    assert launched(aws)[0]["IamInstanceProfile"]["Arn"] == ec2_world.profile_arn


@pytest.mark.parametrize(
    ("machine_type", "image"), [("t3.micro", NEW_AMD64), ("t4g.micro", NEW_ARM64)]
)
def test_default_image_is_canonicals_newest_ubuntu_for_the_types_arch(
    ec2_provider: Ec2Provider, aws: Any, machine_type: str, image: str
) -> None:
    ec2_provider.create(ec2_spec("ci-1", machine_type=machine_type))

    assert launched(aws)[0]["ImageId"] == image


def test_images_are_looked_up_once_per_architecture(ec2_provider: Ec2Provider) -> None:
    calls = count_calls(ec2_provider._client)

    for index, machine_type in enumerate(["t3.micro", "t3.small", "t4g.micro", "t4g.small"]):
        assert ec2_provider.create(ec2_spec(f"ci-{index}", machine_type=machine_type)).ok

    assert calls["DescribeImages"] == 2


def test_an_explicit_image_is_read_once_by_id_never_searched_for(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EC2_IMAGE", OLD_AMD64)
    provider = make_ec2_provider("prod")
    calls = count_calls(provider._client)

    assert provider.create(ec2_spec("ci-1")).ok

    assert launched(aws)[0]["ImageId"] == OLD_AMD64
    assert provider.image == OLD_AMD64
    # Its root device, snapshot size and architecture: the root volume replaces the AMI's.
    assert provider.create(ec2_spec("ci-2")).ok
    assert dict(calls) == {
        "DescribeInstanceTypes": 1,
        "DescribeImages": 1,
        "DescribeInstances": 2,
        "RunInstances": 2,
    }


def test_user_data_reaches_the_instance(ec2_provider: Ec2Provider, aws: Any) -> None:
    ec2_provider.create(ec2_spec("ci-1", user_data=SECRET))

    [instance] = launched(aws)
    answer = aws.describe_instance_attribute(
        InstanceId=instance["InstanceId"], Attribute="userData"
    )
    assert base64.b64decode(answer["UserData"]["Value"]).decode() == SECRET


def test_without_user_data_none_is_sent(ec2_provider: Ec2Provider) -> None:
    params = run_params(ec2_provider)

    ec2_provider.create(ec2_spec("ci-1"))

    assert "UserData" not in params[0]


def test_an_unknown_location_fails_naming_the_known_ones(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    created = ec2_provider.create(ec2_spec("ci-1", location="eu-west-1a"))

    assert created.failed
    assert "'eu-west-1a'" in created.reason
    assert all(zone in created.reason for zone in ZONES)
    assert launched(aws) == []


def test_a_second_create_of_a_name_launches_once(ec2_provider: Ec2Provider, aws: Any) -> None:
    """The same machine comes back (tests/contract); EC2 is asked to launch it once."""
    calls = count_calls(ec2_provider._client)

    ec2_provider.create(ec2_spec("ci-1"))
    ec2_provider.create(ec2_spec("ci-1"))

    assert calls["RunInstances"] == 1
    assert len(launched(aws)) == 1


def test_a_name_taken_by_another_owner_fails_saying_so(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any
) -> None:
    theirs = make_ec2_provider("team-a").create(ec2_spec("ci-1"))

    created = make_ec2_provider("team-b").create(ec2_spec("ci-1"))

    assert created.failed
    assert theirs.machine is not None
    assert theirs.machine.id in created.reason
    assert "'team-a'" in created.reason
    assert len(launched(aws)) == 1


def test_a_name_taken_in_another_pool_fails(ec2_provider: Ec2Provider, aws: Any) -> None:
    ec2_provider.create(ec2_spec("ci-1", pool="gpu"))

    created = ec2_provider.create(ec2_spec("ci-1", pool="ci"))

    assert created.failed
    assert "'gpu'" in created.reason
    assert len(launched(aws)) == 1


def test_a_name_taken_by_an_instance_outside_orca_fails(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    launch_tagged(aws, "ci-1", {})

    created = ec2_provider.create(ec2_spec("ci-1"))

    assert created.failed
    assert "not an orca pool machine" in created.reason


def test_a_terminated_instance_frees_its_name(ec2_provider: Ec2Provider, aws: Any) -> None:
    first = ec2_provider.create(ec2_spec("ci-1"))
    assert first.machine is not None
    ec2_provider.delete(first.machine.id)

    second = ec2_provider.create(ec2_spec("ci-1"))

    assert second.ok
    assert second.machine is not None
    assert second.machine.id != first.machine.id


def test_an_instance_terminated_elsewhere_frees_its_name(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    first = ec2_provider.create(ec2_spec("ci-1"))
    assert first.machine is not None
    aws.terminate_instances(InstanceIds=[first.machine.id])

    second = ec2_provider.create(ec2_spec("ci-1"))

    assert second.machine is not None
    assert second.machine.id != first.machine.id


def test_concurrent_creates_of_one_name_launch_once(ec2_provider: Ec2Provider, aws: Any) -> None:
    start = threading.Barrier(8)

    def create(_: int) -> Created:
        start.wait()
        return ec2_provider.create(ec2_spec("ci-1"))

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(create, range(8)))

    assert all(outcome.ok for outcome in outcomes)
    assert len({outcome.machine.id for outcome in outcomes if outcome.machine}) == 1
    assert len(launched(aws)) == 1


def test_concurrent_creates_of_different_names_all_launch(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(lambda i: ec2_provider.create(ec2_spec(f"ci-{i}")), range(6)))

    assert all(outcome.ok for outcome in outcomes)
    assert len(launched(aws)) == 6


def test_every_create_sends_a_new_client_token(ec2_provider: Ec2Provider) -> None:
    tokens = sent_tokens(ec2_provider)

    for index in range(3):
        ec2_provider.create(ec2_spec(f"ci-{index}"))

    assert len(set(tokens)) == 3
    assert all(uuid.UUID(token).version == 4 for token in tokens)


def test_a_launch_that_never_left_is_sent_again_with_the_same_token(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", "1")
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "4")
    provider = make_ec2_provider("prod")
    tokens = sent_tokens(provider)
    calls = count_calls(provider._client)
    fail_to_send(provider, EndpointConnectionError, times=1)

    assert provider.create(ec2_spec("ci-1")).ok

    assert len(tokens) == 2
    assert tokens[0] == tokens[1]
    assert calls["RunInstances"] == 2
    assert len(launched(aws)) == 1


def test_a_lost_answer_finds_the_launched_instance_instead_of_launching_again(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    def lose_answer(**_: Any) -> None:
        raise ReadTimeoutError(endpoint_url="lost")

    ec2_provider._client.meta.events.register("after-call.ec2.RunInstances", lose_answer)

    created = ec2_provider.create(ec2_spec("ci-1"))

    assert created.ok
    [instance] = launched(aws)
    assert created.machine is not None
    assert created.machine.id == instance["InstanceId"]


def test_a_dropped_launch_is_looked_for_then_sent_again_with_its_token(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", "1")
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "1")
    provider = make_ec2_provider("prod")
    tokens = sent_tokens(provider)
    calls = count_calls(provider._client)
    fail_to_send(provider, ConnectionClosedError, times=1)

    assert provider.create(ec2_spec("ci-1")).ok

    assert calls["RunInstances"] == 2
    assert len(tokens) == 2
    assert tokens[0] == tokens[1]
    assert len(launched(aws)) == 1


def test_no_answer_at_all_fails_saying_the_instance_may_exist(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", "1")
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "1")
    provider = make_ec2_provider("prod")
    fail_to_send(provider, ConnectionClosedError, times=100)

    created = provider.create(ec2_spec("ci-1"))

    assert created.failed
    assert "may have launched" in created.reason
    assert "machines('ci') will show it" in created.reason
    assert "creating 'ci-1' again returns it" in created.reason
    assert launched(aws) == []


def test_a_launch_ec2_does_not_list_yet_is_not_launched_twice(ec2_provider: Ec2Provider) -> None:
    """EC2's lists lag behind RunInstances: the provider remembers what it launched."""
    first = ec2_provider.create(ec2_spec("ci-1"))
    assert first.machine is not None

    with Stubber(ec2_provider._client) as stub:
        stub.add_response("describe_instances", {"Reservations": []})
        stub.add_client_error("describe_instances", "InvalidInstanceID.NotFound", "not yet")
        second = ec2_provider.create(ec2_spec("ci-1"))
        stub.assert_no_pending_responses()

    assert second.machine == first.machine


def _stubbed_launch(provider: Ec2Provider, code: str, message: str, user_data: str) -> Created:
    """``create`` where EC2 answers RunInstances with an error moto never gives."""
    provider.arch("t3.micro")  # moto's answer, before the stub takes over
    image = {
        "ImageId": OLD_AMD64,
        "CreationDate": "2024-04-23T08:00:00.000Z",
        "Architecture": "x86_64",
        "RootDeviceName": "/dev/sda1",
    }
    with Stubber(provider._client) as stub:
        stub.add_response("describe_instances", {"Reservations": []})
        stub.add_response("describe_images", {"Images": [image]})
        stub.add_client_error("run_instances", code, message)
        created = provider.create(ec2_spec("ci-1", user_data=user_data))
        stub.assert_no_pending_responses()
    return created


@pytest.mark.parametrize(
    "code", ["InsufficientInstanceCapacity", "InsufficientHostCapacity", "Unsupported"]
)
def test_no_capacity_is_no_stock(
    make_ec2_provider: Callable[[str], Ec2Provider], monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    monkeypatch.setenv("ORCA_EC2_IMAGE", OLD_AMD64)

    created = _stubbed_launch(make_ec2_provider("prod"), code, "We have no capacity.", SECRET)

    assert created.no_stock
    assert code in created.reason
    assert "s3cr3t" not in created.reason


def test_another_refusal_fails_with_ec2s_code_and_message(
    make_ec2_provider: Callable[[str], Ec2Provider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EC2_IMAGE", OLD_AMD64)
    message = "You have requested more vCPU capacity than your current vCPU limit of 32 allows."

    created = _stubbed_launch(make_ec2_provider("prod"), "VcpuLimitExceeded", message, SECRET)

    assert created.failed
    assert "VcpuLimitExceeded" in created.reason
    assert message in created.reason
    assert "RunInstances" in created.reason
    assert "s3cr3t" not in created.reason


def test_an_image_ec2_does_not_have_fails_naming_the_setting_before_any_launch(
    make_ec2_provider: Callable[[str], Ec2Provider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EC2_IMAGE", "ami-00000000000000000")
    provider = make_ec2_provider("prod")
    calls = count_calls(provider._client)

    created = provider.create(ec2_spec("ci-1"))

    assert created.failed
    assert "ORCA_EC2_IMAGE ami-00000000000000000 is no AMI" in created.reason
    assert calls["RunInstances"] == 0


def test_an_invalid_spec_never_reaches_ec2() -> None:
    with pytest.raises(ValueError, match="host name"):
        MachineSpec(name="CI_1", machine_type="t3.micro", location=ZONES[0], pool="ci")


@pytest.mark.parametrize(
    ("machine_type", "location"),
    [("t4g.micro", ZONES[0]), ("t3.micro", ZONES[1]), ("t4g.micro", ZONES[1])],
)
def test_a_name_held_by_an_instance_of_another_type_or_zone_is_not_adopted(
    ec2_provider: Ec2Provider, aws: Any, machine_type: str, location: str
) -> None:
    first = ec2_provider.create(ec2_spec("ci-1"))
    assert first.machine is not None

    asked = ec2_provider.create(ec2_spec("ci-1", machine_type=machine_type, location=location))

    assert asked.failed
    assert first.machine.id in asked.reason
    assert f"not the {machine_type} in {location}" in asked.reason
    assert len(launched(aws)) == 1
