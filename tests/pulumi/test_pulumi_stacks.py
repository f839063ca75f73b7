"""The real program on every stack file under stacks/, under mocks: what it declares and exports."""

from __future__ import annotations

from machines.program.clouds.ec2.components import EC2_SHARED_TYPE
from machines.program.clouds.hetzner.components import HETZNER_SHARED_TYPE
from machines.program.components import POOL_TYPE
from machines.program.reaper import REAPER_TYPE, reaper_name
from machines.runtime.arch import docker_arch
from machines.runtime.clouds.ec2.settings import Ec2Settings, ubuntu_ami_name
from machines.runtime.clouds.hetzner.settings import HCLOUD_TOKEN, HetznerSettings, hetzner_arch
from machines.runtime.pool import pools_of
from machines.runtime.settings import ORCA_POOLS, ORCA_STACK
from testkit.program_harness import (
    AMIS,
    INSTANCE_TYPES,
    SERVER_TYPES,
    SNAPSHOTS,
    Registered,
    StackRun,
    is_secret,
    reveal,
)

SERVER = "hcloud:index/server:Server"
INSTANCE = "aws:ec2/instance:Instance"
MACHINE = {"hetzner": SERVER, "ec2": INSTANCE}
SHARED = {"hetzner": HETZNER_SHARED_TYPE, "ec2": EC2_SHARED_TYPE}


def machines_of(stack: StackRun, pool: dict[str, object]) -> list[Registered]:
    """The machines the stack keeps in ``pool``: its component's children of the cloud's type."""
    component = stack.run.named(POOL_TYPE, str(pool["name"]))
    machine_type = MACHINE[stack.get("provider")]
    return [c for c in stack.run.children(component) if c.type == machine_type]


def arch_of(provider: str, machine_type: str) -> str:
    if provider == "hetzner":
        return docker_arch(SERVER_TYPES[machine_type])
    return docker_arch(INSTANCE_TYPES[machine_type][-1])


def test_each_pool_is_a_component_of_the_stack(stack: StackRun) -> None:
    components = stack.run.of_type(POOL_TYPE)
    assert sorted(c.name for c in components) == sorted(p["name"] for p in stack.pools)
    assert all(c.parent == stack.run.stack_urn and not c.custom for c in components)


def test_machines_are_children_of_their_pool_named_by_index(stack: StackRun) -> None:
    machine_type = MACHINE[stack.get("provider")]
    for pool in stack.pools:
        component = stack.run.named(POOL_TYPE, pool["name"])
        children = stack.run.children(component)
        assert {c.type for c in children} == {machine_type, REAPER_TYPE} - (
            set() if pool["size"] else {machine_type}
        )
        names = sorted(c.name for c in children if c.type == machine_type)
        expected = [f"{stack.owner}-{pool['name']}-{n}" for n in range(1, pool["size"] + 1)]
        assert names == sorted(expected)
    every = [r.name for r in stack.run.of_type(machine_type)]
    assert len(every) == sum(p["size"] for p in stack.pools)


def test_machines_carry_the_runtime_labels_and_cloud_names(stack: StackRun) -> None:
    provider = stack.get("provider")
    for pool in stack.pools:
        labels = {
            "orca": "pool",
            "orca-pool": pool["name"],
            "orca-owner": stack.owner,
            "orca-managed-by": "pulumi",
        }
        extra = pool.get(provider, {}).get("labels" if provider == "hetzner" else "tags", {})
        for machine in machines_of(stack, pool):
            inputs = machine.inputs
            cloud_name = f"{machine.name}.stack"
            if provider == "hetzner":
                assert inputs["name"] == cloud_name
                assert inputs["labels"] == {**extra, **labels}
                assert inputs["serverType"] == pool["machineType"]
                assert inputs["location"] == pool["location"]
            else:
                tags = {**extra, "Name": cloud_name, **labels}
                assert inputs["tags"] == tags
                assert inputs["volumeTags"] == tags
                assert inputs["instanceType"] == pool["machineType"]
                subnet = stack.get("subnets")[pool["location"]]
                assert inputs["subnetId"] == subnet


def test_machines_boot_the_runtime_image(stack: StackRun) -> None:
    provider = stack.get("provider")
    for pool in stack.pools:
        arch = arch_of(provider, pool["machineType"])
        for machine in machines_of(stack, pool):
            if provider == "hetzner" and pool.get("hetzner", {}).get("imageSelector"):
                assert machine.inputs["image"] == str(SNAPSHOTS[hetzner_arch(arch)])
            elif provider == "hetzner":
                assert machine.inputs["image"] == stack.get("image", "ubuntu-24.04")
            else:
                expected = stack.get("image") or AMIS[ubuntu_ami_name(arch)]
                assert machine.inputs["ami"] == expected
                assert machine.ignore_changes == (() if stack.get("image") else ("ami",))


def test_user_data_is_a_secret(stack: StackRun) -> None:
    seen = 0
    for pool in stack.pools:
        for machine in machines_of(stack, pool):
            if "userData" in pool:
                assert is_secret(machine.inputs["userData"])
                assert reveal(machine.inputs["userData"]) == pool["userData"]
                seen += 1
            else:
                assert "userData" not in machine.inputs
    assert seen, "every stack file shows userData on one pool"


def test_named_resources_go_before_their_replacement(stack: StackRun) -> None:
    named = [r for r in stack.run.resources if r.custom and "name" in r.inputs]
    named += stack.run.of_type(INSTANCE)
    assert named
    assert all(r.delete_before_replace for r in named)


def test_shared_infrastructure_is_owner_prefixed_and_labelled(stack: StackRun) -> None:
    (shared,) = stack.run.of_type(SHARED[stack.get("provider")])
    assert shared.parent == stack.run.stack_urn
    children = stack.run.children(shared)
    assert children
    for child in children:
        assert child.name.startswith(f"{stack.owner}-")
        if child.type == "hcloud:index/networkSubnet:NetworkSubnet":
            assert "labels" not in child.inputs  # a subnet has none: its network has them
        elif "labels" in child.inputs or child.type.startswith("hcloud:"):
            assert child.inputs["labels"] == {"orca-owner": stack.owner}
        elif "tags" in child.inputs:
            assert child.inputs["tags"] == {"Name": child.name, "orca-owner": stack.owner}


def test_hetzner_servers_use_the_keys_and_firewall(stack: StackRun) -> None:
    if stack.get("provider") != "hetzner":
        return
    keys = [k if isinstance(k, str) else f"{stack.owner}-{k['name']}" for k in stack.get("sshKeys")]
    (firewall,) = stack.run.of_type("hcloud:index/firewall:Firewall")
    assert firewall.inputs["name"] == f"{stack.owner}-{stack.get('firewall')['name']}"
    assert len(firewall.inputs["rules"]) == len(stack.get("firewall")["rules"])
    for server in stack.run.of_type(SERVER):
        assert server.inputs["sshKeys"] == keys
        assert server.inputs["firewallIds"] == [int(firewall.id)]
    created = stack.run.of_type("hcloud:index/sshKey:SshKey")
    assert {k.inputs["name"] for k in created} == {
        f"{stack.owner}-{k['name']}" for k in stack.get("sshKeys") if isinstance(k, dict)
    }


def test_ec2_instances_use_the_group_and_profile(stack: StackRun) -> None:
    if stack.get("provider") != "ec2":
        return
    (group,) = stack.run.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert group.inputs["vpcId"] == stack.get("securityGroup")["vpc"]
    assert group.inputs["egress"][0]["protocol"] == "-1"
    (profile,) = stack.run.of_type("aws:iam/instanceProfile:InstanceProfile")
    (role,) = stack.run.of_type("aws:iam/role:Role")
    assert "ec2.amazonaws.com" in role.inputs["assumeRolePolicy"]
    assert profile.inputs["role"] == role.inputs["name"] == profile.name
    for instance in stack.run.of_type(INSTANCE):
        assert instance.inputs["iamInstanceProfile"] == profile.name
        (group_id,) = instance.inputs["vpcSecurityGroupIds"]
        assert group_id == stack.run.outputs["env"]["ORCA_EC2_SECURITY_GROUP"]


def test_env_output_is_exactly_the_runtime_settings(stack: StackRun) -> None:
    env = stack.run.outputs["env"]
    if stack.get("provider") == "hetzner":
        settings = HetznerSettings.from_env({**env, HCLOUD_TOKEN: "t" * 64})
        assert settings.endpoint == stack.raw.get("hcloud:endpoint", settings.endpoint)
        assert settings.firewall == f"{stack.owner}-{stack.get('firewall')['name']}"
    else:
        settings = Ec2Settings.from_env(env)
        assert settings.region == stack.raw["aws:region"]
        assert settings.subnets == stack.get("subnets")
    limits = {p["name"]: p["max"] for p in stack.pools if "max" in p}
    pools = pools_of(env)
    assert {name: p.max for name, p in pools.items() if p.max is not None} == limits
    assert [(p.name, p.machine_type, p.location) for p in pools.values()] == [
        (p["name"], p["machineType"], p["location"]) for p in stack.pools
    ]
    assert env[ORCA_STACK] == stack.name  # the stack by its name: its owner is not it
    assert settings.env() == {k: v for k, v in env.items() if k not in (ORCA_POOLS, ORCA_STACK)}


def test_owner_provider_and_pools_outputs(stack: StackRun) -> None:
    outputs = stack.run.outputs
    provider = stack.get("provider")
    assert outputs["owner"] == stack.owner
    assert outputs["provider"] == provider
    assert list(outputs["pools"]) == [p["name"] for p in stack.pools]
    ids = set()
    for pool in stack.pools:
        shown = outputs["pools"][pool["name"]]
        arch = arch_of(provider, pool["machineType"])
        assert shown["arch"] == arch
        assert (shown["machineType"], shown["location"], shown["size"]) == (
            pool["machineType"],
            pool["location"],
            pool["size"],
        )
        names = [f"{stack.owner}-{pool['name']}-{n}.stack" for n in range(1, pool["size"] + 1)]
        assert [m["name"] for m in shown["machines"]] == names
        for machine in shown["machines"]:
            assert set(machine) == {"id", "name", "address", "arch"}
            assert machine["arch"] == arch
            assert machine["address"]
            ids.add(machine["id"])
    assert len(ids) == sum(p["size"] for p in stack.pools)


def test_outputs_never_show_user_data(stack: StackRun) -> None:
    texts = [p["userData"] for p in stack.pools if "userData" in p]
    assert not any(text in repr(stack.run.outputs) for text in texts)


def test_lookups_are_made_once_per_pool(stack: StackRun) -> None:
    tokens = [token for token, _ in stack.run.calls]
    lookup = {
        "hetzner": "hcloud:index/getServerType:getServerType",
        "ec2": "aws:ec2/getInstanceType:getInstanceType",
    }[stack.get("provider")]
    assert tokens.count(lookup) == len(stack.pools)


def test_each_pool_has_a_reaper_of_its_owner_and_pool(stack: StackRun) -> None:
    for pool in stack.pools:
        component = stack.run.named(POOL_TYPE, pool["name"])
        (reaper,) = [c for c in stack.run.children(component) if c.type == REAPER_TYPE]
        assert reaper.name == reaper_name(pool["name"])
        inputs = reaper.inputs
        assert (inputs["provider"], inputs["owner"], inputs["pool"]) == (
            stack.get("provider"),
            stack.owner,
            pool["name"],
        )
        assert is_secret(inputs["credentials"])
        # the reaper's settings: what it reaps with, the stack's name and pools not among them
        exported = stack.run.outputs["env"].items()
        assert inputs["env"] == {k: v for k, v in exported if k not in (ORCA_POOLS, ORCA_STACK)}
