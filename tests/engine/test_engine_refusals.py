"""Refusals on the operator's path through the real engine and the emulator, the CLI run as
an operator runs it: an ``up`` that meets no stock, ``ci-preview`` with a backend that does
not hold a stack the base branch has, ``status`` of a destroyed stack, the counts.

The module's tests run in order on one ``local`` stack of a project copy made a git
repository.
"""

from __future__ import annotations

import json
import shutil

import pytest

from machines import automation
from machines.automation.ci_preview import MARKER
from machines.cli.exits import ExitCode
from testkit.commands import commit, git, operator_pulumi
from testkit.commands import machines_cli as cli

pytestmark = pytest.mark.engine

POOLS = "orca-machines:pools"
X86 = {"name": "x86", "machineType": "cx23", "location": "fsn1", "size": 1}
ARM = {"name": "arm", "machineType": "cax11", "location": "fsn1", "size": 2}
OWNER = "refuse"


def live(deployment) -> list[str]:
    return sorted(s.name for s in deployment.hcloud.servers.get_all() if s.status != "deleting")


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("orca-machines: error:")]


@pytest.fixture(scope="module")
def repo(deployment):
    """The copy as a git repository whose base commit has the local stack, arm out of stock."""
    automation.set_config("local", {"orca-machines:owner": OWNER, POOLS: [X86, ARM]})
    git(deployment.project, "init", "-q", "-b", "main")
    commit(deployment.project, message="base")
    deployment.emulator.control.set_stock(
        [{"server_type": "cax11", "location": "fsn1", "code": "resource_unavailable"}]
    )
    return deployment.project


def test_the_clis_count_of_resources_is_the_engines(repo, deployment):
    """On the stack's first preview, the reapers' provider is among what it creates."""
    engine = operator_pulumi(deployment.project, deployment.state, "local", "preview", "--json")
    ours = cli("preview", "local", "--json", "-q")

    assert engine.returncode == 0, engine.stderr
    summary = json.loads(engine.stdout)["changeSummary"]
    counts = json.loads(ours.stdout)["counts"]
    assert "pulumi:providers:pulumi-python" in engine.stdout
    assert counts["create"] == summary["create"], (counts, summary)


def test_the_preview_warns_that_a_pool_it_would_make_is_out_of_stock(repo):
    done = cli("preview", "local", "-q")

    assert done.returncode == 2, done.stderr
    assert (
        "stack local: warning: pool arm: Hetzner Cloud has no stock of cax11 in fsn1 now"
        in done.stdout
    )
    assert "run up later" in done.stdout


def test_an_up_without_stock_says_so_in_one_line_keeps_what_it_made_and_exits_3(repo, deployment):
    done = cli("up", "local", "-q")

    assert done.returncode == ExitCode.NO_STOCK, done.stderr
    (said,) = errors(done.stderr)
    assert "no stock of cax11 in fsn1 for pool arm" in said
    assert "another location or machine type" in said
    assert "later" in said
    assert "Resource monitor" not in done.stderr + done.stdout
    assert f"{OWNER}-x86-1.stack" in live(deployment)


def test_with_stock_back_the_same_up_completes(repo, deployment):
    deployment.emulator.control.set_stock([])

    done = cli("up", "local", "-q")

    assert done.returncode == ExitCode.OK, done.stderr
    assert live(deployment) == [
        f"{OWNER}-arm-1.stack",
        f"{OWNER}-arm-2.stack",
        f"{OWNER}-x86-1.stack",
    ]


def test_ci_preview_tells_a_stack_missing_from_the_backend_from_a_new_one(
    repo, deployment, tmp_path, monkeypatch
):
    shutil.copy(repo / "stacks" / "Pulumi.local.yaml", repo / "stacks" / "Pulumi.fresh.yaml")
    (repo / "Pulumi.yaml").write_text((repo / "Pulumi.yaml").read_text() + "\n")
    commit(repo, message="a new stack, fresh; a program change")
    empty = tmp_path / "wrong-backend"
    empty.mkdir()
    monkeypatch.setenv("PULUMI_BACKEND_URL", empty.as_uri())
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", automation.LOCAL_PASSPHRASE)
    body = tmp_path / "comment.md"

    done = cli(
        "ci-preview", "--stacks", "local,fresh", "--base", "HEAD~1", "--markdown", str(body), "-q"
    )

    text = body.read_text()
    assert done.returncode == ExitCode.ERROR
    assert text.startswith(MARKER)
    (said,) = errors(done.stderr)
    assert "stack local exists on the base branch" in said
    assert "check PULUMI_BACKEND_URL" in said
    assert "| `fresh` (new stack) |" in text
    assert "| `local` | ❌ preview failed |" in text


def test_status_of_a_destroyed_stack_says_it_is_destroyed(repo, deployment):
    automation.destroy("local", on_output=lambda _line: None)

    done = cli("status", "local")

    assert "stack local (hetzner, owner refuse): destroyed" in done.stdout, done.stdout
