"""The request budget of an autoscaler on Hetzner and EC2, on a simulated clock.

The profile of issue 12: 20 pools of 10 machines, a tick every 15 s that asks
``machines(pool)`` of every pool, 40 creates and 40 deletes an hour, and one type out of
stock in one location for 10 minutes. The provider runs on a simulated clock (no sleeping).
On Hetzner the emulator counts what went over the wire, with the settings before issue 20
and now in the same run; it prints requests per simulated hour, the 429 answers, and the
machines the autoscaler lost track of (its own creates not listed, its own deletes listed
alive, or a final difference from what the emulator holds). Then ``machines(pool)`` of a
1,000-machine owner (20 pools of 50), and the listing's window by the owner's size.

On EC2 the same profile runs against moto's server (behind the fault proxy, which answers
``InsufficientInstanceCapacity`` in the short zone); the provider's client records each
call at its simulated time, and EC2's token buckets (``ec2_buckets``) say whether any call
would have been throttled.

Then the profile's pools run CI jobs (``testkit.simulation.ci_jobs``: seeded, 40 jobs an
hour as pushes bring them, each needing a machine of its pool for 5 to 15 minutes; a
finished job leaves its machine idle; ``--jobs-model``: single-stage pushes, each a burst of
one pool, or pipelines whose stages arrive when the previous stage's jobs have ended, over a
few pools, or both) on the simulated clock, side by side (``side_by_side``): deleting idle
machines at once; following ``Provider.keep_advice`` (an idle machine is kept while its paid
time lasts and given to the pool's next job), asked without the autoscaler's tick and told
it; and the bound, ``bench.bound``'s clairvoyant policy on the stream of jobs the advice saw,
with the lower bound no policy goes under. Money is each machine's bill by its cloud's rule
(``Provider.billing``) at the cloud's prices: the emulator's ``/pricing`` on Hetzner (the
emulator's clock follows the simulated one, so ``created`` is simulated time too), moto's
spot price on EC2 (moto has no on-demand price list, so the EC2 pools buy spot; per-second
billing is the same for both markets). ``--jobs-tick``: the autoscaler's tick in the jobs'
runs (the profile's 15 s by default).

    python -m bench.budget [--hours 1] [--repeat 7] [--skip-ec2] [--jobs-only]
        [--jobs-hours 4] [--jobs-ec2-hours 1] [--jobs-model both|pushes|pipelines]
        [--jobs-tick 15]
"""

from __future__ import annotations

import argparse
import functools
import logging
import math
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from bench.bound import Clairvoyant, charged, lower_bound
from emulator.process import Emulator, running_emulator
from machines import Machine, MachineSpec, Provider, Status
from machines.runtime.billing import Billing, Rate, Rates, utc
from machines.runtime.budget import BudgetMeter
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.clouds.hetzner.settings import HetznerSettings
from machines.runtime.labels import pool_labels
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.settings import Freshness
from machines.runtime.span import SpanningProvider
from testkit import hetzner, moto_server
from testkit.clock import ManualClock
from testkit.fault_proxy import Fault, FaultProxy
from testkit.simulation import Job, Pipeline, StageGate, ci_jobs

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
    """Counts the retries the provider logs after a throttled answer (Hetzner's
    ``rate_limit_exceeded``, EC2's ``RequestLimitExceeded``)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "rate_limit_exceeded" in message or "RequestLimitExceeded" in message:
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
    window: float = 0.0
    alive: dict[str, set[str]] = field(default_factory=dict)


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


def autoscale(
    provider: Provider,
    clock: ManualClock,
    short: Callable[[bool], None],
    machine_type: str,
    locations: tuple[str, ...],
    hours: float,
) -> Outcome:
    """The autoscaler of the profile on ``provider``; ``short(on)`` takes the short type's
    stock away and gives it back. What it lost track of is in ``lost``."""
    out = Outcome()
    alive: dict[str, set[str]] = {pool: set() for pool in POOLS}
    deleted: set[str] = set()
    ticks = round(hours * 3600 / TICK)
    every = round(3600 / TICK / CHANGES_PER_HOUR)
    start = clock()
    serial = 0
    short_on = False
    for tick in range(ticks):
        elapsed = clock() - start
        want_short = SHORT_FROM <= elapsed % 3600 < SHORT_FROM + SHORT_FOR
        if want_short != short_on:
            short(want_short)
            short_on = want_short
        for pool in POOLS:
            listed = provider.machines(pool)
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
            location = locations[serial % len(locations)]
            spec = MachineSpec(
                name=f"{pool}-a{serial}", machine_type=machine_type, location=location, pool=pool
            )
            made = create(provider, spec, out)
            if made is not None:
                alive[pool].add(made)
            victim_pool = POOLS[(serial + 7) % len(POOLS)]
            victim = min(alive[victim_pool], key=lambda i: (len(i), i))
            provider.delete(victim)
            alive[victim_pool].discard(victim)
            deleted.add(victim)
            out.deletes += 1
        clock.advance(TICK)
    out.alive = alive
    return out


def create(provider: Provider, spec: MachineSpec, out: Outcome) -> str | None:
    """Create in the spec's location; on ``no_stock``, in the first other location offered.
    The id of the machine made, if any."""
    made = provider.create(spec)
    out.creates += 1
    if made.no_stock:
        out.no_stock += 1
        offered = [loc for loc in provider.offers(spec.machine_type) if loc != spec.location]
        if not offered:
            return None
        made = provider.create(spec.model_copy(update={"location": offered[0]}))
        out.moved += 1
    return made.machine.id if made.ok and made.machine is not None else None


def compare(truth: Provider, out: Outcome) -> None:
    """What the cloud holds at the end against what the autoscaler was told."""
    for pool in POOLS:
        held = {m.id for m in truth.machines(pool) if m.status != Status.DELETING}
        if held != out.alive[pool]:
            out.lost.append(f"end {pool}: cloud {sorted(held)} != told {sorted(out.alive[pool])}")


def profile(emulator: Emulator, env: Mapping[str, str], hours: float) -> Outcome:
    """One run of the autoscaler profile on Hetzner; the emulator is reset first."""
    emulator.control.reset()
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    limited = env.get("ORCA_LIST_TTL") != "0"
    emulator.control.set_rate_limit(3600 if limited else UNLIMITED, 1.0 if limited else None)
    seed_pools(emulator, PER_POOL)
    clock = ManualClock()
    hetzner = provider(env, clock)
    counter = Count429()
    logging.getLogger("machines.runtime.retry").addHandler(counter)
    emulator.control.reset_requests()

    def short(on: bool) -> None:
        stock = [{"server_type": SHORT[0], "location": SHORT[1]}] if on else []
        emulator.control.set_stock(stock)

    try:
        out = autoscale(hetzner, clock, short, TYPE, LOCATIONS, hours)
    finally:
        logging.getLogger("machines.runtime.retry").removeHandler(counter)
    counts = emulator.control.requests()
    out.requests, out.routes = counts.total, counts.routes
    out.rate_limited = counter.seen
    out.remaining = int(emulator.control.rate_limit()["remaining"])
    out.window = hetzner.budget().list_window
    compare(provider({**env, "ORCA_LIST_TTL": "0"}, time.time), out)
    return out


@dataclass
class Bucket:
    """One of EC2's token buckets on the simulated clock: ``size`` tokens, ``refill`` a
    second; a call that finds it empty would have been throttled."""

    size: float
    refill: float
    level: float = -1.0
    at: float = 0.0
    lowest: float = -1.0
    throttled: int = 0

    def take(self, now: float, tokens: float = 1.0) -> None:
        if self.level < 0:
            self.level, self.lowest = self.size, self.size
        else:
            self.level = min(self.size, self.level + (now - self.at) * self.refill)
        self.at = now
        if self.level < tokens:
            self.throttled += 1
            return
        self.level -= tokens
        self.lowest = min(self.lowest, self.level)


def ec2_buckets() -> dict[str, Bucket]:
    """EC2's throttling per account and region as its documentation states it: request
    tokens per call (RunInstances 5 refilling 2 a second, non-mutating calls 100 refilling
    20, mutating calls 200 refilling 10), and resource tokens per instance (RunInstances 1000
    refilling 2, TerminateInstances 1000 refilling 20)."""
    return {
        "RunInstances": Bucket(5, 2),
        "non-mutating (Describe*)": Bucket(100, 20),
        "mutating (TerminateInstances)": Bucket(200, 10),
        "instances launched": Bucket(1000, 2),
        "instances terminated": Bucket(1000, 20),
    }


def throttle(calls: list[tuple[float, str]]) -> dict[str, Bucket]:
    """The buckets after ``calls`` (simulated time, operation), in order."""
    buckets = ec2_buckets()
    for at, operation in calls:
        if operation == "RunInstances":
            buckets["RunInstances"].take(at)
            buckets["instances launched"].take(at)
        elif operation == "TerminateInstances":
            buckets["mutating (TerminateInstances)"].take(at)
            buckets["instances terminated"].take(at)
        else:
            buckets["non-mutating (Describe*)"].take(at)
    return buckets


EC2_TYPE = "t3.micro"


def ec2_profile(
    moto: moto_server.MotoServer, proxy: FaultProxy, env: Mapping[str, str], hours: float
) -> tuple[Outcome, dict[str, Bucket]]:
    """The autoscaler profile on EC2 (moto's server behind the fault proxy, which answers
    ``InsufficientInstanceCapacity`` for the short zone's subnet), and EC2's buckets."""
    world = moto.new_world()
    aws = moto_server.client(moto.url)
    for pool in POOLS:
        tags = {"Name": f"{OWNER}-{pool}-seed", **pool_labels(pool, OWNER)}
        aws.run_instances(
            ImageId=moto_server.OLD_AMD64,
            InstanceType=EC2_TYPE,
            MinCount=PER_POOL,
            MaxCount=PER_POOL,
            SubnetId=world.subnets[moto_server.ZONES[0]],
            TagSpecifications=[
                {
                    "ResourceType": "instance",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }
            ],
        )
    zones = tuple(sorted(world.subnets))
    environ = {**world.env, **env, "AWS_ENDPOINT_URL": proxy.url}
    clock = ManualClock()
    ec2 = Ec2Provider(Ec2Settings.from_env(environ), OWNER, credentials=environ, clock=clock)
    calls: list[tuple[float, str]] = []

    def record(model: Any, **_: Any) -> None:
        calls.append((clock(), model.name))

    ec2._client.meta.events.register("before-call.ec2", record)
    proxy.reset()
    short_subnet = world.subnets[zones[0]]

    def short(on: bool) -> None:
        no_capacity = Fault(
            "error",
            "RunInstances",
            status=500,
            code="InsufficientInstanceCapacity",
            when=(("SubnetId", short_subnet),),
        )
        if on:
            proxy.set_faults(no_capacity)
        else:
            proxy.set_faults()

    counter = Count429()
    logging.getLogger("machines.runtime.retry").addHandler(counter)
    try:
        out = autoscale(ec2, clock, short, EC2_TYPE, zones, hours)
    finally:
        logging.getLogger("machines.runtime.retry").removeHandler(counter)
    out.rate_limited = counter.seen
    out.routes = dict(Counter(operation for _, operation in calls))
    out.requests = len(calls)
    out.window = ec2.budget().list_window
    truth_env = {**world.env, "ORCA_LIST_TTL": "0"}
    compare(Ec2Provider(Ec2Settings.from_env(truth_env), OWNER, credentials=truth_env), out)
    return out, throttle(calls)


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
        warm = functools.partial(hetzner.machines, POOLS[1])
        warm_requests = counted(emulator, warm)
        warm_time = median_seconds(warm, repeat)

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


def windows(env: Mapping[str, str]) -> list[float]:
    """The listing's window under ``env`` on Hetzner's full budget (3,600 an hour, one a
    second) for listings of 1, 4 and 20 pages (50, 200 and 1,000 machines)."""
    meter = BudgetMeter(Freshness.from_env(env), lambda: 0.0)
    meter.observe({"RateLimit-Limit": "3600", "RateLimit-Remaining": "3600"})
    return [meter.window(pages) for pages in (1, 4, 20)]


def jobs_clock() -> ManualClock:
    """A simulated clock for the jobs' runs, starting at this whole second: the emulator
    writes ``created`` in whole seconds, so a machine made at a tick is ``created`` at that
    tick (from a clock started mid-second it was up to a second before it, or, after a slow
    tick, after it, which moved a release by a look from one run to the next)."""
    return ManualClock(float(math.floor(time.time())))


BOOT = 60.0
"""Seconds a new machine takes to boot before a job runs on it (the emulator and moto boot at
once; real machines take about this long)."""


@dataclass
class Lease:
    """A machine the jobs' autoscaler made: its pool, when (simulated), its rates (the
    machine's and its options'), its cloud's billing rule, and until when it is busy with a
    job (0: idle)."""

    pool: str
    created: float
    rates: Rates
    billing: Billing
    busy_until: float = 0.0


def billing_of(provider: Provider, machine: Machine) -> Billing:
    """The billing rule of the cloud that holds ``machine``: the provider's own, or, for a
    spanning provider (which has none of its own), that of the machine's cloud."""
    own = provider.on(machine.cloud) if isinstance(provider, SpanningProvider) else provider
    assert own.billing is not None, own
    return own.billing


class Policy(Protocol):
    """What the jobs' autoscaler does with one pool's idle machines at a tick: the order it
    gives them to waiting jobs in (the first first), and, of those left idle once every job
    has a machine, which it deletes now. ``held``: every machine the run holds, by id."""

    name: str

    def order(self, idle: list[Machine], held: Mapping[str, Lease], now: float) -> list[Machine]:
        """``idle`` in the order jobs get them."""
        ...

    def let_go(self, idle: list[Machine], held: Mapping[str, Lease], now: float) -> list[Machine]:
        """Those of ``idle`` to delete now."""
        ...


Way = Callable[[Provider, float], Policy]
"""A policy for one run: made from the run's provider and its first tick (simulated)."""


class AtOnce:
    """Idle machines deleted in the tick they are idle (a job waiting then gets one first)."""

    name = "idle deleted at once"

    def order(self, idle: list[Machine], held: Mapping[str, Lease], now: float) -> list[Machine]:
        return idle

    def let_go(self, idle: list[Machine], held: Mapping[str, Lease], now: float) -> list[Machine]:
        return idle


class Advised:
    """``Provider.keep_advice(idle, now)`` (with ``tick``: ``tick=`` too) asked once a tick
    for each pool with idle machines: a job gets the one with the most paid time left, and
    those whose ``release`` has come are deleted."""

    def __init__(self, provider: Provider, tick: float = 0.0) -> None:
        self._provider, self._tick = provider, tick
        self._release: set[str] = set()
        self.name = f"keep_advice(idle, now, tick={tick:g})" if tick else "keep_advice(idle, now)"

    def order(self, idle: list[Machine], held: Mapping[str, Lease], now: float) -> list[Machine]:
        advice = self._provider.keep_advice(idle, now, tick=self._tick) if idle else []
        self._release = {a.machine.id for a in advice if a.release}
        return [a.machine for a in reversed(advice)]  # the others' paid time ends sooner

    def let_go(self, idle: list[Machine], held: Mapping[str, Lease], now: float) -> list[Machine]:
        return [m for m in idle if m.id in self._release]


def at_once(provider: Provider, start: float) -> Policy:
    return AtOnce()


def advised(tick: float = 0.0) -> Way:
    """The advice, asked as ``Advised`` says."""

    def way(provider: Provider, start: float) -> Policy:
        return Advised(provider, tick)

    return way


def clairvoyant(stream: list[Job], tick: float) -> Way:
    """``bench.bound.Clairvoyant`` knowing ``stream``, on the run's ticks and ``BOOT``."""

    def way(provider: Provider, start: float) -> Policy:
        return Clairvoyant(stream, start, tick, BOOT)

    return way


@dataclass
class JobsOutcome:
    money: Decimal = Decimal(0)
    billed_hours: Decimal = Decimal(0)
    """Machine-hours the cloud bills (its rule at a price of 1 an hour, no cap)."""
    made: int = 0
    jobs: int = 0
    waits: list[float] = field(default_factory=list)
    reused: int = 0
    """Jobs given a machine that an earlier job had left idle."""
    requests: int = 0
    kept_billing: int = 0
    """Ticks a policy kept an idle machine while the cloud billed for it (the advice must
    have none: on EC2 that is any idle tick past the first minute)."""
    overran: int = 0
    """Jobs given a kept machine that ran past its paid time (the reuse bought more)."""
    kept_unused: int = 0
    """Machines kept idle a tick or more, then let go without another job."""
    needed_next: int = 0
    """Machines let go, then a new one made for a job of their pool that keeping them would
    have served for less (the clairvoyant's test)."""
    unfinished: int = 0
    hours: float = 0.0
    """Simulated hours run: the run's hours, and on until every job had its machine."""
    wall: float = 0.0
    stream: list[Job] = field(default_factory=list)
    """Every job as it came: its ``at`` the seconds into the run it arrived (a pipeline's
    later stage when the stage before it had ended), in order."""
    floor: Decimal | None = None
    """``bench.bound.lower_bound`` of ``stream``: no policy pays less for it."""

    def bill(self, lease: Lease, ended: float) -> None:
        """Add what the cloud bills for ``lease`` ended at ``ended``."""
        created = utc(lease.created)
        self.money += lease.billing.charged(created, utc(ended), lease.rates)
        self.billed_hours += lease.billing.charged(created, utc(ended), PER_HOUR)


PER_HOUR = (Rate(Decimal(1), Decimal(10**9)),)
"""A price of 1 an hour and no cap: what a bill at it counts is machine-hours."""


@dataclass
class JobsRun:
    """One run of the jobs model on a provider: its leases, waiting jobs and outcome."""

    provider: Provider
    policy: Policy
    machine_type: str
    locations: tuple[str, ...]
    rate_of: Callable[[str], Rates]
    gate: StageGate
    tick: float
    out: JobsOutcome
    leases: dict[str, Lease] = field(default_factory=dict)
    waiting: dict[str, list[Job]] = field(default_factory=lambda: {pool: [] for pool in POOLS})
    gone: dict[str, list[tuple[Lease, float]]] = field(default_factory=dict)
    """Per pool, the machines let go (and when) that a job may yet have needed."""
    serial: int = 0

    def pool_tick(self, pool: str, now: float, elapsed: float) -> None:
        """One tick of ``pool``: idle machines to waiting jobs, new machines for the rest,
        then the idle ones let go as the policy says."""
        listed = [m for m in self.provider.machines(pool) if m.status != Status.DELETING]
        idle = [m for m in listed if m.id in self.leases and self.leases[m.id].busy_until <= now]
        idle = self.policy.order(idle, self.leases, now)
        self.reuse(pool, idle, now, elapsed)
        self.make(pool, now, elapsed)
        self.let_go(idle, self.policy.let_go(idle, self.leases, now) if idle else [], now)

    def reuse(self, pool: str, idle: list[Machine], now: float, elapsed: float) -> None:
        while self.waiting[pool] and idle:
            job = self.waiting[pool].pop(0)
            lease = self.leases[idle.pop(0).id]
            self.out.overran += charged(lease, now + job.seconds) > charged(lease, now)
            lease.busy_until = now + job.seconds
            self.out.waits.append(elapsed - job.at)
            self.out.reused += 1
            self.gate.started(job, elapsed + job.seconds)

    def make(self, pool: str, now: float, elapsed: float) -> None:
        for job in list(self.waiting[pool]):
            self.serial += 1
            spec = MachineSpec(
                name=f"{pool}-j{self.serial}",
                machine_type=self.machine_type,
                location=self.locations[self.serial % len(self.locations)],
                pool=pool,
            )
            made = create(self.provider, spec, Outcome())
            if made is None:
                break  # no stock anywhere: the job waits for the next tick
            self.waiting[pool].remove(job)
            machine = next(m for m in self.provider.machines(pool) if m.id == made)
            billing = billing_of(self.provider, machine)
            busy = now + BOOT + job.seconds
            lease = Lease(pool, now, self.rate_of(machine.location), billing, busy)
            self.leases[made] = lease
            self.out.made += 1
            self.out.needed_next += self.spared(pool, lease, now, job.seconds)
            self.out.waits.append(elapsed - job.at + BOOT)
            self.gate.started(job, elapsed + BOOT + job.seconds)

    def spared(self, pool: str, made: Lease, now: float, seconds: float) -> bool:
        """Whether a machine of ``pool`` let go earlier could have served the job ``made``
        was made for for less than ``made`` costs it (it is then counted once)."""
        new = made.billing.charged(utc(now), utc(now + BOOT + seconds), made.rates)
        gone = self.gone.get(pool, [])
        for lease, at in list(gone):
            kept = charged(lease, now) - charged(lease, at)
            if kept >= lease.billing.charged(utc(now), utc(now + BOOT), lease.rates):
                gone.remove((lease, at))  # kept to now already costs a new machine's boot
            elif charged(lease, now + seconds) - charged(lease, at) < new:
                gone.remove((lease, at))
                return True
        return False

    def let_go(self, idle: list[Machine], let_go: list[Machine], now: float) -> None:
        still_idle = {m.id for m in idle}
        for machine in let_go:
            if machine.id not in still_idle:
                continue
            lease = self.leases.pop(machine.id)
            self.provider.delete(machine.id)
            self.out.bill(lease, now)
            self.out.kept_unused += now - lease.busy_until >= self.tick
            self.gone.setdefault(lease.pool, []).append((lease, now))
        for machine_id in still_idle - {m.id for m in let_go}:
            lease = self.leases[machine_id]
            paid = lease.billing.paid_until(utc(lease.created), utc(now), _given(lease.rates))
            if paid <= utc(now):
                self.out.kept_billing += 1  # kept idle although the cloud bills on for it


def _given(rates: Rates) -> Callable[[], Rates]:
    """Rates that are known already, as a billing rule asks for them."""
    return lambda: rates


@dataclass(frozen=True)
class JobsCloud:
    """What the jobs' run needs of a cloud besides its provider: the type to make, the
    locations to make it in (by turns), the price of one there, a hook told each tick's
    simulated time, and the shortage switch (the profile's 10 minutes out of stock)."""

    machine_type: str
    locations: tuple[str, ...]
    rate_of: Callable[[str], Rates]
    tick_hook: Callable[[float], object]
    short: Callable[[bool], None]


def run_jobs(
    provider: Provider,
    clock: ManualClock,
    jobs: list[Job],
    way: Way,
    hours: float,
    cloud: JobsCloud,
    tick: float = TICK,
) -> JobsOutcome:
    """The jobs on ``provider``, one autoscaler tick every ``tick`` s: every pool listed (the
    profile's tick), idle machines given to waiting jobs first, a machine made for each job
    left, then the idle ones deleted as the policy ``way`` makes says."""
    gate = StageGate(jobs)
    out = JobsOutcome(jobs=len(jobs))
    start = clock()
    run = JobsRun(
        provider, way(provider, start), cloud.machine_type, cloud.locations, cloud.rate_of,
        gate, tick, out,
    )  # fmt: skip
    short_on = False
    ticks, last = 0, round(hours * 3600 / tick)
    # past the hours, on until every job has its machine (a pipeline's last stages), bounded
    while ticks < last or (ticks < 2 * last and (gate.held() or any(run.waiting.values()))):
        ticks += 1
        now = clock()
        elapsed = now - start
        cloud.tick_hook(now)
        want_short = SHORT_FROM <= elapsed % 3600 < SHORT_FROM + SHORT_FOR
        if want_short != short_on:
            cloud.short(want_short)
            short_on = want_short
        for job in gate.arrived(elapsed):
            run.waiting[job.pool].append(job)
            out.stream.append(job)
        for pool in POOLS:
            run.pool_tick(pool, now, elapsed)
        clock.advance(tick)
    out.hours = ticks * tick / 3600
    for lease in run.leases.values():
        out.bill(lease, clock())
    out.unfinished = sum(len(w) for w in run.waiting.values()) + gate.held()
    return out


def recorded(stream: list[Job]) -> list[Job]:
    """``stream`` as jobs that each come at their recorded time (``StageGate`` lets a job of
    no pipeline through at its ``at``): the same jobs again, for another policy."""
    return [replace(job, pipeline=-1, stage=0) for job in stream]


def cheapest(billing: Billing, each: Iterable[Rates]) -> Rates:
    """Of ``each``, the rates whose hour ``billing`` bills least (the lower bound's price: no
    policy pays less)."""
    return min(each, key=lambda rates: billing.charged(utc(0), utc(3600), rates))


def hetzner_jobs(
    emulator: Emulator,
    env: Mapping[str, str],
    jobs: list[Job],
    way: Way,
    hours: float,
    tick: float = TICK,
) -> JobsOutcome:
    """The jobs on Hetzner: the emulator reset, its clock following the simulated one."""
    emulator.control.reset()
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    emulator.control.set_rate_limit(3600, 1.0)
    clock = jobs_clock()
    emulator.control.set_clock(clock())
    hetzner = provider(env, clock)
    prices = hetzner.prices()

    def rate_of(location: str) -> Rates:
        found = prices.rates(TYPE, location, Market.ON_DEMAND, Pool(name=POOLS[0]))
        assert found is not None, prices.unknown
        return found

    def short(on: bool) -> None:
        emulator.control.set_stock([{"server_type": SHORT[0], "location": SHORT[1]}] if on else [])

    billing = hetzner.billing
    assert billing is not None
    lowest = cheapest(billing, (rate_of(location) for location in LOCATIONS))
    cloud = JobsCloud(TYPE, LOCATIONS, rate_of, emulator.control.set_clock, short)
    emulator.control.reset_requests()
    begin = time.perf_counter()
    out = run_jobs(hetzner, clock, jobs, way, hours, cloud, tick)
    out.wall = time.perf_counter() - begin
    out.requests = emulator.control.requests().total
    emulator.control.set_clock(None)
    out.floor = lower_bound(out.stream, billing, lowest, tick, BOOT, out.hours * 3600)
    return out


def ec2_jobs(
    moto: moto_server.MotoServer,
    proxy: FaultProxy,
    jobs: list[Job],
    way: Way,
    hours: float,
    tick: float = TICK,
) -> JobsOutcome:
    """The jobs on EC2 (moto behind the fault proxy), the pools buying spot (moto's one
    price); every call the provider makes is counted."""
    world = moto.new_world()
    zones = tuple(sorted(world.subnets))
    environ = {**world.env, "AWS_ENDPOINT_URL": proxy.url}
    clock = jobs_clock()
    ec2 = Ec2Provider(Ec2Settings.from_env(environ), OWNER, credentials=environ, clock=clock)
    ec2.set_pools(Pool(name=pool, market=Market.SPOT) for pool in POOLS)
    prices = ec2.prices()

    def rate_of(zone: str) -> Rates:
        """The instance at moto's spot price; its root volume's price is unknown there
        (moto has no Price List), so it is left out."""
        hourly = prices.hourly(EC2_TYPE, zone, Market.SPOT)
        monthly = prices.monthly(EC2_TYPE, zone, Market.SPOT)
        assert hourly is not None, prices.unknown
        assert monthly is not None, prices.unknown
        return (Rate(hourly, monthly),)

    billing = ec2.billing
    assert billing is not None
    lowest = cheapest(billing, (rate_of(zone) for zone in zones))
    calls: list[str] = []
    ec2._client.meta.events.register("before-call.ec2", lambda model, **_: calls.append(model.name))
    proxy.reset()
    short_subnet = world.subnets[zones[0]]

    def short(on: bool) -> None:
        no_capacity = Fault(
            "error",
            "RunInstances",
            status=500,
            code="InsufficientInstanceCapacity",
            when=(("SubnetId", short_subnet),),
        )
        proxy.set_faults(no_capacity) if on else proxy.set_faults()

    cloud = JobsCloud(EC2_TYPE, zones, rate_of, lambda _: None, short)
    begin = time.perf_counter()
    out = run_jobs(ec2, clock, jobs, way, hours, cloud, tick)
    out.wall = time.perf_counter() - begin
    out.requests = len(calls)
    out.floor = lower_bound(out.stream, billing, lowest, tick, BOOT, out.hours * 3600)
    return out


def ratio(value: float | Decimal, bound: float | Decimal) -> str:
    """``value`` as a ratio of the bound's (``-`` where the bound's is 0)."""
    return f"{float(value) / float(bound):.2f}x" if bound else "-"


def jobs_rows(label: str, runs: list[tuple[str, JobsOutcome]], currency: str) -> list[str]:
    """The side-by-side rows of one model's runs, the last the bound's: each figure with its
    ratio to the bound's; then the lower bound's money."""
    bound = runs[-1][1]
    mean_bound = statistics.mean(bound.waits or [0.0])
    worst_bound = max(bound.waits or [0.0])
    rows = []
    for name, o in runs:
        hours = Decimal(str(o.hours))
        money, made = o.money / hours, o.made / o.hours
        mean, worst = statistics.mean(o.waits or [0.0]), max(o.waits or [0.0])
        rows.append(
            f"| {label} | {name} | {money:.4g} {currency} | "
            f"{ratio(money, bound.money / Decimal(str(bound.hours)))} | "
            f"{made:.1f} | {ratio(made, bound.made / bound.hours)} | "
            f"{mean:.0f} s | {ratio(mean, mean_bound)} | {worst:.0f} s | "
            f"{ratio(worst, worst_bound)} | {o.reused / o.jobs:.0%} | {o.overran} | "
            f"{o.kept_unused} | {o.needed_next} | {o.kept_billing} | {o.unfinished} | "
            f"{o.requests / o.hours:.0f} | {o.wall:.0f} s |"
        )
    if bound.floor is not None:
        floor = bound.floor / Decimal(str(bound.hours))
        rows.append(
            f"| {label} | lower bound (any policy) | {floor:.4g} {currency} | "
            f"{ratio(floor, bound.money / Decimal(str(bound.hours)))} |" + " |" * 14
        )
    return rows


BEFORE = {"ORCA_LIST_SHARE": "0.05", "ORCA_LIST_MAX_AGE": "1000000000"}
"""The listing's defaults before issue 20: 5 % of the budget, no cap on the window."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-ec2", action="store_true", help="Hetzner only")
    parser.add_argument("--jobs-only", action="store_true", help="only the jobs' runs")
    parser.add_argument(
        "--jobs-hours", type=float, default=4.0, help="simulated, Hetzner (0: skip it)"
    )
    parser.add_argument("--jobs-ec2-hours", type=float, default=1.0, help="simulated, EC2")
    parser.add_argument(
        "--jobs-tick", type=float, default=TICK, help="seconds between the jobs' autoscaler's looks"
    )
    parser.add_argument(
        "--jobs-model",
        choices=[*sorted(MODELS), "both"],
        default="both",
        help="the jobs' model: single-stage pushes, pipelines, or both side by side",
    )
    args = parser.parse_args()
    if args.jobs_only:
        logging.basicConfig(level=logging.ERROR)
        os.environ["AWS_CONFIG_FILE"] = os.devnull
        os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
        print_jobs(args)
        return 0
    logging.basicConfig(level=logging.ERROR)
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    token = hetzner.token("budget")
    with running_emulator(token, "--quiet", "--boot-seconds", "0") as emulator:
        env = {"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emulator.url}
        runs = [
            (
                "each pool listed at every call (ORCA_LIST_TTL=0, as main before issue 12)",
                {"ORCA_LIST_TTL": "0"},
            ),
            ("one listing a tick (ORCA_LIST_SHARE=0.5)", {"ORCA_LIST_SHARE": "0.5"}),
            ("before: the old listing defaults (ORCA_LIST_SHARE=0.05, no cap)", BEFORE),
            ("after: defaults (ORCA_LIST_SHARE=0.03, ORCA_LIST_MAX_AGE=180)", {}),
        ]
        results = []
        for label, extra in runs:
            begin = time.perf_counter()
            outcome = profile(emulator, {**env, **extra}, args.hours)
            results.append((label, outcome, time.perf_counter() - begin))
        big = big_owner(emulator, env, args.repeat)
    ec2_runs = []
    if not args.skip_ec2:
        with (
            tempfile.TemporaryDirectory() as workdir,
            moto_server.running(Path(workdir)) as moto,
            FaultProxy(moto.url).serving() as proxy,
        ):
            begin = time.perf_counter()
            outcome, buckets = ec2_profile(moto, proxy, {}, args.hours)
            ec2_runs.append(("defaults", outcome, buckets, time.perf_counter() - begin))

    print(f"Profile: {len(POOLS)} pools x {PER_POOL}, tick {TICK:.0f} s, {CHANGES_PER_HOUR}")
    print("creates and deletes an hour, a type out of stock in one location for 10 min;")
    print(f"{args.hours} simulated hour(s).")
    print()
    print("Hetzner (the emulator):")
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
            f"{o.remaining}; listing window at the end {o.window:.0f} s"
        )
        for line in o.lost[:5]:
            print(f"  lost: {line}")
    print()
    print("| listing window on Hetzner's budget | 50 machines | 200 | 1,000 |")
    print("| --- | ---: | ---: | ---: |")
    for label, extra in (("before", BEFORE), ("after", {})):
        row = " | ".join(f"{w:.0f} s" for w in windows({**env, **extra}))
        print(f"| {label} | {row} |")
    print()
    print("| listing | call | requests | median wall |")
    print("| --- | --- | ---: | ---: |")
    for row in big:
        print(row)
    if not ec2_runs:
        return 0
    print()
    print("EC2 (moto's server; EC2's throttling modelled on the simulated clock):")
    print()
    operations = sorted({op for _, o, _, _ in ec2_runs for op in o.routes})
    print(
        "| settings | requests / h | "
        + " | ".join(operations)
        + " | throttled (modelled) | RequestLimitExceeded | lost | wall |"
    )
    print(
        "| --- | ---: | "
        + " | ".join("---:" for _ in operations)
        + " | ---: | ---: | ---: | ---: |"
    )
    for label, o, buckets, wall in ec2_runs:
        counts = " | ".join(str(o.routes.get(op, 0)) for op in operations)
        throttled = sum(b.throttled for b in buckets.values())
        print(
            f"| {label} | {o.requests / args.hours:.0f} | {counts} | {throttled} | "
            f"{o.rate_limited} | {len(o.lost)} | {wall:.0f} s |"
        )
    for label, o, buckets, _ in ec2_runs:
        print(
            f"\n{label}: {o.creates} creates ({o.no_stock} no_stock, {o.moved} moved), "
            f"{o.deletes} deletes; listing window {o.window:.0f} s"
        )
        for name, bucket in buckets.items():
            print(
                f"  {name}: {bucket.size:.0f} refilling {bucket.refill:g}/s, lowest "
                f"{bucket.lowest:.1f}, throttled {bucket.throttled}"
            )
        for line in o.lost[:5]:
            print(f"  lost: {line}")
    return 0


MODELS: dict[str, Pipeline | None] = {"pushes": None, "pipelines": Pipeline()}
"""The jobs' models: single-stage pushes (each to one pool, 1-7 jobs within 2 minutes) and
pipelines (``Pipeline()``: 1-3 stages of 1-4 jobs each, over 1-3 pools)."""


def next_within(jobs: list[Job], seconds: float = 3600 - 120) -> float:
    """The share of jobs after which their pool's next job arrives within ``seconds`` of the
    job's end (a machine kept on its paid hour, released 2 min before it ends, is there
    for it); a later stage's arrival as if no job waited."""
    by_pool: dict[str, list[Job]] = {}
    for job in sorted(jobs, key=lambda j: j.at):
        by_pool.setdefault(job.pool, []).append(job)
    near = 0
    for pool_jobs in by_pool.values():
        for i, job in enumerate(pool_jobs):
            ends = job.at + job.seconds
            near += any(ends <= j.at <= job.at + seconds for j in pool_jobs[i + 1 :])
    return near / max(1, len(jobs))


def side_by_side(
    jobs: list[Job], run: Callable[[list[Job], Way], JobsOutcome], tick: float
) -> list[tuple[str, JobsOutcome]]:
    """One model's runs side by side: idle machines deleted at once, the advice asked
    without the autoscaler's tick and told it, then the bound on the stream the advice told
    the tick saw (each job's arrival as it came: a pipeline's later stage when the stage
    before it had ended)."""
    runs = [(AtOnce.name, run(jobs, at_once)), ("keep_advice(idle, now)", run(jobs, advised()))]
    advice = run(jobs, advised(tick))
    runs.append((f"keep_advice(idle, now, tick={tick:g})", advice))
    stream = recorded(advice.stream)
    runs.append((Clairvoyant.name, run(stream, clairvoyant(stream, tick))))
    return runs


def print_jobs(args: argparse.Namespace) -> None:
    """The runs of the jobs on each cloud and each model, side by side (see ``side_by_side``)."""
    hetzner_hours, ec2_hours, tick = args.jobs_hours, args.jobs_ec2_hours, args.jobs_tick
    models = sorted(MODELS) if args.jobs_model == "both" else [args.jobs_model]
    models.sort(key=lambda m: m != "pushes")
    token = hetzner.token("budget")
    rows: list[str] = []
    sizes: list[str] = []
    with running_emulator(token, "--quiet", "--boot-seconds", "0") as emulator:
        env = {"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emulator.url}
        variants = [(f"Hetzner, {m}", POOLS, m) for m in models]
        if "pushes" in models:
            variants.insert(1, ("Hetzner, pushes over 5 pools", POOLS[:5], "pushes"))
        for label, pools, model in variants if hetzner_hours > 0 else ():
            jobs = ci_jobs(pools, hetzner_hours, pipeline=MODELS[model])
            sizes.append(
                f"{label}: {len(jobs)} jobs in {hetzner_hours:g} h, the pool's next job "
                f"within the paid hour after {next_within(jobs):.0%}"
            )

            def on_hetzner(jobs: list[Job], way: Way) -> JobsOutcome:
                return hetzner_jobs(emulator, env, jobs, way, hetzner_hours, tick)

            rows += jobs_rows(label, side_by_side(jobs, on_hetzner, tick), "EUR")
    if not args.skip_ec2:
        with (
            tempfile.TemporaryDirectory() as workdir,
            moto_server.running(Path(workdir)) as moto,
            FaultProxy(moto.url).serving() as proxy,
        ):
            os.environ.update(moto_server.CREDENTIALS)
            for model in models:
                jobs = ci_jobs(POOLS, ec2_hours, pipeline=MODELS[model])
                sizes.append(f"EC2, {model}: {len(jobs)} jobs in {ec2_hours:g} h")

                def on_ec2(jobs: list[Job], way: Way) -> JobsOutcome:
                    return ec2_jobs(moto, proxy, jobs, way, ec2_hours, tick)

                rows += jobs_rows(
                    f"EC2 (spot, moto), {model}", side_by_side(jobs, on_ec2, tick), "USD"
                )
    print(
        f"Jobs: {len(POOLS)} pools, tick {tick:g} s, 40 jobs an hour, 5-15 min each, a new "
        f"machine boots {BOOT:.0f} s; pushes: 1-7 jobs of one pool within 2 min; pipelines: "
        f"{MODELS['pipelines']}"
    )
    for line in sizes:
        print(f"- {line}")
    print()
    print(JOBS_HEADER)
    print("| --- | --- |" + " ---: |" * 18)
    for row in rows:
        print(row)


JOBS_HEADER = (
    "| cloud, jobs | idle machines | money / h | x bound | machines made / h | x bound | "
    "job wait (mean) | x bound | job wait (worst) | x bound | jobs on an idle machine | "
    "jobs past a kept machine's paid time | kept, let go unused | let go, needed next | "
    "kept idle while billed | jobs left waiting | requests / h | wall |"
)


if __name__ == "__main__":
    raise SystemExit(main())
