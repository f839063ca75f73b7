"""The request budget of an autoscaler of 20 pools spanning both clouds, per cloud.

``bench.budget``'s profile (its ``autoscale``: 20 pools of 10 machines, a tick every 15 s
that asks ``machines(pool)`` of every pool, 40 creates and 40 deletes an hour) on a
simulated clock, twice in one run against the same processes: the 20 pools each on Hetzner
only (cax11, no places), and the 20 pools each spanning ``testkit.span.PLACES`` (Hetzner's
cax11 in fsn1, then nbg1, then EC2's t4g.micro in eu-central-1a). From minute 20 to 30 of
each hour cax11 is out of stock in both fsn1 and nbg1 (the emulator's control API): the
Hetzner-only pools move to the first other location ``offers`` lists (hel1), the spanning
ones to EC2. Both are built by ``Provider.of("hetzner", owner)`` from ``ORCA_POOLS`` with the
default windows; only each cloud's provider is put on the simulated clock (``on_clock``).

Hetzner's requests are counted by the emulator (its bucket is Hetzner's 3,600 an hour,
refilling one a second of simulated time: the emulator's clock follows the simulated one);
EC2's by the fault proxy in front of moto, and, at their simulated times, by the EC2
client's own hook, run through ``bench.budget``'s model of EC2's token buckets. Prints
Markdown tables.

    python -m bench.span_budget [--hours 1]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from bench import budget, span
from bench.budget import OWNER, POOLS, TYPE, Bucket, Count429, Outcome
from emulator.process import Emulator
from machines import Provider
from machines.runtime.clock import Clock
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.clouds.hetzner.settings import HetznerSettings
from machines.runtime.span import SpanningProvider
from testkit.clock import ManualClock
from testkit.fault_proxy import FaultProxy
from testkit.span import PLACES

HETZNER_BUDGET = 3600
"""Hetzner's requests an hour per project (``emulator.ratelimit.REAL_LIMIT``)."""
SHORT_IN = ("fsn1", "nbg1")
"""Where cax11 runs out from minute 20 to 30: both Hetzner places of the spanning pools."""


@contextmanager
def on_clock(clock: Clock) -> Iterator[None]:
    """While it lasts, each cloud's ``from_env`` builds its provider on ``clock``, so
    ``Provider.of`` (and the spanning provider it builds) runs as it always does, on
    simulated time."""

    def hetzner(
        cls: type[HetznerProvider], owner: str = "", environ: Mapping[str, str] | None = None
    ) -> HetznerProvider:
        return cls(HetznerSettings.from_env(environ), owner, clock=clock)

    def ec2(
        cls: type[Ec2Provider], owner: str = "", environ: Mapping[str, str] | None = None
    ) -> Ec2Provider:
        return cls(Ec2Settings.from_env(environ), owner, credentials=environ, clock=clock)

    with (
        mock.patch.object(HetznerProvider, "from_env", classmethod(hetzner)),
        mock.patch.object(Ec2Provider, "from_env", classmethod(ec2)),
    ):
        yield


class FollowedClock(ManualClock):
    """A simulated clock that the emulator's clock follows (its bucket refills by it and
    ``created`` is written from it)."""

    def __init__(self, emulator: Emulator, start: float | None = None) -> None:
        super().__init__(start)
        self._emulator = emulator
        emulator.control.set_clock(self())

    def advance(self, seconds: float) -> None:
        super().advance(seconds)
        self._emulator.control.set_clock(self())


def pools(spanning: bool) -> str:
    """``ORCA_POOLS`` of the profile's 20 pools, spanning ``PLACES`` or on Hetzner only."""
    places = [p.model_dump(mode="json", by_alias=True, exclude_defaults=True) for p in PLACES]
    if spanning:
        return json.dumps([{"name": pool, "places": places} for pool in POOLS])
    return json.dumps([{"name": pool, "machineType": TYPE, "location": "fsn1"} for pool in POOLS])


@dataclass
class Run:
    """One run's counts: Hetzner's by the emulator, EC2's by the proxy and the client."""

    label: str
    outcome: Outcome
    hetzner: dict[str, int]
    remaining: int
    ec2_proxy: int = 0
    ec2: Counter[str] = field(default_factory=Counter)
    buckets: dict[str, Bucket] = field(default_factory=dict)
    windows: dict[str, float] = field(default_factory=dict)
    ec2_note: str = ""
    wall: float = 0.0


def record_ec2(provider: Provider, clock: Clock) -> list[tuple[float, str]]:
    """Every call the provider's EC2 client makes from now on, at its simulated time."""
    calls: list[tuple[float, str]] = []
    if not isinstance(provider, SpanningProvider):
        return calls

    def record(model: Any, **_: Any) -> None:
        calls.append((clock(), model.name))

    ec2 = provider.on("ec2")
    assert isinstance(ec2, Ec2Provider)
    ec2._client.meta.events.register("before-call.ec2", record)
    return calls


def shortage(emulator: Emulator) -> Callable[[bool], None]:
    def short(on: bool) -> None:
        out = [{"server_type": TYPE, "location": loc} for loc in SHORT_IN] if on else []
        emulator.control.set_stock(out)

    return short


def prepare(emulator: Emulator, proxy: FaultProxy) -> None:
    """A fresh emulator (Hetzner's budget, the profile's seeded pools) and proxy counts."""
    emulator.control.reset()
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    emulator.control.set_rate_limit(HETZNER_BUDGET, HETZNER_BUDGET / 3600)
    budget.seed_pools(emulator, budget.PER_POOL)
    emulator.control.reset_requests()
    proxy.reset()


def run(
    emulator: Emulator, proxy: FaultProxy, environ: Mapping[str, str], spans: bool, hours: float
) -> Run:
    """The profile's autoscaler on the 20 pools, spanning or not; see the module."""
    prepare(emulator, proxy)
    clock = FollowedClock(emulator)
    with on_clock(clock):
        provider = Provider.of("hetzner", OWNER, {**environ, "ORCA_POOLS": pools(spans)})
    calls = record_ec2(provider, clock)
    counter = Count429()
    logging.getLogger("machines.runtime.retry").addHandler(counter)
    begin = time.perf_counter()
    try:
        out = budget.autoscale(provider, clock, shortage(emulator), TYPE, SHORT_IN, hours)
    finally:
        logging.getLogger("machines.runtime.retry").removeHandler(counter)
        emulator.control.set_clock(None)
    out.rate_limited = counter.seen
    label = "20 pools spanning Hetzner and EC2" if spans else "20 pools on Hetzner only"
    result = Run(
        label, out, emulator.control.requests().routes,
        int(emulator.control.rate_limit()["remaining"]),
    )  # fmt: skip
    result.wall = time.perf_counter() - begin
    result.ec2_proxy = sum(proxy.requests.values())
    result.ec2 = Counter(operation for _, operation in calls)
    result.buckets = budget.throttle(calls) if calls else {}
    kinds = provider.providers if isinstance(provider, SpanningProvider) else {"hetzner": provider}
    result.windows = {kind: p.budget().list_window for kind, p in kinds.items()}
    result.ec2_note = kinds["ec2"].budget().note if "ec2" in kinds else ""
    return result


def hourly(count: float, hours: float) -> str:
    return f"{count / hours:,.0f}"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def print_per_cloud(runs: list[Run], hours: float) -> None:
    """Per cloud: requests an hour, its share of the cloud's budget, and the ratio to the
    Hetzner-only run."""
    base = runs[0]
    refill = {name: b.refill * 3600 for name, b in budget.ec2_buckets().items()}
    print(
        "| pools | cloud | requests / h | listing / h | of the cloud's budget | vs Hetzner only |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in runs:
        total = sum(r.hetzner.values())
        listing = r.hetzner.get("GET /v1/servers", 0)
        share = f"{total / hours / HETZNER_BUDGET:.1%} of 3,600 / h"
        print(
            f"| {r.label} | Hetzner | {hourly(total, hours)} | {hourly(listing, hours)} | "
            f"{share} | {ratio(total, sum(base.hetzner.values()))} |"
        )
        if r is base:
            continue
        describe = sum(n for op, n in r.ec2.items() if op.startswith("Describe"))
        listed = r.ec2.get("DescribeInstances", 0)
        of_describe = describe / hours / refill["non-mutating (Describe*)"]
        of_run = r.ec2.get("RunInstances", 0) / hours / refill["RunInstances"]
        print(
            f"| {r.label} | EC2 | {hourly(r.ec2.total(), hours)} | {hourly(listed, hours)} | "
            f"Describe* {of_describe:.2%} of {refill['non-mutating (Describe*)']:,.0f} / h, "
            f"RunInstances {of_run:.2%} of {refill['RunInstances']:,.0f} / h | "
            f"(none on EC2) |"
        )


def print_details(runs: list[Run], hours: float) -> None:
    for r in runs:
        o = r.outcome
        windows = ", ".join(f"{k} {w:.0f} s" for k, w in r.windows.items())
        print(
            f"\n{r.label}: {o.creates} creates ({o.no_stock} no_stock, {o.moved} moved to an "
            f"offered location), {o.deletes} deletes, {o.rate_limited} 429, {len(o.lost)} lost; "
            f"Hetzner budget left {r.remaining}; listing windows at the end: {windows}; "
            f"wall {r.wall:.0f} s"
        )
        print(f"  Hetzner routes: {dict(sorted(r.hetzner.items()))}")
        if r.ec2:
            print(f"  EC2 calls: {dict(sorted(r.ec2.items()))} (the proxy saw {r.ec2_proxy})")
            print(f"  EC2's budget as the runtime states it: {r.ec2_note}")
        for name, b in r.buckets.items():
            if b.lowest < 0:
                continue  # no call took from it
            print(f"  {name}: lowest {b.lowest:.1f} of {b.size:.0f}, throttled {b.throttled}")
        for line in o.lost[:5]:
            print(f"  lost: {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0, help="simulated hours of each run")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    with span.clouds() as (emulator, proxy, environ):
        defaults = {k: v for k, v in environ.items() if k != "ORCA_LIST_TTL"}
        runs = [run(emulator, proxy, defaults, spans, args.hours) for spans in (False, True)]
    print(f"{args.hours:g} simulated hour(s), the profile of bench.budget; see the module.\n")
    print_per_cloud(runs, args.hours)
    print_details(runs, args.hours)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
