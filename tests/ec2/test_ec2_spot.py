"""Spot capacity on EC2, against moto's server behind the fault proxy.

Pools of ``spot_world``: ``spot`` buys spot, ``mixed`` spot then on-demand, ``ci`` on-demand.
moto launches a spot instance for RunInstances' InstanceMarketOptions (its lifecycle is
``spot``) but never answers "no spot capacity" nor interrupts one: the fault proxy answers
the first (``no_spot_capacity``), and ``MotoServer.interrupt`` (our addition to moto's
server, ``testkit/moto_spot.py``) ends an instance as an interruption does.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from machines.runtime.clouds.ec2.answers import SPOT_NO_STOCK_CODES
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.models import Ending, Market, Status
from testkit.fault_proxy import Fault, FaultProxy, no_spot_capacity
from testkit.moto_server import MotoServer, World, count_calls, ec2_provider, sent_params
from testkit.specs import OWNER, ec2_spec

ZONE = "eu-central-1a"


@pytest.fixture
def provider(spot_world: World) -> Ec2Provider:
    return ec2_provider(OWNER)


def instance(aws: Any, instance_id: str) -> dict[str, Any]:
    found: dict[str, Any] = aws.describe_instances(InstanceIds=[instance_id])["Reservations"][0][
        "Instances"
    ][0]
    return found


def live(aws: Any) -> list[dict[str, Any]]:
    reservations = aws.describe_instances(
        Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
    )["Reservations"]
    return [i for r in reservations for i in r["Instances"]]


def test_a_spot_pools_machine_is_a_one_time_spot_instance_ending_on_interruption(
    provider: Ec2Provider, aws: Any
) -> None:
    params = sent_params(provider._client, "RunInstances")
    calls = count_calls(provider._client)

    created = provider.create(ec2_spec("spot-1", pool="spot"))

    assert created.machine is not None
    assert created.machine.market == Market.SPOT
    assert [p["InstanceMarketOptions"] for p in params] == [
        {
            "MarketType": "spot",
            "SpotOptions": {
                "SpotInstanceType": "one-time",
                "InstanceInterruptionBehavior": "terminate",
            },
        }
    ]
    made = instance(aws, created.machine.id)
    assert made["InstanceLifecycle"] == "spot"
    assert {t["Key"]: t["Value"] for t in made["Tags"]}["orca-pool"] == "spot"
    assert calls["RunInstances"] == 1


def test_an_on_demand_pools_machine_asks_for_no_market_options(
    provider: Ec2Provider, aws: Any
) -> None:
    params = sent_params(provider._client, "RunInstances")

    created = provider.create(ec2_spec("ci-1"))

    assert created.machine is not None
    assert created.machine.market == Market.ON_DEMAND
    assert "InstanceMarketOptions" not in params[0]
    assert "InstanceLifecycle" not in instance(aws, created.machine.id)


def test_machines_tell_spot_machines_from_on_demand_ones(provider: Ec2Provider) -> None:
    provider.create(ec2_spec("spot-1", pool="spot"))
    provider.create(ec2_spec("ci-1"))

    fresh = ec2_provider(OWNER)

    assert [m.market for m in fresh.machines("spot")] == [Market.SPOT]
    assert [m.market for m in fresh.machines("ci")] == [Market.ON_DEMAND]


@pytest.mark.parametrize("code", sorted(SPOT_NO_STOCK_CODES))
def test_no_spot_capacity_is_no_stock_for_a_spot_pool(
    provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any, code: str
) -> None:
    fault_proxy.set_faults(no_spot_capacity(code))

    created = provider.create(ec2_spec("spot-1", pool="spot"))

    assert created.no_stock
    assert f"EC2 has no spot capacity of t3.micro in {ZONE} now ({code})" in created.reason
    assert live(aws) == []


def test_no_spot_capacity_is_remembered_for_spot_only(
    provider: Ec2Provider, fault_proxy: FaultProxy
) -> None:
    fault_proxy.set_faults(no_spot_capacity())
    provider.create(ec2_spec("spot-1", pool="spot"))
    asked = fault_proxy.requests["RunInstances"]

    again = provider.create(ec2_spec("spot-2", pool="spot"))

    assert again.no_stock
    assert "ORCA_NO_STOCK_TTL" in again.reason
    assert fault_proxy.requests["RunInstances"] == asked
    assert provider.create(ec2_spec("ci-1")).ok


def test_offers_know_spot_and_on_demand_apart(
    provider: Ec2Provider, fault_proxy: FaultProxy
) -> None:
    fault_proxy.set_faults(no_spot_capacity())
    provider.create(ec2_spec("spot-1", pool="spot"))

    assert ZONE not in provider.offers("t3.micro", pool="spot")
    assert ZONE in provider.offers("t3.micro", pool="ci")
    assert ZONE in provider.offers("t3.micro")
    assert ZONE in provider.offers("t3.micro", pool="mixed")


def test_a_spot_then_on_demand_pool_launches_on_demand_in_the_same_call_and_says_so(
    provider: Ec2Provider,
    fault_proxy: FaultProxy,
    aws: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fault_proxy.set_faults(no_spot_capacity("MaxSpotInstanceCountExceeded"))
    caplog.set_level(logging.INFO, logger="machines")

    created = provider.create(ec2_spec("mixed-1", pool="mixed"))

    assert created.machine is not None
    assert created.machine.market == Market.ON_DEMAND
    assert fault_proxy.requests["RunInstances"] == 2
    assert [i["InstanceId"] for i in live(aws)] == [created.machine.id]
    assert "InstanceLifecycle" not in instance(aws, created.machine.id)
    assert any(
        "no spot capacity of t3.micro" in r.message
        and "MaxSpotInstanceCountExceeded" in r.message
        and "launching 'mixed-1' on-demand instead" in r.message
        for r in caplog.records
    )


def test_a_spot_then_on_demand_pool_goes_on_demand_at_once_while_spot_is_remembered_short(
    provider: Ec2Provider, fault_proxy: FaultProxy
) -> None:
    fault_proxy.set_faults(no_spot_capacity())
    provider.create(ec2_spec("mixed-1", pool="mixed"))
    fault_proxy.reset()

    created = provider.create(ec2_spec("mixed-2", pool="mixed"))

    assert created.machine is not None
    assert created.machine.market == Market.ON_DEMAND
    assert fault_proxy.requests["RunInstances"] == 1


def test_a_spot_then_on_demand_pool_with_spot_capacity_gets_spot(provider: Ec2Provider) -> None:
    created = provider.create(ec2_spec("mixed-1", pool="mixed"))

    assert created.machine is not None
    assert created.machine.market == Market.SPOT


def test_with_neither_spot_nor_on_demand_capacity_it_is_no_stock(
    provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any
) -> None:
    fault_proxy.set_faults(
        Fault("error", "RunInstances", status=500, code="InsufficientInstanceCapacity")
    )

    created = provider.create(ec2_spec("mixed-1", pool="mixed"))

    assert created.no_stock
    assert "InsufficientInstanceCapacity" in created.reason
    assert fault_proxy.requests["RunInstances"] == 2
    assert live(aws) == []
    assert ZONE not in provider.offers("t3.micro", pool="mixed")


@pytest.mark.parametrize(("pool", "market"), [("spot", Market.SPOT), ("mixed", Market.SPOT)])
def test_a_create_retried_after_a_lost_answer_makes_one_spot_machine(
    provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any, pool: str, market: Market
) -> None:
    fault_proxy.set_faults(Fault("drop_after", "RunInstances", times=1))

    created = provider.create(ec2_spec(f"{pool}-1", pool=pool))

    assert created.machine is not None
    assert created.machine.market == market
    assert [i["InstanceId"] for i in live(aws)] == [created.machine.id]


def test_a_fallback_retried_after_a_lost_answer_makes_one_on_demand_machine(
    provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any
) -> None:
    fault_proxy.set_faults(no_spot_capacity(times=1), Fault("drop_after", "RunInstances", times=1))

    created = provider.create(ec2_spec("mixed-1", pool="mixed"))
    again = ec2_provider(OWNER).create(ec2_spec("mixed-1", pool="mixed"))

    assert created.machine is not None
    assert created.machine.market == Market.ON_DEMAND
    assert again.machine == created.machine
    assert [i["InstanceId"] for i in live(aws)] == [created.machine.id]


def test_an_interrupted_machine_is_told_from_a_deleted_one_and_never_listed_alive(
    provider: Ec2Provider, moto: MotoServer
) -> None:
    kept = provider.create(ec2_spec("spot-1", pool="spot")).machine
    interrupted = provider.create(ec2_spec("spot-2", pool="spot")).machine
    deleted = provider.create(ec2_spec("spot-3", pool="spot")).machine
    assert kept is not None
    assert interrupted is not None
    assert deleted is not None
    assert provider.delete(deleted.id)

    moto.interrupt(interrupted.id)
    listed = {m.name: m for m in ec2_provider(OWNER).machines("spot")}

    assert set(listed) == {"spot-1", "spot-2"}
    assert listed["spot-2"].status == Status.DELETING
    assert listed["spot-2"].ending == Ending.INTERRUPTED
    assert listed["spot-2"].interrupted
    assert listed["spot-1"].status != Status.DELETING
    assert not listed["spot-1"].interrupted


def test_an_interrupted_machine_leaves_room_under_the_pools_max(
    spot_world: World, moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "spot=1")
    provider = ec2_provider(OWNER)
    first = provider.create(ec2_spec("spot-1", pool="spot")).machine
    assert first is not None
    assert provider.create(ec2_spec("spot-2", pool="spot")).failed

    moto.interrupt(first.id)

    assert ec2_provider(OWNER).create(ec2_spec("spot-2", pool="spot")).ok


def test_listing_asks_for_interrupted_machines_only_where_a_pool_buys_spot(
    spot_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_spot = ec2_provider(OWNER)
    calls = count_calls(with_spot._client)
    with_spot.machines("ci")
    assert calls["DescribeInstances"] == 2

    monkeypatch.delenv("ORCA_POOL_MARKET")
    without = ec2_provider(OWNER)
    calls = count_calls(without._client)
    without.machines("ci")
    assert calls["DescribeInstances"] == 1


def test_owners_listed_together_keep_a_spot_peers_interrupted_machines(
    spot_world: World, moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One listing of several owners asks for the interrupted where any of their pools
    buys spot, whichever provider lists."""
    buys_spot = ec2_provider(OWNER)
    made = buys_spot.create(ec2_spec("spot-1", pool="spot")).machine
    assert made is not None
    moto.interrupt(made.id)
    monkeypatch.delenv("ORCA_POOL_MARKET")
    on_demand = ec2_provider("other")

    listed = on_demand.listed_with([buys_spot])

    assert listed["other"] == []
    assert [(m.name, m.ending) for m in listed[OWNER]] == [("spot-1", Ending.INTERRUPTED)]


def test_a_spot_then_on_demand_pool_still_tries_spot_while_on_demand_is_remembered_short(
    provider: Ec2Provider, fault_proxy: FaultProxy
) -> None:
    fault_proxy.set_faults(
        Fault("error", "RunInstances", status=500, code="InsufficientInstanceCapacity", times=1)
    )
    assert provider.create(ec2_spec("ci-1")).no_stock

    created = provider.create(ec2_spec("mixed-1", pool="mixed"))

    assert created.machine is not None
    assert created.machine.market == Market.SPOT
    assert provider.create(ec2_spec("ci-2")).no_stock
