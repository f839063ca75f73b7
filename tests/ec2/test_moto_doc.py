"""docs/operating.md's "An EC2 stack on moto's server", run as written: moto started with
the documented image list, a stack of one's own (the EC2 example, no image named) finds
Canonical's images there, checked as ``up`` checks it before the engine starts, and the
runtime launches from them; without the list the stack is refused for want of an image."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from machines import MachineSpec, Provider, automation
from machines.automation import checks, engine
from machines.program.config.problems import StackConfigError
from testkit import moto_server, readme

SECTION = readme.section("An EC2 stack on moto's server", readme.doc("operating"))
[IMAGES] = readme.blocks(SECTION, "json")
[START] = readme.commands(readme.blocks(SECTION, "sh")[0])


def no_engine(*_args: object, **_kwargs: object) -> object:
    raise AssertionError("the engine started before the stack was checked")


def started(workdir: Path, command: str) -> Iterator[moto_server.MotoServer]:
    """moto's server started by ``command`` (its port made free) in ``workdir``, where the
    project's ``.venv`` is at hand as in a checkout."""
    assert " -p 5000" in command
    (workdir / ".venv").symlink_to(Path(sys.executable).parent.parent)
    port = moto_server.free_port()
    log = workdir / "moto.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "-c", command.replace(" -p 5000", f" -p {port}")],
            cwd=workdir,
            env={k: v for k, v in os.environ.items() if not k.startswith("MOTO_")},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = moto_server.MotoServer(f"http://127.0.0.1:{port}", process)
        try:
            moto_server.wait_until_up(server, moto_server.START_TIMEOUT, log)
            yield server
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def documented(tmp_path: Path) -> Iterator[moto_server.MotoServer]:
    """moto started as the document says, ``amis.json`` its JSON block."""
    (tmp_path / "amis.json").write_text(IMAGES)
    yield from started(tmp_path, START)


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[moto_server.MotoServer]:
    """moto started without the image list: its own images only."""
    yield from started(tmp_path, START.replace('MOTO_AMIS_PATH="$PWD/amis.json" ', ""))


def own_stack(tmp_path: Path, moto: moto_server.MotoServer, monkeypatch) -> Path:
    """A project copy whose stack ``mine`` is the EC2 example at ``moto``, with an
    account's network there; moto takes any credentials."""
    moto_server.isolate(monkeypatch)
    for name, value in moto_server.CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    network = moto_server.build_network(moto.url)
    copy = automation.copy_project(tmp_path / "project")
    stacks = copy / "stacks"
    example = yaml.safe_load((stacks / "Pulumi.ec2-example.yaml").read_text())
    assert "orca-machines:image" not in example["config"]
    example["config"].update({
        "aws:endpoints": [{"ec2": moto.url, "iam": moto.url, "sts": moto.url}],
        "orca-machines:subnets": network.subnets,
    })  # fmt: skip
    (stacks / "Pulumi.mine.yaml").write_text(yaml.safe_dump(example, sort_keys=False))
    monkeypatch.setattr(engine, "engine_command", no_engine)
    return copy


def test_a_stack_of_ones_own_finds_canonicals_images_on_moto_started_as_documented(
    documented: moto_server.MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = own_stack(tmp_path, documented, monkeypatch)

    deployment = checks.check("mine", project)

    assert deployment is not None
    amis = {image["architecture"]: image["ami_id"] for image in json.loads(IMAGES)}
    world = moto_server.build_world(documented.url)
    for name, machine_type, arch in (
        ("ci-1", "t3.micro", "x86_64"),
        ("ci-2", "t4g.micro", "arm64"),
    ):
        provider = Provider.of("ec2", "mine", world.env)
        made = provider.create(MachineSpec(name, machine_type, "eu-central-1a", "", "ci"))
        assert made.ok, made.reason
        assert made.machine is not None
        launched = moto_server.client(documented.url).describe_instances(
            InstanceIds=[made.machine.id]
        )["Reservations"][0]["Instances"][0]
        assert launched["ImageId"] == amis[arch]


def test_without_the_image_list_the_stack_is_refused_for_want_of_an_image(
    plain: moto_server.MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = own_stack(tmp_path, plain, monkeypatch)

    with pytest.raises(StackConfigError) as refused:
        checks.check("mine", project)

    assert "24.04" in str(refused.value), str(refused.value)  # the image it looked for
