"""Fixtures for the command line: a predictable environment and the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from emulator.process import PROJECT_ROOT

CLI_VARIABLES = (
    "ORCA_CI_STACKS",
    "ORCA_PROVIDER",
    "ORCA_OWNER",
    "ORCA_PULUMI_PROJECT",
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "HCLOUD_TOKEN",
    "HCLOUD_ENDPOINT",
    "ORCA_HCLOUD_IMAGE",
    "ORCA_HCLOUD_SSH_KEYS",
    "ORCA_HCLOUD_FIREWALL",
)

RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider, owner, project, backend or passphrase from the developer's shell."""
    for name in CLI_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def run_cli() -> RunCli:
    """``python -m machines ARGS`` in a child with this environment plus ``env``."""

    def run(
        *args: str, env: Mapping[str, str] | None = None, command: list[str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        child_env = {**os.environ, **(env or {})}
        return subprocess.run(
            [*(command or [sys.executable, "-m", "machines"]), *args],
            cwd=PROJECT_ROOT,
            env=child_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


@pytest.fixture
def console_script() -> list[str]:
    """The ``orca-machines`` command the package installs beside this interpreter."""
    script = Path(sys.executable).parent / "orca-machines"
    assert script.exists(), "orca-machines is not installed: pip install -e ."
    return [str(script)]
