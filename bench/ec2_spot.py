"""EC2 spot capacity: requests per create for each market, and what a 10-machine pool costs a
month at each market from the price sources.

Requests are counted on the provider's boto3 client (one per request and page) against moto's
server behind the fault proxy, which answers EC2's "no spot capacity" to spot launches when a
row asks for it (moto never does). Every create is of a provider that knows the type and its
image already (the first create's lookups are in ``bench.ec2_requests``). Prices come from
EC2's ``DescribeSpotPriceHistory`` at moto (its one fixed spot price) and AWS's Price List
Query API (on-demand), unreachable here: that price is unknown, with the reason. Prints
Markdown tables.

    python -m bench.ec2_spot
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from machines.automation.cost import money, price_list
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.models import Market
from testkit.fault_proxy import FaultProxy, no_spot_capacity
from testkit.moto_server import CREDENTIALS, build_world, count_calls, ec2_provider, running
from testkit.specs import ec2_spec

MARKETS = "spot=spot,mixed=spot-then-on-demand"
POOL_SIZE = 10
TYPE, ZONE = "t3.micro", "eu-central-1a"

Row = tuple[str, str, Counter[str]]


def warm(environ: Mapping[str, str], name: str) -> tuple[Ec2Provider, Counter[str]]:
    """A provider that has looked up the type and its image (a create of ``name`` in the
    on-demand pool), and its counter."""
    made = ec2_provider("bench", environ)
    calls = count_calls(made._client)
    made.create(ec2_spec(name, machine_type=TYPE, location=ZONE, pool="ci"))
    return made, calls


def measure(rows: list[Row], label: str, calls: Counter[str], action: Callable[[], object]) -> None:
    before = Counter(calls)
    outcome = action()
    rows.append((label, str(outcome), calls - before))


def create(provider: Ec2Provider, name: str, pool: str) -> Callable[[], str]:
    def run() -> str:
        created = provider.create(ec2_spec(name, machine_type=TYPE, location=ZONE, pool=pool))
        if created.machine is not None:
            return f"ok, {created.machine.market}"
        return created.outcome

    return run


def listed(provider: Ec2Provider) -> Callable[[], str]:
    return lambda: f"{len(provider.machines('ci'))} listed"


def requests(environ: Mapping[str, str], proxy: FaultProxy) -> list[Row]:
    rows: list[Row] = []
    provider, calls = warm(environ, "warm-1")
    proxy.reset()
    measure(rows, "on-demand pool", calls, create(provider, "ci-1", "ci"))
    measure(rows, "spot pool", calls, create(provider, "spot-1", "spot"))
    measure(
        rows, "spot-then-on-demand pool, spot capacity", calls, create(provider, "mixed-1", "mixed")
    )

    proxy.set_faults(no_spot_capacity())
    measure(rows, "spot pool, no spot capacity", calls, create(provider, "spot-2", "spot"))
    measure(
        rows,
        "spot pool, no spot capacity remembered",
        calls,
        create(provider, "spot-3", "spot"),
    )
    fresh, fresh_calls = warm(environ, "warm-2")
    measure(
        rows,
        "spot-then-on-demand pool, no spot capacity (fallback)",
        fresh_calls,
        create(fresh, "mixed-2", "mixed"),
    )
    measure(
        rows,
        "spot-then-on-demand pool, no spot capacity remembered",
        fresh_calls,
        create(fresh, "mixed-3", "mixed"),
    )
    proxy.reset()

    on_demand_only = {k: v for k, v in environ.items() if k != "ORCA_POOL_MARKET"}
    for label, env in (
        ("`machines(pool)`, no pool buys spot", on_demand_only),
        ("`machines(pool)`, a pool buys spot (interruptions too)", environ),
    ):
        lister = ec2_provider("bench", env)
        counted = count_calls(lister._client)
        measure(rows, label, counted, listed(lister))
    return rows


def costs(environ: Mapping[str, str]) -> list[str]:
    prices = price_list("ec2", environ)
    lines = [
        f"| market | monthly cost of {POOL_SIZE} x {TYPE} in {ZONE} | source |",
        "|---|---:|---|",
    ]
    spot = prices.total([(TYPE, ZONE, Market.SPOT)] * POOL_SIZE)
    on_demand = prices.total([(TYPE, ZONE, Market.ON_DEMAND)] * POOL_SIZE)
    lines += [
        f"| on-demand | {money(on_demand, prices.currency)} | AWS Price List Query API |",
        f"| spot | {money(spot, prices.currency)} | EC2 DescribeSpotPriceHistory (moto) |",
        f"| spot-then-on-demand, spot capacity | {money(spot, prices.currency)} | as spot |",
        f"| spot-then-on-demand, none (all fallback) | {money(on_demand, prices.currency)} "
        "| as on-demand |",
    ]
    if prices.unknown:
        lines.append(f"\n{prices.unknown}")
    return lines


def table(rows: list[Row]) -> str:
    lines = ["| create | answer | requests | by API call |", "|---|---|---:|---|"]
    for label, outcome, calls in rows:
        detail = ", ".join(f"{name} {count}" for name, count in sorted(calls.items())) or "none"
        lines.append(f"| {label} | {outcome} | {sum(calls.values())} | {detail} |")
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir, running(Path(workdir)) as server:
        world = build_world(server.url)
        os.environ.update(CREDENTIALS)  # the price list's client takes boto3's default chain
        with FaultProxy(server.url).serving() as proxy:
            environ = {**world.env, "AWS_ENDPOINT_URL": proxy.url, "ORCA_POOL_MARKET": MARKETS}
            print(table(requests(environ, proxy)))
        print()
        print("\n".join(costs(world.env)))


if __name__ == "__main__":
    main()
