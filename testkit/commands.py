"""The project's CLI, a plain ``pulumi`` and git as child processes, as CI and operators run
them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from emulator.process import PROJECT_ROOT


def machines_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m machines ARGS`` from the checkout, inheriting this environment."""
    return subprocess.run(
        [sys.executable, "-m", "machines", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


NON_INTERACTIVE = "--non-interactive"


def operator_pulumi(
    project: Path,
    state: Path | None,
    stack: str | None,
    *args: str,
    passphrase: str | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``pulumi ARGS --stack STACK`` run as an operator would: the engine's binary in the
    project, the documented variables (the local stack's passphrase unless told), no
    automation. ``state`` None: ``PULUMI_BACKEND_URL`` unset, as the README's default;
    ``stack`` None: no ``--stack`` (``stack ls``); ``home``: another ``PULUMI_HOME``
    (default: the engine's); ``environ``: variables set (over this process's) for this run
    only."""
    from machines import automation  # noqa: PLC0415 (pulumi loads for engine tests only)

    binary = automation.engine_bin()
    assert binary is not None
    env = {
        **os.environ,
        "PATH": f"{binary}{os.pathsep}{os.environ['PATH']}",
        "PULUMI_HOME": str(home or automation.CHECKOUT / automation.ENGINE_DIR / "home"),
        "PULUMI_CONFIG_PASSPHRASE": passphrase or automation.LOCAL_PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        **(environ or {}),
    }
    env.pop("PULUMI_BACKEND_URL", None)
    if state is not None:
        env["PULUMI_BACKEND_URL"] = state.as_uri()
    return subprocess.run(
        [
            str(binary / "pulumi"),
            *args,
            *(["--stack", stack] if stack else []),
            "--non-interactive",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def git(root: Path, *args: str) -> str:
    """``git -C root ARGS``; its output, or CalledProcessError."""
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def commit(root: Path, files: dict[str, str] | None = None, message: str = "change") -> None:
    """Write ``files`` (path: text) under ``root`` and commit everything."""
    for name, text in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
