"""``machines.automation`` without running the engine: diffs, error summaries, settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pulumi import automation as auto

from emulator.process import PROJECT_ROOT
from machines import automation
from machines.automation import Change, Diff, EngineError, diff, engine, engine_summary, stacks
from machines.automation.project import fence_env as project_fence_env
from machines.program.backend import program_fence_url
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.errors import SettingsError
from machines.runtime.models import Machine, Status

SERVER = "hcloud:index/server:Server"
FIREWALL = "hcloud:index/firewall:Firewall"


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:local::orca-machines::orca:machines:Pool${type_}::{name}"


def pre_event(op: auto.OpType, type_: str, name: str, **meta: object) -> auto.EngineEvent:
    metadata = auto.StepEventMetadata(op=op, urn=urn(type_, name), type=type_, provider="", **meta)
    return auto.EngineEvent(
        sequence=1, timestamp=0, resource_pre_event=auto.ResourcePreEvent(metadata=metadata)
    )


def collected(*events: auto.EngineEvent) -> Diff:
    collect = diff.Changes()
    for event in events:
        collect(event)
    return collect.diff("local")


def test_events_become_one_change_per_resource():
    diff = collected(
        pre_event(auto.OpType.SAME, "pulumi:pulumi:Stack", "orca-machines-local"),
        pre_event(auto.OpType.CREATE, "pulumi:pulumi:Stack", "orca-machines-local"),
        pre_event(auto.OpType.CREATE, "pulumi:providers:hcloud", "default_1_39_1"),
        pre_event(auto.OpType.CREATE, "pulumi:providers:pulumi-python", "reapers"),
        pre_event(auto.OpType.SAME, SERVER, "local-x86-1"),
        pre_event(auto.OpType.CREATE, SERVER, "local-x86-3"),
        pre_event(auto.OpType.UPDATE, FIREWALL, "local-pools", diffs=["rules"]),
        pre_event(auto.OpType.DELETE_REPLACED, SERVER, "local-arm-1", keys=["userData"]),
        pre_event(auto.OpType.REPLACE, SERVER, "local-arm-1", keys=["userData"]),
        pre_event(auto.OpType.CREATE_REPLACEMENT, SERVER, "local-arm-1", keys=["userData"]),
        pre_event(auto.OpType.DELETE, SERVER, "local-x86-2", diffs=["ignored"]),
        pre_event(auto.OpType.READ, SERVER, "looked-up"),
    )
    # as the engine counts: the stack itself and an explicit provider are changes, a default
    # provider (the engine's own step) is none
    assert [(c.op, c.name, c.keys) for c in diff.sorted()] == [
        ("create", "local-x86-3", ()),
        ("create", "reapers", ()),
        ("create", "orca-machines-local", ()),
        ("update", "local-pools", ("rules",)),
        ("replace", "local-arm-1", ("userData",)),
        ("delete", "local-x86-2", ()),
    ]
    assert diff.counts == {"create": 3, "update": 1, "replace": 1, "delete": 1}
    assert diff.has_changes


def test_nothing_but_same_is_no_change():
    diff = collected(pre_event(auto.OpType.SAME, SERVER, "local-x86-1"))
    assert not diff.has_changes
    assert diff.summary() == "no changes"
    assert diff.text() == "stack local: no changes"
    assert diff.markdown() == "### Pulumi preview of stack `local`\n\nNo changes.\n"


def test_markdown_groups_by_op_then_type_then_name():
    diff = Diff(
        stack="prod",
        changes=tuple(
            Change(op=op, type=type_, name=name, urn=urn(type_, name), keys=keys)
            for op, type_, name, keys in [
                ("delete", SERVER, "prod-x86-9", ()),
                ("create", SERVER, "prod-x86-4", ()),
                ("create", FIREWALL, "prod-pools", ()),
                ("update", FIREWALL, "odd|name", ("rules", "labels")),
                ("create", SERVER, "prod-x86-3", ()),
            ]
        ),
    )
    assert diff.markdown() == (
        "### Pulumi preview of stack `prod`\n"
        "\n"
        "| Op | Type | Name | Changed |\n"
        "| --- | --- | --- | --- |\n"
        f"| create | `{FIREWALL}` | `prod-pools` |  |\n"
        f"| create | `{SERVER}` | `prod-x86-3` |  |\n"
        f"| create | `{SERVER}` | `prod-x86-4` |  |\n"
        f"| update | `{FIREWALL}` | `odd\\|name` | `rules`, `labels` |\n"
        f"| delete | `{SERVER}` | `prod-x86-9` |  |\n"
        "\n"
        "**3 to create, 1 to update, 0 to replace, 1 to delete.**\n"
    )


COMMAND_ERROR = """
 code: 255
 stdout: Updating (local):
    pulumi:pulumi:Stack orca-machines-local  warning: something odd
Diagnostics:
  pulumi:pulumi:Stack (orca-machines-local):
    warning: a warning, not an error
    error: Program failed with an unhandled exception:
    Traceback (most recent call last):
      File "/p/__main__.py", line 7, in <module>
        components.deploy(deployment.load(components.stack_config(), pulumi.get_stack()))
      File "/p/machines/deployment.py", line 478, in load
        raise StackConfigError(stack, problems)
    machines.deployment.StackConfigError: stack local: pools[0].size: must be >= 0
    stack local: owner: is empty

  hcloud:index/server:Server (local-x86-1):
    error: creating server: invalid input in field 'server_type'

Resources:
    1 errored
 stderr: error: update failed"""


def test_summary_keeps_the_meaningful_lines():
    assert engine_summary(COMMAND_ERROR) == (
        "StackConfigError: stack local: pools[0].size: must be >= 0; stack local: owner: is empty; "
        "local-x86-1: creating server: invalid input in field 'server_type'"
    )


SUBNET_URN = (
    "urn:pulumi:local::orca-machines::orca:machines:HetznerShared$hcloud:index/networkSubnet"
    ":NetworkSubnet::local-ci-subnet"
)
DEADLINE = 'Get "http://127.0.0.1:1/v1/networks/3": context deadline exceeded'
HELD_DELETE = f"""
 code: 255
 stdout: Destroying (local):
Diagnostics:
  hcloud:index:NetworkSubnet (local-ci-subnet):
    error:   sdk-v2/provider2.go:571: sdk.helper_schema: {DEADLINE}: provider=hcloud@1.39.1
    error: deleting {SUBNET_URN}: 1 error occurred:
        * {DEADLINE}

  pulumi:pulumi:Stack (orca-machines-local):
    error: update failed
 stderr: error: update failed"""
"""The engine's words when the subnet's delete reached its bounded timeout (an engine test's)."""


def test_a_delete_cut_short_by_its_timeout_is_one_line_naming_the_resource():
    assert engine_summary(HELD_DELETE) == (
        "NetworkSubnet local-ci-subnet could not be deleted in time: something the stack does "
        "not manage still uses it (a server or instance of another owner, or one made by "
        "hand): delete or detach it, then run the destroy again"
    )


def test_summary_falls_back_to_stderr_then_to_the_last_line(monkeypatch):
    monkeypatch.setenv("HCLOUD_TOKEN", "sekrit-token-value")
    text = "\n code: 255\n stdout: \n stderr: error: no stack named 'x' found"
    assert engine_summary(text) == "no stack named 'x' found"
    assert engine_summary("\n code: 1\n stdout: \n stderr: warning: x\nbad sekrit-token-value") == (
        "bad [secret]"
    )
    assert engine_summary("") == "the engine failed without saying why"


def test_a_failed_invoke_is_said_once():
    invoke = "hcloud:index/getServerType:getServerType"
    text = (
        f" stdout: \n stderr: error: invoke of {invoke} failed: invocation of {invoke} "
        "returned an error: no server type found with name cx32\n"
    )
    assert engine_summary(text) == f"{invoke} failed: no server type found with name cx32"


def test_summary_of_a_missing_plugin_says_how_to_get_it():
    text = (
        " stdout: Diagnostics:\n  pulumi:providers:hcloud (default_1_43_3):\n"
        "    error: Could not automatically download and install resource plugin "
        "'pulumi-resource-hcloud' at version v1.39.1\n\n stderr: "
    )
    assert engine_summary(text).endswith(
        "(the hcloud plugin is missing: run scripts/install-pulumi, "
        "which builds it into .pulumi-engine/)"
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project in a temporary directory."""
    return automation.copy_project(tmp_path / "project")


def test_copy_project_has_the_program_stacks_and_virtualenv(project: Path):
    for name in ("Pulumi.yaml", "__main__.py", "machines/automation/stacks.py"):
        assert (project / name).read_bytes() == (PROJECT_ROOT / name).read_bytes()
    assert sorted(p.name for p in (project / "stacks").iterdir()) == sorted(
        p.name for p in (PROJECT_ROOT / "stacks").iterdir()
    )
    assert (project / ".venv").is_symlink()
    assert (project / ".venv" / "bin" / "python").exists()
    assert not list(project.rglob("__pycache__"))


def test_a_scratch_copy_shares_the_projects_state_and_never_writes_its_files(
    project: Path, monkeypatch
):
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    committed = (project / "stacks" / "Pulumi.local.yaml").read_bytes()
    with automation.scratch_copy(project) as copy:
        (copy / "stacks" / "Pulumi.local.yaml").write_text("encryptionsalt: v1:new\n")
        (copy / ".pulumi-state" / "written-by-the-engine").write_text("state\n")
    assert not copy.exists()
    assert (project / "stacks" / "Pulumi.local.yaml").read_bytes() == committed
    assert (project / ".pulumi-state" / "written-by-the-engine").read_text() == "state\n"


def test_stack_files_live_in_the_stack_config_dir(project: Path, monkeypatch):
    assert automation.stack_file("local", project) == project / "stacks" / "Pulumi.local.yaml"
    assert automation.stack_file("org/prod", project) == project / "stacks" / "Pulumi.prod.yaml"
    settings = project / "Pulumi.yaml"
    settings.write_text(settings.read_text().replace("stackConfigDir: stacks", ""))
    assert automation.stack_file("local", project) == project / "Pulumi.local.yaml"
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(project))
    assert automation.stack_file("local") == project / "Pulumi.local.yaml"


def test_a_directory_without_pulumi_yaml_is_refused(tmp_path: Path):
    with pytest.raises(SettingsError, match="has no Pulumi.yaml: point ORCA_PULUMI_PROJECT"):
        automation.project_root(tmp_path)


def test_state_defaults_to_the_projects_pulumi_state(project: Path, monkeypatch):
    assert automation.backend_url(project) == (project / ".pulumi-state").as_uri()
    assert (project / ".pulumi-state").is_dir()
    assert "/.pulumi-state/" in (PROJECT_ROOT / ".gitignore").read_text()
    monkeypatch.setenv("PULUMI_BACKEND_URL", "file:///somewhere/else")
    assert automation.backend_url(project) == "file:///somewhere/else"


def test_a_plain_runs_program_finds_the_fence_the_automation_uses(project: Path, monkeypatch):
    """One fence for a stack's pools whichever face makes their machines: the program of a
    plain ``pulumi up`` (``program_fence_url``) and the automation (``fence_env``) read the
    backend alike; a Pulumi Cloud backend holds none, ``ORCA_FENCE_URL`` overrides both."""
    monkeypatch.delenv("ORCA_FENCE_URL", raising=False)
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    default = (project / ".pulumi-state").as_uri()
    assert program_fence_url(project, {}) == default
    assert project_fence_env(project) == {"ORCA_FENCE_URL": default}
    for backend, fence in (
        ("s3://state/orca?region=eu-central-1", "s3://state/orca?region=eu-central-1"),
        ("https://api.pulumi.com", ""),
    ):
        monkeypatch.setenv("PULUMI_BACKEND_URL", backend)
        assert program_fence_url(project, os.environ) == fence
        assert project_fence_env(project) == ({"ORCA_FENCE_URL": fence} if fence else {})
    monkeypatch.setenv("ORCA_FENCE_URL", "file:///srv/fence")
    assert program_fence_url(project, os.environ) == "file:///srv/fence"
    assert project_fence_env(project) == {"ORCA_FENCE_URL": "file:///srv/fence"}


def test_passphrase_default_is_for_the_local_stack_only(project: Path, monkeypatch):
    assert engine.passphrase_env("local", project) == {
        "PULUMI_CONFIG_PASSPHRASE": automation.LOCAL_PASSPHRASE
    }
    with pytest.raises(SettingsError, match="PULUMI_CONFIG_PASSPHRASE is not set: stack prod"):
        engine.passphrase_env("prod", project)
    kms = project / "stacks" / "Pulumi.kms.yaml"
    kms.write_text("secretsprovider: awskms://alias/orca\nconfig: {}\n")
    assert engine.passphrase_env("kms", project) == {}
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "")
    assert engine.passphrase_env("prod", project) == {}
    assert engine.passphrase_env("local", project) == {}


def test_a_new_stacks_file_is_checked_before_its_passphrase_is_asked_for(project: Path):
    (project / "stacks" / "Pulumi.prod.yaml").write_text(
        "config:\n  orca-machines:provider: hetzner\n"
    )
    with pytest.raises(SettingsError, match=r"^stack prod: pools: is missing$"):
        automation.preview("prod", project=project)


def test_a_stacks_provider_takes_kind_owner_and_env_from_the_outputs(monkeypatch):
    outputs = {
        "provider": "hetzner",
        "owner": "local",
        "env": {"HCLOUD_ENDPOINT": "http://127.0.0.1:4080/v1", "ORCA_HCLOUD_FIREWALL": "local-fw"},
    }
    monkeypatch.setattr(stacks, "outputs", lambda stack, **_: outputs)
    monkeypatch.setenv("HCLOUD_TOKEN", "t" * 64)
    monkeypatch.setenv("HCLOUD_ENDPOINT", "http://elsewhere.invalid/v1")
    monkeypatch.setenv("ORCA_HCLOUD_IMAGE", "debian-12")  # another stack's, left exported
    provider = automation.provider("local")
    assert isinstance(provider, HetznerProvider)
    assert provider.owner == "local"
    assert provider.stack == "local"
    assert provider.endpoint == "http://127.0.0.1:4080/v1"
    assert provider.firewall == "local-fw"
    assert provider.image == "ubuntu-24.04"  # the stack sets none: the default, as it boots
    assert automation.provider("local", owner="other").owner == "other"
    assert os.environ["HCLOUD_ENDPOINT"] == "http://elsewhere.invalid/v1"


def test_a_stacks_provider_without_outputs_says_to_bring_it_up(monkeypatch):
    monkeypatch.setattr(stacks, "outputs", lambda stack, **_: {"provider": "hetzner"})
    with pytest.raises(EngineError, match="no usable output env, owner: bring it up first"):
        automation.provider("local")


def test_importing_the_package_and_cli_does_not_load_pulumi():
    code = (
        "import sys, machines, machines.cli\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'pulumi')\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PROJECT_ROOT)


def machine(name: str, managed_by: str = "", status: Status = Status.RUNNING) -> Machine:
    return Machine(
        id=name,
        name=name,
        status=status,
        machine_type="cx22",
        location="fsn1",
        address="",
        pool=name.split("-")[-2],
        managed_by=managed_by,
    )


def test_pool_counts_say_what_the_stack_keeps_the_autoscaler_made_and_the_change_deletes():
    listed = {
        "lab": [
            machine("exp-lab-1", "pulumi"),
            machine("exp-lab-2", "pulumi"),
            machine("lab-a-7"),
            machine("lab-a-8"),
            machine("lab-a-9", status=Status.DELETING),
        ],
        "ci": [machine("exp-ci-1", "pulumi"), machine("ci-a-1")],
    }
    server = "orca:machines:Pool$hcloud:index/server:Server"
    changes = (
        Change(op="delete", type=server, name="exp-lab-1", urn="u1"),
        Change(op="delete", type=server, name="exp-lab-2", urn="u2"),
        Change(op="delete", type="pulumi-python:dynamic:Resource", name="lab-autoscaled", urn="u3"),
        Change(op="create", type=server, name="exp-ci-2", urn="u4"),
    )
    counts = diff.pool_counts(changes, "exp", listed)
    done = Diff(stack="exp", changes=changes, pools=counts)

    lab, ci = done.pools
    assert (lab.kept, lab.autoscaled, lab.deletes, lab.reaped) == (2, 2, 4, ("lab-a-7", "lab-a-8"))
    assert (ci.kept, ci.autoscaled, ci.deletes, ci.reaped, ci.creates) == (1, 1, 0, (), 1)
    assert done.machines() == (
        "machines: 1 to create, 4 to delete (2 kept by the stack, 2 made by the autoscaler)"
    )
    assert done.machines(past=True).startswith("machines: 1 created, 4 deleted (")
    assert "| `lab` | 2 → 0 | 2 | 4 | `lab-a-7`, `lab-a-8` |" in done.markdown()
    assert "pool ci: 1 → 2 kept by the stack, 1 made by the autoscaler, 0 to delete" in done.text()
    assert done.report()["pools"][0]["reaped"] == ("lab-a-7", "lab-a-8")


def test_a_preview_says_the_stacks_machines_of_the_old_name_form_are_renamed_in_place():
    listed = {
        "lab": [
            machine("exp-lab-1", "pulumi"),
            machine("exp-lab-2.stack", "pulumi"),
            machine("exp-lab-3", "pulumi"),
        ]
    }
    server = "orca:machines:Pool$hcloud:index/server:Server"
    changes = (
        Change(op="update", type=server, name="exp-lab-1", urn="u1", keys=("name",)),
        Change(op="update", type=server, name="exp-lab-2", urn="u2", keys=("serverType",)),
    )

    done = Diff(stack="exp", changes=changes, pools=diff.pool_counts(changes, "exp", listed))

    (lab,) = done.pools
    assert lab.renamed == 1
    note = (
        "1 of the stack's machines renamed in place from <owner>-lab-<n> to "
        "<owner>-lab-<n>.stack (the same machines and host names: updated, not replaced)"
    )
    assert done.text().splitlines()[-2].endswith(f"0 to delete; {note}")
    assert f"`lab`: {note}." in done.markdown()


RESOURCE_FAILED_WITH_DEBRIS = """
 code: 255
 stdout: Updating (local):
Diagnostics:
  pulumi:pulumi:Stack (orca-machines-local):
    error: Program failed with an unhandled exception:
    Traceback (most recent call last):
      File "/p/.venv/lib/python3.11/site-packages/pulumi/runtime/resource.py", line 1, in do
        resp = await asyncio.get_event_loop().run_in_executor(None, do_rpc_call)
    grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:
    \tstatus = StatusCode.UNAVAILABLE
    \tdetails = "error reading from server: EOF"
    >

    During handling of the above exception, another exception occurred:

    Traceback (most recent call last):
      File "/p/__main__.py", line 7, in <module>
    KeyboardInterrupt

  hcloud:index/server:Server (local-x86-1):
    error: creating server "local-x86-1": server name is already used (uniqueness_error)

Resources:
    1 errored
 stderr: error: update failed"""


def test_a_failed_resource_is_the_summary_without_the_programs_debris():
    summary = engine_summary(RESOURCE_FAILED_WITH_DEBRIS)
    assert summary == (
        'local-x86-1: creating server "local-x86-1": server name is already used (uniqueness_error)'
    )


def test_debris_alone_says_the_engine_stopped_the_program():
    text = (
        RESOURCE_FAILED_WITH_DEBRIS.split("  hcloud:index", maxsplit=1)[0]
        + "\n stderr: error: update failed"
    )
    summary = engine_summary(text)
    assert summary == "the engine stopped the program before it finished"


def test_a_chained_program_exception_shows_its_first_message_only():
    text = """
 code: 255
 stdout: Updating (local):
Diagnostics:
  pulumi:pulumi:Stack (orca-machines-local):
    error: Program failed with an unhandled exception:
    Traceback (most recent call last):
      File "/p/__main__.py", line 7, in <module>
    ValueError: the real cause

    During handling of the above exception, another exception occurred:

    Traceback (most recent call last):
      File "/p/__main__.py", line 9, in <module>
    RuntimeError: a later one

 stderr: error: update failed"""
    summary = engine_summary(text)
    assert summary == "ValueError: the real cause"
    assert "Traceback" not in summary
