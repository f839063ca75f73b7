"""EC2: one DescribeInstances for every pool, own writes at once, offers, stock memory, and
a budget EC2 does not state."""

from __future__ import annotations

import pytest

from machines import MachineSpec, Status
from machines.runtime.labels import pool_labels
from testkit.fault_proxy import Fault
from testkit.moto_server import ZONES, count_calls, launch_tagged
from testkit.specs import OWNER


def spec(name: str, pool: str = "ci", location: str = ZONES[0]) -> MachineSpec:
    return MachineSpec(name=name, machine_type="t3.micro", location=location, pool=pool)


def test_a_tick_over_many_pools_costs_one_describe(clocked_ec2, aws):
    for pool in ("ci", "gpu", "build"):
        for index in range(2):
            launch_tagged(aws, f"prod-{pool}-{index}", pool_labels(pool, OWNER))
    launch_tagged(aws, "other-ci-1", pool_labels("ci", "other"))
    calls = count_calls(clocked_ec2._client)

    sizes = {pool: len(clocked_ec2.machines(pool)) for pool in ("ci", "gpu", "build", "idle")}

    assert sizes == {"ci": 2, "gpu": 2, "build": 2, "idle": 0}
    assert calls["DescribeInstances"] == 1


def test_own_creates_and_deletes_show_at_once(clocked_ec2, aws):
    clocked_ec2.machines("ci")
    made = clocked_ec2.create(spec("prod-ci-a1")).machine
    assert made is not None
    calls = count_calls(clocked_ec2._client)

    assert [m.id for m in clocked_ec2.machines("ci")] == [made.id]
    assert calls["DescribeInstances"] == 0
    assert clocked_ec2.delete(made.id) is True
    assert [m.status for m in clocked_ec2.machines("ci")] == [Status.DELETING]


def test_an_instance_launched_elsewhere_appears_after_the_window(clocked_ec2, aws, clock):
    assert clocked_ec2.machines("ci") == []
    launched = launch_tagged(aws, "prod-ci-a9", pool_labels("ci", OWNER))

    assert clocked_ec2.machines("ci") == []
    clock.advance(5)
    assert [m.id for m in clocked_ec2.machines("ci")] == [launched]


def test_offers_are_the_zones_with_subnets_that_offer_the_type(clocked_ec2):
    calls = count_calls(clocked_ec2._client)

    assert clocked_ec2.offers("t3.micro") == sorted(ZONES)
    assert clocked_ec2.offers("t3.micro") == sorted(ZONES)
    assert calls["DescribeInstanceTypeOfferings"] == 1


def test_offers_are_asked_again_after_their_window(clocked_ec2, clock):
    clocked_ec2.offers("t3.micro")
    calls = count_calls(clocked_ec2._client)
    clock.advance(60)

    clocked_ec2.offers("t3.micro")

    assert calls["DescribeInstanceTypeOfferings"] == 1


def test_no_capacity_is_remembered_for_the_zone_until_it_expires(
    make_clocked_ec2, fault_proxy, clock
):
    provider = make_clocked_ec2(AWS_ENDPOINT_URL=fault_proxy.url, ORCA_CALL_TIMEOUT="0.5")
    fault_proxy.set_faults(Fault("error", "RunInstances", code="InsufficientInstanceCapacity"))
    assert provider.create(spec("prod-ci-a1")).no_stock
    tries = fault_proxy.requests["RunInstances"]
    fault_proxy.set_faults()

    again = provider.create(spec("prod-ci-a1"))
    offered = provider.offers("t3.micro")
    clock.advance(180)

    assert again.no_stock
    assert "again in 180 s" in again.reason
    assert fault_proxy.requests["RunInstances"] == tries
    assert offered == [ZONES[1]]
    assert provider.offers("t3.micro") == sorted(ZONES)
    assert provider.create(spec("prod-ci-a1")).ok


def test_ec2_says_it_states_no_budget(clocked_ec2):
    clocked_ec2.machines("ci")

    budget = clocked_ec2.budget()

    assert not budget.stated
    assert budget.remaining is None
    assert "no request budget" in budget.note
    assert budget.list_window == pytest.approx(5.0)
