"""``status`` says when it could not read the cloud: the table, one error line, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from emulator.process import Emulator
from machines import automation
from machines.automation import status
from machines.cli import ERROR, OK, main


@pytest.fixture
def project(tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project copy whose local stack points at the emulator and keeps nothing yet."""
    copy = automation.copy_project(tmp_path / "project")
    path = copy / "stacks" / "Pulumi.local.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["hcloud:endpoint"] = emulator.url
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(copy))
    monkeypatch.setattr(status, "outputs_now", lambda stack, project=None: {})
    monkeypatch.setattr(status, "last_operation", lambda stack, project=None: "")
    return copy


def test_status_without_a_token_fails_after_the_table(project, capsys):
    assert main(["status", "local"]) == ERROR
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1].split()[:2] == ["x86", "cx23"]
    assert "unknown" in captured.out
    assert captured.err == (
        "orca-machines: error: stack local: the cloud could not be read, so its pools' machines "
        "are unknown: HCLOUD_TOKEN is not set: this provider needs it\n"
    )


def test_status_json_says_what_was_not_read(project, capsys):
    assert main(["status", "local", "--json"]) == ERROR
    report = json.loads(capsys.readouterr().out)
    assert report["unread"] == ["HCLOUD_TOKEN is not set: this provider needs it"]


def test_status_that_read_the_cloud_exits_0(project, hetzner_env, capsys):
    assert main(["status", "local"]) == OK
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines()[1].split()[6:8] == ["0", "0"]
