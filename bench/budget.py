"""The request budget of an autoscaler on Hetzner, against the emulator on a fast clock.

The profile of issue 12: 20 pools of 10 machines, a tick every 15 s that asks
``machines(pool)`` of every pool, 40 creates and 40 deletes an hour, and one type out of
stock in one location for 10 minutes. The provider runs on a simulated clock (no sleeping);
the emulator counts what went over the wire. It prints requests per simulated hour, the
429 answers, and the machines the autoscaler lost track of (its own creates not listed, its
own deletes listed alive, or a final difference from what the emulator holds).

Then: ``machines(pool)`` of a 1,000-machine owner (20 pools of 50) and a tick over the 20
pools, as requests and wall time, with each pool listed on its own (``ORCA_LIST_TTL=0``,
what main did) and from the shared listing.

    python -m bench.budget [--hours 1] [--repeat 7]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from emulator.process import Emulator, running_emulator
from machines import MachineSpec, Status
from machines.clouds.hetzner.provider import HetznerProvider
from machines.clouds.hetzner.settings import HetznerSettings
from machines.labels import pool_labels
from testkit import hetzner
from testkit.clock import ManualClock

OWNER = "bench"
POOLS = [f"p{i:02d}" for i in range(20)]
PER_POOL = 10
TICK = 15.0
CHANGES_PER_HOUR = 40
TYPE = "cax11"
LOCATIONS = ("fsn1", "nbg1", "hel1")
SHORT = ("cax11", "fsn1")
SHORT_FROM, SHORT_FOR = 20 * 60.0, 10 * 60.0
UNLIMITED = 1_000_000


class Count429(logging.Handler):
    """Counts the retries the provider logs after a ``rate_limit_exceeded`` answer."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "rate_limit_exceeded" in record.getMessage():
            self.seen += 1


@dataclass
class Outcome:
    requests: int = 0
    routes: dict[str, int] = field(default_factory=dict)
    rate_limited: int = 0
    lost: list[str] = field(default_factory=list)
    creates: int = 0
    no_stock: int = 0
    moved: int = 0
    deletes: int = 0
    remaining: int = 0


def provider(env: Mapping[str, str], clock: Callable[[], float]) -> HetznerProvider:
    return HetznerProvider(HetznerSettings.from_env(env), OWNER, clock=clock)


def seed_pools(emulator: Emulator, per_pool: int) -> None:
    for pool in POOLS:
        emulator.control.add_servers(
            per_pool,
            name_prefix=f"{OWNER}-{pool}-seed-",
            server_type=TYPE,
            labels=pool_labels(pool, OWNER),
        )


def profile(emulator: Emulator, env: Mapping[str, str], hours: float) -> Outcome:
    """One run of the autoscaler profile; the emulator is reset first."""
    emulator.control.reset()
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    limited = env.get("ORCA_LIST_TTL") != "0"
    emulator.control.set_rate_limit(3600 if limited else UNLIMITED, 1.0 if limited else None)
    seed_pools(emulator, PER_POOL)
    clock = ManualClock()
    start = clock()
    hetzner = provider(env, clock)
    counter = Count429()
    logging.getLogger("machines.retry").addHandler(counter)
    emulator.control.reset_requests()
    out = Outcome()
    alive: dict[str, set[str]] = {pool: set() for pool in POOLS}
    deleted: set[str] = set()
    ticks = round(hours * 3600 / TICK)
    every = round(3600 / TICK / CHANGES_PER_HOUR)
    serial = 0
    short_on = False
    try:
        for tick in range(ticks):
            elapsed = clock() - start
            want_short = SHORT_FROM <= elapsed % 3600 < SHORT_FROM + SHORT_FOR
            if want_short != short_on:
                stock = [{"server_type": SHORT[0], "location": SHORT[1]}] if want_short else []
                emulator.control.set_stock(stock)
                short_on = want_short
            for pool in POOLS:
                listed = hetzner.machines(pool)
                live = {m.id for m in listed if m.status != Status.DELETING}
                if tick == 0:
                    alive[pool] = set(live)
                missing = alive[pool] - live
                revived = live & deleted
                out.lost += [f"tick {tick} {pool}: own create {i} not listed" for i in missing]
                out.lost += [f"tick {tick} {pool}: own delete {i} listed alive" for i in revived]
            if tick % every == 0:
                serial += 1
                pool = POOLS[serial % len(POOLS)]
                create(hetzner, pool, f"{pool}-a{serial}", serial, out, alive)
                victim_pool = POOLS[(serial + 7) % len(POOLS)]
                victim = min(alive[victim_pool], key=int)
                hetzner.delete(victim)
                alive[victim_pool].discard(victim)
                deleted.add(victim)
                out.deletes += 1
            clock.advance(TICK)
    finally:
        logging.getLogger("machines.retry").removeHandler(counter)
    counts = emulator.control.requests()
    out.requests, out.routes = counts.total, counts.routes
    out.rate_limited = counter.seen
    out.remaining = int(emulator.control.rate_limit()["remaining"])
    truth = provider({**env, "ORCA_LIST_TTL": "0"}, time.time)
    for pool in POOLS:
        held = {m.id for m in truth.machines(pool) if m.status != Status.DELETING}
        if held != alive[pool]:
            out.lost.append(f"end {pool}: cloud {sorted(held)} != told {sorted(alive[pool])}")
    return out


def create(
    hetzner: HetznerProvider,
    pool: str,
    name: str,
    serial: int,
    out: Outcome,
    alive: dict[str, set[str]],
) -> None:
    """Create in the pool's location; on ``no_stock``, in the first location offered."""
    location = LOCATIONS[serial % len(LOCATIONS)]
    made = hetzner.create(MachineSpec(name=name, machine_type=TYPE, location=location, pool=pool))
    out.creates += 1
    if made.no_stock:
        out.no_stock += 1
        offered = [loc for loc in hetzner.offers(TYPE) if loc != location]
        if not offered:
            return
        made = hetzner.create(
            MachineSpec(name=name, machine_type=TYPE, location=offered[0], pool=pool)
        )
        out.moved += 1
    if made.ok and made.machine is not None:
        alive[pool].add(made.machine.id)


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        action()
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def counted(emulator: Emulator, action: Callable[[], object]) -> int:
    emulator.control.reset_requests()
    action()
    return emulator.control.requests().total


def big_owner(emulator: Emulator, env: Mapping[str, str], repeat: int) -> list[str]:
    """Rows for a 1,000-machine owner: per-pool listing against the shared listing."""
    emulator.control.reset()
    emulator.control.set_rate_limit(UNLIMITED)
    seed_pools(emulator, 50)
    rows = []
    for label, ttl in (("each pool listed (ORCA_LIST_TTL=0, as main)", "0"), ("shared", "")):
        settings = {**env, "ORCA_LIST_TTL": ttl} if ttl else dict(env)
        clock = ManualClock()
        hetzner = provider(settings, clock)

        def tick(h: HetznerProvider = hetzner) -> None:
            for pool in POOLS:
                h.machines(pool)

        def cold(h: HetznerProvider = hetzner, c: ManualClock = clock) -> None:
            c.advance(3600)
            h.machines(POOLS[0])

        cold_requests = counted(emulator, cold)
        cold_time = median_seconds(cold, repeat)
        clock.advance(3600)
        hetzner.machines(POOLS[0])
        warm_requests = counted(emulator, lambda h=hetzner: h.machines(POOLS[1]))
        warm_time = median_seconds(lambda h=hetzner: h.machines(POOLS[1]), repeat)

        def tick_cold(h: HetznerProvider = hetzner, c: ManualClock = clock) -> None:
            c.advance(3600)
            tick(h)

        tick_requests = counted(emulator, tick_cold)
        tick_time = median_seconds(tick_cold, repeat)
        rows += [
            f"| {label} | machines(pool), no fresh listing | {cold_requests} | "
            f"{cold_time * 1000:.1f} ms |",
            f"| {label} | machines(pool), listing fresh | {warm_requests} | "
            f"{warm_time * 1000:.2f} ms |",
            f"| {label} | tick over 20 pools | {tick_requests} | {tick_time * 1000:.1f} ms |",
        ]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    token = hetzner.token("budget")
    with running_emulator(token, "--quiet", "--boot-seconds", "0") as emulator:
        env = {"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emulator.url}
        runs = [
            ("each pool listed at every call (ORCA_LIST_TTL=0, as main)", {"ORCA_LIST_TTL": "0"}),
            ("one listing a tick (ORCA_LIST_SHARE=0.5)", {"ORCA_LIST_SHARE": "0.5"}),
            ("defaults", {}),
        ]
        results = []
        for label, extra in runs:
            begin = time.perf_counter()
            outcome = profile(emulator, {**env, **extra}, args.hours)
            results.append((label, outcome, time.perf_counter() - begin))
        big = big_owner(emulator, env, args.repeat)

    print(f"Profile: {len(POOLS)} pools x {PER_POOL}, tick {TICK:.0f} s, {CHANGES_PER_HOUR}")
    print(f"creates and deletes an hour, {SHORT[0]} out of stock in {SHORT[1]} for 10 min;")
    print(f"{args.hours} simulated hour(s).")
    print()
    print("| settings | requests / h | listing | creates | deletes | other | 429 | lost | wall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, o, wall in results:
        listing = o.routes.get("GET /v1/servers", 0)
        creates = o.routes.get("POST /v1/servers", 0)
        deletes = o.routes.get("DELETE /v1/servers/{id}", 0) + o.routes.get(
            "GET /v1/servers/{id}", 0
        )
        other = o.requests - listing - creates - deletes
        print(
            f"| {label} | {o.requests / args.hours:.0f} | {listing} | {creates} | {deletes} | "
            f"{other} | {o.rate_limited} | {len(o.lost)} | {wall:.0f} s |"
        )
    for label, o, _ in results:
        print(
            f"\n{label}: {o.creates} creates ({o.no_stock} no_stock, {o.moved} moved to an "
            f"offered location), {o.deletes} deletes; routes {o.routes}; budget left "
            f"{o.remaining}"
        )
        for line in o.lost[:5]:
            print(f"  lost: {line}")
    print()
    print("| listing | call | requests | median wall |")
    print("| --- | --- | ---: | ---: |")
    for row in big:
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
