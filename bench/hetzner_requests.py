"""Hetzner API requests per provider operation, and the time the hot calls take.

Counts come from the emulator's own request counter, so they are what went over the wire.
Times are wall-clock medians on this machine: read them as ratios, not as promises.

    python -m bench.hetzner_requests [--machines 1000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from emulator.process import Emulator, running_emulator
from machines import Provider
from testkit import hetzner
from testkit.specs import spec

ROOT = Path(__file__).resolve().parents[1]

OWNER = "bench"
LABELS = {"orca": "pool", "orca-pool": "big", "orca-owner": OWNER}


def counted(emulator: Emulator, action: Callable[[], object]) -> tuple[int, str]:
    """Requests ``action`` made, and which routes."""
    emulator.control.reset_requests()
    action()
    counts = emulator.control.requests()
    routes = ", ".join(f"{route} x{n}" for route, n in sorted(counts.routes.items()))
    return counts.total, routes


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_seconds(module: str, repeat: int) -> float:
    """Median wall time of a fresh interpreter importing ``module``."""

    def run() -> None:
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, cwd=ROOT)

    return median_seconds(run, repeat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    token = hetzner.token("requests")
    with running_emulator(token, "--quiet", "--boot-seconds", "0") as emulator:
        os.environ.update({"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emulator.url})
        hcloud = Provider.of("hetzner", owner=OWNER)
        rows: list[tuple[str, int, str]] = []

        def row(label: str, action: Callable[[], object]) -> None:
            rows.append((label, *counted(emulator, action)))

        row("arch, first", lambda: hcloud.arch("cx23"))
        row("arch, again (other type)", lambda: hcloud.arch("cax11"))
        row("create, first (resolves image)", lambda: hcloud.create(spec("ci-1")))
        row("create, next", lambda: hcloud.create(spec("ci-2")))
        row(
            "create, first arm64 (resolves its image)",
            lambda: hcloud.create(spec("ci-3", machine_type="cax11")),
        )
        row("create, next arm64", lambda: hcloud.create(spec("ci-4", machine_type="cax11")))
        row(
            "create, retried (name taken by itself)",
            lambda: hcloud.create(spec("ci-4", machine_type="cax11")),
        )
        listed = hcloud.machines("ci")
        first, second = listed[0].id, listed[1].id
        row("delete (listed: the listing shows it is this owner's)", lambda: hcloud.delete(first))
        row("delete, again (this provider deleted it)", lambda: hcloud.delete(first))
        other = Provider.of("hetzner", owner=OWNER)
        row("delete by a provider that has not listed it", lambda: other.delete(second))
        row(
            "delete, already gone, by a provider that has not listed it",
            lambda: Provider.of("hetzner", owner=OWNER).delete(second),
        )
        emulator.control.add_servers(args.machines, name_prefix="big-", labels=LABELS)

        def listed_afresh() -> object:
            """``machines`` of a provider with no listing yet: the listing itself."""
            return Provider.of("hetzner", owner=OWNER).machines("big")

        row(f"machines(pool) over {args.machines}", listed_afresh)

        list_time = median_seconds(listed_afresh, args.repeat)

    baseline = import_seconds("sys", args.repeat)
    light = import_seconds("machines", args.repeat)
    with_hetzner = import_seconds("machines.runtime.clouds.hetzner.provider", args.repeat)

    print("| operation | requests | routes |")
    print("| --- | ---: | --- |")
    for label, total, routes in rows:
        print(f"| {label} | {total} | {routes} |")
    print()
    print("| measure | median |")
    print("| --- | ---: |")
    print(f"| machines(pool) over {args.machines} machines | {list_time * 1000:.0f} ms |")
    print(f"| python -c 'import sys' (interpreter start) | {baseline * 1000:.0f} ms |")
    print(
        f"| python -c 'import machines' | {light * 1000:.0f} ms "
        f"(+{(light - baseline) * 1000:.0f} ms over start) |"
    )
    print(
        "| python -c 'import machines.runtime.clouds.hetzner.provider' (hcloud loaded) | "
        f"{with_hetzner * 1000:.0f} ms "
        f"(+{(with_hetzner - baseline) * 1000:.0f} ms) |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
