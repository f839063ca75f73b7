"""A run killed outright (SIGKILL of the CLI, the engine, its language host and plugins, as a
CI runner or Kubernetes does when the grace period ends) while servers are being created,
through the official hcloud plugin: the next ``up`` releases the dead run's lock and adopts
the half-made servers, each said in one line, and the stack ends with exactly its machines.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator.process import PROJECT_ROOT
from machines import automation
from testkit import moto_server
from testkit.commands import operator_pulumi
from testkit.engine_run import engine_processes, lock_files, wait_for
from testkit.engine_stacks import EC2_STACK
from testkit.fault_proxy import Fault, FaultProxy

pytestmark = pytest.mark.engine

POOLS = "orca-machines:pools"
X86 = {"name": "x86", "machineType": "cx23", "location": "fsn1", "size": 2}


WAIT = 180.0
"""Seconds a test waits for an event of a killed run."""


def engine_pids(state: Path) -> list[int]:
    return list(engine_processes(state))


def recovery_locks(state: Path) -> list[Path]:
    return lock_files(state, "*.json")


def servers(deployment) -> dict[str, int]:
    return {s.name: s.id for s in deployment.hcloud.servers.get_all() if s.status != "deleting"}


def pending(state: Path) -> list[str]:
    exported = automation.select("local").export_stack().deployment or {}
    return [op["resource"]["urn"] for op in exported.get("pending_operations") or []]


def killed_mid_create(deployment, reached) -> None:
    """``orca-machines up local`` SIGKILLed, with every process of its engine run, once
    ``reached()``: the create actions are held unanswered, so the creates are in flight."""
    deployment.emulator.control.set_faults(
        [{"kind": "delay", "method": "GET", "path": "/v1/actions", "seconds": 600.0}]
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "machines", "up", "local", "-q"],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(reached, "the creates reaching the cloud", WAIT)
        for pid in [run.pid, *engine_pids(deployment.state)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run.wait(timeout=60)
        wait_for(lambda: engine_pids(deployment.state) == [], "the killed processes ending", 60)
    finally:
        deployment.emulator.control.clear_faults()


def operator(deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return operator_pulumi(deployment.project, deployment.state, "local", *args)


def test_an_up_killed_mid_create_is_recovered_by_the_next_up(deployment):
    automation.set_config("local", {POOLS: [{**X86, "size": 0}]})
    automation.up("local", on_output=lambda _line: None)
    automation.set_config("local", {POOLS: [X86]})
    killed_mid_create(deployment, lambda: len(servers(deployment)) == 2)
    made = servers(deployment)
    assert recovery_locks(deployment.state), "the killed run left its lock"
    assert len(pending(deployment.state)) == 2, "and its two creates pending"

    said: list[str] = []
    automation.up("local", on_output=said.append)

    released = [line for line in said if "released the lock of an engine run that is gone" in line]
    assert len(released) == 1, said
    (adopted,) = [line for line in said if "a killed run left 2 create(s) pending" in line]
    assert "adopted local-x86-1" in adopted
    assert "adopted local-x86-2" in adopted
    assert servers(deployment) == made, "the half-made servers are the stack's, none more"
    assert pending(deployment.state) == []
    assert recovery_locks(deployment.state) == []
    outputs = automation.outputs("local")["pools"]
    listed = {m["name"]: int(m["id"]) for m in outputs["x86"]["machines"]}
    assert listed == made


def test_a_plain_pulumi_up_after_a_kill_names_the_command_that_recovers(deployment):
    automation.set_config("local", {POOLS: [{**X86, "size": 3}]})
    before = servers(deployment)
    killed_mid_create(deployment, lambda: len(servers(deployment)) == 3)
    assert len(pending(deployment.state)) == 1

    locked = operator(deployment, "up", "--yes", "--skip-preview")
    assert locked.returncode != 0
    assert "pulumi cancel" in locked.stdout + locked.stderr
    assert operator(deployment, "cancel", "--yes").returncode == 0
    plain = operator(deployment, "up", "--yes", "--skip-preview")
    assert plain.returncode != 0
    shown = plain.stdout + plain.stderr
    assert "a killed run left 1 create(s) pending (local-x86-3)" in shown
    assert "run `orca-machines up local`" in shown
    assert len(servers(deployment)) == 3, "the plain up made nothing"

    said: list[str] = []
    automation.up("local", on_output=said.append)
    assert [line for line in said if "adopted local-x86-3" in line]
    assert set(servers(deployment)) == {*before, "local-x86-3.stack"}


def test_a_lock_of_a_live_process_is_never_released(deployment, tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        lock_dir = deployment.state / ".pulumi" / "locks" / "organization" / "orca-machines"
        lock = lock_dir / "local" / "held-by-a-live-process.json"
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(
            json.dumps(
                {
                    "pid": holder.pid,
                    "username": "ci",
                    "hostname": os.uname().nodename,
                    "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
        )
        with pytest.raises(automation.EngineError, match="another operation holds the stack's"):
            automation.up("local", on_output=lambda _line: None)
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()
    lock.unlink()


def ec2_instances(ec2_deployment) -> dict[str, str]:
    """The live instances of owner prod by Name tag, and their ids, straight from moto."""
    ec2 = moto_server.client(ec2_deployment.moto.url)
    found = {}
    owner = [{"Name": "tag:orca-owner", "Values": ["prod"]}]
    for reservation in ec2.describe_instances(Filters=owner)["Reservations"]:
        for instance in reservation["Instances"]:
            if instance["State"]["Name"] != "terminated":
                tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
                found[tags["Name"]] = instance["InstanceId"]
    return found


def test_an_ec2_up_killed_mid_create_is_recovered_by_the_next_up(ec2_deployment):
    moto = ec2_deployment.moto.url
    pool = {"name": "ci", "machineType": "t3.micro", "location": "eu-central-1a", "size": 0}
    with FaultProxy(moto).serving() as proxy:
        endpoints = [{"ec2": proxy.url, "iam": moto, "sts": moto, "sqs": moto, "events": moto}]
        automation.set_config(EC2_STACK, {"aws:endpoints": endpoints, POOLS: [pool]})
        automation.up(EC2_STACK, on_output=lambda _line: None)
        automation.set_config(EC2_STACK, {POOLS: [{**pool, "size": 1}]})
        proxy.set_faults(  # the read-back after the launch: the runtime's listing never asks
            Fault("delay", "DescribeInstanceAttribute", seconds=600.0),
            Fault("delay", "DescribeVolumes", seconds=600.0),
        )
        run = subprocess.Popen(
            [sys.executable, "-m", "machines", "up", EC2_STACK, "-q"],
            cwd=PROJECT_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(lambda: "prod-ci-1.stack" in ec2_instances(ec2_deployment), "the launch", WAIT)
        for pid in [run.pid, *engine_pids(ec2_deployment.state)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run.wait(timeout=60)
        wait_for(
            lambda: engine_pids(ec2_deployment.state) == [], "the killed processes ending", WAIT
        )
        proxy.set_faults()
        made = ec2_instances(ec2_deployment)

        said: list[str] = []
        automation.up(EC2_STACK, on_output=said.append)

    assert [line for line in said if "released the lock of an engine run that is gone" in line]
    (adopted,) = [line for line in said if "a killed run left 1 create(s) pending" in line]
    assert f"adopted prod-ci-1 ({made['prod-ci-1.stack']}" in adopted
    assert ec2_instances(ec2_deployment) == made, "the half-made instance is the stack's, alone"
