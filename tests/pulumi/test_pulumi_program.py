"""The real program on chosen configurations, under mocks: sizes, lookups, existing resources."""

from __future__ import annotations

import copy

import pytest

from machines.program.config.stack_config import PROJECT
from machines.runtime.clouds.ec2.settings import UBUNTU_OWNER, ubuntu_ami_name
from machines.runtime.labels import stack_labels
from machines.runtime.pool import pools_of
from testkit.program_harness import (
    AMIS,
    FIREWALL_IDS,
    STACKS,
    CloudMocks,
    ec2,
    hetzner,
    is_secret,
    reveal,
    run,
    stack_file,
    stack_name,
)

SERVER = "hcloud:index/server:Server"
INSTANCE = "aws:ec2/instance:Instance"
POOLS = f"{PROJECT}:pools"


def test_every_example_stack_is_tested() -> None:
    assert {stack_name(p) for p in STACKS} >= {"local", "hetzner-example", "ec2-example"}


def test_the_local_stack_aims_at_the_emulator_and_creates_its_infrastructure() -> None:
    (path,) = [p for p in STACKS if stack_name(p) == "local"]
    config = stack_file(path)
    assert config["hcloud:endpoint"] == "http://127.0.0.1:4080/v1"
    assert config[f"{PROJECT}:provider"] == "hetzner"
    result = run(config, stack="local")
    assert result.outputs["env"]["HCLOUD_ENDPOINT"] == "http://127.0.0.1:4080/v1"
    assert result.of_type("hcloud:index/firewall:Firewall")
    assert result.of_type("hcloud:index/sshKey:SshKey")


def test_a_new_size_adds_or_removes_machines_at_the_end_only() -> None:
    def servers(size: int) -> dict[str, dict[str, object]]:
        config = hetzner()
        pools = copy.deepcopy(config[POOLS])
        pools[0]["size"] = size
        config[POOLS] = pools
        return {r.name: r.inputs for r in run(config).of_type(SERVER)}

    two, three, one = servers(2), servers(3), servers(1)
    assert set(three) - set(two) == {"test-x86-3"}
    assert set(two) - set(one) == {"test-x86-2"}
    assert set(one) == {"test-x86-1", "test-arm-1"}
    for name, inputs in two.items():
        assert three[name] == inputs
    for name, inputs in one.items():
        assert two[name] == inputs


def test_a_pool_of_size_zero_has_no_machines_but_is_declared() -> None:
    config = hetzner()
    config[POOLS][1]["size"] = 0
    result = run(config)
    assert sorted(r.name for r in result.of_type(SERVER)) == ["test-x86-1", "test-x86-2"]
    assert "arm" in [r.name for r in result.of_type("orca:machines:Pool")]
    assert result.outputs["pools"]["arm"]["machines"] == []


def test_hetzner_defaults_without_keys_or_firewall() -> None:
    result = run(hetzner())
    for server in result.of_type(SERVER):
        assert server.inputs["image"] == "ubuntu-24.04"
        assert "firewallIds" not in server.inputs
        assert not server.inputs.get("sshKeys")
    assert cloud_settings(result.outputs["env"]) == {
        "HCLOUD_ENDPOINT": "https://api.hetzner.cloud/v1",
        "ORCA_HCLOUD_IMAGE": "ubuntu-24.04",
    }


def test_existing_hetzner_firewall_and_keys_are_used_by_name() -> None:
    result = run(hetzner(firewall="workers", sshKeys=["ops", "ci"], image="debian-12"))
    assert not result.of_type("hcloud:index/firewall:Firewall")
    assert not result.of_type("hcloud:index/sshKey:SshKey")
    assert ("hcloud:index/getFirewall:getFirewall", {"name": "workers"}) in result.calls
    for server in result.of_type(SERVER):
        assert server.inputs["firewallIds"] == [FIREWALL_IDS["workers"]]
        assert server.inputs["sshKeys"] == ["ops", "ci"]
        assert server.inputs["image"] == "debian-12"
    assert cloud_settings(result.outputs["env"]) == {
        "HCLOUD_ENDPOINT": "https://api.hetzner.cloud/v1",
        "ORCA_HCLOUD_IMAGE": "debian-12",
        "ORCA_HCLOUD_SSH_KEYS": "ops,ci",
        "ORCA_HCLOUD_FIREWALL": "workers",
    }


def test_the_owner_names_and_labels_the_machines() -> None:
    result = run(hetzner(owner="team-a"), stack="prod")
    names = sorted(r.name for r in result.of_type(SERVER))
    assert names == ["team-a-arm-1", "team-a-x86-1", "team-a-x86-2"]
    assert {r.inputs["labels"]["orca-owner"] for r in result.of_type(SERVER)} == {"team-a"}
    assert result.outputs["owner"] == "team-a"
    # the runtime's messages name the stack by its name, not by its owner
    assert result.outputs["env"]["ORCA_STACK"] == "prod"


def test_the_ami_is_canonicals_newest_ubuntu_for_the_types_architecture() -> None:
    result = run(ec2())
    amis = [args for token, args in result.calls if token == "aws:ec2/getAmi:getAmi"]
    assert len(amis) == 2
    for args in amis:
        assert args["owners"] == [UBUNTU_OWNER]
        assert args["mostRecent"] is True
    patterns = sorted(a["filters"][0]["values"][0] for a in amis)
    assert patterns == sorted([ubuntu_ami_name("arm64"), ubuntu_ami_name("amd64")])
    by_name = {r.name: r for r in result.of_type(INSTANCE)}
    assert by_name["test-arm-1"].inputs["ami"] == AMIS[ubuntu_ami_name("arm64")]
    assert by_name["test-x86-1"].inputs["ami"] == AMIS[ubuntu_ami_name("amd64")]
    assert all(r.ignore_changes == ("ami",) for r in by_name.values())


def test_an_instance_type_of_two_architectures_counts_as_64_bit() -> None:
    config = ec2()
    config[POOLS] = [
        {"name": "old", "machineType": "t2.micro", "location": "eu-central-1a", "size": 1}
    ]
    result = run(config)
    assert result.outputs["pools"]["old"]["arch"] == "amd64"


def test_a_configured_ami_is_used_without_a_lookup() -> None:
    result = run(ec2(image="ami-0pinned"))
    assert not [token for token, _ in result.calls if token == "aws:ec2/getAmi:getAmi"]
    for instance in result.of_type(INSTANCE):
        assert instance.inputs["ami"] == "ami-0pinned"
        assert instance.ignore_changes == ()
    assert result.outputs["env"]["ORCA_EC2_IMAGE"] == "ami-0pinned"


def test_existing_security_group_and_profile_are_used_as_given() -> None:
    result = run(ec2())
    assert not result.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert not result.of_type("aws:iam/role:Role")
    for instance in result.of_type(INSTANCE):
        assert instance.inputs["vpcSecurityGroupIds"] == ["sg-0123"]
        assert instance.inputs["iamInstanceProfile"] == "orca-workers"
        assert instance.inputs["subnetId"] in ("subnet-0a", "subnet-0b")
    assert cloud_settings(result.outputs["env"]) == {
        "AWS_REGION": "eu-central-1",
        "ORCA_EC2_SUBNETS": "eu-central-1a=subnet-0a,eu-central-1b=subnet-0b",
        "ORCA_EC2_SECURITY_GROUP": "sg-0123",
        "ORCA_EC2_INSTANCE_PROFILE": "orca-workers",
    }
    addresses = [m["address"] for m in result.outputs["pools"]["arm"]["machines"]]
    assert all(a.startswith("10.0.") for a in addresses)


def test_a_created_security_group_translates_the_rules() -> None:
    group = {
        "name": "pools",
        "vpc": "vpc-0a",
        "ingress": [
            {"protocol": "tcp", "port": "8000-9000", "sourceIps": ["10.0.0.0/8", "fd00::/8"]},
            {"protocol": "icmp", "sourceIps": ["0.0.0.0/0"]},
            {"protocol": "all", "sourceIps": ["192.168.0.0/16"]},
        ],
    }
    result = run(ec2(securityGroup=group))
    (created,) = result.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert created.inputs["name"] == "test-pools"
    tcp, icmp, every = created.inputs["ingress"]
    assert (tcp["protocol"], tcp["fromPort"], tcp["toPort"]) == ("tcp", 8000, 9000)
    assert (tcp["cidrBlocks"], tcp["ipv6CidrBlocks"]) == (["10.0.0.0/8"], ["fd00::/8"])
    assert (icmp["fromPort"], icmp["toPort"]) == (-1, -1)
    assert (every["protocol"], every["fromPort"], every["toPort"]) == ("-1", 0, 0)
    assert result.outputs["env"]["ORCA_EC2_SECURITY_GROUP"] == created.id


def test_a_secret_token_is_accepted() -> None:
    config = {**hetzner(), "hcloud:token": "t" * 64}
    result = run(config, secret_keys=("hcloud:token",))
    assert "t" * 64 not in repr(result.outputs)


REAPER = "pulumi-python:dynamic:Resource"


def with_max(config: dict[str, object], **limits: int) -> dict[str, object]:
    pools = copy.deepcopy(config[POOLS])
    assert isinstance(pools, list)
    for pool in pools:
        if pool["name"] in limits:
            pool["max"] = limits[pool["name"]]
    return {**config, POOLS: pools}


def test_a_pools_max_is_exported_with_the_runtime_settings() -> None:
    for config in (hetzner(), ec2()):
        env = run(with_max(config, x86=20, arm=5)).outputs["env"]
        assert {n: p.max for n, p in pools_of(env).items()} == {"x86": 20, "arm": 5}
        assert {p.max for p in pools_of(run(config).outputs["env"]).values()} == {None}
        assert "ORCA_POOL_MAX" not in env


def test_a_pools_market_is_exported_with_the_runtime_settings() -> None:
    pools = copy.deepcopy(ec2()[POOLS])
    pools[0]["market"] = "spot"
    pools[1]["market"] = "on-demand"
    env = run({**ec2(), POOLS: pools}).outputs["env"]
    markets = {n: p.market.value for n, p in pools_of(env).items()}
    assert markets == {"arm": "spot", "x86": "on-demand"}
    assert "ORCA_POOL_MARKET" not in env


def cloud_settings(env: dict[str, str]) -> dict[str, str]:
    """A stack's ``env`` output without its pools (``ORCA_POOLS``) and its name
    (``ORCA_STACK``): the cloud's settings."""
    return {k: v for k, v in env.items() if k not in ("ORCA_POOLS", "ORCA_STACK")}


def test_a_spot_pools_kept_instances_are_one_time_spot_instances_ending_on_interruption() -> None:
    pools = copy.deepcopy(ec2()[POOLS])
    pools[0]["market"] = "spot"
    pools[1]["market"] = "spot-then-on-demand"
    instances = {r.name: r.inputs for r in run({**ec2(), POOLS: pools}).of_type(INSTANCE)}

    spot = {
        "marketType": "spot",
        "spotOptions": {
            "spotInstanceType": "one-time",
            "instanceInterruptionBehavior": "terminate",
        },
    }
    assert instances["test-arm-1"]["instanceMarketOptions"] == spot
    assert instances["test-arm-2"]["instanceMarketOptions"] == spot
    assert "instanceMarketOptions" not in instances["test-x86-1"]


def test_an_on_demand_pools_instances_have_no_market_options() -> None:
    for inputs in (r.inputs for r in run(ec2()).of_type(INSTANCE)):
        assert "instanceMarketOptions" not in inputs


def test_a_stack_keeps_its_machines_labelled_for_the_runtime_to_leave_alone() -> None:
    for server in run(hetzner()).of_type(SERVER):
        assert server.inputs["labels"]["orca-managed-by"] == "pulumi"
    for instance in run(ec2()).of_type(INSTANCE):
        assert instance.inputs["tags"]["orca-managed-by"] == "pulumi"


def test_the_reapers_carry_a_secret_token_only_as_a_secret() -> None:
    token = "t" * 64
    result = run({**hetzner(), "hcloud:token": token}, secret_keys=("hcloud:token",))
    reapers = result.of_type(REAPER)
    assert sorted(r.name for r in reapers) == ["arm-autoscaled", "x86-autoscaled"]
    for reaper in reapers:
        credentials = reaper.inputs["credentials"]
        assert is_secret(credentials)
        assert reveal(credentials) == {"HCLOUD_TOKEN": token}
        plain = {k: v for k, v in reaper.inputs.items() if k not in ("credentials", "__provider")}
        assert token not in repr(plain)
        assert is_secret(reaper.inputs["__provider"])


def kept_server(name: str, server_type: str, pool: str, owner: str = "test") -> dict[str, object]:
    """A server the stack already keeps in ``pool``, as Hetzner lists it."""
    return {"name": name, "serverType": server_type, "labels": stack_labels(pool, owner)}


def test_a_type_change_to_another_architecture_is_refused_before_anything_is_made() -> None:
    cloud = CloudMocks([kept_server("test-arm-1", "cax11", "arm")])
    config = hetzner()
    config[POOLS][1]["machineType"] = "cx23"

    with pytest.raises(Exception, match="pool arm: machineType cx23 .amd64. runs another") as e:
        run(config, cloud=cloud)

    assert "cax11 (arm64)" in str(e.value)
    assert "refused before anything is touched" in str(e.value)
    assert not [name for (typ, name) in cloud.inputs if typ == SERVER]


def test_a_type_change_within_the_architecture_is_declared() -> None:
    cloud = CloudMocks([kept_server("test-arm-1", "cax11", "arm")])
    config = hetzner()
    config[POOLS][1]["machineType"] = "cax21"

    result = run(config, cloud=cloud)

    assert reveal(result.named(SERVER, "test-arm-1").inputs["serverType"]) == "cax21"


def test_the_reapers_provider_takes_no_configuration_on_either_cloud() -> None:
    for config in (hetzner(), ec2()):
        result = run(config)
        (provider,) = result.of_type("pulumi:providers:pulumi-python")
        assert provider.inputs == {}
        reapers = result.of_type(REAPER)
        assert reapers
        assert all(r.provider.startswith(f"{provider.urn}::") for r in reapers)
