"""``delete``: terminate this owner's pool instance; never touch anyone else's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.errors import ForeignMachineError, InvalidMachineIdError
from testkit.moto_server import count_calls, launch_tagged
from testkit.specs import ec2_spec


def state_of(aws: Any, instance_id: str) -> str:
    reservation = aws.describe_instances(InstanceIds=[instance_id])["Reservations"][0]
    state: str = reservation["Instances"][0]["State"]["Name"]
    return state


def launched_by(provider: Ec2Provider, name: str = "ci-1") -> str:
    created = provider.create(ec2_spec(name))
    assert created.machine is not None
    return created.machine.id


def test_delete_terminates_the_instance(ec2_provider: Ec2Provider, aws: Any) -> None:
    instance_id = launched_by(ec2_provider)

    assert ec2_provider.delete(instance_id) is True

    assert state_of(aws, instance_id) == "terminated"


def test_deleting_again_is_true_without_terminating_again(ec2_provider: Ec2Provider) -> None:
    instance_id = launched_by(ec2_provider)
    ec2_provider.delete(instance_id)
    calls = count_calls(ec2_provider._client)

    assert ec2_provider.delete(instance_id) is True

    assert "TerminateInstances" not in calls


def test_an_unknown_instance_is_already_gone(ec2_provider: Ec2Provider) -> None:
    assert ec2_provider.delete("i-0123456789abcdef0") is True
    assert ec2_provider.delete("i-01234567") is True


@pytest.mark.parametrize(
    "bad", ["ci-1", "i-xyz", "i-0123456789ABCDEF0", "sg-0123456789abcdef0", ""]
)
def test_a_malformed_id_raises_naming_it(ec2_provider: Ec2Provider, bad: str) -> None:
    calls = count_calls(ec2_provider._client)

    with pytest.raises(InvalidMachineIdError, match="is not an EC2 instance id") as raised:
        ec2_provider.delete(bad)

    assert repr(bad) in str(raised.value)
    assert not calls


def test_an_instance_outside_orca_is_refused_and_left_running(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    instance_id = launch_tagged(aws, "db-1", {})

    with pytest.raises(ForeignMachineError, match=f"{instance_id} has no orca=pool tag"):
        ec2_provider.delete(instance_id)

    assert state_of(aws, instance_id) == "running"


@pytest.mark.parametrize(
    ("maker", "deleter", "refusal"),
    [
        pytest.param("staging", "prod", "{id} belongs to owner 'staging'", id="owned-by-another"),
        pytest.param("prod", "", "belongs to owner 'prod'", id="owned-and-deleter-has-no-owner"),
        pytest.param("", "prod", "has no orca-owner tag", id="without-an-owner-tag"),
    ],
)
def test_an_instance_of_another_owner_is_refused_and_left_running(
    make_ec2_provider: Callable[[str], Ec2Provider],
    aws: Any,
    maker: str,
    deleter: str,
    refusal: str,
) -> None:
    instance_id = launched_by(make_ec2_provider(maker))

    with pytest.raises(ForeignMachineError, match=refusal.format(id=instance_id)):
        make_ec2_provider(deleter).delete(instance_id)

    assert state_of(aws, instance_id) == "running"


@pytest.mark.parametrize(
    "machine_id", [123, None, "i-" + "".join(chr(0xFF10 + d) for d in range(8))]
)
def test_an_id_that_is_not_an_instance_id_string_is_the_packages_error(
    ec2_provider: Ec2Provider, machine_id: Any
) -> None:
    with pytest.raises(InvalidMachineIdError, match="not an EC2 instance id"):
        ec2_provider.delete(machine_id)
