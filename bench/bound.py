"""The best that keeping idle machines could do on the jobs model: a clairvoyant policy, and
a lower bound no policy goes under.

``bench.budget``'s jobs run each policy on the same recorded stream of jobs (each job's
pool, length and arrival, as the advice's run saw them arrive) at the same clouds, prices,
tick and boot time; this module holds the two yardsticks the advice is read against.

**The clairvoyant policy** (``Clairvoyant``, the bound of the tables) knows the whole
stream. It keeps what ``keep_advice`` keeps (a machine's paid time, up to the margin before
it ends, at the run's tick: keeping it costs nothing), and for each idle machine the advice
lets go it asks whether keeping it until the next job the autoscaler would give it has
ended costs less, by the machine's own billing rule and price, than letting it go and
booting another machine for that job (``boot`` seconds, billed): then it keeps it. It may
keep or let go, nothing else: a job goes to its own pool, at the first tick after it
arrives, to the idle machine the autoscaler gives it (the advice's order: the most paid time
left first), or to a new machine where none is idle (at the place the pool's create picks);
it makes no machine ahead of a job and never moves a job to another pool. Letting a machine
go before the advice would saves nothing on either rule (its time is paid) and changes which
machine the next job gets: that is left to the lower bound.

**The lower bound** (``lower_bound``) is a relaxation: no policy that serves each job at the
first tick after it arrives pays less for the stream, whatever it keeps, whichever machine
of the pool it gives a job (knowing every job's length), and even one that boots machines
ahead of the jobs. Two billing shapes are bounded, asked of the rule itself (``period_of``):

- a rule that bills every started period whole (Hetzner's hour): at any moment each job that
  surely runs then (from its tick plus the boot, when it runs whether its machine was kept or
  made, to its tick plus its length) needs its own machine, and each machine alive then is
  in one billed period; so the periods bought are at least the fewest period-long spans that
  cover that demand at every moment, which a greedy sweep finds (a span opened as late as
  the demand asks);
- a rule that bills by the second after a first minute (EC2's): each job's own run is paid,
  and before it either a boot (its machine was made, for it or ahead of it) or the idle time
  of a machine that ended an earlier job of the pool, at least from the latest that earlier
  job can have ended to the job's tick; each job pays at least the least of these.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from machines import Machine
from machines.runtime.billing import Billing, Rates, utc
from machines.runtime.paid import DEFAULT_MARGIN, advise
from testkit.simulation import Job


class Held(Protocol):
    """A machine of the jobs model as the policies see it: its pool, when it was made (the
    simulated clock's seconds), until when its job keeps it busy, its billing rule and price."""

    @property
    def pool(self) -> str: ...
    @property
    def created(self) -> float: ...
    @property
    def busy_until(self) -> float: ...
    @property
    def billing(self) -> Billing: ...
    @property
    def rates(self) -> Rates: ...


def charged(held: Held, until: float) -> Decimal:
    """What ``held`` is billed if deleted at ``until``."""
    return held.billing.charged(utc(held.created), utc(until), held.rates)


def paid_until(held: Held, at: float) -> float:
    """Until when ``held`` is paid if deleted at ``at`` (the simulated clock's seconds)."""
    rates = held.rates
    return held.billing.paid_until(utc(held.created), utc(at), lambda: rates).timestamp()


def on_tick(at: float, start: float, tick: float) -> float:
    """The first tick at or after ``at`` (ticks every ``tick`` seconds from ``start``)."""
    return start + math.ceil((at - start) / tick - 1e-6) * tick


@dataclass
class Planned:
    """A machine in ``Clairvoyant``'s look ahead: held now, or made for a job ahead."""

    id: str
    pool: str
    created: float
    busy_until: float
    billing: Billing
    rates: Rates


class Clairvoyant:
    """The bound's policy: see the module. ``stream``: every job with the time it arrives
    (seconds into the run, as ``JobsOutcome.stream`` records them); ``start``: the simulated
    clock at the run's first tick; ``tick`` the run's, ``margin`` the advice's."""

    name = "bound (clairvoyant)"

    def __init__(
        self,
        stream: Iterable[Job],
        start: float,
        tick: float,
        boot: float,
        margin: float = DEFAULT_MARGIN,
    ) -> None:
        self._ahead: dict[str, list[Job]] = {}
        for job in sorted(stream, key=lambda j: j.at):
            self._ahead.setdefault(job.pool, []).append(job)
        self._arrivals = {pool: [j.at for j in jobs] for pool, jobs in self._ahead.items()}
        self._start, self._tick, self._boot, self._margin = start, tick, boot, margin
        self._release: set[str] = set()

    def order(self, idle: list[Machine], held: Mapping[str, Held], now: float) -> list[Machine]:
        """The idle machines as ``keep_advice`` orders them for the autoscaler (the most paid
        time left first), the advice's own rule (``machines.runtime.paid``) at the run's tick."""

        def paid(machine: Machine, at: datetime) -> datetime:
            return utc(paid_until(held[machine.id], at.timestamp()))

        advice = advise(idle, utc(now), paid, self._margin, self._tick)
        self._release = {a.machine.id for a in advice if a.release}
        return [a.machine for a in reversed(advice)]

    def let_go(self, idle: list[Machine], held: Mapping[str, Held], now: float) -> list[Machine]:
        """Those of ``idle`` (one pool's, no job waiting) the advice lets go, but for those
        that keeping until the next job each would get has ended costs less than a new
        machine for that job."""
        going = [m for m in idle if m.id in self._release]
        if not going:
            return []
        pool = held[going[0].id].pool
        first = self._first_jobs(pool, {i: h for i, h in held.items() if h.pool == pool}, now)
        return [
            m
            for m in going
            if m.id not in first or not self._keeping_pays(held[m.id], first[m.id], now)
        ]

    def _keeping_pays(self, held: Held, job: Job, now: float) -> bool:
        """Whether keeping ``held`` until ``job`` has ended on it costs less than letting it
        go now and booting another for the job (at the same price and rule)."""
        begins = on_tick(self._start + job.at, self._start, self._tick)
        keep = charged(held, begins + job.seconds) - charged(held, now)
        new = held.billing.charged(utc(begins), utc(begins + self._boot + job.seconds), held.rates)
        return keep < new

    def _first_jobs(self, pool: str, held: Mapping[str, Held], now: float) -> dict[str, Job]:
        """The first job each machine of ``pool`` gets if all are kept: the jobs ahead given
        out as the autoscaler gives them (an idle machine, the most paid time left first, else
        a new one, which serves later jobs too)."""
        machines = [
            Planned(i, h.pool, h.created, h.busy_until, h.billing, h.rates) for i, h in held.items()
        ]
        like = machines[0]
        ahead = self._ahead.get(pool, [])
        first: dict[str, Job] = {}
        for job in ahead[bisect.bisect_right(self._arrivals.get(pool, []), now - self._start) :]:
            if len(first) == len(held):
                break
            begins = on_tick(self._start + job.at, self._start, self._tick)
            if begins <= now:
                continue
            free = [m for m in machines if m.busy_until <= begins]
            if not free:
                busy = begins + self._boot + job.seconds
                machines.append(
                    Planned(f"ahead-{len(machines)}", pool, begins, busy, like.billing, like.rates)
                )
                continue
            chosen = max(free, key=lambda m: (paid_until(m, begins), m.id))
            chosen.busy_until = begins + job.seconds
            if chosen.id in held:
                first.setdefault(chosen.id, job)
        return first


def period_of(billing: Billing, rates: Rates) -> tuple[float, bool] | None:
    """How ``billing`` bills, asked of the rule: the seconds paid at creation, and whether each
    started period of that length is billed whole (True: Hetzner's hour) or the time after
    the first is billed by the second (False: EC2's minute, then seconds). None: neither."""
    start = utc(0)
    first = (billing.paid_until(start, start, lambda: rates) - start).total_seconds()
    one = billing.charged(start, utc(first), rates)
    more = billing.charged(start, utc(first + 1), rates)
    if more == 2 * one:
        return first, True
    if math.isclose(more * Decimal(str(first)), one * Decimal(str(first + 1))):
        return first, False
    return None


def lower_bound(
    stream: Iterable[Job], billing: Billing, rates: Rates, tick: float, boot: float, until: float
) -> Decimal | None:
    """What no policy pays less than for ``stream`` (each job served at the first tick after
    it arrives) until ``until`` seconds into the run (when the run ends and bills what is
    left), on machines of one price and rule; None for a rule of neither shape ``period_of``
    knows. See the module."""
    shape = period_of(billing, rates)
    if shape is None:
        return None
    period, whole = shape
    by_pool: dict[str, list[tuple[float, float]]] = {}
    for job in stream:
        begins = on_tick(job.at, 0.0, tick)
        if begins < until:
            by_pool.setdefault(job.pool, []).append((begins, job.seconds))
    origin = utc(0)
    if whole:
        periods = sum(_periods(jobs, period, boot, until) for jobs in by_pool.values())
        return periods * billing.charged(origin, utc(period), rates)
    seconds = sum(_paid_seconds(jobs, boot, until) for jobs in by_pool.values())
    per_period = billing.charged(origin, utc(period), rates)
    return per_period * Decimal(str(seconds)) / Decimal(str(period))


def _periods(jobs: list[tuple[float, float]], period: float, boot: float, until: float) -> int:
    """The fewest ``period``-long spans covering, at every moment before ``until``, the jobs
    that surely run then (from their tick plus ``boot`` to their tick plus their length)."""
    runs = [(begins + boot, min(begins + seconds, until)) for begins, seconds in jobs]
    runs = [(s, e) for s, e in runs if s < e]
    moments = [s for s, _ in runs]
    heapq.heapify(moments)
    open_until: list[float] = []
    count = 0
    while moments:
        now = heapq.heappop(moments)
        open_until = [end for end in open_until if end > now]
        need = sum(1 for s, e in runs if s <= now < e)
        while len(open_until) < need:
            open_until.append(now + period)
            heapq.heappush(moments, now + period)
            count += 1
    return count


def _paid_seconds(jobs: list[tuple[float, float]], boot: float, until: float) -> float:
    """Each job's machine time before ``until``, the least it can be: kept, the idle time
    since the latest an earlier job of the pool can have ended, then its run; made (for it or
    ahead of it), a boot, then its run."""
    total = 0.0
    for begins, seconds in jobs:
        left = until - begins
        idle = boot
        for other, other_seconds in jobs:
            if other + other_seconds <= begins:
                idle = min(idle, max(0.0, begins - (other + boot + other_seconds)))
        total += min(idle + min(seconds, left), boot + seconds, left)
    return total
