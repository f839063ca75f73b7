"""What a spanning pool's price order saves for ``bench.budget``'s jobs when the Hetzner place
runs out.

``bench.budget``'s jobs model (``ci_jobs``, ``run_jobs``: its 20 pools, 15 s tick, 40 jobs an
hour, ``keep_advice``), on a simulated clock, for 20 pools each spanning ``PLACES`` written
in this order: Hetzner's cax11 in fsn1, Hetzner's cax21 in nbg1 (the bigger type of the
same architecture), the third cloud's f1.arm in ``here`` (``testkit.fake_cloud``, XFC, billed
by the second). From minute 20 on, cax11 is out of stock in fsn1 for the rest of the run
(the emulator's control API). Each pool's ``placeOrder`` is ``written`` or ``price``, with
the same jobs, at a few ``ORCA_EXCHANGE_RATES`` (what an XFC is worth in EUR).

Why not EC2: moto has no Price List (``GetProducts``), so an EC2 place's price cannot be read
(the spot price can, but not the root volume's), and a price-ordered pool keeps it at its
written place: no ranking to measure. The fake cloud's price list is priced.

Money is each machine's bill by its own cloud's rule (``bench.budget.billing_of``) at the
price the runtime ranks by (the type's price plus what the pool's options add: Hetzner's
primary IPv4, at its own hourly price), in EUR by the rates: the fake place cheapest, halfway
between cax11 and cax21 (read from the price lists), dearest. Hetzner's requests are counted
by the emulator. Prints a Markdown table; then each order and rate against the bound
(``bench.bound``: idle machines deleted at once, the advice, and the clairvoyant policy on
the stream the advice saw, as ``bench.budget``'s jobs tables show them; no lower bound,
since a pool's machines are on rules of two shapes).

    python -m bench.span_price [--hours 4]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from unittest import mock

from bench import budget
from bench.bound import Clairvoyant
from bench.budget import MODELS, OWNER, POOLS, JobsOutcome
from bench.span_budget import FollowedClock, on_clock
from emulator.process import Emulator, running_emulator
from machines import MachineSpec, Provider
from machines.runtime.billing import Rate, Rates
from machines.runtime.clock import Clock
from machines.runtime.pool import Place, Pool
from machines.runtime.settings import Freshness
from machines.runtime.span import SpanningProvider
from testkit import fake_cloud, hetzner
from testkit.fake_cloud.prices import FakePrices
from testkit.fake_cloud.provider import FakeProvider
from testkit.fake_cloud.settings import FAKE_CLOUD_STORE, FAKE_CLOUD_TOKEN, store_path
from testkit.simulation import Job, ci_jobs

CAX11 = Place(cloud="hetzner", machine_type="cax11", location="fsn1")
CAX21 = Place(cloud="hetzner", machine_type="cax21", location="nbg1")
FAKE = Place.model_construct(cloud="fake", machine_type="f1.arm", location="here")
PLACES = (CAX11, CAX21, FAKE)
"""The pools' places as written (one location each, so a machine's location names its
place)."""

CHEAPEST, DEAREST = "1", "5"
"""Rates (EUR per XFC) that put the fake place cheapest of the three and dearest; the one
between cax11 and cax21 is read from the price lists (``between``)."""


def between(env: Mapping[str, str]) -> str:
    """The rate that puts the fake place's hour halfway between cax11's and cax21's, each
    at its price list (the type's and the primary IPv4's hourly prices)."""
    hetzner = Provider.of("hetzner", OWNER, env).prices()
    hours: list[Decimal] = []
    for place in (CAX11, CAX21):
        billed = hetzner.rates(place.machine_type, place.location, place.market, Pool(name="x"))
        assert billed is not None, hetzner.unknown
        hours.append(sum((r.hourly or Decimal(0) for r in billed), Decimal(0)))
    fake = FakePrices().hourly(FAKE.machine_type, FAKE.location)
    assert fake is not None
    return str((sum(hours, Decimal(0)) / 2 / fake).quantize(Decimal("0.01")))


@contextmanager
def fake_on_clock(clock: Clock) -> Iterator[None]:
    """``on_clock`` for the fake cloud too: its ``from_env`` builds its provider on ``clock``."""

    def fake(
        cls: type[FakeProvider], owner: str = "", environ: Mapping[str, str] | None = None
    ) -> FakeProvider:
        env = environ or {}
        store = fake_cloud.Store(Path(store_path(env)))
        return cls(owner, store, Freshness.from_env(env), clock)

    with on_clock(clock), mock.patch.object(FakeProvider, "from_env", classmethod(fake)):
        yield


def pools(order: str) -> str:
    """``ORCA_POOLS``: the 20 pools, each spanning ``PLACES`` in ``order``."""
    places = [p.model_dump(mode="json", by_alias=True, exclude_defaults=True) for p in PLACES]
    return json.dumps([{"name": p, "places": places, "placeOrder": order} for p in POOLS])


def rates_of(provider: SpanningProvider, xfc: Decimal) -> dict[str, Rates]:
    """Each place's rates in EUR by its location: its type's and each item its options add
    (Hetzner's primary IPv4), each at its own listed figures, as the price order counts
    them."""
    worth = {"EUR": Decimal(1), "XFC": xfc}
    found: dict[str, Rates] = {}
    for place in PLACES:
        prices = provider.on(place.cloud).prices()
        billed = prices.rates(place.machine_type, place.location, place.market, Pool(name=POOLS[0]))
        assert billed is not None, prices.unknown
        unit = worth[prices.currency]
        found[place.location] = tuple(in_unit(rate, unit) for rate in billed)
    return found


def in_unit(rate: Rate, unit: Decimal) -> Rate:
    """``rate`` in the rates' unit, at ``unit`` of it per unit of its currency."""
    hourly = None if rate.hourly is None else rate.hourly * unit
    return Rate(hourly, rate.monthly * unit)


def runs_out(emulator: Emulator) -> Callable[[bool], None]:
    """``run_jobs``'s shortage, from its first start on for good: cax11 out in fsn1."""

    def short(on: bool) -> None:
        if on:
            emulator.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    return short


@dataclass
class Priced:
    order: str
    xfc: str
    out: JobsOutcome
    pricing: int
    """``GET /v1/pricing`` requests in the run (the price order reads the price list)."""
    ordered: str


def jobs_run(
    emulator: Emulator,
    environ: Mapping[str, str],
    order: str,
    xfc: str,
    jobs: list[Job],
    way: budget.Way,
    hours: float,
) -> Priced:
    """The jobs on the 20 spanning pools in ``order`` at ``xfc`` EUR an XFC, idle machines
    let go as ``way`` says; see the module."""
    emulator.control.reset()
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    emulator.control.set_rate_limit(3600, 1.0)
    clock = FollowedClock(emulator, budget.jobs_clock()())
    with tempfile.TemporaryDirectory() as store:
        env = {
            **environ,
            FAKE_CLOUD_STORE: str(Path(store) / "cloud.json"),
            "ORCA_POOLS": pools(order),
            "ORCA_EXCHANGE_RATES": f"EUR=1,XFC={xfc}",
        }
        with fake_on_clock(clock):
            provider = Provider.of("hetzner", OWNER, env)
        assert isinstance(provider, SpanningProvider)
        rates = rates_of(provider, Decimal(xfc))
        emulator.control.reset_requests()
        cloud = budget.JobsCloud(
            CAX11.machine_type, (CAX11.location,), rates.__getitem__, lambda _: None,
            runs_out(emulator),
        )  # fmt: skip
        begin = time.perf_counter()
        out = budget.run_jobs(provider, clock, jobs, way, hours, cloud)
        out.wall = time.perf_counter() - begin
        counts = emulator.control.requests()
        out.requests = counts.total
        emulator.control.set_clock(None)
        probe = provider.create(MachineSpec("probe", "cax11", "fsn1", "", POOLS[0]))
    return Priced(order, xfc, out, counts.get("GET /v1/pricing"), probe.ordered)


def against_the_bound(
    emulator: Emulator, environ: Mapping[str, str], order: str, xfc: str, hours: float
) -> tuple[Priced, list[tuple[str, JobsOutcome]]]:
    """The advice's run of ``order`` at ``xfc``, and it beside idle machines deleted at once
    and the bound on the stream the advice saw (``bench.bound``)."""
    jobs = ci_jobs(POOLS, hours, pipeline=MODELS["pipelines"])
    advice = jobs_run(emulator, environ, order, xfc, jobs, budget.advised(), hours)
    at_once = jobs_run(emulator, environ, order, xfc, jobs, budget.at_once, hours)
    stream = budget.recorded(advice.out.stream)
    way = budget.clairvoyant(stream, budget.TICK)
    bound = jobs_run(emulator, environ, order, xfc, stream, way, hours)
    side = [
        (budget.AtOnce.name, at_once.out),
        ("keep_advice(idle, now)", advice.out),
        (Clairvoyant.name, bound.out),
    ]
    return advice, side


def print_table(runs: list[Priced]) -> None:
    print(
        "| EUR per XFC | placeOrder | money / h (EUR) | saving (price / written) | "
        "machines made / h | Hetzner requests / h | of which GET /pricing | job wait (mean) | "
        "jobs left waiting |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    written: dict[str, JobsOutcome] = {}
    for r in runs:
        o = r.out
        written.setdefault(r.xfc, o)
        base = written[r.xfc]
        saving = "" if o is base else f"{o.money / base.money:.2f}x"
        waits = o.waits or [0.0]
        print(
            f"| {r.xfc} | {r.order} | {o.money / Decimal(str(o.hours)):.4f} | {saving} | "
            f"{o.made / o.hours:.1f} | {o.requests / o.hours:.0f} | {r.pricing / o.hours:.0f} | "
            f"{sum(waits) / len(waits):.0f} s | {o.unfinished} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=4.0, help="simulated hours of each run")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    fake_cloud.registry_lines()
    token = hetzner.token("span-price")
    runs = []
    rows = []
    with running_emulator(token, "--quiet", "--boot-seconds", "0") as emulator:
        env = {
            "HCLOUD_TOKEN": token,
            "HCLOUD_ENDPOINT": emulator.url,
            FAKE_CLOUD_TOKEN: fake_cloud.TOKEN,
        }
        for xfc in (CHEAPEST, between(env), DEAREST):
            for order in ("written", "price"):
                advice, side = against_the_bound(emulator, env, order, xfc, args.hours)
                runs.append(advice)
                rows += budget.jobs_rows(f"XFC {xfc} EUR, {order}", side, "EUR")
    print(f"{args.hours:g} simulated hours each, pipelines, keep_advice; see the module.\n")
    print_table(runs)
    for r in runs:
        if r.ordered:
            print(f"\nEUR per XFC {r.xfc}, a create after the run: {r.ordered}")
    print("\nAgainst the bound (bench.bound), the same jobs:\n")
    print(budget.JOBS_HEADER.replace("cloud, jobs", "rate, placeOrder"))
    print("| --- | --- |" + " ---: |" * 18)
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
