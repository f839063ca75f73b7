"""A pool's options through the real engine and both faces: the stack's machine (official
hcloud plugin on the emulator, the aws stand-in on moto's server) and the runtime's machine
of the same pool, made from the stack's exported ``ORCA_POOLS`` by ``automation.provider``,
read back by clients nobody here wrote (hcloud-python, boto3): the same disk, metadata
options, shutdown behaviour, tags; public addresses, network, placement group, image and
labels."""

from __future__ import annotations

from typing import Any

import pytest

from machines import automation
from machines.automation import ci_preview
from machines.automation.diff import Diff
from machines.automation.pool_report import StackPools
from testkit import moto_server
from testkit.engine_stacks import EC2_STACK
from testkit.specs import spec

pytestmark = pytest.mark.engine

INSTANCE = "aws:ec2/instance:Instance"

HETZNER_OPTIONS = {
    "ipv4": False,
    "network": "ci",
    "placementGroup": "spread",
    "imageSelector": "role=ci-worker",
    "labels": {"team": "ci"},
}


def preview_and_pools(stack: str) -> tuple[Diff, StackPools]:
    """The stack's preview and its pool lines, as the CI command counts them."""
    [result] = ci_preview.run([stack])
    assert result.diff is not None, result.error
    assert result.pools is not None
    return result.diff, result.pools


def ec2_machine(aws: Any, instance_id: str) -> dict[str, Any]:
    """What boto3 reads of an instance: root volume, metadata options, shutdown, tags."""
    [instance] = [
        i
        for r in aws.describe_instances(InstanceIds=[instance_id])["Reservations"]
        for i in r["Instances"]
    ]
    [volume] = aws.describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [instance_id]}]
    )["Volumes"]
    shutdown = aws.describe_instance_attribute(
        InstanceId=instance_id, Attribute="instanceInitiatedShutdownBehavior"
    )["InstanceInitiatedShutdownBehavior"]["Value"]
    tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
    metadata = instance["MetadataOptions"]
    return {
        "volume": (volume["Size"], volume["VolumeType"], volume["Encrypted"]),
        "metadata": (metadata["HttpTokens"], metadata["HttpPutResponseHopLimit"]),
        "shutdown": shutdown,
        "image": instance["ImageId"],
        "team": tags.get("team"),
    }


def test_the_stacks_and_the_runtimes_ec2_machine_of_a_pool_are_the_same(ec2_deployment):
    """The example stack's pool x86 sets every EC2 option to its default explicitly, its
    image by Canonical's owner and name filter, and a tag."""
    aws = moto_server.client(ec2_deployment.moto.url)
    automation.up(EC2_STACK)
    [kept] = [
        i["InstanceId"]
        for r in aws.describe_instances(
            Filters=[{"Name": "tag:Name", "Values": ["prod-x86-1.stack"]}]
        )["Reservations"]
        for i in r["Instances"]
    ]
    provider = automation.provider(EC2_STACK)
    pool = provider.pool("x86")
    assert (pool.machine_type, pool.location) == ("t3.small", "eu-central-1b")

    created = provider.create(
        spec(
            "x86-7", cloud="ec2", machine_type=pool.machine_type, location=pool.location, pool="x86"
        )
    )

    assert created.machine is not None, created.reason
    stacks, runtimes = ec2_machine(aws, kept), ec2_machine(aws, created.machine.id)
    assert stacks == runtimes
    assert stacks == {
        "volume": (30, "gp3", True),
        "metadata": ("required", 1),
        "shutdown": "terminate",
        "image": moto_server.NEW_AMD64,
        "team": "ci",
    }
    assert provider.delete(created.machine.id)

    # An in-place option and one that replaces, as the engine and the preview's words say.
    automation.set_config(
        EC2_STACK, {"orca-machines:pools[1].ec2.metadata.hopLimit": "2"}, path=True
    )
    diff, pools = preview_and_pools(EC2_STACK)
    assert [(c.op, c.name) for c in diff.changes if c.type == INSTANCE] == [
        ("update", "prod-x86-1")
    ]
    [x86] = [p for p in pools.pools if p.pool == "x86"]
    assert x86.sentence() == (
        "changes pool `x86`'s options: ec2.metadata.hopLimit 1 → 2: in place on its 1 kept "
        "machine; the autoscaler's machines get them when next made"
    )
    automation.set_config(
        EC2_STACK, {"orca-machines:pools[1].ec2.rootVolume.encrypted": "false"}, path=True
    )
    diff, pools = preview_and_pools(EC2_STACK)
    assert [(c.op, c.name) for c in diff.changes if c.type == INSTANCE] == [
        ("replace", "prod-x86-1")
    ]
    [x86] = [p for p in pools.pools if p.pool == "x86"]
    assert "replaces its 1 kept machine (ec2.rootVolume.encrypted)" in x86.sentence()
    automation.destroy(EC2_STACK)


def hetzner_machine(hcloud: Any, server_id: int) -> dict[str, Any]:
    """What hcloud-python reads of a server: addresses, network, group, image, labels."""
    server = hcloud.servers.get_by_id(server_id)
    public = server.public_net
    return {
        "ipv4": public is not None and public.ipv4 is not None,
        "ipv6": public is not None and public.ipv6 is not None,
        "networks": [p.network.id for p in server.private_net or []],
        "group": server.placement_group.id if server.placement_group else None,
        "image": server.image.id if server.image else None,
        "team": (server.labels or {}).get("team"),
    }


def test_the_stacks_and_the_runtimes_hetzner_machine_of_a_pool_are_the_same(deployment):
    """Pool x86 of the local stack, IPv6 only, in a network and a spread group the stack
    creates, on the newest snapshot of a label selector."""
    emulator, hcloud = deployment.emulator, deployment.hcloud
    emulator.control.add_image(labels={"role": "ci-worker"}, created="2026-01-01T00:00:00+00:00")
    newest = emulator.control.add_image(
        labels={"role": "ci-worker"}, created="2026-06-01T00:00:00+00:00"
    )
    emulator.control.add_image(
        architecture="arm", labels={"role": "ci-worker"}, created="2026-06-02T00:00:00+00:00"
    )
    automation.set_config(
        "local",
        {
            "orca-machines:networks": [{"name": "ci"}],
            "orca-machines:placementGroups": [{"name": "spread"}],
        },
    )
    automation.set_config(
        "local",
        {
            "orca-machines:pools": [
                {
                    "name": "x86",
                    "machineType": "cx23",
                    "location": "fsn1",
                    "size": 1,
                    "max": 4,
                    "hetzner": HETZNER_OPTIONS,
                }
            ]
        },
    )
    automation.up("local")
    [network] = hcloud.networks.get_all(name="local-ci")
    [group] = hcloud.placement_groups.get_all(name="local-spread")
    kept = hcloud.servers.get_by_name("local-x86-1.stack")
    provider = automation.provider("local")
    pool = provider.pool("x86")

    created = provider.create(
        spec("x86-7", machine_type=pool.machine_type, location=pool.location, pool="x86")
    )

    assert created.machine is not None, created.reason
    stacks, runtimes = (
        hetzner_machine(hcloud, kept.id),
        hetzner_machine(hcloud, int(created.machine.id)),
    )
    assert stacks == runtimes
    assert stacks == {
        "ipv4": False,
        "ipv6": True,
        "networks": [network.id],
        "group": group.id,
        "image": newest,
        "team": "ci",
    }
    [listed] = [m for m in provider.machines("x86") if m.id == created.machine.id]
    assert listed.address == created.machine.address != ""
    assert provider.delete(created.machine.id)
    notes = preview_and_pools("local")[1].notes
    assert any(n.startswith("pool x86: no primary IPv4 saves 0.50 EUR a month") for n in notes)
    automation.destroy("local")
