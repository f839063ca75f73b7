"""EC2's side of a shared resource leaving: an up that replaces the security group the
pools' instances are in deletes the autoscaler's instances in the old one first (their
pool's reaper is replaced), while the stack's move to the new group; the aws stand-in on
moto's server, through the CLI.

moto deletes a security group whatever is still in it (EC2 answers DependencyViolation,
which the stand-in retries until its delete timeout): here, the autoscaler's instance
left in a deleted group is what the old order showed."""

from __future__ import annotations

import pytest

from machines import automation
from testkit import moto_server
from testkit.commands import machines_cli
from testkit.engine_stacks import EC2_STACK, ec2_stack_config
from testkit.specs import spec

pytestmark = pytest.mark.engine

OWNER = {"Name": "tag:orca-owner", "Values": ["prod"]}


def running(url: str) -> dict[str, list[str]]:
    """Owner prod's instances not terminated, by Name tag, with their groups' names."""
    found = {}
    for reservation in moto_server.client(url).describe_instances(Filters=[OWNER])["Reservations"]:
        for instance in reservation["Instances"]:
            if instance["State"]["Name"] != "terminated":
                tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
                found[tags["Name"]] = sorted(g["GroupName"] for g in instance["SecurityGroups"])
    return found


def test_an_up_replacing_the_security_group_deletes_the_autoscalers_instances_first(
    ec2_deployment,
):
    automation.up(EC2_STACK)
    made = automation.provider(EC2_STACK).create(
        spec("arm-a1", cloud="ec2", machine_type="t4g.small", pool="arm")
    )
    assert made.ok, made.reason
    group = ec2_stack_config(
        ec2_deployment.moto.url, ec2_deployment.network, ec2_deployment.policy
    )["orca-machines:securityGroup"]
    automation.set_config(EC2_STACK, {"orca-machines:securityGroup": {**group, "name": "workers"}})

    done = machines_cli("up", EC2_STACK)

    assert done.returncode == 0, done.stderr
    after = running(ec2_deployment.moto.url)
    assert "arm-a1" not in after
    assert after
    groups = moto_server.client(ec2_deployment.moto.url).describe_security_groups()
    assert "prod-pools" not in {g["GroupName"] for g in groups["SecurityGroups"]}
    assert "1 made by the autoscaler" in done.stdout
    automation.destroy(EC2_STACK)
