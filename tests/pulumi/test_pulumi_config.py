"""Bad stack configurations: the program stops before declaring anything, naming stack and key."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from typing import Any

import pytest

from machines.program.config.loader import _provider_config_problems, load, plain_user_data
from machines.program.config.models import MAX_POOL_SIZE
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT, SECRET_PLACEHOLDER, StackConfig
from machines.runtime.errors import SettingsError
from machines.runtime.labels import machine_name
from testkit.program_harness import ec2, hetzner, run

POOLS = f"{PROJECT}:pools"


def with_pool(config: dict[str, Any], index: int, **changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(config)
    config[POOLS][index].update(changes)
    return config


def without(config: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != key}


BAD = {
    "unknown key": (
        hetzner(sshkeys=["ops"]),
        "stack test: sshkeys: unknown key (did you mean sshKeys?)",
    ),
    "unknown pool key": (
        with_pool(hetzner(), 1, machinetype="cx23"),
        "stack test: pools[1].machinetype: unknown key (did you mean machineType?)",
    ),
    "key of the other provider": (
        hetzner(subnets={"fsn1": "subnet-0a"}),
        "stack test: subnets: is a setting of provider ec2",
    ),
    "unknown provider": (hetzner(provider="gcp"), "stack test: provider: 'gcp' is not a provider"),
    "no provider": (without(hetzner(), f"{PROJECT}:provider"), "stack test: provider: is not set"),
    "no pools": (without(hetzner(), POOLS), "stack test: pools: is missing"),
    "pool name not a label value": (
        with_pool(hetzner(), 0, name="x 86"),
        "stack test: pools[0].name: pool 'x 86' is not a label value",
    ),
    "empty pool name": (
        with_pool(hetzner(), 0, name=""),
        "stack test: pools[0].name: pool is empty",
    ),
    "negative size": (with_pool(hetzner(), 1, size=-1), "stack test: pools[1].size: must be >= 0"),
    "max below size": (
        with_pool(hetzner(), 0, max=1),
        "stack test: pools[0].max: is 1, below the pool's size 2",
    ),
    "max zero": (with_pool(hetzner(), 0, max=0), "stack test: pools[0].max: must be >= 1"),
    "size not a number": (
        with_pool(hetzner(), 0, size="2"),
        "stack test: pools[0].size: must be a valid integer",
    ),
    "missing machine type": (
        {**hetzner(), POOLS: [{"name": "x86", "location": "fsn1", "size": 1}]},
        "stack test: pools[0].machineType: is missing",
    ),
    "duplicate pool": (
        with_pool(hetzner(), 1, name="x86"),
        "stack test: pools[1].name: pool 'x86' is already pools[0]",
    ),
    "plain hcloud token": (
        {**hetzner(), "hcloud:token": "t" * 64},
        "stack test: hcloud:token: is in plain text",
    ),
    "plain aws secret key": (
        {**ec2(), "aws:secretKey": "wJalrXUtnFEMI"},
        "stack test: aws:secretKey: is in plain text",
    ),
    "plain aws access key": (
        {**ec2(), "aws:accessKey": "AKIAEXAMPLE"},
        "stack test: aws:accessKey: is in plain text",
    ),
    "no subnet for a pool's location": (
        with_pool(ec2(), 1, location="eu-central-1c"),
        "stack test: pools[1].location: no subnet for 'eu-central-1c'",
    ),
    "no region": (without(ec2(), "aws:region"), "stack test: aws:region: is not set"),
    "no security group": (
        without(ec2(), f"{PROJECT}:securityGroup"),
        "stack test: securityGroup: is missing",
    ),
    "names too long": (
        with_pool(hetzner(owner="o" * 40), 0, name="p" * 30),
        f"stack test: pools[0].name: machine name '{'o' * 40}-{'p' * 30}-1' is not a host name",
    ),
    "names too long once the pool grows": (
        with_pool(hetzner(owner="o" * 30), 0, name="p" * 29, size=100),
        f"stack test: pools[0].name: machine name '{'o' * 30}-{'p' * 29}-100' is not a host name",
    ),
    "uppercase owner": (
        hetzner(owner="Prod"),
        "stack test: pools[0].name: machine name 'Prod-x86-1' is not a host name",
    ),
    "underscore in pool": (
        with_pool(hetzner(), 0, name="x86_64"),
        "stack test: pools[0].name: machine name 'test-x86_64-1' is not a host name",
    ),
    "owner not a label value": (
        hetzner(owner="a b"),
        "stack test: owner: owner 'a b' is not a label value",
    ),
    "empty owner": (hetzner(owner=""), "stack test: owner: is empty"),
    "bad endpoint": (
        {**hetzner(), "hcloud:endpoint": "127.0.0.1:4080"},
        "stack test: hcloud:endpoint: '127.0.0.1:4080' is not an http(s) URL",
    ),
    "typo in an hcloud key": (
        {**hetzner(), "hcloud:endpont": "http://127.0.0.1:4080/v1"},
        "stack test: hcloud:endpont: unknown key of the hcloud provider "
        "(did you mean hcloud:endpoint?)",
    ),
    "unknown aws key": (
        {**ec2(), "aws:regoin": "eu-west-1"},
        "stack test: aws:regoin: unknown key of the aws provider (did you mean aws:region?)",
    ),
    "aws key in a hetzner stack": (
        {**hetzner(), "aws:region": "eu-central-1"},
        "stack test: aws:region: is a setting of provider ec2",
    ),
    "hcloud key in an ec2 stack": (
        {**ec2(), "hcloud:endpoint": "http://127.0.0.1:4080/v1"},
        "stack test: hcloud:endpoint: is a setting of provider hetzner",
    ),
    "pool larger than the bound": (
        with_pool(hetzner(), 0, size=1_000_000_000),
        "stack test: pools[0].size: must be <= 1000, the largest pool a stack keeps",
    ),
    "pool name with a hyphen": (
        with_pool(hetzner(), 0, name="b-c"),
        "stack test: pools[0].name: 'b-c' has a '-'",
    ),
    "created firewall name with a hyphen": (
        hetzner(
            firewall={"name": "b-pools", "rules": [{"protocol": "icmp", "sourceIps": ["::/0"]}]}
        ),
        "stack test: firewall.name: 'b-pools' has a '-'",
    ),
    "firewall neither name nor object": (
        hetzner(firewall=["a"]),
        "stack test: firewall: must be the name of an existing firewall or an object",
    ),
    "firewall rule without port": (
        hetzner(firewall={"name": "fw", "rules": [{"protocol": "tcp", "sourceIps": ["::/0"]}]}),
        "stack test: firewall.rules[0]: tcp rules need a port",
    ),
    "firewall rule with a bad port": (
        hetzner(
            firewall={
                "name": "fw",
                "rules": [{"protocol": "tcp", "port": "90-80", "sourceIps": ["::/0"]}],
            }
        ),
        "stack test: firewall.rules[0]: port '90-80' is not within 1-65535",
    ),
    "inbound rule without sources": (
        hetzner(firewall={"name": "fw", "rules": [{"protocol": "icmp"}]}),
        "stack test: firewall.rules[0]: an inbound rule needs sourceIps",
    ),
    "created key without its public key": (
        hetzner(sshKeys=[{"name": "ci"}]),
        "stack test: sshKeys[0].publicKey: is missing",
    ),
    "created name not a host name": (
        hetzner(sshKeys=[{"name": "CI", "publicKey": "ssh-ed25519 AAAA"}]),
        "stack test: sshKeys[0].name: name 'CI' is not a host name",
    ),
    "same key twice": (hetzner(sshKeys=["ops", "ops"]), "stack test: sshKeys[1]: SSH key 'ops'"),
    "spot pool on hetzner": (
        with_pool(hetzner(), 0, market="spot"),
        "stack test: pools[0].market: pool x86 asks for market spot, but Hetzner Cloud has no "
        "spot market (it sells on-demand only): set the pool's market to on-demand",
    ),
    "spot-then-on-demand pool on hetzner": (
        with_pool(hetzner(), 1, market="spot-then-on-demand"),
        "stack test: pools[1].market: pool arm asks for market spot-then-on-demand, but "
        "Hetzner Cloud has no spot market",
    ),
    "unknown market": (
        with_pool(ec2(), 0, market="preemptible"),
        "stack test: pools[0].market: must be 'on-demand', 'spot' or 'spot-then-on-demand'",
    ),
    "unknown rule key": (
        ec2(securityGroup={"name": "g", "vpc": "vpc-1", "ingress": [{"protocol": "tcp"}]}),
        "stack test: securityGroup.ingress[0].sourceIps: is missing",
    ),
}


@pytest.mark.parametrize(("config", "message"), BAD.values(), ids=BAD.keys())
def test_a_bad_configuration_stops_the_program_with_its_reason(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(StackConfigError, match=re.escape(message)):
        run(config)


def test_every_problem_is_reported_at_once() -> None:
    config = with_pool(hetzner(sshkeys=[]), 1, size=-1)
    with pytest.raises(StackConfigError) as raised:
        run(config)
    assert [key for key, _ in raised.value.problems] == ["pools[1].size", "sshkeys"]
    assert str(raised.value).count("stack test: ") == 2


def test_the_error_is_a_settings_error() -> None:
    assert issubclass(StackConfigError, SettingsError)
    assert issubclass(StackConfigError, ValueError)


def test_errors_never_show_user_data_or_tokens() -> None:
    secret = "#cloud-config\npassword: hunter2-SECRET"
    config = with_pool({**hetzner(), "hcloud:token": "TOKEN-" + "t" * 58}, 0, size=-1)
    config[POOLS][0]["userData"] = secret
    config[POOLS][1]["userData"] = 42
    with pytest.raises(StackConfigError) as raised:
        run(config)
    assert "hunter2" not in str(raised.value)
    assert "TOKEN-" not in str(raised.value)
    assert "pools[1].userData" in str(raised.value)


def test_the_owner_defaults_to_the_stack_name() -> None:
    deployment = load(StackConfig.from_stack_file(hetzner()), "staging")
    assert deployment.owner == "staging"


def test_a_stack_name_that_makes_no_host_names_asks_for_an_owner() -> None:
    with pytest.raises(StackConfigError, match=re.escape("stack Prod_EU: pools[0].name")):
        load(StackConfig.from_stack_file(hetzner()), "Prod_EU")
    assert load(StackConfig.from_stack_file(hetzner(owner="prod-eu")), "Prod_EU")


def test_user_data_is_kept_out_of_reprs() -> None:
    config = with_pool(hetzner(), 0, userData="#cloud-config\nsecret: hunter2")
    deployment = load(StackConfig.from_stack_file(config), "test")
    assert "hunter2" not in repr(deployment)
    assert deployment.pools[0].user_data.get_secret_value().endswith("hunter2")


def test_a_stack_file_with_encrypted_values_validates_without_decrypting() -> None:
    config = {
        **hetzner(),
        "hcloud:token": {"secure": "v1:abc"},
    }
    config[POOLS][0]["userData"] = {"secure": "v1:def"}
    parsed = StackConfig.from_stack_file(config)
    assert parsed.secret_keys == {"hcloud:token", POOLS}
    assert parsed.values["hcloud:token"] == SECRET_PLACEHOLDER
    deployment = load(parsed, "test")
    assert deployment.pools[0].user_data.get_secret_value() == SECRET_PLACEHOLDER


def test_stack_file_values_are_encoded_as_pulumi_hands_them_over() -> None:
    parsed = StackConfig.from_stack_file(
        {"a:text": "x", "a:number": 2, "a:flag": True, "a:list": [1], "a:object": {"k": "v"}}
    )
    assert parsed.values == {
        "a:text": "x",
        "a:number": "2",
        "a:flag": "true",
        "a:list": "[1]",
        "a:object": '{"k": "v"}',
    }


def test_the_configuration_model_needs_no_pulumi() -> None:
    code = (
        "import sys, machines, machines.program.config.loader\n"
        "import machines.program.clouds.hetzner.config, machines.program.clouds.ec2.config\n"
        "assert not [m for m in sys.modules if m.split('.')[0].startswith('pulumi')], 'pulumi'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_pool_of_the_largest_size_is_accepted() -> None:
    config = with_pool(hetzner(), 0, size=MAX_POOL_SIZE)
    assert load(StackConfig.from_stack_file(config), "test").pools[0].size == MAX_POOL_SIZE


@pytest.mark.parametrize("cloud", [hetzner, ec2])
def test_every_provider_key_the_official_provider_reads_is_accepted(cloud: Any) -> None:
    deployment = load(StackConfig.from_stack_file(cloud()), "test")
    namespace = deployment.provider_namespace
    for key in deployment.provider_config:
        value = "http://127.0.0.1:4080/v1" if key.startswith("endpoint") else "eu-central-1"
        config = StackConfig.from_stack_file({**cloud(), f"{namespace}:{key}": value})
        problems = _provider_config_problems(config, type(deployment), {deployment.provider})
        assert problems == [], key


def test_two_owners_whose_names_run_into_each_other_never_share_a_name() -> None:
    """Owners 'a' and 'a-b' are both legal; with hyphen-free pool and shared names,
    everything a stack names starts with '<owner>-' and has no other owner's prefix."""
    first = load(StackConfig.from_stack_file(with_pool(hetzner(owner="a"), 0, name="bc")), "x")
    second = load(StackConfig.from_stack_file(with_pool(hetzner(owner="a-b"), 0, name="c")), "y")

    def names(deployment: Any) -> set[str]:
        made = {deployment.owned("pools")}
        for pool in deployment.pools:
            made |= {machine_name(deployment.owner, pool.name, n) for n in range(1, pool.size + 1)}
        return made

    assert names(first).isdisjoint(names(second))


def test_plain_user_data_is_warned_about_and_secret_user_data_is_not() -> None:
    config = with_pool(hetzner(), 1, userData="#cloud-config\n")
    plain = StackConfig.from_stack_file(config)
    [warning] = plain_user_data(plain, load(plain, "test"))
    assert "pools[1].userData of pool arm is in plain text" in warning
    assert "--secret" in warning
    assert "#cloud-config" not in warning

    secret = StackConfig.from_stack_file(with_pool(hetzner(), 1, userData={"secure": "v1:abc"}))
    assert plain_user_data(secret, load(secret, "test")) == []


@pytest.mark.parametrize("market", ["on-demand", "spot", "spot-then-on-demand"])
def test_an_ec2_pool_takes_every_market(market: str) -> None:
    deployment = load(StackConfig.from_stack_file(with_pool(ec2(), 0, market=market)), "test")
    assert deployment.pools[0].market == market
    assert deployment.pools[1].market == "on-demand"


def test_a_hetzner_pool_is_on_demand_by_default_and_may_say_so() -> None:
    config = with_pool(hetzner(), 0, market="on-demand")
    deployment = load(StackConfig.from_stack_file(config), "test")
    assert [pool.market for pool in deployment.pools] == ["on-demand", "on-demand"]


def test_a_created_security_group_has_no_id_before_up_but_the_catalogue_needs_none():
    group = {"name": "pools", "vpc": "vpc-0a", "ingress": []}
    deployment = load(StackConfig.from_stack_file(ec2(securityGroup=group)), "test")
    assert "ORCA_EC2_SECURITY_GROUP" not in deployment.env()
    catalogue = deployment.catalogue_env()
    assert catalogue["ORCA_EC2_SECURITY_GROUP"].startswith("sg-")
    assert {k: v for k, v in catalogue.items() if k != "ORCA_EC2_SECURITY_GROUP"} == (
        deployment.env()
    )
    named = load(StackConfig.from_stack_file(ec2()), "test")
    assert named.catalogue_env() == named.env()
