"""One pass per operation: on an unchanged stack, ``up`` and ``preview`` start the engine's
binary once for its version and once for the operation, ``ci-preview``'s stacks share the
version, one listing of their owners' machines and one price list, and ``status`` reads the
state without starting it (issue 30).

The binary is counted by a wrapper named ``pulumi`` in a copy of the engine's ``bin`` (the
other binaries linked), as ``bench.operations`` counts it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from machines import automation
from machines.automation import ci_preview, engine
from machines.automation.status import status

pytestmark = pytest.mark.engine

WRAPPER = """#!/bin/sh
printf '%s\\n' "$*" >> {log}
exec {real} "$@"
"""


def quiet(_line: str) -> None:
    return None


@pytest.fixture
def started(deployment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the counting ``pulumi`` appends each start's arguments to."""
    real = automation.engine_bin()
    assert real is not None
    home = os.environ.get("PULUMI_HOME") or str(engine.CHECKOUT / automation.ENGINE_DIR / "home")
    checkout = tmp_path / "checkout"
    binaries = checkout / automation.ENGINE_DIR / "bin"
    binaries.mkdir(parents=True)
    for binary in real.iterdir():
        if binary.name != "pulumi":
            (binaries / binary.name).symlink_to(binary)
    log = tmp_path / "started.log"
    wrapper = binaries / "pulumi"
    wrapper.write_text(WRAPPER.format(log=log, real=real / "pulumi"))
    wrapper.chmod(0o755)
    monkeypatch.setattr(engine, "CHECKOUT", checkout)
    monkeypatch.setenv("PULUMI_HOME", home)
    return log


def commands(log: Path) -> list[str]:
    """Each start's subcommand, ``stack export`` for two words, and empties the log."""
    said = log.read_text().splitlines() if log.exists() else []
    log.write_text("")
    found = []
    for line in said:
        words = [w for w in line.split() if not w.startswith("-")]
        found.append(" ".join(words[:2]) if words[:1] in (["stack"], ["config"]) else words[0])
    return found


def test_an_unchanged_stacks_operations_start_the_engine_once_each(
    started: Path, deployment: Any
) -> None:
    automation.up("local", on_output=quiet)
    commands(started)

    assert not automation.up("local", on_output=quiet).has_changes
    assert commands(started) == ["version", "up"]

    requests = deployment.emulator.control.requests
    listed = requests().get("GET /v1/servers")
    diff = automation.preview("local", on_output=quiet)
    one_preview = requests().get("GET /v1/servers") - listed
    assert not diff.has_changes
    assert [p.pool for p in diff.pools] == ["arm", "x86"]
    assert commands(started) == ["version", "preview"]

    found = status("local")
    assert sorted(p.pool for p in found.pools) == ["arm", "x86"]
    assert commands(started) == []

    priced = requests().get("GET /v1/pricing")
    listed = requests().get("GET /v1/servers")
    results = ci_preview.run(["local", "local"], on_output=quiet)
    assert [r.error for r in results] == ["", ""]
    assert commands(started) == ["version", "preview", "preview"]
    assert requests().get("GET /v1/pricing") == priced + 1
    # The program's own reads twice, the owners' machines listed once for both stacks.
    assert requests().get("GET /v1/servers") - listed == 2 * one_preview - 1
    assert "No changes." in ci_preview.render(results)
    assert commands(started) == []
