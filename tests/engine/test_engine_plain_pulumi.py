"""Plain ``pulumi``, as operators run it beside the project's CLI, reaches the cloud's truth
through the official plugin: ``Pulumi.yaml`` says ``options: refresh: always``, so ``up``,
``preview`` and ``destroy`` read the cloud first. A server deleted in the Cloud Console is
shown and made again, a pool shrunk past a server already gone shrinks, a destroy of such a
stack ends; on Hetzner (the hcloud plugin against the emulator) and EC2 (moto)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from machines import MachineSpec, automation
from testkit import moto_server
from testkit.commands import operator_pulumi
from testkit.engine_stacks import EC2_PASSPHRASE, EC2_STACK, ENGINE_VARIABLES

pytestmark = pytest.mark.engine

POOLS = "orca-machines:pools"
LAB = {"name": "lab", "machineType": "cx23", "location": "fsn1", "size": 2}
OWNER = "plain"


def pulumi(deployment: Any, *args: str) -> subprocess.CompletedProcess[str]:
    done = operator_pulumi(deployment.project, deployment.state, "local", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def live(deployment: Any) -> list[str]:
    return sorted(s.name for s in deployment.hcloud.servers.get_all() if s.status != "deleting")


def delete_in_the_console(deployment: Any, name: str) -> None:
    (server,) = [s for s in deployment.hcloud.servers.get_all() if s.name == name]
    deployment.hcloud.servers.delete(server)


def test_a_server_deleted_in_the_console_is_shown_by_a_plain_preview_and_made_by_a_plain_up(
    deployment,
):
    automation.set_config("local", {"orca-machines:owner": OWNER, POOLS: [LAB]})
    automation.up("local", on_output=lambda _line: None)
    delete_in_the_console(deployment, f"{OWNER}-lab-2.stack")

    preview = pulumi(deployment, "preview")
    assert "1 to create" in preview.stdout, preview.stdout

    pulumi(deployment, "up", "--yes")
    assert live(deployment) == [f"{OWNER}-lab-1.stack", f"{OWNER}-lab-2.stack"]
    assert not automation.preview("local", on_output=lambda _line: None).has_changes


def test_a_pool_shrunk_past_a_server_already_gone_shrinks_under_a_plain_up(deployment):
    delete_in_the_console(deployment, f"{OWNER}-lab-2.stack")
    pulumi(deployment, "config", "set", "--path", f"{POOLS}[0].size", "1")

    pulumi(deployment, "up", "--yes")

    assert live(deployment) == [f"{OWNER}-lab-1.stack"]


def test_a_plain_destroy_of_a_stack_whose_server_is_gone_ends(deployment):
    delete_in_the_console(deployment, f"{OWNER}-lab-1.stack")

    pulumi(deployment, "destroy", "--yes")

    assert live(deployment) == []
    assert automation.outputs("local") == {}


def instances(url: str) -> list[str]:
    """The names of the live instances moto holds."""
    ec2 = moto_server.client(url)
    return sorted(
        {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("Name", "")
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] not in ("terminated", "shutting-down")
    )


def test_an_instance_terminated_in_the_console_is_made_by_a_plain_up_on_ec2(ec2_deployment):
    automation.up(EC2_STACK, on_output=lambda _line: None)
    made = instances(ec2_deployment.moto.url)
    ec2 = moto_server.client(ec2_deployment.moto.url)
    gone = next(
        i["InstanceId"]
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] == "running"
    )
    ec2.terminate_instances(InstanceIds=[gone])
    assert len(instances(ec2_deployment.moto.url)) == len(made) - 1

    def plain(*args: str) -> subprocess.CompletedProcess[str]:
        done = operator_pulumi(
            ec2_deployment.project, ec2_deployment.state, EC2_STACK, *args,
            passphrase=EC2_PASSPHRASE,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    assert "1 to create" in plain("preview").stdout
    plain("up", "--yes")
    assert instances(ec2_deployment.moto.url) == made


def plain_ec2(ec2_deployment: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """A plain ``pulumi`` command on the EC2 stack, however it ends."""
    return operator_pulumi(
        ec2_deployment.project, ec2_deployment.state, EC2_STACK, *args, passphrase=EC2_PASSPHRASE
    )


def test_a_plain_up_of_a_mistaken_stack_says_each_problem_in_a_line_without_a_traceback(
    ec2_deployment,
):
    first = "orca-machines:pools[0]"
    automation.set_config(EC2_STACK, {f"{first}.size": 3, f"{first}.max": 2}, path=True)

    refused = plain_ec2(ec2_deployment, "up", "--yes", "--skip-preview")

    automation.set_config(EC2_STACK, {f"{first}.size": 2, f"{first}.max": 100}, path=True)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said
    assert "error: stack moto: pools[0].max: is 2, below the pool's size 3: " in said, said
    assert "Traceback" not in said
    assert "unhandled exception" not in said


def test_a_plain_up_past_a_pools_max_is_refused_by_its_program_on_ec2(ec2_deployment):
    """A plain ``pulumi up`` counts the stack's new instances in the fence the autoscaler's
    creates use (the stack's backend): past the max, one line and nothing made."""
    pools = automation.outputs(EC2_STACK)["pools"]
    assert isinstance(pools, dict)
    name, pool = next(iter(pools.items()))
    size = len(pool["machines"])
    spec = MachineSpec(
        name=f"{name}-a1", machine_type=pool["machineType"], location=pool["location"], pool=name
    )
    made = instances(ec2_deployment.moto.url)
    autoscaler = automation.provider(EC2_STACK)
    created = autoscaler.create(spec)
    assert created.machine is not None, created.reason
    first = "orca-machines:pools[0]"
    automation.set_config(
        EC2_STACK, {f"{first}.size": size + 1, f"{first}.max": size + 1}, path=True
    )

    refused = plain_ec2(ec2_deployment, "up", "--yes", "--skip-preview")

    automation.set_config(EC2_STACK, {f"{first}.size": size, f"{first}.max": 100}, path=True)
    autoscaler.delete(created.machine.id)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said
    assert f"stack {EC2_STACK}: pool {name} has {size + 1} machines, counted over every" in said
    assert f"past its max {size + 1}: nothing was changed" in said, said
    assert instances(ec2_deployment.moto.url) == made  # the autoscaler's deleted, none new


def test_plain_pulumi_in_the_checkout_uses_its_state_with_nothing_exported(
    deployment, tmp_path, monkeypatch
):
    """The README's default state (``PULUMI_BACKEND_URL`` unset) is ``.pulumi-state/`` of
    the checkout for plain ``pulumi`` too (``Pulumi.yaml``'s ``backend: url:``), in a
    ``PULUMI_HOME`` that was never logged in anywhere."""
    checkout = automation.copy_project(tmp_path / "checkout")
    # Nothing but the README's variables: not the EC2 module fixture's passphrase either,
    # which stays exported for the rest of this module once an EC2 test has run.
    for name in ENGINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PULUMI_BACKEND_URL")
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(checkout))
    automation.set_config("local", {"hcloud:endpoint": deployment.emulator.url, POOLS: []})
    automation.up("local", on_output=lambda _line: None)
    home = tmp_path / "home"
    home.mkdir()
    engine_home = automation.CHECKOUT / automation.ENGINE_DIR / "home"
    for entry in engine_home.iterdir():
        if entry.name != "credentials.json":
            (home / entry.name).symlink_to(entry)

    listed = operator_pulumi(checkout, None, None, "stack", "ls", "--json", home=home)
    secret = operator_pulumi(
        checkout, None, "local", "config", "set", "--secret", "orca-machines:probe", "s3cr3t",
        home=home,
    )  # fmt: skip

    assert listed.returncode == 0, listed.stderr
    assert "local" in listed.stdout
    assert secret.returncode == 0, secret.stderr
    stack_file = (checkout / "stacks" / "Pulumi.local.yaml").read_text()
    assert "orca-machines:probe" in stack_file
    assert "s3cr3t" not in stack_file
    assert (checkout / ".pulumi-state" / ".pulumi" / "stacks").is_dir()
    assert automation.backend_url() == (checkout / ".pulumi-state").as_uri()
