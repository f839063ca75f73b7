"""``machines``: every live instance of one pool and owner, and never anyone else's."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber

from machines.runtime.clouds.ec2 import provider as ec2
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.models import Machine, Status
from testkit.moto_server import ZONES, count_calls
from testkit.specs import ec2_spec


def made(provider: Ec2Provider, name: str, pool: str = "ci", location: str = ZONES[0]) -> Machine:
    created = provider.create(ec2_spec(name, pool=pool, location=location))
    assert created.machine is not None
    return created.machine


def names(machines: list[Machine]) -> list[str]:
    return [machine.name for machine in machines]


def test_machines_describes_each_instance_in_the_shared_vocabulary(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    first = made(ec2_provider, "ci-1", location=ZONES[0])
    second = made(ec2_provider, "ci-2", location=ZONES[1])

    listed = ec2_provider.machines("ci")

    assert [m.id for m in listed] == [first.id, second.id]
    for machine, zone in zip(listed, ZONES, strict=True):
        instance = aws.describe_instances(InstanceIds=[machine.id])["Reservations"][0]
        assert machine.status == Status.RUNNING
        assert machine.machine_type == "t3.micro"
        assert machine.location == zone
        assert machine.pool == "ci"
        assert machine.address == instance["Instances"][0]["PrivateIpAddress"]


def test_a_stopped_instance_is_off(ec2_provider: Ec2Provider, aws: Any) -> None:
    machine = made(ec2_provider, "ci-1")
    aws.stop_instances(InstanceIds=[machine.id])

    [listed] = ec2_provider.machines("ci")

    assert listed.status == Status.OFF


def test_machines_reads_every_page(
    ec2_provider: Ec2Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ec2, "MAX_RESULTS", 5)
    for index in range(7):
        made(ec2_provider, f"ci-{index}")
    calls = count_calls(ec2_provider._client)

    listed = ec2_provider.machines("ci")

    assert names(listed) == [f"ci-{index}" for index in range(7)]
    assert calls["DescribeInstances"] == 2


def test_terminated_instances_are_not_listed(ec2_provider: Ec2Provider) -> None:
    gone = made(ec2_provider, "ci-1")
    made(ec2_provider, "ci-2")
    ec2_provider.delete(gone.id)

    assert names(ec2_provider.machines("ci")) == ["ci-2"]


def _instance(state: str = "running", **fields: Any) -> dict[str, Any]:
    tags = {"Name": "ci-1", "orca": "pool", "orca-pool": "ci", "orca-owner": "prod"}
    return {
        "InstanceId": "i-0123456789abcdef0",
        "InstanceType": "t3.micro",
        "State": {"Code": 16, "Name": state},
        "Placement": {"AvailabilityZone": ZONES[0]},
        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
        **fields,
    }


def _listed(provider: Ec2Provider, *instances: dict[str, Any]) -> list[Machine]:
    """``machines`` when EC2 answers with exactly these instances."""
    with Stubber(provider._client) as stub:
        stub.add_response("describe_instances", {"Reservations": [{"Instances": list(instances)}]})
        return provider.machines("ci")


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("pending", Status.STARTING),
        ("running", Status.RUNNING),
        ("stopping", Status.STOPPING),
        ("stopped", Status.OFF),
        ("shutting-down", Status.DELETING),
        ("terminated", Status.DELETING),
        ("rebooting", Status.UNKNOWN),
    ],
)
def test_ec2_states_map_onto_the_shared_statuses(
    ec2_provider: Ec2Provider, state: str, status: Status
) -> None:
    [machine] = _listed(ec2_provider, _instance(state))

    assert machine.status == status


@pytest.mark.parametrize(
    ("addresses", "address"),
    [
        ({"PublicIpAddress": "203.0.113.7", "PrivateIpAddress": "10.0.1.7"}, "203.0.113.7"),
        ({"PrivateIpAddress": "10.0.1.7"}, "10.0.1.7"),
        ({}, ""),
    ],
)
def test_address_is_public_else_private_else_empty(
    ec2_provider: Ec2Provider, addresses: dict[str, str], address: str
) -> None:
    [machine] = _listed(ec2_provider, _instance(**addresses))

    assert machine.address == address


def test_another_owners_instance_is_dropped_even_if_ec2_returns_it(
    ec2_provider: Ec2Provider,
) -> None:
    theirs = _instance(InstanceId="i-0fedcba9876543210")
    theirs["Tags"] = [t for t in theirs["Tags"] if t["Key"] != "orca-owner"]
    theirs["Tags"].append({"Key": "orca-owner", "Value": "staging"})

    assert [m.id for m in _listed(ec2_provider, _instance(), theirs)] == ["i-0123456789abcdef0"]
