"""Refusals on the operator's path, through ``orca-machines`` as an operator types it: bad
input is refused before the engine starts or the cloud is asked, in one line, with nothing
changed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from emulator.process import Emulator
from machines import automation
from machines.automation import Change, Diff
from machines.automation.cancel import explicit_refresh
from machines.automation.ci_preview import StackResult, render
from machines.cli import main
from machines.runtime.settings import ORCA_PULUMI_PROJECT, PULUMI_BACKEND_URL


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the project whose stack ``lab`` is the Hetzner example with pool
    ``builders`` at size 3 and max 6, its state in the copy's ``.pulumi-state``."""
    copy = automation.copy_project(tmp_path / "project")
    example = yaml.safe_load((copy / "stacks" / "Pulumi.hetzner-example.yaml").read_text())
    example["config"]["orca-machines:pools"][0].update(size=3, max=6)
    (copy / "stacks" / "Pulumi.lab.yaml").write_text(yaml.safe_dump(example))
    monkeypatch.setenv(ORCA_PULUMI_PROJECT, str(copy))
    monkeypatch.delenv(PULUMI_BACKEND_URL, raising=False)
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "operator's passphrase")
    return copy


def test_a_resize_over_the_pools_max_is_refused_before_anything_runs_or_is_written(
    project: Path,
    hetzner_env: dict[str, str],
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stack_file = project / "stacks" / "Pulumi.lab.yaml"
    before = stack_file.read_bytes()

    status = main(["resize", "lab", "builders", "60"])

    err = capsys.readouterr().err.strip()
    assert status == 1
    assert len(err.splitlines()) == 1, err
    assert "pool builders cannot be resized to 60" in err
    assert "max is 6" in err
    assert stack_file.read_bytes() == before
    assert emulator.control.requests().total == 0, "the cloud was asked"
    assert not (project / ".pulumi-state" / ".pulumi").exists(), "the engine ran"


def test_without_pulumi_backend_url_the_state_is_where_pulumi_yaml_says_in_the_project(
    project: Path,
) -> None:
    """One home: ``Pulumi.yaml``'s ``backend: url:``, which plain ``pulumi`` reads too."""
    assert "url: file://.pulumi-state" in (project / "Pulumi.yaml").read_text()

    assert automation.backend_url() == (project / ".pulumi-state").as_uri()


def test_pulumi_backend_url_still_overrides_pulumi_yaml(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PULUMI_BACKEND_URL, "s3://orca-pulumi-state?region=eu-central-1")

    assert automation.backend_url() == "s3://orca-pulumi-state?region=eu-central-1"


@pytest.mark.parametrize(
    ("args", "sent"),
    [
        (["up", "--yes"], ["up", "--yes", "--refresh=false"]),
        (["preview", "--refresh"], ["preview", "--refresh"]),
        (["destroy", "--yes", "--refresh=true"], ["destroy", "--yes", "--refresh=true"]),
        (["stack", "ls"], ["stack", "ls"]),
        (["refresh", "--yes"], ["refresh", "--yes"]),
    ],
)
def test_automation_says_when_it_wants_no_refresh(args: list[str], sent: list[str]) -> None:
    """``Pulumi.yaml``'s ``refresh: always`` is for plain pulumi; the automation API omits
    ``--refresh`` for no, so the engine command says ``--refresh=false`` itself."""
    assert explicit_refresh(args) == sent


def test_a_type_change_in_the_ci_comment_says_the_servers_are_powered_off() -> None:
    retyped = Change(
        op="update",
        type="hcloud:index/server:Server",
        name="prod-ci-1",
        urn="urn:pulumi:prod::orca-machines::hcloud:index/server:Server::prod-ci-1",
        keys=("serverType",),
    )
    diff = Diff(stack="prod", changes=(retyped,))

    comment = render([StackResult(stack="prod", diff=diff)])

    assert "powered off while its type changes" in comment
    assert "prod-ci-1" in comment
    assert "warning: 1 machine(s) change type in place (prod-ci-1)" in diff.text()
