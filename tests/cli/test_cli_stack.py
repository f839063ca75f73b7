"""Stack commands with the engine replaced: exit codes, printed diffs, env lines, guards.

The engine itself runs in tests/engine; here ``machines.automation``'s functions are swapped
for fakes so the CLI's own behaviour is checked in milliseconds. The guards that need no
engine (passphrase, missing engine) run the real automation code.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from emulator.process import PROJECT_ROOT
from machines import automation
from machines.automation import Change, Diff, PoolCount, engine, stacks
from machines.automation.places import PlaceReport
from machines.cli import main
from machines.cli.exits import ExitCode
from machines.runtime.pool import Place
from machines.runtime.settings import ORCA_OWNER, ORCA_PROVIDER, ORCA_STACK
from testkit.specs import OWNER, spec

SERVER = "hcloud:index/server:Server"


def change(op: str, name: str, type_: str = SERVER, keys: tuple[str, ...] = ()) -> Change:
    return Change.model_validate(
        {"op": op, "type": type_, "name": name, "urn": f"urn:pulumi:local::p::{type_}::{name}",
         "keys": keys}
    )  # fmt: skip


ONE_CREATE = Diff(stack="local", changes=(change("create", "local-x86-3"),))
NO_CHANGES = Diff(stack="local")


@pytest.fixture
def previews(monkeypatch: pytest.MonkeyPatch) -> list[Diff]:
    """What the fake ``automation.preview`` returns, first to last."""
    queue: list[Diff] = []

    def fake(stack: str, *, project=None, on_output=None, on_message=None) -> Diff:
        assert on_output is not None
        on_output("engine progress line")
        return queue.pop(0)

    monkeypatch.setattr(automation, "preview", fake)
    return queue


def test_preview_exit_status_says_whether_there_are_changes(previews, capsys):
    previews.extend([ONE_CREATE, NO_CHANGES])
    assert main(["preview", "local"]) == ExitCode.CHANGES
    first = capsys.readouterr()
    assert first.out == "stack local: 1 to create, 0 to update, 0 to replace, 0 to delete\n"
    assert first.err == "engine progress line\n"
    assert main(["preview", "local", "--quiet"]) == ExitCode.OK
    second = capsys.readouterr()
    assert (second.out, second.err) == ("stack local: no changes\n", "")


def test_preview_diff_markdown_and_json(previews, tmp_path: Path, capsys):
    previews.extend([ONE_CREATE, ONE_CREATE])
    markdown = tmp_path / "plan.md"
    assert (
        main(["preview", "local", "-q", "--diff", "--markdown", str(markdown)]) == ExitCode.CHANGES
    )
    assert capsys.readouterr().out.splitlines() == [
        f"+  create  {SERVER}  local-x86-3",
        "stack local: 1 to create, 0 to update, 0 to replace, 0 to delete",
    ]
    assert markdown.read_text() == ONE_CREATE.markdown()
    assert main(["preview", "local", "-q", "--json"]) == ExitCode.CHANGES
    report = json.loads(capsys.readouterr().out)
    assert report["has_changes"] is True
    assert report["counts"] == {"create": 1, "update": 0, "replace": 0, "delete": 0}
    assert [c["name"] for c in report["changes"]] == ["local-x86-3"]


def test_drift_without_a_stack_list_checks_no_example_and_not_local(previews, capsys):
    assert main(["drift"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.err == (
        "orca-machines: no deployment stack to check: every stack file is local or an example "
        "(name others with --stacks or $ORCA_CI_STACKS)\n"
    )


def test_drift_fails_on_a_stack_with_changes(previews, capsys):
    previews.extend([ONE_CREATE])
    assert main(["drift", "--stacks", "local", "-q"]) == ExitCode.ERROR
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == (
        "stack local: 1 to create, 0 to update, 0 to replace, 0 to delete"
    )
    assert captured.err == (
        "orca-machines: error: stack local has drifted from its configuration: 1 to create, 0 "
        "to update, 0 to replace, 0 to delete (apply with 'orca-machines up local' or fix the "
        "configuration)\n"
    )


def test_up_and_destroy_print_what_was_done(monkeypatch, capsys):
    done = Diff(stack="local", changes=(change("create", "a"), change("delete", "b")))
    monkeypatch.setattr(automation, "up", lambda stack, **_: done)
    monkeypatch.setattr(automation, "destroy", lambda stack, **_: done)
    assert main(["up", "local", "-q"]) == ExitCode.OK
    assert capsys.readouterr().out == "stack local: 1 created, 0 updated, 0 replaced, 1 deleted\n"
    assert main(["destroy", "local", "--yes", "-q"]) == ExitCode.OK
    assert "1 deleted" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["up", "preview", "resize", "refresh", "destroy"])
def test_quiet_hides_the_engine_s_progress_never_what_the_command_says(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-q`` is the engine's progress only: the operation's own lines (a pool going on to
    its next place, a killed run's lock released) reach stderr with it."""
    said = "stack local: pool duo: hetzner cax11 in fsn1 has no stock now; up goes on with ..."

    def run(stack: str, *_args: object, on_output=None, on_message=None, **_: object) -> object:
        on_output("engine progress line")
        on_message(said)
        return {"same": 1} if command == "refresh" else ONE_CREATE

    monkeypatch.setattr(automation, command, run)
    args = {"resize": ["x86", "3"], "destroy": ["--yes"]}.get(command, [])

    main([command, "local", *args, "-q"])

    assert capsys.readouterr().err.splitlines() == [said]


def test_the_closing_line_says_where_a_spanning_pool_s_new_machines_went(monkeypatch, capsys):
    at = [
        PlaceReport(place=Place(cloud="hetzner", machine_type="cax11", location="fsn1"),
                    kept=0, autoscaler=0, kept_after=0),
        PlaceReport(place=Place(cloud="ec2", machine_type="t4g.small", location="eu-central-1a"),
                    kept=1, autoscaler=0, kept_after=3),
    ]  # fmt: skip
    done = Diff(
        stack="local",
        changes=(change("create", "local-arm-2"), change("create", "local-arm-3")),
        pools=(PoolCount(pool="arm", kept=1, autoscaled=0, deletes=0, creates=2, places=at),),
    )
    monkeypatch.setattr(automation, "up", lambda stack, **_: done)

    assert main(["up", "local", "-q"]) == ExitCode.OK

    assert capsys.readouterr().out == (
        "stack local: machines: 2 created (pool arm: 2 at ec2 t4g.small in eu-central-1a), 0 "
        "deleted; resources in all: 2 created, 0 updated, 0 replaced, 0 deleted\n"
    )


def test_destroy_counts_the_machines_the_stacks_and_the_autoscalers(monkeypatch, capsys):
    done = Diff(
        stack="local",
        changes=(
            change("delete", "x", "local-x86-1"),
            change("delete", "x", "local-x86-2"),
            change("delete", "pulumi-python:dynamic:Resource", "x86-autoscaled"),
            change("delete", "orca:machines:Pool", "x86"),
        ),
        pools=(PoolCount(pool="x86", kept=2, autoscaled=3, deletes=5, reaped=("a", "b", "c")),),
    )
    monkeypatch.setattr(automation, "destroy", lambda stack, **_: done)
    assert main(["destroy", "local", "--yes", "-q"]) == ExitCode.OK
    assert capsys.readouterr().out == (
        "stack local: machines: 0 created, 5 deleted (2 kept by the stack, 3 made by the "
        "autoscaler); resources in all: 0 created, 0 updated, 0 replaced, 4 deleted\n"
    )


def test_destroy_needs_yes_without_a_terminal(monkeypatch, capsys):
    called: list[str] = []
    monkeypatch.setattr(automation, "destroy", lambda stack, **_: called.append(stack))
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["destroy", "prod"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err == (
        "orca-machines: error: destroy deletes every resource of stack prod: "
        "pass --yes to confirm\n"
    )
    assert called == []


def test_refresh_prints_the_counts(monkeypatch, capsys):
    monkeypatch.setattr(automation, "refresh", lambda stack, **_: {"same": 5, "update": 1})
    assert main(["refresh", "local", "-q"]) == ExitCode.OK
    assert capsys.readouterr().out == "stack local: refreshed (5 same, 1 update)\n"


OUTPUTS = {
    "provider": "hetzner",
    "owner": "local",
    "env": {
        "HCLOUD_ENDPOINT": "http://127.0.0.1:4080/v1",
        "ORCA_HCLOUD_IMAGE": "ubuntu-24.04",
        "ORCA_HCLOUD_SSH_KEYS": "local-demo,ops key",
        "ORCA_HCLOUD_FIREWALL": "local-pools",
    },
    "pools": {"x86": {"machineType": "cx23", "size": 2}},
}


@pytest.fixture
def stack_outputs(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """``automation.outputs`` answering ``OUTPUTS`` (a copy the test may change)."""
    values = json.loads(json.dumps(OUTPUTS))

    def fake(stack: str, *, project=None, show_secrets: bool = False) -> dict[str, object]:
        return values

    monkeypatch.setattr(automation, "outputs", fake)
    monkeypatch.setattr(stacks, "outputs", fake)
    return values


def test_env_prints_shell_quoted_settings_with_provider_and_owner(stack_outputs, capsys):
    assert main(["env", "local"]) == ExitCode.OK
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:2] == [f"{ORCA_PROVIDER}=hetzner", f"{ORCA_OWNER}=local"]
    assert "ORCA_HCLOUD_SSH_KEYS='local-demo,ops key'" in lines
    parsed = dict(shlex.split(line)[0].split("=", 1) for line in lines)
    # the stack's name too, for a stack brought up before its env output carried it, so the
    # runtime's refusals name the stack, never its owner as if it were one
    assert parsed.pop("ORCA_FENCE_URL")  # this shell's, else the stack's backend
    assert parsed == {
        ORCA_PROVIDER: "hetzner",
        ORCA_OWNER: "local",
        ORCA_STACK: "local",
        **OUTPUTS["env"],
    }
    assert "HCLOUD_TOKEN" not in out


def test_env_of_a_stack_without_outputs_says_to_bring_it_up(stack_outputs, capsys):
    stack_outputs.clear()
    assert main(["env", "local"]) == ExitCode.ERROR
    assert capsys.readouterr().err == (
        "orca-machines: error: stack local has no usable output env, owner, provider: "
        "bring it up first (orca-machines up local)\n"
    )


def test_outputs_print_json(stack_outputs, capsys):
    assert main(["outputs", "local"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out) == OUTPUTS


def test_pool_commands_configured_by_a_stack(stack_outputs, hetzner_env, hetzner_provider, capsys):
    stack_outputs["owner"] = OWNER
    stack_outputs["env"] = {"HCLOUD_ENDPOINT": hetzner_env["HCLOUD_ENDPOINT"]}
    hetzner_provider.create(spec(name="prod-x86-a1", pool="x86"))
    assert main(["ls", "x86", "--json", "--stack", "local"]) == ExitCode.OK
    assert [m["name"] for m in json.loads(capsys.readouterr().out)] == ["prod-x86-a1"]
    assert main(["ls", "x86", "--json", "--stack", "local", "--owner", "other"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out) == []


def test_a_stacks_credentials_are_checked_before_its_passphrase(monkeypatch, capsys):
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(PROJECT_ROOT))
    assert main(["preview", "hetzner-example"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err == (
        "orca-machines: error: stack hetzner-example: HCLOUD_TOKEN is not set: this provider "
        "needs it (its provider, hetzner, reads it from the environment)\n"
    )


def test_a_missing_engine_says_to_run_install_pulumi(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(engine, "CHECKOUT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(PROJECT_ROOT))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "state").as_uri())
    assert main(["refresh", "local"]) == ExitCode.ERROR
    assert capsys.readouterr().err == (
        "orca-machines: error: the Pulumi engine is not installed: run scripts/install-pulumi, "
        "which builds it into .pulumi-engine/\n"
    )
