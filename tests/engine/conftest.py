"""Fixtures for tests with the real Pulumi engine: it must be there, or every test fails.

Nothing is skipped: CI builds the engine (scripts/install-pulumi) before the tests, so a
missing engine or hcloud plugin is a failure that says how to install them. Each module
gets its own emulator, a copy of the project (so config set through automation never
rewrites the committed stack files) and a throwaway file backend.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hcloud import Client

from emulator.process import Emulator, running_emulator
from machines import automation
from testkit.hetzner import TOKEN

HCLOUD_PLUGIN = "hcloud"

ENGINE_VARIABLES = (
    "ORCA_CI_STACKS",
    "ORCA_PROVIDER",
    "ORCA_OWNER",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "HCLOUD_ENDPOINT",
    "ORCA_HCLOUD_IMAGE",
    "ORCA_HCLOUD_SSH_KEYS",
    "ORCA_HCLOUD_FIREWALL",
)


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
    """The engine's bin directory, with the hcloud resource plugin installed, or a failure."""
    binary = automation.engine_bin()
    if binary is None:
        pytest.fail(f"the Pulumi engine is not installed: {automation.INSTALL_HINT}", pytrace=False)
    if not any(
        p.get("name") == HCLOUD_PLUGIN and p.get("kind") == "resource" for p in _plugins(binary)
    ):
        pytest.fail(
            "the hcloud resource plugin is not installed in the engine's PULUMI_HOME: "
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
