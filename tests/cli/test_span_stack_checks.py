"""A stack whose pools span Hetzner (the emulator) and EC2 (moto's server), checked before the
engine starts: against what the stack itself will use, never the operator's runtime
variables left exported (``eval "$(orca-machines env other)"``), and one refusal per
mistake, at the key the operator wrote, naming the stack's own keys. Stack ``heron`` of
owner ``egret``, each cloud as home in turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from machines import automation
from machines.automation import checks, engine
from machines.cli import main
from machines.cli.exits import ExitCode
from machines.program.config.problems import StackConfigError
from machines.runtime.errors import SettingsError
from testkit import moto_server
from testkit.span import Span

STACK = "heron"
OWNER = "egret"
ARM = {
    "name": "arm",
    "size": 1,
    "places": [
        {"cloud": "hetzner", "machineType": "cax11", "location": "fsn1"},
        {"cloud": "ec2", "machineType": "t4g.micro", "location": "eu-central-1a"},
    ],
}
X86 = {"name": "x86", "machineType": "cx23", "location": "fsn1", "size": 1}
"""On the Hetzner-home stack; on the EC2-home one, ``t3.micro`` in ``eu-central-1a``."""


def no_engine(*_args: object, **_kwargs: object) -> object:
    raise AssertionError("the engine started: the stack's check let it through")


def config(span: Span, home: str, *pools: dict[str, Any]) -> dict[str, Any]:
    """Stack heron's ``config:`` on both clouds, ``home``'s settings at the top level and
    the other's under its kind, with ``pools`` (default: the spanning ``arm`` and the home
    cloud's ``x86``)."""
    made = span.stack_config(*(pools or (ARM, X86 if home == "hetzner" else EC2_X86)))
    made["orca-machines:owner"] = OWNER
    if home == "ec2":
        ec2 = made.pop("orca-machines:ec2")
        made.update({f"orca-machines:{key}": value for key, value in ec2.items()})
        made["orca-machines:provider"] = "ec2"
        made["orca-machines:hetzner"] = {}
    return made


EC2_X86 = {"name": "x86", "machineType": "t3.micro", "location": "eu-central-1a", "size": 1}


@pytest.fixture
def project(tmp_path: Path, span: Span, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project copy for stack heron; the engine must not start."""
    copy = automation.copy_project(tmp_path / "project")
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(copy))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "state").as_uri())
    monkeypatch.setattr(engine, "engine_command", no_engine)
    monkeypatch.setattr(automation.stacks, "engine_command", no_engine)
    return copy


def write(project: Path, settings: dict[str, Any]) -> None:
    path = project / "stacks" / f"Pulumi.{STACK}.yaml"
    path.write_text(yaml.safe_dump({"config": settings}, sort_keys=False))


def refused(project: Path) -> list[str]:
    """The lines the check says of stack heron (none: it passes)."""
    try:
        checks.check(STACK, project)
    except StackConfigError as error:
        return [f"{key}: {why}" for key, why in error.problems]
    return []


# Finding 6: the stack is checked against what it will use


@pytest.mark.parametrize("home", ["hetzner", "ec2"])
def test_an_operator_s_ec2_image_left_exported_is_not_the_stack_s(
    project: Path, span: Span, home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``up`` boots the stack's own image (none given: Canonical's Ubuntu of each type's
    architecture); an amd64 AMI the shell holds does not refuse the arm pool."""
    monkeypatch.setenv("ORCA_EC2_IMAGE", moto_server.NEW_AMD64)
    write(project, config(span, home))

    assert refused(project) == []


def test_an_operator_s_pools_left_exported_are_not_the_stack_s(
    project: Path, span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shell's ``ORCA_POOLS`` of another stack (a Hetzner pool in a spot market, which
    Hetzner does not sell) is not this one-cloud stack's."""
    monkeypatch.setenv("ORCA_POOLS", '[{"name": "x86", "machineType": "cx23", '
                       '"location": "fsn1", "market": "spot"}]')  # fmt: skip
    settings = config(span, "hetzner", X86)
    del settings["orca-machines:ec2"], settings["aws:region"], settings["aws:endpoints"]
    write(project, settings)

    assert refused(project) == []


@pytest.mark.parametrize(
    ("home", "key"), [("hetzner", "ec2.image"), ("ec2", "image")], ids=["hetzner", "ec2"]
)
def test_the_stack_s_own_ami_of_another_architecture_is_refused_at_its_key(
    project: Path, span: Span, home: str, key: str
) -> None:
    """Hetzner at home: its ``ec2:`` settings' image (amd64) against pool arm's EC2 place;
    EC2 at home: its own ``image`` (arm64) against pool x86's t3.micro."""
    settings = config(span, home)
    if home == "hetzner":
        settings["orca-machines:ec2"]["image"] = moto_server.NEW_AMD64
    else:
        settings["orca-machines:image"] = moto_server.NEW_ARM64
    write(project, settings)

    (line,) = refused(project)

    wrong = "t4g.micro is arm64" if home == "hetzner" else "t3.micro is amd64"
    assert line.startswith(f"{key}: {key} ami-")
    assert f" AMI, but {wrong}: name an AMI of " in line
    assert "ORCA_" not in line


@pytest.mark.parametrize(
    ("home", "key"), [("hetzner", "image"), ("ec2", "hetzner.image")], ids=["hetzner", "ec2"]
)
def test_a_hetzner_image_that_does_not_exist_is_one_line_at_the_stack_s_key(
    project: Path, span: Span, home: str, key: str
) -> None:
    settings = config(span, home)
    if home == "hetzner":
        settings["orca-machines:image"] = "ubuntu-99.04"
    else:
        settings["orca-machines:hetzner"]["image"] = "ubuntu-99.04"
    write(project, settings)

    (line,) = refused(project)

    assert line.startswith(f"{key}: Hetzner has no image 'ubuntu-99.04' for arm64 ({key})")
    assert "ORCA_" not in line


# Finding 10: one refusal per mistake, at the key the operator wrote


@pytest.mark.parametrize("home", ["hetzner", "ec2"])
def test_an_owner_that_is_no_label_value_is_one_line_at_owner(
    project: Path, span: Span, home: str
) -> None:
    settings = config(span, home)
    settings["orca-machines:owner"] = "égret"
    write(project, settings)

    with pytest.raises(StackConfigError) as failed:
        checks.check(STACK, project)

    (line,) = [f"{key}: {why}" for key, why in failed.value.problems]
    assert line.startswith("owner: owner 'égret' is not a label value")


@pytest.mark.parametrize(
    ("home", "place", "kind"),
    [("hetzner", 1, "EC2"), ("ec2", 0, "Hetzner")],
    ids=["hetzner-type-at-ec2", "ec2-type-at-hetzner"],
)
def test_a_type_of_the_other_cloud_at_a_place_is_one_line_at_its_machine_type(
    project: Path, span: Span, home: str, place: int, kind: str
) -> None:
    wrong = "t4g.micro" if kind == "Hetzner" else "cax11"
    places = [dict(p) for p in ARM["places"]]
    places[place]["machineType"] = wrong
    write(project, config(span, home, {**ARM, "places": places}))

    (line,) = refused(project)

    assert line.startswith(f"pools[0].places[{place}].machineType: pool arm: {kind} has no ")


def test_a_type_a_one_cloud_pool_s_cloud_lacks_is_one_line_at_its_machine_type(
    project: Path, span: Span
) -> None:
    write(project, config(span, "hetzner", ARM, {**X86, "machineType": "cx99"}))

    (line,) = refused(project)

    assert line.startswith("pools[1].machineType: pool x86: Hetzner has no server type 'cx99'")


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("aws:region", "eu-central", "aws:region: 'eu-central' is not an AWS region name"),
        ("aws:endpoints", [{"ec2": "moto:5000"}], "aws:endpoints: 'moto:5000' is not an http(s)"),
    ],
    ids=["region", "endpoint"],
)
@pytest.mark.parametrize("home", ["hetzner", "ec2"])
def test_a_malformed_aws_provider_key_is_one_line_at_it(
    project: Path, span: Span, home: str, key: str, value: object, says: str
) -> None:
    settings = config(span, home)
    settings[key] = value
    write(project, settings)

    with pytest.raises(StackConfigError) as failed:
        checks.check(STACK, project)

    (line,) = [f"{k}: {why}" for k, why in failed.value.problems]
    assert line.startswith(says)


@pytest.mark.parametrize("key", ["owner", "pools", "exchangeRates", "provider"])
def test_a_stack_key_under_another_cloud_s_settings_is_refused_there(
    project: Path, span: Span, key: str
) -> None:
    settings = config(span, "hetzner")
    settings["orca-machines:ec2"][key] = settings.get(f"orca-machines:{key}", OWNER)
    write(project, settings)

    with pytest.raises(StackConfigError) as failed:
        checks.check(STACK, project)

    (line,) = [f"{k}: {why}" for k, why in failed.value.problems]
    assert line.startswith(f"ec2.{key}: is the stack's, not a cloud's: set it once at the top")


def test_a_missing_aws_key_names_the_cloud_it_could_not_read(
    project: Path, span: Span, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    write(project, config(span, "hetzner"))

    with pytest.raises(SettingsError) as failed:
        checks.check(STACK, project)
    assert main(["preview", STACK, "-q"]) == ExitCode.ERROR

    assert str(failed.value).startswith(
        f"stack {STACK}: its pools could not be checked with EC2: EC2 DescribeInstanceTypes"
    )
    assert "no AWS credentials found" in str(failed.value)
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"orca-machines: error: {failed.value}"
