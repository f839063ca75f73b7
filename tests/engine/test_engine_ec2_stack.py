"""The EC2 example stack through the real engine and the stand-in aws plugin, on moto's server.

One stack is reused across the module's tests, which run in order: up makes the tagged
instances and the shared group, role and profile (checked with boto3 directly against moto),
the runtime API is configured from the outputs, a size change previews as exactly one
instance, an unrelated change touches no instance, user data never shows in the state or a
preview, and destroy through the CLI leaves nothing behind.
"""

from __future__ import annotations

from typing import Any

import pytest

from machines import automation
from machines.cli.exits import ExitCode
from machines.runtime.pool import pools_of
from testkit import moto_server
from testkit.commands import machines_cli as cli
from testkit.engine_run import engine_counts
from testkit.engine_stacks import EC2_STACK, EC2_USER_DATA, EC2_USER_DATA_KEY, ec2_stack_config
from testkit.specs import spec

pytestmark = pytest.mark.engine

INSTANCE = "aws:ec2/instance:Instance"
GROUP = "aws:ec2/securityGroup:SecurityGroup"
USER_DATA = "package_update: true"
OWNER = {"Name": "tag:orca-owner", "Values": ["prod"]}


def instances(deployment: Any) -> dict[str, dict[str, Any]]:
    """The live instances of owner prod, by Name tag, straight from moto."""
    ec2 = moto_server.client(deployment.moto.url)
    found = {}
    for reservation in ec2.describe_instances(Filters=[OWNER])["Reservations"]:
        for instance in reservation["Instances"]:
            if instance["State"]["Name"] != "terminated":
                tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
                found[tags["Name"]] = {**instance, "tags": tags}
    return found


def test_up_creates_tagged_instances_and_the_shared_infrastructure(ec2_deployment):
    diff = automation.up(EC2_STACK)
    assert {c.op for c in diff.changes} == {"create"}
    created = {c.name for c in diff.changes if c.type == INSTANCE}
    assert created == {"prod-arm-1", "prod-arm-2", "prod-x86-1"}

    found = instances(ec2_deployment)
    assert set(found) == {f"{name}.stack" for name in created}
    for name, instance in found.items():
        pool = name.split("-")[1]
        assert instance["tags"] == {
            "Name": name,
            "orca": "pool",
            "orca-pool": pool,
            "orca-owner": "prod",
            "orca-managed-by": "pulumi",
            **({"team": "ci"} if pool == "x86" else {}),  # the example pool's extra tag
        }
        assert instance["IamInstanceProfile"]["Arn"].endswith("/prod-workers")
        assert instance["InstanceType"] == {"arm": "t4g.small", "x86": "t3.small"}[pool]
    ec2 = moto_server.client(ec2_deployment.moto.url)
    [group] = ec2.describe_security_groups(
        Filters=[{"Name": "group-name", "Values": ["prod-pools"]}]
    )["SecurityGroups"]
    assert [(p["FromPort"], p["IpRanges"][0]["CidrIp"]) for p in group["IpPermissions"]] == [
        (22, "203.0.113.0/24")
    ]
    assert {t["Key"]: t["Value"] for t in group["Tags"]} == {
        "Name": "prod-pools",
        "orca-owner": "prod",
    }
    volumes = ec2.describe_volumes(
        Filters=[
            {"Name": "attachment.instance-id", "Values": [found["prod-x86-1.stack"]["InstanceId"]]}
        ]
    )["Volumes"]
    assert {t["Key"]: t["Value"] for t in volumes[0]["Tags"]}["orca-pool"] == "x86"
    iam = moto_server.client(ec2_deployment.moto.url, "iam")
    profile = iam.get_instance_profile(InstanceProfileName="prod-workers")["InstanceProfile"]
    assert [r["RoleName"] for r in profile["Roles"]] == ["prod-workers"]
    attached = iam.list_attached_role_policies(RoleName="prod-workers")["AttachedPolicies"]
    assert [p["PolicyArn"] for p in attached] == [ec2_deployment.policy]


def test_the_runtime_gets_a_working_provider_from_the_stacks_outputs(ec2_deployment):
    env = automation.runtime_env(EC2_STACK)
    group = moto_server.client(ec2_deployment.moto.url).describe_security_groups(
        Filters=[{"Name": "group-name", "Values": ["prod-pools"]}]
    )["SecurityGroups"][0]["GroupId"]
    subnets = ec2_deployment.network.subnets
    pools = pools_of(env)
    assert {name: (p.machine_type, p.max) for name, p in pools.items()} == {
        "arm": ("t4g.small", 10),
        "x86": ("t3.small", None),
    }
    assert {k: v for k, v in env.items() if k != "ORCA_POOLS"} == {
        "ORCA_PROVIDER": "ec2",
        "ORCA_OWNER": "prod",
        "AWS_REGION": moto_server.REGION,
        "AWS_ENDPOINT_URL": ec2_deployment.moto.url,
        "ORCA_EC2_SUBNETS": ",".join(f"{zone}={subnet}" for zone, subnet in subnets.items()),
        "ORCA_EC2_SECURITY_GROUP": group,
        "ORCA_EC2_INSTANCE_PROFILE": "prod-workers",
        "ORCA_STACK": EC2_STACK,  # the stack by its name: its owner (prod) is not it
        "ORCA_FENCE_URL": ec2_deployment.state.as_uri(),
    }
    provider = automation.provider(EC2_STACK)
    assert sorted(m.name for m in provider.machines("arm")) == [
        "prod-arm-1.stack",
        "prod-arm-2.stack",
    ]
    assert provider.arch("t4g.small") == "arm64"


def test_preview_after_up_has_no_changes(ec2_deployment):
    done = cli("preview", EC2_STACK, "--diff")
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.splitlines() == [
        "pool arm: 2 kept by the stack, 0 made by the autoscaler, 0 to delete",
        "pool x86: 1 kept by the stack, 0 made by the autoscaler, 0 to delete",
        f"stack {EC2_STACK}: no changes",
    ]


def test_user_data_never_appears_in_plain_text(ec2_deployment):
    stored = [p for p in ec2_deployment.state.rglob("*") if p.is_file()]
    backend = "\n".join(p.read_text(errors="replace") for p in stored)
    assert "prod-x86-1" in backend
    assert USER_DATA not in backend
    shown = cli("outputs", EC2_STACK)
    assert shown.returncode == ExitCode.OK, shown.stderr
    assert "prod-x86-1" in shown.stdout
    assert USER_DATA not in shown.stdout

    changed = "#cloud-config\npackages: [jq]\n"
    automation.set_config(EC2_STACK, {EC2_USER_DATA_KEY: changed}, path=True, secret=True)
    lines: list[str] = []
    try:
        diff = automation.preview(EC2_STACK, on_output=lines.append)
    finally:
        automation.set_config(EC2_STACK, {EC2_USER_DATA_KEY: EC2_USER_DATA}, path=True, secret=True)
    instance_changes = [(c.op, c.name) for c in diff.changes if c.type == INSTANCE]
    assert instance_changes == [("update", "prod-x86-1")]
    shown_text = "\n".join([*lines, diff.markdown()])
    assert "userData" in diff.markdown()
    assert "packages: [jq]" not in shown_text
    assert USER_DATA not in shown_text


def test_a_size_change_previews_exactly_one_create(ec2_deployment):
    automation.set_config(EC2_STACK, {"orca-machines:pools[0].size": 3}, path=True)
    done = cli("preview", EC2_STACK, "--diff")
    assert done.returncode == ExitCode.CHANGES, done.stderr
    assert done.stdout.splitlines() == [
        f"+  create  {INSTANCE}  prod-arm-3",
        "pool arm: 2 → 3 kept by the stack, 0 made by the autoscaler, 0 to delete",
        "pool x86: 1 kept by the stack, 0 made by the autoscaler, 0 to delete",
        f"stack {EC2_STACK}: 1 to create, 0 to update, 0 to replace, 0 to delete",
    ]


def test_up_through_the_cli_applies_it_and_leaves_the_others_alone(ec2_deployment):
    before = {name: i["InstanceId"] for name, i in instances(ec2_deployment).items()}
    done = cli("up", EC2_STACK)
    assert done.returncode == ExitCode.OK, done.stderr
    after = {name: i["InstanceId"] for name, i in instances(ec2_deployment).items()}
    assert set(after) == {*before, "prod-arm-3.stack"}
    assert {name: after[name] for name in before} == before


def test_an_unrelated_change_touches_no_instance(ec2_deployment):
    before = {name: i["InstanceId"] for name, i in instances(ec2_deployment).items()}
    group = ec2_stack_config(
        ec2_deployment.moto.url, ec2_deployment.network, ec2_deployment.policy
    )["orca-machines:securityGroup"]
    ping = {"protocol": "icmp", "sourceIps": ["0.0.0.0/0"], "description": "ping"}
    group["ingress"] = [*group["ingress"], ping]
    automation.set_config(EC2_STACK, {"orca-machines:securityGroup": group})
    diff = automation.preview(EC2_STACK)
    assert [(c.op, c.type) for c in diff.changes] == [("update", GROUP)]
    diff = automation.up(EC2_STACK)
    assert [(c.op, c.type) for c in diff.changes] == [("update", GROUP)]
    after = {name: i["InstanceId"] for name, i in instances(ec2_deployment).items()}
    assert after == before
    assert not automation.preview(EC2_STACK).has_changes


def test_refresh_keeps_what_the_autoscaler_made_out_of_the_stack(ec2_deployment):
    made = automation.provider(EC2_STACK).create(
        spec("arm-a1", cloud="ec2", machine_type="t4g.small", pool="arm")
    )
    assert made.ok, made.reason
    counts = automation.refresh(EC2_STACK)
    assert counts.get("update", 0) == counts.get("delete", 0) == 0
    diff = automation.preview(EC2_STACK)
    assert not diff.has_changes
    arm = next(p for p in diff.pools if p.pool == "arm")
    assert (arm.kept, arm.autoscaled) == (3, 1)
    assert instances(ec2_deployment)["arm-a1"]["tags"].get("orca-managed-by") is None


def test_removing_a_pool_reaps_the_autoscalers_instances_there_only(ec2_deployment):
    made = automation.provider(EC2_STACK).create(
        spec(
            "x86-a1",
            cloud="ec2",
            machine_type="t3.small",
            location=moto_server.ZONES[1],
            pool="x86",
        )
    )
    assert made.ok, made.reason
    pools = [{"name": "arm", "machineType": "t4g.small", "location": "eu-central-1a", "size": 3}]
    automation.set_config(EC2_STACK, {"orca-machines:pools": pools})
    diff = automation.up(EC2_STACK)
    assert {(c.op, c.name) for c in diff.changes if c.type == INSTANCE} == {
        ("delete", "prod-x86-1")
    }
    assert set(instances(ec2_deployment)) == {
        "prod-arm-1.stack",
        "prod-arm-2.stack",
        "prod-arm-3.stack",
        "arm-a1",
    }


def test_destroy_through_the_cli_reaps_and_leaves_nothing_behind(ec2_deployment):
    done = cli("destroy", EC2_STACK, "--yes")
    assert done.returncode == ExitCode.OK, done.stderr
    deleted = engine_counts(done.stderr)["delete"]  # as the engine counts: its own summary
    assert deleted > 0
    assert done.stdout.rstrip().endswith(f"0 created, 0 updated, 0 replaced, {deleted} deleted")
    assert instances(ec2_deployment) == {}
    ec2 = moto_server.client(ec2_deployment.moto.url)
    groups = ec2.describe_security_groups()["SecurityGroups"]
    assert [g["GroupName"] for g in groups if g["GroupName"] != "default"] == []
    iam = moto_server.client(ec2_deployment.moto.url, "iam")
    assert iam.list_roles()["Roles"] == []
    assert iam.list_instance_profiles()["InstanceProfiles"] == []
    assert automation.outputs(EC2_STACK) == {}
