"""Hundreds of autoscaler rounds on EC2 with faults on: nothing lost or leaked, no one else
touched. The faults come from the proxy in front of moto (see test_ec2_faults)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.retries import standard

from machines import retry
from machines.labels import OWNER_LABEL, POOL_LABEL
from machines.provider import Provider
from tests.ec2 import moto_server
from tests.ec2.moto_server import OLD_AMD64, ZONES
from tests.reliability.simulation import simulate
from tests.reliability.test_ec2_faults import (
    ISOLATED,
    Fault,
    FaultProxy,
    throttled,
    unavailable,
)

ROUNDS = 200

FAULTS = [
    Fault("error", "RunInstances", status=500, probability=0.1),
    Fault("drop_after", "RunInstances", probability=0.1),
    Fault("drop_before", "RunInstances", probability=0.05),
    Fault("delay", "RunInstances", seconds=0.7, probability=0.03),
    Fault("drop_after", "TerminateInstances", probability=0.1),
    unavailable("TerminateInstances", probability=0.05),
    Fault("drop_before", "DescribeInstances", probability=0.05),
    throttled("DescribeInstances", probability=0.02),
    Fault("delay", "DescribeInstances", seconds=0.7, probability=0.02),
]
"""Delays outlast the half-second request timeout: the answer comes after the client left."""


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff a twentieth as long: the same decisions, sooner (moto is slow enough)."""
    monkeypatch.setattr(retry, "BASE_DELAY", retry.BASE_DELAY / 20)
    monkeypatch.setattr(
        standard.ExponentialBackoff,
        "_DEFAULT_BACKOFF_CONFIG",
        {"throttling_base_scale": 0.05, "non_throttling_base_scale": 0.05},
    )


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture
def proxy(moto: moto_server.MotoServer) -> Iterator[FaultProxy]:
    with FaultProxy(moto.url).serving() as running:
        yield running


@pytest.fixture
def providers(
    moto: moto_server.MotoServer, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Provider]:
    """Two owners' providers in one fresh account, through the proxy."""
    moto.reset()
    world = moto_server.build_world(moto.url)
    for name in ISOLATED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    environ = {
        **world.env,
        "AWS_ENDPOINT_URL": proxy.url,
        "ORCA_REQUEST_TIMEOUT": "0.5",
        "ORCA_CALL_TIMEOUT": "10",
    }
    return {owner: Provider.of("ec2", owner, environ) for owner in ("blue", "green")}


def bystander(aws: Any, name: str, tags: dict[str, str]) -> str:
    """An instance made behind the providers' backs."""
    tag_list = [{"Key": k, "Value": v} for k, v in {"Name": name, **tags}.items()]
    reply = aws.run_instances(
        ImageId=OLD_AMD64,
        InstanceType="t3.micro",
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[{"ResourceType": "instance", "Tags": tag_list}],
    )
    instance_id: str = reply["Instances"][0]["InstanceId"]
    return instance_id


def live_instances(aws: Any) -> list[dict[str, Any]]:
    pages = aws.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
    )
    return [i for page in pages for r in page["Reservations"] for i in r["Instances"]]


@pytest.mark.usefixtures("short_waits")
def test_ec2_autoscaler_keeps_its_invariants_under_faults(
    providers: dict[str, Provider], proxy: FaultProxy, moto: moto_server.MotoServer
) -> None:
    aws = moto_server.client(moto.url)
    by_hand = bystander(aws, "blue-ci-by-hand", {"orca": "pool", POOL_LABEL: "ci"})
    not_orca = bystander(aws, "database-1", {})
    proxy.set_faults(*FAULTS)

    ledger = simulate(providers, ["ci", "gpu", "build"], "t3.micro", ZONES[0], rounds=ROUNDS)

    proxy.set_faults()
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
    assert sum(proxy.fired.values()) > ROUNDS / 5
