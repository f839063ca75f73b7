"""The local stack through the real engine against the emulator, step by step.

One stack is reused across the module's tests, which run in order: config lands in the
copy's stacks/, up makes the pools, a size change previews and applies exactly one server,
the runtime API is configured from the outputs, and destroy leaves nothing behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from emulator.process import PROJECT_ROOT
from machines import automation
from machines.cli.exits import ExitCode
from machines.program.config.loader import load
from machines.program.config.stack_config import StackConfig
from testkit.commands import machines_cli as cli
from testkit.engine_run import engine_counts

pytestmark = pytest.mark.engine

SERVER = "hcloud:index/server:Server"
LABELS = {"orca": "pool", "orca-owner": "local", "orca-managed-by": "pulumi"}
POOL_LINES = [
    "pool arm: 1 kept by the stack, 0 made by the autoscaler, 0 to delete",
    "pool x86: 2 kept by the stack, 0 made by the autoscaler, 0 to delete",
]
COMMITTED = (PROJECT_ROOT / "stacks" / "Pulumi.local.yaml").read_bytes()


def servers(deployment) -> dict[str, tuple[int, dict[str, str]]]:
    return {s.name: (s.id, s.labels) for s in deployment.hcloud.servers.get_all()}


def test_config_set_through_automation_lands_in_the_stack_config_dir(deployment):
    stack_file = deployment.project / "stacks" / "Pulumi.local.yaml"
    pools = yaml.safe_load(stack_file.read_text())["config"]["orca-machines:pools"]
    automation.set_config("local", {"orca-machines:pools": pools})
    text = stack_file.read_text()
    config = yaml.safe_load(text)["config"]
    assert config["orca-machines:pools"] == pools
    assert load(StackConfig.from_stack_file(config), "local").pools[1].user_data.get_secret_value()
    assert f"hcloud:endpoint: {deployment.emulator.url}\n" in text
    assert text.startswith("# The local stack: two small pools")
    assert not (deployment.project / "Pulumi.local.yaml").exists()
    assert automation.stack_file("local") == stack_file


def test_up_creates_the_pools_servers_with_their_labels(deployment):
    progress: list[str] = []
    diff = automation.up("local", on_output=progress.append)
    created = {c.name for c in diff.changes if c.op == "create" and c.type == SERVER}
    assert created == {"local-x86-1", "local-x86-2", "local-arm-1"}
    assert {c.op for c in diff.changes} == {"create"}
    assert diff.counts == engine_counts("\n".join(progress))  # as the engine counts them

    found = servers(deployment)
    assert set(found) == {f"{name}.stack" for name in created}
    for name, (_, labels) in found.items():
        assert labels == {**LABELS, "orca-pool": name.split("-")[1]}
    assert [k.name for k in deployment.hcloud.ssh_keys.get_all()] == ["local-demo"]
    [firewall] = deployment.hcloud.firewalls.get_all()
    assert (firewall.name, firewall.labels) == ("local-pools", {"orca-owner": "local"})

    provider = automation.provider("local")
    assert sorted(m.name for m in provider.machines("x86")) == [
        "local-x86-1.stack",
        "local-x86-2.stack",
    ]
    assert [m.name for m in provider.machines("arm")] == ["local-arm-1.stack"]


def test_outputs_and_runtime_env(deployment):
    outputs = automation.outputs("local")
    assert automation.outputs("local", show_secrets=True) == outputs
    assert (outputs["provider"], outputs["owner"]) == ("hetzner", "local")
    assert outputs["env"] == {
        "HCLOUD_ENDPOINT": deployment.emulator.url,
        "ORCA_HCLOUD_IMAGE": "ubuntu-24.04",
        "ORCA_HCLOUD_SSH_KEYS": "local-demo",
        "ORCA_HCLOUD_FIREWALL": "local-pools",
        "ORCA_POOLS": json.dumps(
            [
                {"location": "fsn1", "machineType": "cx23", "name": "x86"},
                {"location": "fsn1", "machineType": "cax11", "name": "arm"},
            ],
            separators=(",", ":"),
        ),
        "ORCA_STACK": "local",
    }
    pools = outputs["pools"]
    assert isinstance(pools, dict)
    assert pools["x86"]["size"] == 2
    assert sorted(m["name"] for m in pools["x86"]["machines"]) == [
        "local-x86-1.stack",
        "local-x86-2.stack",
    ]
    assert automation.runtime_env("local") == {
        "ORCA_PROVIDER": "hetzner",
        "ORCA_OWNER": "local",
        **outputs["env"],
        "ORCA_FENCE_URL": deployment.state.as_uri(),  # the stack's backend (main's fence)
    }
    shown = cli("env", "local")
    assert shown.returncode == ExitCode.OK, shown.stderr
    assert f"HCLOUD_ENDPOINT={deployment.emulator.url}" in shown.stdout.splitlines()
    assert "TOKEN" not in shown.stdout


def test_preview_after_up_has_no_changes(deployment):
    assert not automation.preview("local").has_changes
    done = cli("preview", "local", "--diff")
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.splitlines() == [*POOL_LINES, "stack local: no changes"]


def test_a_size_change_previews_exactly_one_create(deployment, tmp_path: Path):
    automation.set_config("local", {"orca-machines:pools[0].size": 3}, path=True)
    diff = automation.preview("local")
    assert [(c.op, c.type, c.name) for c in diff.changes] == [("create", SERVER, "local-x86-3")]

    markdown = tmp_path / "plan.md"
    done = cli("preview", "local", "--diff", "--markdown", str(markdown))
    assert done.returncode == ExitCode.CHANGES, done.stderr
    assert done.stdout.splitlines() == [
        f"+  create  {SERVER}  local-x86-3",
        POOL_LINES[0],
        "pool x86: 2 → 3 kept by the stack, 0 made by the autoscaler, 0 to delete",
        "stack local: 1 to create, 0 to update, 0 to replace, 0 to delete",
    ]
    assert markdown.read_text() == diff.markdown()
    assert "local-x86-3.stack" not in servers(deployment)


def test_up_applies_the_size_change_without_touching_the_others(deployment):
    before = servers(deployment)
    diff = automation.up("local")
    assert [(c.op, c.name) for c in diff.changes] == [("create", "local-x86-3")]
    after = servers(deployment)
    assert set(after) == {*before, "local-x86-3.stack"}
    assert {name: after[name][0] for name in before} == {n: i for n, (i, _) in before.items()}
    assert len(automation.provider("local").machines("x86")) == 3
    done = cli("preview", "local", "-q")
    assert (done.returncode, done.stdout.strip()) == (ExitCode.OK, "stack local: no changes")


def test_pool_commands_from_the_stacks_outputs(deployment):
    listed = cli("ls", "x86", "--stack", "local", "--json")
    assert listed.returncode == ExitCode.OK, listed.stderr
    assert sorted(m["name"] for m in json.loads(listed.stdout)) == [
        "local-x86-1.stack",
        "local-x86-2.stack",
        "local-x86-3.stack",
    ]


def test_refresh_finds_nothing_changed(deployment):
    counts = automation.refresh("local")
    assert counts.get("update", 0) == counts.get("delete", 0) == 0


def test_unknown_stack_is_one_clear_error(deployment):
    with pytest.raises(automation.StackNotFoundError, match="stack nope does not exist"):
        automation.outputs("nope")
    done = cli("outputs", "nope")
    assert done.returncode == ExitCode.ERROR
    assert done.stderr.splitlines() == [
        f"orca-machines: error: stack nope does not exist in {deployment.state.as_uri()}: "
        "bring it up first (orca-machines up nope), or set PULUMI_BACKEND_URL to the backend "
        "it lives in (and ORCA_PULUMI_PROJECT to its project, when this is not its checkout)"
    ]


@pytest.mark.parametrize("quiet", [["-q"], []], ids=["quiet", "progress shown"])
def test_an_invalid_config_fails_the_preview_before_the_engine_in_one_line(deployment, quiet):
    automation.set_config("local", {"orca-machines:pools[0].size": -1}, path=True)
    try:
        done = cli("preview", "local", *quiet)
    finally:
        automation.set_config("local", {"orca-machines:pools[0].size": 3}, path=True)
    assert done.returncode == ExitCode.ERROR
    assert done.stderr.splitlines() == [
        "orca-machines: error: stack local: pools[0].size: must be >= 0"
    ]


def test_destroy_leaves_nothing_in_the_emulator(deployment):
    diff = automation.destroy("local")
    assert diff.counts["delete"] == len(diff.changes) > 4
    assert deployment.hcloud.servers.get_all() == []
    assert deployment.hcloud.firewalls.get_all() == []
    assert deployment.hcloud.ssh_keys.get_all() == []
    assert automation.outputs("local") == {}
    assert (deployment.project / "stacks" / "Pulumi.local.yaml").exists()


def test_the_committed_stack_file_was_never_touched(deployment):
    assert (PROJECT_ROOT / "stacks" / "Pulumi.local.yaml").read_bytes() == COMMITTED
    assert (
        "encryptionsalt: v1:" in (deployment.project / "stacks" / "Pulumi.local.yaml").read_text()
    )


@pytest.mark.parametrize(
    "command", [["preview"], ["up"], ["destroy", "--yes"], ["refresh"]], ids=" ".join
)
def test_a_stack_without_file_or_state_says_it_does_not_exist_before_asking_a_passphrase(
    deployment, command
):
    done = cli(command[0], "nope", *command[1:])
    assert done.returncode == ExitCode.ERROR
    [line] = done.stderr.splitlines()
    assert line.startswith("orca-machines: error: stack nope does not exist: it is not in ")
    assert "PULUMI_CONFIG_PASSPHRASE" not in line
