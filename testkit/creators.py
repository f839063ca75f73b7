"""Autoscaler processes that create at once, for the fence's tests and benchmark.

``python -m testkit.creators KIND PREFIX COUNT --pool P --start FILE`` builds its provider as
an autoscaler does (``Provider.of(KIND, owner)`` from this process's environment: the
clouds, ``ORCA_POOLS``, ``ORCA_FENCE_URL``), prints ``ready``, waits for ``FILE`` to exist
(every process starts at once), then creates ``PREFIX-0`` .. ``PREFIX-<COUNT-1>`` as fast as
it can and prints one JSON line per answer (name, outcome, cloud, reason, seconds), then
the fence store's counts. ``run`` starts several and collects what they printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from machines.runtime.models import MachineSpec
from machines.runtime.provider import Provider
from testkit.specs import OWNER

READY = "ready"


@dataclass
class Report:
    """What one process printed: each create's answer, and its fence store's counts."""

    answers: list[dict[str, Any]] = field(default_factory=list)
    store: dict[str, float] = field(default_factory=dict)

    @property
    def made(self) -> list[str]:
        return [a["name"] for a in self.answers if a["outcome"] == "ok"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m testkit.creators")
    parser.add_argument("kind")
    parser.add_argument("prefix")
    parser.add_argument("count", type=int)
    parser.add_argument("--pool", default="ci")
    parser.add_argument("--type", dest="machine_type", required=True)
    parser.add_argument("--location", required=True)
    parser.add_argument("--start", type=Path, required=True)
    parser.add_argument("--owner", default=OWNER)
    args = parser.parse_args(argv)
    provider = Provider.of(args.kind, args.owner)
    print(READY, flush=True)
    while not args.start.exists():
        time.sleep(0.01)
    for n in range(args.count):
        spec = MachineSpec(
            name=f"{args.prefix}-{n}",
            machine_type=args.machine_type,
            location=args.location,
            pool=args.pool,
        )
        began = time.monotonic()
        created = provider.create(spec)
        answer = {
            "name": spec.name,
            "outcome": created.outcome,
            "cloud": created.machine.cloud if created.machine else "",
            "reason": created.reason,
            "seconds": time.monotonic() - began,
        }
        print(json.dumps(answer), flush=True)
    fence = provider.fence
    counts = fence.store.counts if fence is not None else None
    store = (
        {}
        if counts is None
        else {
            "reads": counts.reads,
            "writes": counts.writes,
            "lost": counts.lost,
            "lost_seconds": counts.lost_seconds,
        }
    )
    print(json.dumps({"store": store}), flush=True)


def run(
    kind: str,
    processes: int,
    count: int,
    *,
    machine_type: str,
    location: str,
    workdir: Path,
    pool: str = "ci",
    environ: Mapping[str, str] | None = None,
) -> list[Report]:
    """Start ``processes`` creators (prefixes ``p0``, ``p1``, ...), let them go at once, and
    return each one's report once all have ended."""
    env = {**os.environ, **(environ or {})}
    start = workdir / f"start-{time.monotonic_ns()}"
    children = [
        subprocess.Popen(
            [
                sys.executable, "-m", "testkit.creators", kind, f"p{i}", str(count),
                "--pool", pool, "--type", machine_type, "--location", location,
                "--start", str(start),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(processes)
    ]  # fmt: skip
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline().strip()
            if line != READY:
                _, err = child.communicate()
                raise RuntimeError(f"a creator did not start: {line} {err[-2000:]}")
        start.touch()
        reports = []
        for child in children:
            out, err = child.communicate()
            if child.returncode != 0:
                raise RuntimeError(f"a creator failed ({child.returncode}): {err[-2000:]}")
            reports.append(_report(out))
        return reports
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def _report(out: str) -> Report:
    report = Report()
    for line in out.splitlines():
        parsed = json.loads(line)
        if "store" in parsed:
            report.store = parsed["store"]
        else:
            report.answers.append(parsed)
    return report


if __name__ == "__main__":
    main()
