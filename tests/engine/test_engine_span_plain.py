"""Plain ``pulumi`` on a stack whose pool spans Hetzner (the emulator, the official hcloud
plugin) and EC2 (moto's server, the aws stand-in), as docs/operating.md "A pool that spans
clouds" says an operator may run it: no automation, only the documented variables (both
clouds' credentials in the environment and the stack's passphrase).

The module's tests run in order on one ``span`` stack: a plain ``up`` with Hetzner's cax11
out of stock in fsn1 and nbg1 makes pool arm's stack machine on EC2; the autoscaler makes
one there too, and one on Hetzner once stock is back; a second plain ``up`` moves nothing; a
plain ``preview`` that cannot read Hetzner fails at its refresh, and without the refresh
stops with the program's one line, changing nothing; a plain ``destroy`` leaves no machine
of the owner on either cloud (the autoscaler's go with the pools' reapers), nor the shared
resources."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from typing import Any

import pytest

from machines import Created, MachineSpec, automation
from testkit import moto_server
from testkit.commands import operator_pulumi
from testkit.engine_stacks import EC2_PASSPHRASE, SPAN_STACK

pytestmark = pytest.mark.engine

OWNER = "prod"
ARM_OUT = [
    {"server_type": "cax11", "location": "fsn1"},
    {"server_type": "cax11", "location": "nbg1"},
]
WRONG_TOKEN = "w" * 64
"""A token of the right shape that the emulator does not know."""
UNREADABLE = "pool arm names its places, and where its machines are now could not be read"
"""The start of the program's one line when the clouds cannot be read (machines.program.reading)."""


def plain(
    span_deployment: Any, *args: str, environ: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``pulumi ARGS --stack span`` as an operator runs it: this process's credentials of
    both clouds (the fixture's), the stack's passphrase, the fixture's backend."""
    return operator_pulumi(
        span_deployment.project, span_deployment.state, SPAN_STACK, *args,
        passphrase=EC2_PASSPHRASE, environ=environ,
    )  # fmt: skip


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def hetzner_servers(span_deployment: Any) -> dict[str, str]:
    """Owner prod's servers on the emulator that are not being deleted (a reaper waits
    until each is gone or deleting), by name, with their location."""
    servers = span_deployment.hcloud.servers.get_all(label_selector=f"orca-owner={OWNER}")
    return {s.name: s.location.name for s in servers if s.status != "deleting"}


def ec2_instances(span_deployment: Any) -> dict[str, dict[str, str]]:
    """Owner prod's instances on moto that are not terminated or shutting down, by Name
    tag, with their tags and ``InstanceId``."""
    live = moto_server.live_instances(span_deployment.moto.url, OWNER)
    return {
        name: {"InstanceId": i["InstanceId"], **{t["Key"]: t["Value"] for t in i.get("Tags", [])}}
        for name, i in live.items()
        if i["State"]["Name"] != "shutting-down"
    }


def machine_ids(span_deployment: Any) -> dict[str, str]:
    """Every machine of owner prod on both clouds, by name, with its cloud's id: a machine
    made anew under the same name has another."""
    servers = span_deployment.hcloud.servers.get_all(label_selector=f"orca-owner={OWNER}")
    ids = {s.name: f"hetzner:{s.id}" for s in servers}
    ids.update({n: f"ec2:{t['InstanceId']}" for n, t in ec2_instances(span_deployment).items()})
    return ids


def shared(span_deployment: Any) -> dict[str, list[str]]:
    """The shared resources of owner prod the stack makes: the emulator's firewalls and SSH
    keys, moto's security groups and instance profiles, by name."""
    hcloud = span_deployment.hcloud
    selector = f"orca-owner={OWNER}"
    groups = moto_server.client(span_deployment.moto.url).describe_security_groups(
        Filters=[{"Name": "group-name", "Values": [f"{OWNER}-pools"]}]
    )["SecurityGroups"]
    profiles = moto_server.client(span_deployment.moto.url, "iam").list_instance_profiles()
    return {
        "firewalls": sorted(f.name for f in hcloud.firewalls.get_all(label_selector=selector)),
        "ssh_keys": sorted(k.name for k in hcloud.ssh_keys.get_all(label_selector=selector)),
        "security_groups": sorted(g["GroupName"] for g in groups),
        "instance_profiles": sorted(
            p["InstanceProfileName"]
            for p in profiles["InstanceProfiles"]
            if p["InstanceProfileName"].startswith(f"{OWNER}-")
        ),
    }


def autoscale(name: str) -> Created:
    """The autoscaler's create of a machine of pool arm, as docs/runtime.md's does: a
    provider built from the stack now (so its catalogue is read now), the pool's own type
    and location."""
    provider = automation.provider(SPAN_STACK)
    pool = provider.pool("arm")
    spec = MachineSpec(
        name=name, machine_type=pool.machine_type, location=pool.location, pool="arm"
    )
    return provider.create(spec)


def test_a_plain_up_makes_the_arm_machine_on_ec2_while_hetzner_is_out(span_deployment: Any) -> None:
    span_deployment.emulator.control.set_stock(ARM_OUT)

    ok(plain(span_deployment, "up", "--yes"))

    instances = ec2_instances(span_deployment)
    assert set(instances) == {"prod-arm-1.stack"}
    assert instances["prod-arm-1.stack"]["orca-managed-by"] == "pulumi"
    assert instances["prod-arm-1.stack"]["orca-pool"] == "arm"
    assert hetzner_servers(span_deployment) == {"prod-x86-1.stack": "fsn1"}


def test_the_autoscaler_makes_arm_on_ec2_then_on_hetzner_once_stock_is_back(
    span_deployment: Any,
) -> None:
    made = autoscale("arm-a1")

    assert made.machine is not None, made.reason
    assert made.machine.cloud == "ec2"
    assert ec2_instances(span_deployment)["arm-a1"]["orca-owner"] == OWNER

    span_deployment.emulator.control.set_stock([])
    back = autoscale("arm-a2")

    assert back.machine is not None, back.reason
    assert (back.machine.cloud, back.machine.location) == ("hetzner", "fsn1")
    assert hetzner_servers(span_deployment)["arm-a2"] == "fsn1"


def test_a_second_plain_up_with_stock_back_moves_no_machine(span_deployment: Any) -> None:
    span_deployment.emulator.control.set_stock([])
    before = machine_ids(span_deployment)

    ok(plain(span_deployment, "up", "--yes"))

    assert machine_ids(span_deployment) == before
    assert ec2_instances(span_deployment)["prod-arm-1.stack"]["orca-managed-by"] == "pulumi"
    ok(plain(span_deployment, "preview", "--expect-no-changes"))


def seen(span_deployment: Any) -> tuple[dict[str, str], bytes]:
    """Both clouds' machines of owner prod and the stack's checkpoint, as they are now."""
    checkpoint = span_deployment.state / ".pulumi" / "stacks" / "orca-machines" / "span.json"
    return machine_ids(span_deployment), checkpoint.read_bytes()


def test_a_plain_preview_that_cannot_read_hetzner_fails_and_changes_nothing(
    span_deployment: Any,
) -> None:
    """``Pulumi.yaml``'s ``refresh: always`` reads the stack's resources first, so the plain
    preview an operator runs stops at the hcloud plugin's refusal before the program runs;
    without the refresh, the program stops with its own line. Neither changes anything."""
    before = seen(span_deployment)
    wrong = {"HCLOUD_TOKEN": WRONG_TOKEN}

    refreshed = plain(span_deployment, "preview", environ=wrong)
    program = plain(span_deployment, "preview", "--refresh=false", environ=wrong)

    assert refreshed.returncode != 0, refreshed.stdout
    assert "unable to authenticate" in refreshed.stdout, refreshed.stdout + refreshed.stderr
    assert program.returncode != 0, program.stdout
    said = [line.strip() for line in program.stdout.splitlines() if UNREADABLE in line]
    assert said, program.stdout + program.stderr
    errors = [line for line in said if line.startswith(f"error: {UNREADABLE}, ")]
    assert errors, said  # the Diagnostics' line, no traceback
    assert errors[0].endswith("check HCLOUD_TOKEN"), said
    assert "Traceback" not in program.stdout
    assert seen(span_deployment) == before


def test_a_plain_destroy_leaves_no_machine_of_the_owner_on_either_cloud(
    span_deployment: Any,
) -> None:
    assert set(machine_ids(span_deployment)) == {
        "prod-arm-1.stack",
        "prod-x86-1.stack",
        "arm-a1",
        "arm-a2",
    }
    assert shared(span_deployment) == {
        "firewalls": ["prod-pools"],
        "ssh_keys": ["prod-ci"],
        "security_groups": ["prod-pools"],
        "instance_profiles": ["prod-workers"],
    }

    ok(plain(span_deployment, "destroy", "--yes"))

    assert hetzner_servers(span_deployment) == {}
    assert ec2_instances(span_deployment) == {}
    assert shared(span_deployment) == {
        "firewalls": [],
        "ssh_keys": [],
        "security_groups": [],
        "instance_profiles": [],
    }
