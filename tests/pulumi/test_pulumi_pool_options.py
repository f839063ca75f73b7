"""A pool's cloud options in the program (with Pulumi's mocks): the Server's and Instance's
arguments the official plugins get, the same launch the runtime sends, the networks and
placement groups the stack creates, ``ORCA_POOLS``, and bad options refused when loaded."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from machines.program.clouds.ec2.components import EBS_ARGS, METADATA_ARGS
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT
from machines.runtime.clouds.ec2.machine import launch, run_instances
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.pool import pools_of
from testkit.program_harness import (
    CUSTOM_AMI,
    NETWORK_IDS,
    PLACEMENT_GROUP_IDS,
    SNAPSHOTS,
    ec2,
    hetzner,
    run,
)

POOLS = f"{PROJECT}:pools"
SERVER = "hcloud:index/server:Server"
INSTANCE = "aws:ec2/instance:Instance"


def with_options(config: dict[str, Any], index: int, **changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(config)
    config[POOLS][index].update(changes)
    return config


def to_camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def test_ec2_defaults_are_a_ci_workers_and_the_runtimes_launch() -> None:
    result = run(ec2())
    expected = run_instances(launch(Ec2Options(), "x", {}, "/dev/sda1", runtime=True))
    [mapping] = expected["BlockDeviceMappings"]
    for instance in result.of_type(INSTANCE):
        root = instance.inputs["rootBlockDevice"]
        assert root == {to_camel(EBS_ARGS[k]): v for k, v in mapping["Ebs"].items()}
        assert (root["volumeSize"], root["volumeType"], root["encrypted"]) == (30, "gp3", True)
        metadata = instance.inputs["metadataOptions"]
        assert metadata == {
            to_camel(METADATA_ARGS[k]): v for k, v in expected["MetadataOptions"].items()
        }
        assert metadata["httpTokens"] == "required"
        assert metadata["httpPutResponseHopLimit"] == 1
        assert instance.inputs["instanceInitiatedShutdownBehavior"] == "terminate"


def test_ec2_options_reach_the_instance() -> None:
    options = {
        "rootVolume": {"size": 100, "type": "io2", "iops": 5000, "kmsKey": "alias/ci"},
        "metadata": {"hopLimit": 2},
        "shutdown": "stop",
        "imageOwner": "123456789012",
        "imageName": "ci-runner-*",
        "tags": {"team": "ci"},
    }
    result = run(with_options(ec2(), 0, ec2=options))
    [arm_1, arm_2] = [i for i in result.of_type(INSTANCE) if i.name.startswith("test-arm-")]
    for instance in (arm_1, arm_2):
        root = instance.inputs["rootBlockDevice"]
        assert (root["volumeSize"], root["volumeType"], root["iops"]) == (100, "io2", 5000)
        assert root["kmsKeyId"] == "alias/ci"
        assert instance.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 2
        assert instance.inputs["instanceInitiatedShutdownBehavior"] == "stop"
        assert instance.inputs["ami"] == CUSTOM_AMI["arm64"]
        assert instance.inputs["tags"]["team"] == "ci"
        assert instance.inputs["tags"]["orca-pool"] == "arm"
    [pool] = [p for p in pools_of(result.outputs["env"]).values() if p.name == "arm"]
    options = pool.given(Ec2Options)
    assert options is not None
    assert options.root_volume.size == 100


def test_hetzner_options_reach_the_server_and_the_stack_makes_its_network_and_group() -> None:
    config = hetzner(
        networks=[{"name": "ci", "ipRange": "10.1.0.0/16", "subnet": "10.1.2.0/24"}],
        placementGroups=[{"name": "spread"}],
    )
    options = {
        "ipv4": False,
        "network": "ci",
        "placementGroup": "spread",
        "imageSelector": "role=ci-worker",
        "labels": {"team": "ci"},
    }
    result = run(with_options(config, 0, hetzner=options, max=10))

    [network] = result.of_type("hcloud:index/network:Network")
    assert (network.inputs["name"], network.inputs["ipRange"]) == ("test-ci", "10.1.0.0/16")
    [subnet] = result.of_type("hcloud:index/networkSubnet:NetworkSubnet")
    assert (subnet.inputs["ipRange"], subnet.inputs["networkZone"]) == ("10.1.2.0/24", "eu-central")
    [group] = result.of_type("hcloud:index/placementGroup:PlacementGroup")
    assert (group.inputs["name"], group.inputs["type"]) == ("test-spread", "spread")
    x86 = [s for s in result.of_type(SERVER) if s.name.startswith("test-x86-")]
    assert len(x86) == 2
    for server in x86:
        assert server.inputs["publicNets"] == [{"ipv4Enabled": False, "ipv6Enabled": True}]
        assert len(server.inputs["networks"]) == 1
        assert "placementGroupId" in server.inputs
        assert server.inputs["image"] == str(SNAPSHOTS["x86"])
        assert server.inputs["labels"]["team"] == "ci"
        assert server.inputs["labels"]["orca-pool"] == "x86"
    [arm] = [s for s in result.of_type(SERVER) if s.name.startswith("test-arm-")]
    assert "publicNets" not in arm.inputs
    assert "networks" not in arm.inputs
    pool = pools_of(result.outputs["env"])["x86"]
    options = pool.given(HetznerOptions)
    assert options is not None
    assert (options.network, options.placement_group) == ("test-ci", "test-spread")


def test_existing_network_and_group_are_joined_by_name() -> None:
    options = {"ipv4": False, "ipv6": False, "network": "ci", "placementGroup": "spread"}
    result = run(with_options(hetzner(), 0, hetzner=options, max=5))

    assert not result.of_type("hcloud:index/network:Network")
    assert ("hcloud:index/getNetwork:getNetwork", {"name": "ci"}) in result.calls
    for server in [s for s in result.of_type(SERVER) if s.name.startswith("test-x86-")]:
        assert server.inputs["networks"] == [{"networkId": NETWORK_IDS["ci"]}]
        assert server.inputs["placementGroupId"] == PLACEMENT_GROUP_IDS["spread"]
        assert server.inputs["publicNets"] == [{"ipv4Enabled": False, "ipv6Enabled": False}]


BAD = {
    "both addresses off without a network": (
        with_options(hetzner(), 0, hetzner={"ipv4": False, "ipv6": False}),
        "stack test: pools[0].hetzner: ipv4 and ipv6 are both false and no network is set",
    ),
    "the other cloud's options": (
        with_options(hetzner(), 0, ec2={"shutdown": "stop"}),
        "stack test: pools[0].ec2: is ec2's options, but this stack is on Hetzner Cloud",
    ),
    "the other cloud's option inside": (
        with_options(hetzner(), 0, hetzner={"rootVolume": {"size": 50}}),
        "stack test: pools[0].hetzner.rootVolume: is an option of ec2 pools (ec2.rootVolume)",
    ),
    "a spread pool of more than 10": (
        with_options(hetzner(), 0, hetzner={"placementGroup": "spread"}, max=20),
        "stack test: pools[0].max: pool x86 is in a spread placement group but has max 20",
    ),
    "a spread pool without a max": (
        with_options(hetzner(), 0, hetzner={"placementGroup": "spread"}),
        "stack test: pools[0].max: pool x86 is in a spread placement group but has no max",
    ),
    "an orca tag": (
        with_options(ec2(), 0, ec2={"tags": {"orca-pool": "x"}}),
        "stack test: pools[0].ec2: orca-pool is orca's own tag",
    ),
    "a misspelt option": (
        with_options(ec2(), 0, ec2={"rootVolume": {"sise": 50}}),
        "stack test: pools[0].ec2.rootVolume.sise: unknown key (did you mean size?)",
    ),
    "throughput on gp2": (
        with_options(ec2(), 0, ec2={"rootVolume": {"type": "gp2", "throughput": 200}}),
        "stack test: pools[0].ec2.rootVolume: throughput is set, but only gp3 volumes take one",
    ),
    "a hop limit of 0": (
        with_options(ec2(), 0, ec2={"metadata": {"hopLimit": 0}}),
        "stack test: pools[0].ec2.metadata.hopLimit: must be >= 1",
    ),
    "a subnet outside the network": (
        hetzner(networks=[{"name": "ci", "ipRange": "10.0.0.0/16", "subnet": "10.9.0.0/24"}]),
        "stack test: networks[0]: subnet 10.9.0.0/24 is not inside ipRange 10.0.0.0/16",
    ),
}


@pytest.mark.parametrize(("config", "message"), BAD.values(), ids=BAD.keys())
def test_a_bad_option_stops_the_program_naming_the_key(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(StackConfigError, match=re.escape(message)):
        run(config)
