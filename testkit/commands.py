"""The project's CLI and git as child processes, as CI runs them."""

from __future__ import annotations

import subprocess
import sys
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
