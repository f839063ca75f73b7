"""EC2 API requests per provider operation, counted against moto's server.

Each row runs one operation and counts the API calls the provider's boto3 client makes
(botocore's ``before-call`` event, one per request and page; botocore's retries of a request
would not add to it, and against moto there are none). Prints a Markdown table.

    python -m bench.ec2_requests [--instances 25] [--page-size 5]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from machines.runtime.clouds.ec2 import provider as ec2
from machines.runtime.clouds.ec2.provider import Ec2Provider
from testkit.moto_server import OLD_AMD64, build_world, count_calls, ec2_provider, running
from testkit.specs import ec2_spec

Row = tuple[str, Counter[str]]


@dataclass(frozen=True)
class Counted:
    """A provider and the running count of its client's API calls."""

    provider: Ec2Provider
    calls: Counter[str]

    @classmethod
    def of(cls, environ: Mapping[str, str], owner: str = "bench") -> Counted:
        made = ec2_provider(owner, environ)
        return cls(made, count_calls(made._client))

    def create(self, name: str, machine_type: str = "t3.micro") -> str:
        created = self.provider.create(ec2_spec(name, machine_type=machine_type, pool="bench"))
        if created.machine is None:
            raise SystemExit(f"create {name} failed: {created.reason}")
        return created.machine.id


def measure(rows: list[Row], label: str, of: Counted, action: Callable[[], object]) -> None:
    """Run ``action`` and add a row with the API calls ``of`` made meanwhile."""
    before = Counter(of.calls)
    action()
    rows.append((label, of.calls - before))


def bench(environ: Mapping[str, str], instances: int, page_size: int) -> list[Row]:
    rows: list[Row] = []
    cold = Counted.of(environ)
    measure(rows, "`arch(t3.micro)`, first", cold, lambda: cold.provider.arch("t3.micro"))
    measure(rows, "`arch(t3.micro)`, again", cold, lambda: cold.provider.arch("t3.micro"))

    fresh = Counted.of(environ)
    measure(
        rows, "`create`, first (type and image not known yet)", fresh, lambda: fresh.create("w-0")
    )
    measure(rows, "`create`, next (same architecture)", fresh, lambda: fresh.create("w-1"))
    measure(
        rows,
        "`create`, first of another architecture (t4g)",
        fresh,
        lambda: fresh.create("w-2", "t4g.micro"),
    )
    measure(rows, "`create` of a name that exists", fresh, lambda: fresh.create("w-1"))

    pinned = Counted.of({**environ, "ORCA_EC2_IMAGE": OLD_AMD64}, owner="pinned")
    measure(rows, "`create` with `ORCA_EC2_IMAGE`, first", pinned, lambda: pinned.create("p-0"))

    for index in range(3, instances):
        fresh.create(f"w-{index}")
    listing = f"`machines(pool)` over {instances} instances"
    lister = Counted.of(environ)
    measure(rows, listing, lister, lambda: lister.provider.machines("bench"))
    default_size = ec2.MAX_RESULTS
    ec2.MAX_RESULTS = page_size
    try:
        paged = f"{listing}, {page_size} a page"
        pager = Counted.of(environ)
        measure(rows, paged, pager, lambda: pager.provider.machines("bench"))
    finally:
        ec2.MAX_RESULTS = default_size

    doomed = fresh.create("doomed")
    measure(rows, "`delete` of an instance it made", fresh, lambda: fresh.provider.delete(doomed))
    measure(rows, "`delete`, again", fresh, lambda: fresh.provider.delete(doomed))
    other = Counted.of(environ, owner="bench")
    kept = fresh.create("kept")
    measure(
        rows,
        "`delete` by a provider that has not listed it",
        other,
        lambda: other.provider.delete(kept),
    )
    unknown = "i-0123456789abcdef0"
    measure(rows, "`delete` of an unknown id", fresh, lambda: fresh.provider.delete(unknown))
    return rows


def table(rows: list[Row]) -> str:
    lines = ["| operation | requests | by API call |", "|---|---:|---|"]
    for label, calls in rows:
        detail = ", ".join(f"{name} {count}" for name, count in sorted(calls.items())) or "none"
        lines.append(f"| {label} | {sum(calls.values())} | {detail} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=25)
    parser.add_argument("--page-size", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir, running(Path(workdir)) as server:
        world = build_world(server.url)
        print(table(bench(world.env, args.instances, args.page_size)))


if __name__ == "__main__":
    main()
