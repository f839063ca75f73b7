"""The real program on a stack whose pools span both clouds, under mocks: each cloud's shared
resources once, each machine on the cloud of its place, one reaper per pool over its clouds,
and the outputs an autoscaler of both clouds reads."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from machines.program.clouds.ec2.components import EC2_SHARED_TYPE
from machines.program.clouds.hetzner.components import HETZNER_SHARED_TYPE
from machines.program.components import POOL_TYPE
from machines.program.config.loader import load
from machines.program.config.models import BaseDeployment
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT, StackConfig
from machines.program.placement import Placement
from machines.program.reading import Read, ReadError
from machines.program.reaper import REAPER_TYPE
from machines.runtime.pool import pools_of
from machines.runtime.settings import ORCA_EXCHANGE_RATES, ORCA_POOLS
from testkit import readme
from testkit.program_harness import (
    SPANNING_STACKS,
    CloudMocks,
    Run,
    run,
    stack_file,
    stack_name,
)

SERVER = "hcloud:index/server:Server"
INSTANCE = "aws:ec2/instance:Instance"
POOLS = f"{PROJECT}:pools"
FSN1 = {"cloud": "hetzner", "machineType": "cax11", "location": "fsn1"}
EC2 = {"cloud": "ec2", "machineType": "t4g.small", "location": "eu-central-1a"}


def example() -> dict[str, Any]:
    (path,) = [p for p in SPANNING_STACKS if stack_name(p) == "span-example"]
    return stack_file(path)


def on_ec2(
    deployment: BaseDeployment, _read: Read | None, _environ: Mapping[str, str]
) -> dict[str, Placement]:
    """Where the clouds would put the pools when Hetzner has no stock: every new machine on
    the pools' EC2 places."""
    return {
        pool.name: Placement(
            tuple(next(p for p in pool.places if p.cloud == "ec2") for _ in range(pool.size))
        )
        for pool in deployment.pools
        if pool.places
    }


@pytest.fixture(scope="module")
def first() -> Run:
    return run(example(), stack="prod")


def children(result: Run, pool: str) -> list[Any]:
    return result.children(result.named(POOL_TYPE, pool))


def test_each_cloud_s_shared_resources_are_made_once(first: Run) -> None:
    assert len(first.of_type(HETZNER_SHARED_TYPE)) == 1
    assert len(first.of_type(EC2_SHARED_TYPE)) == 1
    assert [r.name for r in first.of_type("aws:ec2/securityGroup:SecurityGroup")] == ["prod-pools"]
    assert [r.name for r in first.of_type("hcloud:index/firewall:Firewall")] == ["prod-pools"]


def test_a_machine_is_made_on_the_cloud_of_its_place(first: Run) -> None:
    (server,) = [c for c in children(first, "arm") if c.type == SERVER]
    assert (server.inputs["serverType"], server.inputs["location"]) == ("cax11", "fsn1")

    moved = run(example(), stack="prod", placed=on_ec2)

    (instance,) = [c for c in children(moved, "arm") if c.type not in (REAPER_TYPE,)]
    assert instance.type == INSTANCE
    assert instance.inputs["instanceType"] == "t4g.small"
    assert instance.inputs["subnetId"] == "subnet-0123456789abcdef0"
    assert instance.inputs["tags"]["orca-pool"] == "arm"
    assert instance.inputs["tags"]["orca-managed-by"] == "pulumi"
    assert instance.inputs["tags"]["Name"] == "prod-arm-1.stack"
    assert instance.inputs["rootBlockDevice"]["volumeSize"] == 30
    (shown,) = moved.outputs["pools"]["arm"]["machines"]
    assert shown["id"].startswith("ec2:i-")
    assert (shown["cloud"], shown["machineType"], shown["location"]) == (
        "ec2",
        "t4g.small",
        "eu-central-1a",
    )
    assert shown["arch"] == "arm64"


def test_a_pool_on_one_place_is_todays_pool(first: Run) -> None:
    (server,) = [c for c in children(first, "x86") if c.type == SERVER]
    assert server.inputs["serverType"] == "cx23"
    (shown,) = first.outputs["pools"]["x86"]["machines"]
    assert set(shown) == {"id", "name", "address", "arch"}
    assert "places" not in first.outputs["pools"]["x86"]


def test_the_env_output_names_both_clouds_the_places_and_the_rates(first: Run) -> None:
    env = first.outputs["env"]
    assert env["HCLOUD_ENDPOINT"]
    assert env["AWS_REGION"] == "eu-central-1"
    assert env["ORCA_EC2_SECURITY_GROUP"]
    assert env["ORCA_HCLOUD_FIREWALL"] == "prod-pools"
    assert env[ORCA_EXCHANGE_RATES] == "EUR=1,USD=0.86"
    pools = pools_of(env, "hetzner")
    assert [str(p) for p in pools["arm"].places] == [
        "hetzner cax11 in fsn1",
        "hetzner cax11 in nbg1",
        "ec2 t4g.small in eu-central-1a",
    ]
    assert pools["cheap"].place_order == "price"
    assert first.outputs["pools"]["arm"]["places"][2]["cloud"] == "ec2"


def test_a_spanning_pool_s_reaper_reaps_on_each_cloud_of_its_places(first: Run) -> None:
    (reaper,) = [c for c in children(first, "arm") if c.type == REAPER_TYPE]
    env = reaper.inputs["env"]
    assert env["AWS_REGION"] == "eu-central-1"
    assert env["HCLOUD_ENDPOINT"]
    assert list(pools_of(env, "hetzner")) == ["arm"]
    assert "securityGroup:prod-pools" in reaper.inputs["shared"]
    assert "firewall:prod-pools" in reaper.inputs["shared"]
    (plain,) = [c for c in children(first, "x86") if c.type == REAPER_TYPE]
    assert ORCA_POOLS not in plain.inputs["env"]
    assert "AWS_REGION" not in plain.inputs["env"]


class Unauthorized(CloudMocks):
    """Clouds that refuse the program's credential: every data source call fails, as the
    plugins' do with a wrong token."""

    def call(self, args: Any) -> tuple[dict[str, Any], list[Any]]:
        self.calls.append((args.token, args.args))
        raise RuntimeError(f"invoke of {args.token} failed: unable to authenticate")


def unreadable(
    _deployment: BaseDeployment, _environ: Mapping[str, str], _asked: Mapping[str, str]
) -> Read | None:
    raise ReadError("pool arm names its places, and where its machines are now could not be read")


def test_clouds_that_cannot_be_read_stop_the_program_with_its_own_line_before_any_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Where a spanning pool's machines go is asked before anything is declared: a refused
    read is the program's one line, never masked by the data source calls that the same
    refused credential fails (the engine reports those first and drops the program's)."""
    cloud = Unauthorized()

    with pytest.raises(SystemExit):
        run(example(), stack="prod", cloud=cloud, read=unreadable)

    assert cloud.calls == []
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == ["pool arm names its places, and where its machines are now could not be read"]


def refusals(config: dict[str, Any]) -> list[str]:
    """Every line the stack's check says of ``config``, none when it loads."""
    try:
        load(StackConfig.from_stack_file(config), "prod")
    except StackConfigError as error:
        return [f"{key}: {why}" for key, why in error.problems]
    return []


def with_arm(**changes: Any) -> dict[str, Any]:
    """The example with its spanning pool ``arm`` changed."""
    config = copy.deepcopy(example())
    config[POOLS][0].update(changes)
    return config


def test_the_example_loads_with_both_clouds() -> None:
    assert refusals(example()) == []


@pytest.mark.parametrize(
    ("config", "line"),
    [
        (
            {k: v for k, v in example().items() if k not in ("orca-machines:ec2", "aws:region")},
            "pools[0].places[2].cloud: is ec2, but this stack has no EC2 settings: add them "
            "under orca-machines:ec2",
        ),
        (
            with_arm(places=[FSN1, FSN1]),
            "pools[0].places[1]: names place hetzner cax11 in fsn1 twice",
        ),
        (
            with_arm(places=[FSN1, {**EC2, "location": "eu-central-1b"}]),
            "pools[0].places[1].location: no subnet for 'eu-central-1b'",
        ),
        (
            with_arm(places=[{**FSN1, "market": "spot"}, EC2]),
            "pools[0].places[0].market: ",
        ),
        (
            with_arm(places=[FSN1, {**EC2, "cloud": "ec3"}]),
            "pools[0].places[1].cloud: unknown cloud 'ec3'",
        ),
        (
            with_arm(machineType="cax21"),
            "pools[0].machineType: is cax21, but the pool's first place is hetzner cax11 in fsn1",
        ),
        (
            {k: v for k, v in with_arm(placeOrder="price").items() if "exchangeRates" not in k},
            "pools[0].placeOrder: is price, but exchangeRates has no rate for EUR, USD",
        ),
        (
            {**example(), "orca-machines:ec2": {**example()["orca-machines:ec2"], "subnet": {}}},
            "ec2.subnet: unknown key (did you mean subnets?)",
        ),
        (
            {**example(), "orca-machines:hetzner": {}},
            "hetzner: is this stack's own provider",
        ),
        (
            {**example(), "orca-machines:exchangeRates": {"eur": 1}},
            "exchangeRates.eur",
        ),
    ],
    ids=[
        "a place on a cloud without settings",
        "a place named twice",
        "a zone without subnet",
        "a market the cloud does not sell",
        "an unknown cloud",
        "a type beside the places",
        "a price order without rates",
        "a typo in the other cloud's settings",
        "the home cloud as another",
        "a rate's currency",
    ],
)
def test_a_spanning_stack_s_bad_input_is_one_line_at_its_key(
    config: dict[str, Any], line: str
) -> None:
    found = refusals(config)
    assert any(f.startswith(line) for f in found), found
    # one line per pool it is true of: pool cheap names an EC2 place and ranks by price too
    assert len(found) == (2 if "places[2].cloud" in line or "placeOrder" in line else 1), found


def test_aws_keys_without_ec2_settings_say_where_they_go() -> None:
    config = {k: v for k, v in example().items() if k != "orca-machines:ec2"}
    config[POOLS] = [p for p in config[POOLS] if "places" not in p]

    (line,) = refusals(config)

    assert line.startswith("aws:region: is a setting of provider ec2, and this stack has no ec2")
    assert "orca-machines:ec2" in line


def test_another_cloud_s_settings_without_a_place_there_still_make_its_shared_resources() -> None:
    config = copy.deepcopy(example())
    config[POOLS] = [p for p in config[POOLS] if "places" not in p]

    result = run(config, stack="prod")

    assert [r.name for r in result.of_type("aws:ec2/securityGroup:SecurityGroup")] == ["prod-pools"]
    assert [r.name for r in result.of_type(SERVER)] == ["prod-x86-1"]
    assert result.outputs["env"]["AWS_REGION"] == "eu-central-1"


def test_docs_operating_s_spanning_stack_loads_as_written() -> None:
    section = readme.section("A pool that spans clouds", readme.doc("operating"))
    config = yaml.safe_load(readme.blocks(section, "yaml")[0])["config"]

    assert refusals(config) == []
    result = run(config, stack="prod")
    assert [r.name for r in result.of_type(INSTANCE)] == []
    assert sorted(r.name for r in result.of_type(SERVER)) == ["prod-arm-1", "prod-x86-1"]
