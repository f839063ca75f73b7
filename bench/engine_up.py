"""``pulumi up`` of one pool of N servers through the engine and its hcloud plugin, against
the emulator: requests per server and wall time, for the up, a no-change preview and the
destroy.

Counts come from the emulator's own request counter, so they are what went over the wire;
times are one run's wall clock on this machine, to read beside each other. ``PULUMI_HOME``
chooses the plugin (the engine's own by default: the official hcloud plugin).

    python -m bench.engine_up [--servers 50] [--action-seconds 0.2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from emulator.process import Emulator, running_emulator
from machines import automation
from testkit.hetzner import TOKEN

STACK = "bench"
PASSPHRASE = "orca-machines-bench"


def stack_file(servers: int, endpoint: str) -> str:
    """One pool of ``servers`` servers, an SSH key and a firewall, as an operator writes it."""
    config = {
        "hcloud:endpoint": endpoint,
        "orca-machines:provider": "hetzner",
        "orca-machines:sshKeys": [
            {
                "name": "bench",
                "publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImIMymLnOQYYsqlkYOyldzatFs/"
                "rmIMKaXGu7Gd0hB6 bench@orca",
            }
        ],
        "orca-machines:firewall": {
            "name": "pools",
            "rules": [{"protocol": "tcp", "port": 22, "sourceIps": ["0.0.0.0/0"]}],
        },
        "orca-machines:pools": [
            {"name": "big", "machineType": "cx23", "location": "fsn1", "size": servers}
        ],
    }
    return yaml.safe_dump({"config": config}, sort_keys=False)


def measured(emulator: Emulator, action: Callable[[], object]) -> tuple[int, float, str]:
    """Requests ``action`` made, its wall time, and its three busiest routes."""
    emulator.control.reset_requests()
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    counts = emulator.control.requests()
    busiest = sorted(counts.routes.items(), key=lambda item: -item[1])[:3]
    return counts.total, seconds, ", ".join(f"{route} x{n}" for route, n in busiest)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument(
        "--action-seconds", type=float, default=0.2, help="how long each emulated action runs"
    )
    args = parser.parse_args()
    quiet: automation.OnOutput = lambda _line: None  # noqa: E731

    with (
        tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp,
        running_emulator(
            TOKEN,
            "--boot-seconds",
            str(args.action_seconds),
            "--action-seconds",
            str(args.action_seconds),
        ) as emulator,
    ):
        root = Path(tmp)
        project = automation.copy_project(root / "project")
        (project / "stacks" / f"Pulumi.{STACK}.yaml").write_text(
            stack_file(args.servers, emulator.url)
        )
        (root / "state").mkdir()
        os.environ.update(
            {
                automation.ORCA_PULUMI_PROJECT: str(project),
                automation.PULUMI_BACKEND_URL: (root / "state").as_uri(),
                automation.PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
                "HCLOUD_TOKEN": TOKEN,
            }
        )
        home = os.environ.get(automation.PULUMI_HOME, "(the engine's)")
        print(f"pulumi up of {args.servers} servers, actions of {args.action_seconds} s")
        print(f"PULUMI_HOME: {home}")
        print(f"{'step':<26} {'requests':>8} {'per server':>10} {'seconds':>8}  busiest routes")
        steps: list[tuple[str, Callable[[], object]]] = [
            ("up", lambda: automation.up(STACK, on_output=quiet)),
            ("preview (no changes)", lambda: automation.preview(STACK, on_output=quiet)),
            ("destroy", lambda: automation.destroy(STACK, on_output=quiet)),
        ]
        for name, action in steps:
            total, seconds, busiest = measured(emulator, action)
            per = total / args.servers
            print(f"{name:<26} {total:>8} {per:>10.2f} {seconds:>8.1f}  {busiest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
