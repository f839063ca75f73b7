"""Benchmark: the whole Pulumi program, under mocks, for stacks of 500 machines (5 pools of 100).

Runs ``__main__.py`` as ``tests/pulumi`` does, with ``testkit.program_harness`` (no Pulumi
CLI, no cloud) for a Hetzner and an EC2 stack (after a one-machine run that imports the
providers) and prints, per stack, the wall time, the peak of Python allocations during the run
(tracemalloc, in a second run so it does not slow the timed one) and the resources registered;
then the process's peak resident memory.

    python -m bench.pulumi_program [--pools 5] [--size 100]
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from typing import Any

from testkit.program_harness import ec2, hetzner, run


def stack(provider: str, pools: int, size: int) -> dict[str, Any]:
    if provider == "hetzner":
        types, locations, config = ["cx23", "cax11"], ["fsn1", "nbg1"], hetzner(sshKeys=["ops"])
    else:
        types, locations, config = ["t3.small", "t4g.small"], ["eu-central-1a"], ec2()
    config["orca-machines:pools"] = [
        {
            "name": f"pool{i}",
            "machineType": types[i % len(types)],
            "location": locations[i % len(locations)],
            "size": size,
            "userData": "#cloud-config\npackage_update: true\n",
        }
        for i in range(pools)
    ]
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=5)
    parser.add_argument("--size", type=int, default=100)
    args = parser.parse_args()
    machines = args.pools * args.size
    for provider in ("hetzner", "ec2"):
        run(stack(provider, 1, 1), stack="bench")
        config = stack(provider, args.pools, args.size)
        started = time.perf_counter()
        result = run(config, stack="bench")
        seconds = time.perf_counter() - started
        tracemalloc.start()
        run(config, stack="bench")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        listed = sum(len(p["machines"]) for p in result.outputs["pools"].values())
        assert listed == machines, listed
        print(
            f"{provider}: {machines} machines in {args.pools} pools: {seconds:.2f} s wall, "
            f"{len(result.resources)} resources registered, "
            f"{peak / 2**20:.1f} MiB peak Python allocations during the run"
        )
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak resident memory: {peak_rss:.0f} MiB (with Pulumi and both providers)")


if __name__ == "__main__":
    main()
