"""Fixtures for tests with the real Pulumi engine: it must be there, or every test fails.

Nothing is skipped: CI builds the engine (scripts/install-pulumi) before the tests, so a
missing engine, hcloud or aws plugin is a failure that says how to install them. Each module
gets its own emulator or moto server, a copy of the project (so config set through automation
never rewrites the committed stack files) and a throwaway backend.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hcloud import Client

from emulator.process import Emulator, running_emulator
from machines import automation
from testkit import moto_server
from testkit.engine_stacks import (
    EC2_PASSPHRASE,
    EC2_STACK,
    EC2_USER_DATA,
    EC2_USER_DATA_KEY,
    ENGINE_VARIABLES,
    S3_STACK,
    SPAN_STACK,
    STATE_BUCKET,
    ec2_stack_config,
    span_stack_config,
)
from testkit.hetzner import TOKEN

PLUGINS = ("hcloud", "aws")


def _plugins(binary: Path) -> list[dict[str, object]]:
    env = {**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "true"}
    home = os.environ.get("PULUMI_HOME") or str(
        automation.CHECKOUT / automation.ENGINE_DIR / "home"
    )
    env["PULUMI_HOME"] = home
    listed = subprocess.run(
        [str(binary / "pulumi"), "plugin", "ls", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if listed.returncode != 0:
        pytest.fail(f"`pulumi plugin ls` failed: {listed.stderr.strip()}", pytrace=False)
    plugins: list[dict[str, object]] = json.loads(listed.stdout or "[]") or []
    return plugins


@pytest.fixture(scope="session", autouse=True)
def engine() -> Path:
    """The engine's bin directory, with the hcloud and aws resource plugins, or a failure."""
    binary = automation.engine_bin()
    if binary is None:
        pytest.fail(f"the Pulumi engine is not installed: {automation.INSTALL_HINT}", pytrace=False)
    installed = {p.get("name") for p in _plugins(binary) if p.get("kind") == "resource"}
    for name in PLUGINS:
        if name not in installed:
            pytest.fail(
                f"the {name} resource plugin is not installed in the engine's PULUMI_HOME: "
                f"{automation.INSTALL_HINT}",
                pytrace=False,
            )
    return binary


@dataclass(frozen=True)
class Deployment:
    """A project copy with its own state, aimed at a running emulator."""

    project: Path
    state: Path
    emulator: Emulator
    hcloud: Client


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """The ``local`` stack of a project copy, its ``hcloud:endpoint`` set to an emulator.

    The process environment points automation (and child CLIs) at the copy and its state;
    the engine's default passphrase of the local stack is used, as documented.
    """
    root = tmp_path_factory.mktemp("engine")
    project = automation.copy_project(root / "project")
    state = root / "state"
    state.mkdir()
    with (
        running_emulator(TOKEN, "--boot-seconds", "0.1") as emulator,
        pytest.MonkeyPatch.context() as patch,
    ):
        for name in ENGINE_VARIABLES:
            patch.delenv(name, raising=False)
        patch.setenv("ORCA_PULUMI_PROJECT", str(project))
        patch.setenv("PULUMI_BACKEND_URL", state.as_uri())
        patch.setenv("HCLOUD_TOKEN", TOKEN)
        automation.set_config("local", {"hcloud:endpoint": emulator.url})
        client = Client(token=TOKEN, api_endpoint=emulator.url, poll_interval=0.05)
        yield Deployment(project, state, emulator, client)


def example_project(root: Path, example: str, stack: str) -> Path:
    """A project copy under ``root`` whose stack ``stack`` is ``stacks/Pulumi.<example>.yaml``."""
    project = automation.copy_project(root / "project")
    stacks = project / "stacks"
    shutil.copy(stacks / f"Pulumi.{example}.yaml", stacks / f"Pulumi.{stack}.yaml")
    return project


@dataclass(frozen=True)
class Ec2Deployment:
    """A project copy whose ``moto`` stack is the EC2 example stack aimed at moto's server."""

    project: Path
    state: Path
    moto: moto_server.MotoServer
    network: moto_server.Network
    policy: str


@contextmanager
def aws_process_env(patch: pytest.MonkeyPatch, project: Path, backend: str) -> Iterator[None]:
    """This process (and the engine it starts) on moto's credentials, the copy and a backend."""
    moto_server.isolate(patch)
    for name in ENGINE_VARIABLES:
        patch.delenv(name, raising=False)
    for name, value in moto_server.CREDENTIALS.items():
        patch.setenv(name, value)
    patch.delenv("AWS_ENDPOINT_URL", raising=False)
    patch.delenv("AWS_REGION", raising=False)
    patch.setenv("ORCA_PULUMI_PROJECT", str(project))
    patch.setenv("PULUMI_BACKEND_URL", backend)
    patch.setenv("PULUMI_CONFIG_PASSPHRASE", EC2_PASSPHRASE)
    yield


@pytest.fixture(scope="module")
def ec2_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ec2Deployment]:
    """The ``moto`` stack: ``stacks/Pulumi.ec2-example.yaml`` in a project copy, pointed at
    moto's server (endpoints, its VPC and subnets, a policy it has) with a file backend.
    """
    root = tmp_path_factory.mktemp("engine-ec2")
    project = example_project(root, "ec2-example", EC2_STACK)
    state = root / "state"
    state.mkdir()
    with (
        moto_server.running(root) as moto,
        pytest.MonkeyPatch.context() as patch,
        aws_process_env(patch, project, state.as_uri()),
    ):
        network = moto_server.build_network(moto.url)
        policy = moto_server.managed_policy(moto.url)
        automation.set_config(EC2_STACK, ec2_stack_config(moto.url, network, policy))
        # As the example stack advises: user data as a secret, so no backend file has it.
        automation.set_config(EC2_STACK, {EC2_USER_DATA_KEY: EC2_USER_DATA}, path=True, secret=True)
        yield Ec2Deployment(project, state, moto, network, policy)


@dataclass(frozen=True)
class SpanDeployment:
    """A project copy whose ``span`` stack is the spanning example on both clouds at once."""

    project: Path
    state: Path
    emulator: Emulator
    hcloud: Client
    moto: moto_server.MotoServer


@pytest.fixture(scope="module")
def span_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SpanDeployment]:
    """The ``span`` stack: ``stacks/Pulumi.span-example.yaml`` in a project copy, Hetzner at
    an emulator and EC2 at moto's server (its network, a policy it has), a file backend."""
    root = tmp_path_factory.mktemp("engine-span")
    project = example_project(root, "span-example", SPAN_STACK)
    state = root / "state"
    state.mkdir()
    with (
        running_emulator(TOKEN, "--boot-seconds", "0.1") as emulator,
        moto_server.running(root) as moto,
        pytest.MonkeyPatch.context() as patch,
        aws_process_env(patch, project, state.as_uri()),
    ):
        patch.setenv("HCLOUD_TOKEN", TOKEN)
        network = moto_server.build_network(moto.url)
        policy = moto_server.managed_policy(moto.url)
        automation.set_config(
            SPAN_STACK, span_stack_config(emulator.url, moto.url, network, policy)
        )
        client = Client(token=TOKEN, api_endpoint=emulator.url, poll_interval=0.05)
        yield SpanDeployment(project, state, emulator, client, moto)


@dataclass(frozen=True)
class S3Deployment:
    """A project copy whose state lives in a bucket of moto's server (Pulumi's S3 backend)."""

    project: Path
    backend: str
    moto: moto_server.MotoServer


def s3_backend_url(url: str, bucket: str) -> str:
    """``PULUMI_BACKEND_URL`` for a bucket on an S3-compatible server (path-style addressing)."""
    return f"s3://{bucket}?" + urlencode(
        {"endpoint": url, "s3ForcePathStyle": "true", "region": moto_server.REGION}
    )


@pytest.fixture(scope="module")
def s3_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Deployment]:
    """A small EC2 stack (one instance, an existing group and profile) on moto, its state in
    a moto bucket: the backend teams share instead of a checkout's ``.pulumi-state``."""
    root = tmp_path_factory.mktemp("engine-s3")
    project = example_project(root, "ec2-example", S3_STACK)
    with moto_server.running(root) as moto, pytest.MonkeyPatch.context() as patch:
        backend = s3_backend_url(moto.url, STATE_BUCKET)
        with aws_process_env(patch, project, backend):
            moto_server.client(moto.url, "s3").create_bucket(
                Bucket=STATE_BUCKET,
                CreateBucketConfiguration={"LocationConstraint": moto_server.REGION},
            )
            world = moto_server.build_world(moto.url)
            config = {
                "aws:endpoints": [{"ec2": moto.url, "iam": moto.url, "sts": moto.url}],
                "orca-machines:subnets": world.subnets,
                "orca-machines:securityGroup": world.security_group,
                "orca-machines:instanceProfile": moto_server.PROFILE,
                "orca-machines:pools": [
                    {
                        "name": "ci",
                        "machineType": "t3.micro",
                        "location": "eu-central-1a",
                        "size": 1,
                    }
                ],
            }
            automation.set_config(S3_STACK, config)
            yield S3Deployment(project, backend, moto)
