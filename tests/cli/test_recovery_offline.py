"""What a killed run left, read without the engine: the lock's holders from the engine's
refusal, whether each is provably gone, and the checkpoint's pending creates."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from machines.automation.recovery import Holder, holders, process_start
from machines.program.pending import pending_creates, refused_plain_run

REFUSAL = """error: the stack is currently locked by 2 lock(s). Either wait for the other \
process(es) to end or delete the lock file with `pulumi cancel`.
  file:///s/.pulumi/locks/organization/orca-machines/local/4a.json: created by ci@runner-7 \
(pid 4242) at 2026-12-01T17:00:00Z
  s3://b/.pulumi/locks/organization/orca-machines/local/5b.json?region=x: created by \
a b@host (pid 17) at 2026-12-01T17:00:01+01:00"""


def test_the_refusal_names_each_holder() -> None:
    first, second = holders(REFUSAL)
    assert first.where.endswith("/local/4a.json")
    assert (first.user, first.host, first.pid) == ("ci", "runner-7", 4242)
    assert first.at == datetime(2026, 12, 1, 17, 0, tzinfo=UTC)
    assert (second.user, second.host, second.pid) == ("a b", "host", 17)
    assert second.where.startswith("s3://b/")


def holder(pid: int, at: datetime, host: str | None = None) -> Holder:
    return Holder("file:///x.json", "me", host or socket.gethostname(), pid, at)


def test_a_live_holder_is_never_gone() -> None:
    started = process_start(os.getpid())
    assert started is not None
    assert not holder(os.getpid(), started + timedelta(seconds=1)).gone()


def test_a_holder_whose_pid_runs_nothing_is_gone() -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert holder(int(ended.stdout), datetime.now(UTC)).gone()


def test_a_pid_reused_by_a_later_process_is_gone() -> None:
    assert holder(os.getpid(), datetime(2000, 1, 1, tzinfo=UTC)).gone()


def test_a_holder_on_another_host_is_never_gone() -> None:
    assert not holder(999_999_999, datetime.now(UTC), host="elsewhere").gone()


def test_pending_creates_carry_the_machines_cloud_name_and_pool() -> None:
    server = "hcloud:index/server:Server"
    deployment = {
        "pending_operations": [
            {
                "type": "creating",
                "resource": {
                    "urn": f"urn:pulumi:local::orca-machines::orca:machines:Pool${server}::l-x-1",
                    "type": server,
                    "inputs": {"name": "l-x-1.stack", "labels": {"orca-pool": "x"}},
                },
            },
            {
                "type": "creating",
                "resource": {
                    "urn": "urn:pulumi:moto::orca-machines::aws:ec2/instance:Instance::m-y-2",
                    "type": "aws:ec2/instance:Instance",
                    "inputs": {"tags": {"Name": "m-y-2.stack", "orca-pool": "y"}},
                },
            },
            {"type": "updating", "resource": {"urn": "u", "type": server, "inputs": {}}},
        ]
    }

    first, second = pending_creates(deployment)

    assert (first.key, first.name, first.pool) == ("l-x-1", "l-x-1.stack", "x")
    assert (second.key, second.name, second.pool) == ("m-y-2", "m-y-2.stack", "y")


def checkpoint(root: Path, ops: list[dict[str, object]]) -> str:
    stacks = root / ".pulumi" / "stacks" / "orca-machines"
    stacks.mkdir(parents=True)
    latest = {"resources": [], "pending_operations": ops}
    (stacks / "local.json").write_text(json.dumps({"checkpoint": {"latest": latest}}))
    return root.as_uri()


SERVER = "hcloud:index/server:Server"
CREATING = {
    "type": "creating",
    "resource": {
        "urn": f"urn:pulumi:local::orca-machines::orca:machines:Pool${SERVER}::local-x86-3",
        "type": SERVER,
        "inputs": {"name": "local-x86-3.stack", "labels": {"orca-pool": "x86"}},
    },
}


def test_a_plain_run_on_a_stack_with_pending_creates_is_told_what_recovers(tmp_path: Path) -> None:
    backend = checkpoint(tmp_path, [CREATING])

    refused = refused_plain_run({"PULUMI_BACKEND_URL": backend}, "orca-machines", "local")

    assert refused is not None
    assert refused.startswith("stack local: a killed run left 1 create(s) pending (local-x86-3)")
    assert "run `orca-machines up local`" in refused


def test_automation_and_a_clean_checkpoint_are_not_refused(tmp_path: Path) -> None:
    backend = checkpoint(tmp_path, [{**CREATING, "type": "updating"}])
    clean = {"PULUMI_BACKEND_URL": backend}
    assert refused_plain_run(clean, "orca-machines", "local") is None
    pending = {"PULUMI_BACKEND_URL": checkpoint(tmp_path / "b", [CREATING])}
    assert refused_plain_run(pending, "orca-machines", "other") is None
    automated = {**pending, "PULUMI_AUTOMATION_API": "true"}
    assert refused_plain_run(automated, "orca-machines", "local") is None


def test_a_killed_runs_zombie_counts_as_gone() -> None:
    """An orphan of a killed run exits as a zombie until init reaps it: it runs nothing."""
    child = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 60
        while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.05)
        assert process_start(child.pid) is None
    finally:
        child.wait()
