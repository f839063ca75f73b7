"""A cancelled run (Ctrl-C, a CI cancel, a pod stopped): the engine cancels its own way.

The CLI gets SIGTERM or SIGINT while the engine waits on the emulator; it must exit 143 or
130 only after the engine has released the stack's lock and stopped its language host and
plugin, so the next run works without ``pulumi cancel``. The signal comes while the engine
waits on a read (the program's server type lookup, refresh's reads): a create cut off in
flight is another matter (the server exists, the state does not know it).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.process import PROJECT_ROOT
from machines.cli.exits import ExitCode
from testkit.commands import machines_cli as cli
from testkit.engine_run import engine_processes, lock_files, wait_for

ENGINE_CHILDREN = ("pulumi-language-python", "pulumi-resource-hcloud", "pulumi ")


def started(*args: str) -> subprocess.Popen[str]:
    """``python -m machines ARGS`` in its own session: a signal reaches the CLI alone."""
    return subprocess.Popen(
        [sys.executable, "-m", "machines", *args],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def engine_children(state: Path) -> list[str]:
    """Command lines of this deployment's engine, its language host and plugin."""
    return [
        command
        for command in engine_processes(state).values()
        if any(c in command for c in ENGINE_CHILDREN)
    ]


def slow(deployment, method: str, path: str) -> None:
    deployment.emulator.control.set_faults(
        [{"kind": "delay", "method": method, "path": path, "seconds": 4.0}]
    )


def requests_of(deployment, route: str) -> int:
    routes = deployment.emulator.control.requests().routes
    return sum(count for name, count in routes.items() if name.startswith(route))


@pytest.mark.parametrize(
    ("args", "signum", "status", "route", "checked"),
    [
        (("up", "local", "-q"), signal.SIGTERM, 143, ("GET", "/v1/server_types"), 1),
        (("up", "local", "-q"), signal.SIGINT, 130, ("GET", "/v1/server_types"), 1),
        (("refresh", "local", "-q"), signal.SIGINT, 130, ("GET", "/v1/servers"), 0),
    ],
    ids=["up-SIGTERM", "up-SIGINT", "refresh-SIGINT"],
)
def test_a_signal_cancels_the_engine_and_leaves_no_lock_and_no_process(
    deployment, args, signum, status, route, checked
):
    """``checked``: the reads of the route the CLI makes itself before the engine starts
    (``up`` checks the stack's pools against the catalogue); the signal comes at the next,
    the engine's."""
    prepare = ("up", "local", "-q") if args[0] == "refresh" else ("destroy", "local", "--yes", "-q")
    assert cli(*prepare).returncode == ExitCode.OK, "the stack has what the run works on"
    deployment.emulator.control.reset_requests()
    slow(deployment, *route)
    try:
        run = started(*args)
        wait_for(
            lambda: requests_of(deployment, " ".join(route)) > checked,
            f"{route} during {args[0]}",
            120,
        )
        run.send_signal(signum)
        _, stderr = run.communicate(timeout=300)
    finally:
        deployment.emulator.control.clear_faults()

    assert run.returncode == status, stderr
    assert stderr.splitlines()[-1].startswith(
        f"orca-machines: error: interrupted by {signal.Signals(signum).name}"
    ), stderr
    assert "Traceback" not in stderr
    assert lock_files(deployment.state) == []
    wait_for(lambda: engine_children(deployment.state) == [], "the engine's processes ending", 30)
    assert cli("up", "local", "-q").returncode == ExitCode.OK
