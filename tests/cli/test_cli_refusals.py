"""Refusals on the operator's path, through ``orca-machines`` as an operator types it: bad
input is refused before the engine starts or the cloud is asked, in one line, with nothing
changed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from emulator.process import Emulator
from machines import automation
from machines.cli import main
from machines.settings import ORCA_PULUMI_PROJECT, PULUMI_BACKEND_URL


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
