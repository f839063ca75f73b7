"""The pool contract on EC2, through tags, against moto's server: the stack's instances
(``orca-managed-by=pulumi``) are told apart and never deleted, a pool's max holds, and reaping
a pool takes only the autoscaler's instances of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.errors import StackMachineError
from machines.runtime.models import Status
from machines.runtime.reaping import reap
from testkit.moto_server import count_calls, launch_tagged
from testkit.specs import ec2_spec as spec

STACK_TAGS = {"orca": "pool", "orca-pool": "ci", "orca-owner": "prod", "orca-managed-by": "pulumi"}


def test_the_stacks_instances_are_told_apart_by_their_tag(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    provider = ec2_provider
    launch_tagged(aws, "prod-ci-1", STACK_TAGS)
    assert provider.create(spec("ci-a1")).ok

    kinds = {m.name: m.managed_by for m in provider.machines("ci")}

    assert kinds == {"prod-ci-1": "pulumi", "ci-a1": ""}


def test_delete_refuses_a_stack_instance_with_what_to_do(
    ec2_provider: Ec2Provider, aws: Any
) -> None:
    provider = ec2_provider
    kept = launch_tagged(aws, "prod-ci-1", STACK_TAGS)
    calls = count_calls(provider._client)

    with pytest.raises(StackMachineError) as refused:
        provider.delete(kept)

    message = str(refused.value)
    assert kept in message
    assert "prod-ci-1" in message
    assert "the stack of owner 'prod'" in message
    assert "size of pool ci" in message
    assert set(calls) == {"DescribeInstances"}
    state = aws.describe_instances(InstanceIds=[kept])["Reservations"][0]["Instances"][0]
    assert state["State"]["Name"] == "running"


def test_a_pools_max_counts_both_kinds_and_not_the_deleting(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=3")
    provider = make_ec2_provider("prod")
    launch_tagged(aws, "prod-ci-1", STACK_TAGS)
    first = provider.create(spec("ci-a1"))
    assert first.machine is not None
    assert provider.create(spec("ci-a2")).ok

    refused = provider.create(spec("ci-a3"))

    assert refused.failed
    assert "pool ci has 3 machines" in refused.reason
    assert "the max the stack of owner 'prod' sets" in refused.reason
    assert provider.delete(first.machine.id)
    assert provider.create(spec("ci-a3")).ok


def test_creates_within_a_fresh_listing_ask_for_no_other(
    make_ec2_provider: Callable[[str], Ec2Provider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=20")
    provider = make_ec2_provider("prod")
    provider.machines("ci")
    calls = count_calls(provider._client)

    assert provider.create(spec("ci-a1")).ok
    assert provider.create(spec("ci-a2")).ok

    assert calls["DescribeInstances"] == 2, "one name lookup per create, none to count"


def test_reaping_takes_only_the_autoscalers_instances_of_the_owner_and_pool(
    make_ec2_provider: Callable[[str], Ec2Provider], aws: Any
) -> None:
    prod = make_ec2_provider("prod")
    kept = launch_tagged(aws, "prod-ci-1", STACK_TAGS)
    assert prod.create(spec("ci-a1")).ok
    assert prod.create(spec("gpu-a1", pool="gpu")).ok
    assert make_ec2_provider("staging").create(spec("ci-b1")).ok

    reaped = reap(prod, "ci", poll=0.1)

    assert [m.name for m in reaped] == ["ci-a1"]
    left = {m.name: m.status for m in prod.machines("ci")}
    assert left["prod-ci-1"] != Status.DELETING
    assert left.get("ci-a1", Status.DELETING) == Status.DELETING
    assert [m.name for m in prod.machines("gpu")] == ["gpu-a1"]
    assert [m.name for m in make_ec2_provider("staging").machines("ci")] == ["ci-b1"]
    assert aws.describe_instances(InstanceIds=[kept])["Reservations"]
