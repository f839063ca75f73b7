"""Hundreds of autoscaler rounds on EC2 with faults on: nothing lost or leaked, no one else
touched. The faults come from the proxy in front of moto (see testkit.fault_proxy)."""

from __future__ import annotations

from typing import Any

import pytest

from machines.runtime import backoff
from machines.runtime.labels import OWNER_LABEL, POOL_LABEL
from machines.runtime.provider import Provider
from testkit import moto_server, timeouts
from testkit.fault_proxy import Fault, FaultProxy, throttled, unavailable
from testkit.moto_server import ZONES, launch_tagged
from testkit.simulation import simulate

ROUNDS = 200

FAULTS = [
    Fault("error", "RunInstances", status=500, probability=0.1),
    Fault("drop_after", "RunInstances", probability=0.1),
    Fault("drop_before", "RunInstances", probability=0.05),
    Fault("delay", "RunInstances", seconds=timeouts.PAST_REQUEST, probability=0.01),
    Fault("drop_after", "TerminateInstances", probability=0.1),
    unavailable("TerminateInstances", probability=0.05),
    Fault("drop_before", "DescribeInstances", probability=0.05),
    throttled("DescribeInstances", probability=0.02),
    Fault("delay", "DescribeInstances", seconds=timeouts.PAST_REQUEST, probability=0.01),
]
"""Delays outlast the request timeout: the answer comes after the client left."""


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff a twentieth as long: the same decisions, sooner (moto is slow enough)."""
    monkeypatch.setattr(backoff, "BASE_DELAY", backoff.BASE_DELAY / 20)


@pytest.fixture
def providers(
    moto: moto_server.MotoServer, fault_proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Provider]:
    """Two owners' providers in one fresh account, through the proxy."""
    world = moto.new_world()
    moto_server.isolate(monkeypatch)
    environ = {
        **world.env,
        "AWS_ENDPOINT_URL": fault_proxy.url,
        "ORCA_REQUEST_TIMEOUT": str(timeouts.REQUEST),
        "ORCA_CALL_TIMEOUT": str(timeouts.CALL),
    }
    return {owner: Provider.of("ec2", owner, environ) for owner in ("blue", "green")}


def live_instances(aws: Any) -> list[dict[str, Any]]:
    pages = aws.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
    )
    return [i for page in pages for r in page["Reservations"] for i in r["Instances"]]


@pytest.mark.usefixtures("short_waits")
def test_ec2_autoscaler_keeps_its_invariants_under_faults(
    providers: dict[str, Provider], fault_proxy: FaultProxy, aws: Any
) -> None:
    by_hand = launch_tagged(aws, "blue-ci-by-hand", {"orca": "pool", POOL_LABEL: "ci"})
    not_orca = launch_tagged(aws, "database-1", {})
    fault_proxy.set_faults(*FAULTS)

    ledger = simulate(providers, ["ci", "gpu", "build"], "t3.micro", ZONES[0], rounds=ROUNDS)

    fault_proxy.set_faults()
    truth: dict[tuple[str, str], dict[str, str]] = {}
    for instance in live_instances(aws):
        tags = {tag["Key"]: tag["Value"] for tag in instance.get("Tags", [])}
        if OWNER_LABEL in tags:
            key = (tags[OWNER_LABEL], tags[POOL_LABEL])
            truth.setdefault(key, {})[instance["InstanceId"]] = tags["Name"]
    told = {key: names for key, names in ledger.alive.items() if names}
    assert truth == told
    assert ledger.rounds == ROUNDS
    survivors = {i["InstanceId"] for i in live_instances(aws)}
    assert {by_hand, not_orca} <= survivors
    assert sum(fault_proxy.fired.values()) > ROUNDS / 5
