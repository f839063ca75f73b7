"""Spot machines taken back: jobs lost, job wait and money, with EC2's notices read and without.

``bench.budget``'s jobs model (``testkit.simulation.ci_jobs``, pipelines, seeded: 40 jobs an
hour over its 20 pools, 5 to 15 minutes each, a tick every 15 s, a new machine booting 60 s,
idle machines let go as ``keep_advice`` says) on EC2 (moto's server), every pool buying spot
in the two zones of the world's subnets, each new machine in the zones ``offers`` gives for
the pool's market, in turn. EC2 takes spot capacity back as it does, by capacity pool (a
type in a zone): each running spot machine draws an interruption at ``--rate`` an hour; the
first draw in a zone starts a reclaim there, which takes back every spot machine of the zone,
those running and those launched while it lasts (``RECLAIM``), each 5 to 20 minutes after the
reclaim began (at least 2 minutes after its launch), and a share of them (``REBALANCED``) is
told by a rebalance recommendation when the reclaim begins (or at launch), every one by EC2's
interruption warning two minutes before it goes. moto emits no EC2 event: the bench puts
them on the bus at their simulated times, in EC2's shapes (``testkit.ec2_events``), and takes
the machine back with ``MotoServer.interrupt``. A job running on a machine taken back is lost
and runs again from its start (on the pool's next machine).

Two runs on the same jobs and seed, side by side: the provider without ``ORCA_EC2_EVENTS_QUEUE``
(no notice read: a machine is seen going once EC2 has taken it), and with it (the listing reads
the queue: a machine under notice is given no new job and let go when idle, one under an
interruption warning no longer counts and its spot market in its zone is remembered out for
``ORCA_NO_STOCK_TTL`` so new machines go to the other zone, and the autoscaler starts the
replacement of a job about to be lost at the warning, not after). Money is each machine's bill
by EC2's rule (``Provider.billing``) at moto's spot price (``Provider.prices``), from its
launch to its delete or its interruption; requests are the provider's EC2 and SQS calls.

    python -m bench.spot_notices [--hours 2] [--rates 0.05,0.2] [--seed 28]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from bench.budget import BOOT, OWNER, POOLS, TICK
from machines import Machine, MachineSpec, Status
from machines.runtime.billing import Billing, Rate, utc
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import ORCA_EC2_EVENTS_QUEUE, Ec2Settings
from machines.runtime.models import Ending, Market
from machines.runtime.pool import Pool
from testkit import ec2_events, moto_server
from testkit.clock import ManualClock
from testkit.moto_server import count_calls
from testkit.simulation import Job, Pipeline, StageGate, ci_jobs

TYPE = "t3.micro"
RECLAIM = 20 * 60.0
"""Seconds a reclaim of a zone's spot capacity lasts: machines launched there meanwhile are
taken back too."""
TAKEN_WITHIN = (5 * 60.0, 20 * 60.0)
"""When, after a reclaim begins, each of the zone's spot machines is taken back (uniform)."""
REBALANCED = 0.5
"""The share of the machines a reclaim takes that EC2 tells by a rebalance recommendation."""
WARNING = 120.0
"""Seconds between EC2's interruption warning and the machine's end."""


@dataclass
class Lease:
    """A machine the jobs' autoscaler made: when (simulated), its job (None: idle), until when
    it is busy, and the job it was made to run once another machine is lost (a replacement)."""

    created: float
    pool: str
    zone: str
    name: str
    busy_until: float = 0.0
    job: Job | None = None
    under_notice: bool = False
    """Its job started while EC2 had already said the machine will go."""
    replaced: bool = False
    """Under an interruption warning while busy: its replacement is made."""
    spare: bool = False
    """Made at another machine's warning, for the job that machine will lose."""


@dataclass
class Taking:
    """When EC2 takes a machine back, and what it says before."""

    name: str
    ends: float
    rebalance: float | None
    warned: bool = False
    told: bool = False


@dataclass
class Outcome:
    jobs: int = 0
    started: int = 0
    lost: int = 0
    lost_under_notice: int = 0
    """Jobs lost that had started on a machine already under EC2's notice."""
    taken: int = 0
    made: int = 0
    waits: list[float] = field(default_factory=list)
    money: Decimal = Decimal(0)
    requests: int = 0
    unfinished: int = 0
    hours: float = 0.0
    wall: float = 0.0
    zones: Counter[str] = field(default_factory=Counter)


class Cloud:
    """EC2's side: which spot machines it takes back when, and the events it sends first."""

    def __init__(self, moto: moto_server.MotoServer, rate: float, seed: int) -> None:
        self._moto = moto
        self._rate = rate
        self._rng = random.Random(seed)
        self.reclaims: dict[str, float] = {}
        self.taking: dict[str, Taking] = {}

    def draw(self, now: float, running: dict[str, tuple[str, str]]) -> None:
        """This tick's draws: a zone whose running machines draw an interruption starts a
        reclaim, which takes back each of its machines (``running``: id to zone and name;
        drawn in the order of their names, which a rerun gives again, unlike EC2's ids)."""
        for zone in sorted({z for z, _ in running.values()}):
            if zone in self.reclaims and now - self.reclaims[zone] < RECLAIM:
                continue
            there = sorted((n, i) for i, (z, n) in running.items() if z == zone)
            hit = 1 - (1 - self._rate * TICK / 3600) ** len(there)
            if self._rng.random() < hit:
                self.reclaims[zone] = now
                for name, instance in there:
                    self.take(instance, name, now, now)

    def launched(self, instance: str, name: str, zone: str, now: float) -> None:
        """A machine launched into a zone being reclaimed is taken back too."""
        began = self.reclaims.get(zone)
        if began is not None and now - began < RECLAIM:
            self.take(instance, name, began, now)

    def take(self, instance: str, name: str, began: float, now: float) -> None:
        if instance in self.taking:
            return
        ends = max(began + self._rng.uniform(*TAKEN_WITHIN), now + WARNING)
        rebalance = now if self._rng.random() < REBALANCED else None
        self.taking[instance] = Taking(name, ends, rebalance)

    def send(self, now: float) -> list[str]:
        """Put this tick's events on the bus and take back the machines whose end has come;
        the ids taken back."""
        url, entries, taken = self._moto.url, [], []
        by_name = sorted(self.taking.items(), key=lambda item: item[1].name)
        for instance, t in by_name:
            if t.rebalance is not None and not t.told and t.rebalance <= now:
                entries.append(ec2_events.rebalance_recommendation(instance, at=_at(t.rebalance)))
                t.told = True
            if not t.warned and t.ends - WARNING <= now:
                entries.append(ec2_events.interruption_warning(instance, at=_at(t.ends - WARNING)))
                t.warned = True
        for start in range(0, len(entries), 10):  # PutEvents takes ten at a time
            ec2_events.put(url, *entries[start : start + 10])
        for instance, t in by_name:
            if t.ends <= now:
                self._moto.interrupt(instance)
                taken.append(instance)
                del self.taking[instance]
        return taken

    def forget(self, instance: str) -> None:
        """The autoscaler deleted the machine: EC2 takes nothing back of it."""
        self.taking.pop(instance, None)


def _at(seconds: float) -> datetime:
    return utc(seconds)


@dataclass
class Run:
    """One run of the jobs on a provider, reading EC2's notices or not."""

    provider: Ec2Provider
    cloud: Cloud
    reads: bool
    rate: Rate
    billing: Billing
    gate: StageGate
    out: Outcome
    zones: tuple[str, ...]
    leases: dict[str, Lease] = field(default_factory=dict)
    waiting: dict[str, list[Job]] = field(default_factory=lambda: {p: [] for p in POOLS})
    serial: int = 0

    def bill(self, lease: Lease, ended: float) -> None:
        self.out.money += self.billing.charged(utc(lease.created), utc(ended), (self.rate,))

    def tick(self, now: float, elapsed: float) -> None:
        running = {i: (lease.zone, lease.name) for i, lease in self.leases.items()}
        self.cloud.draw(now, running)
        for instance in self.cloud.send(now):
            self.taken(instance, now)
        for pool in POOLS:
            self.pool_tick(pool, now, elapsed)

    def taken(self, instance: str, now: float) -> None:
        """EC2 took the machine back: its job is lost and waits again, its bill ends."""
        lease = self.leases.pop(instance, None)
        if lease is None:
            return
        self.out.taken += 1
        self.bill(lease, now)
        if lease.job is not None and lease.busy_until > now:
            self.out.lost += 1
            self.out.lost_under_notice += lease.under_notice
            # run again from its start; it holds its pipeline's next stage back no more
            self.waiting[lease.job.pool].append(Job(now, lease.job.pool, lease.job.seconds))

    def pool_tick(self, pool: str, now: float, elapsed: float) -> None:
        listed = [m for m in self.provider.machines(pool) if m.status != Status.DELETING]
        mine = [m for m in listed if m.id in self.leases]
        for m in mine:
            lease = self.leases[m.id]
            if lease.busy_until <= now:
                lease.job = None
        if self.reads:
            self.replace_warned(pool, mine, now)
        idle = [m for m in mine if self.leases[m.id].job is None and not self.leases[m.id].spare]
        advice = self.provider.keep_advice(idle, now) if idle else []
        # the most paid time left first, by name where that is equal (EC2's ids are random)
        kept = sorted(advice, key=lambda a: (-a.release_at.timestamp(), a.machine.name))
        idle = [a.machine for a in kept if not a.machine.under_notice]
        self.reuse(pool, idle, now, elapsed)
        self.make(pool, now, elapsed)
        for a in advice:
            held = self.leases.get(a.machine.id)
            if a.release and held is not None and held.job is None:
                self.delete(a.machine.id, now)

    def replace_warned(self, pool: str, mine: list[Machine], now: float) -> None:
        """A busy machine under an interruption warning: its job will be lost at its end, so
        its replacement is made now, booting while the job still runs (it does not count
        toward max, and its zone's spot market is remembered out)."""
        for m in mine:
            lease = self.leases[m.id]
            if m.ending != Ending.INTERRUPTING or lease.job is None or lease.replaced:
                continue
            lease.replaced = True
            made = self.launch(pool, now)
            if made is not None:
                self.leases[made].spare = True
                self.leases[made].busy_until = now + BOOT
        # a replacement whose machine's job ended after all is an idle machine like any other
        losing = sum(1 for x in self.leases.values() if x.pool == pool and x.replaced and x.job)
        spares = [x for x in self.leases.values() if x.pool == pool and x.spare and x.job is None]
        for extra in spares[losing:]:
            if extra.busy_until <= now:
                extra.spare = False

    def reuse(self, pool: str, idle: list[Machine], now: float, elapsed: float) -> None:
        """Waiting jobs to the pool's replacements made at a warning first (booted or
        booting), then to its idle machines."""
        spares = [
            i
            for i, lease in self.leases.items()
            if lease.pool == pool and lease.spare and lease.job is None
        ]
        while self.waiting[pool] and (spares or idle):
            job = self.waiting[pool].pop(0)
            machine_id = spares.pop(0) if spares else idle.pop(0).id
            lease = self.leases[machine_id]
            ready = max(now, lease.busy_until)
            self.start(lease, job, ready, machine_id)
            self.out.waits.append(ready - job.at)
            self.gate.started(job, elapsed + (ready - now) + job.seconds)

    def start(self, lease: Lease, job: Job, at: float, machine_id: str) -> None:
        """``job`` runs on the machine from ``at``: noted when EC2 had already said the
        machine will go (a rebalance recommendation or an interruption warning by then)."""
        lease.job, lease.busy_until, lease.spare = job, at + job.seconds, False
        self.out.started += 1
        taking = self.cloud.taking.get(machine_id)
        told = taking is not None and taking.rebalance is not None and taking.rebalance <= at
        lease.under_notice = taking is not None and (told or taking.ends - WARNING <= at)

    def make(self, pool: str, now: float, elapsed: float) -> None:
        for job in list(self.waiting[pool]):
            made = self.launch(pool, now)
            if made is None:
                break  # no stock anywhere: the job waits for the next tick
            self.waiting[pool].remove(job)
            self.start(self.leases[made], job, now + BOOT, made)
            self.out.waits.append(now + BOOT - job.at)
            self.gate.started(job, elapsed + BOOT + job.seconds)

    def launch(self, pool: str, now: float) -> str | None:
        zones = self.provider.offers(TYPE, pool)
        if not zones:
            return None
        self.serial += 1
        zone = zones[self.serial % len(zones)]
        spec = MachineSpec(
            name=f"{pool}-j{self.serial}", machine_type=TYPE, location=zone, pool=pool
        )
        created = self.provider.create(spec)
        if created.machine is None:
            return None
        made = created.machine.id
        self.leases[made] = Lease(now, pool, zone, spec.name)
        self.out.made += 1
        self.out.zones[zone] += 1
        self.cloud.launched(made, spec.name, zone, now)
        return made

    def delete(self, machine_id: str, now: float) -> None:
        lease = self.leases.pop(machine_id)
        self.provider.delete(machine_id)
        self.cloud.forget(machine_id)
        self.bill(lease, now)


def run_jobs(
    moto: moto_server.MotoServer, jobs: list[Job], reads: bool, rate: float, hours: float, seed: int
) -> Outcome:
    """The jobs on a fresh world, EC2 taking spot capacity back at ``rate`` an hour; the
    provider reads EC2's notices with ``reads``."""
    world = moto.new_world()
    queue = ec2_events.make_queue(moto.url, OWNER)
    environ = {**world.env, **({ORCA_EC2_EVENTS_QUEUE: queue} if reads else {})}
    clock = ManualClock()
    ec2 = Ec2Provider(Ec2Settings.from_env(environ), OWNER, credentials=environ, clock=clock)
    ec2.set_pools(Pool(name=pool, market=Market.SPOT) for pool in POOLS)
    prices = ec2.prices()
    zones = tuple(sorted(world.subnets))
    hourly = prices.hourly(TYPE, zones[0], Market.SPOT)
    monthly = prices.monthly(TYPE, zones[0], Market.SPOT)
    assert hourly is not None, prices.unknown
    assert monthly is not None, prices.unknown
    assert ec2.billing is not None
    calls = count_calls(ec2._client)
    queue_calls = count_calls(ec2._queue()) if reads else Counter()
    gate = StageGate(jobs)
    run = Run(ec2, Cloud(moto, rate, seed), reads, Rate(hourly, monthly), ec2.billing, gate,
              Outcome(jobs=len(jobs)), zones)  # fmt: skip
    begin, start = time.perf_counter(), clock()
    ticks, last = 0, round(hours * 3600 / TICK)
    while ticks < last or (ticks < 2 * last and (gate.held() or any(run.waiting.values()))):
        ticks += 1
        now = clock()
        elapsed = now - start
        for job in gate.arrived(elapsed):
            run.waiting[job.pool].append(Job(now, job.pool, job.seconds, job.pipeline, job.stage))
        run.tick(now, elapsed)
        clock.advance(TICK)
    out = run.out
    out.hours = ticks * TICK / 3600
    for lease in run.leases.values():
        run.bill(lease, clock())
    out.unfinished = sum(len(w) for w in run.waiting.values()) + gate.held()
    out.requests = sum(calls.values()) + sum(queue_calls.values())
    out.wall = time.perf_counter() - begin
    return out


def row(label: str, name: str, o: Outcome, first: Outcome | None) -> str:
    """One run as a table row; the second of a pair with its ratios to the first."""
    waits = sorted(o.waits) or [0.0]
    p95 = waits[min(len(waits) - 1, int(0.95 * len(waits)))]
    per_hour = Decimal(str(o.hours))

    def ratio(value: float, base: float) -> str:
        return "" if first is None or not base else f" ({value / base:.2f}x)"

    money = o.money / per_hour
    base_money = float(first.money / Decimal(str(first.hours))) if first else 0.0
    return (
        f"| {label} | {name} | {o.taken} | {o.lost}{ratio(o.lost, first.lost if first else 0)} | "
        f"{o.lost_under_notice} | {statistics.mean(waits):.0f} s"
        f"{ratio(statistics.mean(waits), statistics.mean(first.waits or [0.0]) if first else 0)}"
        f" | {p95:.0f} s | {money:.4g} USD{ratio(float(money), base_money)} | "
        f"{o.made / o.hours:.1f} | {o.requests / o.hours:.0f} | "
        f"{', '.join(f'{z} {n}' for z, n in sorted(o.zones.items()))} | {o.unfinished} | "
        f"{o.wall:.0f} s |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--rates", default="0.05,0.2", help="spot interruptions an hour, each")
    parser.add_argument("--seed", type=int, default=28)
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    jobs = ci_jobs(POOLS, args.hours, seed=args.seed, pipeline=Pipeline())
    rows = []
    with tempfile.TemporaryDirectory() as workdir, moto_server.running(Path(workdir)) as moto:
        os.environ.update(moto_server.CREDENTIALS)  # the price list's client: boto3's chain
        for rate in rates:
            label = f"{rate:.0%} an hour"
            blind = run_jobs(moto, jobs, False, rate, args.hours, args.seed)
            read = run_jobs(moto, jobs, True, rate, args.hours, args.seed)
            rows.append(row(label, "notices not read", blind, None))
            rows.append(row(label, "notices read", read, blind))
    print(
        f"Jobs: {len(jobs)} in {args.hours:g} h over {len(POOLS)} pools (pipelines), tick "
        f"{TICK:.0f} s, a new machine boots {BOOT:.0f} s; reclaims last {RECLAIM / 60:.0f} min, "
        f"take a zone's machines {TAKEN_WITHIN[0] / 60:.0f}-{TAKEN_WITHIN[1] / 60:.0f} min "
        f"after they begin, {REBALANCED:.0%} told by a rebalance recommendation first"
    )
    print()
    print(
        "| spot taken back at | EC2's notices | machines taken back | jobs lost (run again) | "
        "of them started under notice | job wait (mean) | job wait (p95) | money / h | "
        "machines made / h | requests / h | machines made by zone | jobs left waiting | wall |"
    )
    print(
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"
    )
    for line in rows:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
