"""What ``Pulumi.yaml``'s ``options: refresh: always`` costs plain ``pulumi`` per run: a
``preview`` and a no-change ``up --yes`` of one pool of N servers, with the refresh (the
project's default) and without it (``--refresh=false``), side by side in one run, against
the emulator through the official hcloud plugin.

Counts come from the emulator's request counter (what went over the wire); times are wall
clock on this machine, each step run ``--runs`` times alternating, the median shown.

    python -m bench.plain_refresh [--servers 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.engine_up import PASSPHRASE, STACK, stack_file
from emulator.process import running_emulator
from machines import automation
from testkit.commands import operator_pulumi
from testkit.hetzner import TOKEN


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp,
        running_emulator(TOKEN, "--boot-seconds", "0.1") as emulator,
    ):
        root = Path(tmp)
        project = automation.copy_project(root / "project")
        (project / "stacks" / f"Pulumi.{STACK}.yaml").write_text(
            stack_file(args.servers, emulator.url)
        )
        state = root / "state"
        state.mkdir()
        os.environ.update(
            {
                automation.ORCA_PULUMI_PROJECT: str(project),
                automation.PULUMI_BACKEND_URL: state.as_uri(),
                automation.PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
                "HCLOUD_TOKEN": TOKEN,
            }
        )
        automation.up(STACK, on_output=lambda _line: None)
        steps = {
            (command, refresh): [*command.split(), *([] if refresh else ["--refresh=false"])]
            for command in ("preview", "up --yes")
            for refresh in (True, False)
        }
        seen: dict[tuple[str, bool], list[tuple[int, float]]] = {key: [] for key in steps}
        for _ in range(args.runs):
            for key, argv in steps.items():
                emulator.control.reset_requests()
                start = time.perf_counter()
                done = operator_pulumi(project, state, STACK, *argv, passphrase=PASSPHRASE)
                seconds = time.perf_counter() - start
                assert done.returncode == 0, done.stdout + done.stderr
                seen[key].append((emulator.control.requests().total, seconds))
        load = os.getloadavg()[0]
        print(
            f"plain pulumi on a stack of {args.servers} servers, {args.runs} runs, load {load:.1f}"
        )
        print(f"{'command':<10} {'refresh':<8} {'requests':>8} {'seconds':>8}")
        for (command, refresh), runs in seen.items():
            requests = statistics.median(r for r, _ in runs)
            seconds = statistics.median(s for _, s in runs)
            said = "always" if refresh else "false"
            print(f"{command:<10} {said:<8} {requests:>8.0f} {seconds:>8.1f}")
        automation.destroy(STACK, on_output=lambda _line: None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
