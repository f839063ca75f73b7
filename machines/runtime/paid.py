"""Paid time: which idle machines to let go first, and how long each is free to keep.

An autoscaler that deletes an idle machine as soon as it is idle throws away what the cloud
has already billed (on Hetzner, the rest of a started hour), and pays again for the next
machine the next job needs. ``Provider.keep_advice(idle)`` answers, for the idle machines
the autoscaler names, an ``Advice`` each: until when the machine is paid, how long it can
still be kept at no extra cost, and when to delete it so the delete lands before the next
billed period starts (``margin`` ahead). The autoscaler hands a new job an idle machine
first, deletes those whose ``release_at`` has come, and never needs to know how the cloud
bills: the rule is each cloud's (``machines.runtime.billing``).

It can act only when it looks: an autoscaler that looks every ``tick`` seconds says so, and
each ``release_at`` is the last of its looks before the paid time ends (less the margin).
Without it the advice is for one that looks at least every ``margin`` seconds; one that
looks less often than that can miss the moment between ``release_at`` and the paid time's
end, and then the cloud bills the next period already (paid again, the machine is kept
again, a period at a time: on Hetzner, looking every 7 minutes, 1.3 to 1.6 times the money
of telling the tick, BENCHMARKS.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from machines.runtime.billing import Billing, Rates
from machines.runtime.models import Machine, Status

DEFAULT_MARGIN = 120.0
"""Seconds before the paid time ends at which a kept machine is let go: room for a tick of
the autoscaler and the delete request to land before the next billed hour starts."""


@dataclass(frozen=True)
class Advice:
    """One idle machine: until when it is paid, how many seconds it can still be kept at no
    extra cost, and when to delete it (``paid_until`` less the margin, at the last of the
    autoscaler's looks before then when it said how often it looks). ``paid_until`` is None
    when the cloud did not say when the machine was made: then it goes at once."""

    machine: Machine
    paid_until: datetime | None
    keep_for: float
    release_at: datetime

    @property
    def release(self) -> bool:
        """Delete it now: keeping it longer would cost (or its paid time is unknown)."""
        return self.keep_for <= 0


def advise(
    idle: Iterable[Machine],
    now: datetime,
    paid_until: Callable[[Machine, datetime], datetime | None],
    margin: float = DEFAULT_MARGIN,
    tick: float = 0.0,
) -> list[Advice]:
    """An ``Advice`` per idle machine, the one to let go first first (``in_order``).
    ``tick``: seconds between the autoscaler's looks (it looks now and every ``tick`` seconds
    after; 0: at any moment). A machine being deleted is left out, and so is one the stack
    keeps (``managed_by``): ``delete`` refuses those anyway. A machine the cloud said will go
    (``Machine.under_notice``) is let go now, whatever its paid time: a job started on it
    may not finish, and its replacement is better made now than after."""
    if margin < 0:
        raise ValueError(f"margin is seconds before the paid time ends, not {margin}")
    if not tick >= 0:
        raise ValueError(f"tick is the seconds between the autoscaler's looks, not {tick}")
    if isinstance(idle, str | Machine):
        raise TypeError(
            "keep_advice takes the idle machines (a list of Machine, as machines(pool) "
            f"answers), not {idle!r}"
        )
    advice = []
    for machine in idle:
        if not isinstance(machine, Machine):
            raise TypeError(f"keep_advice takes Machine values, not {machine!r}")
        if machine.status == Status.DELETING or machine.managed_by:
            continue
        until = None if machine.status == Status.FAILED else paid_until(machine, now)
        release_at = (
            now if until is None else last_look(now, until - timedelta(seconds=margin), tick)
        )
        if machine.under_notice:
            release_at = now
        keep_for = (release_at - now).total_seconds()
        advice.append(Advice(machine, until, keep_for, release_at))
    return in_order(advice)


def in_order(advice: Iterable[Advice]) -> list[Advice]:
    """``advice`` in the order to let machines go: one under the cloud's notice first (it is
    going anyway), then the soonest ``release_at``, then by id (a new job takes the last)."""
    return sorted(advice, key=lambda a: (not a.machine.under_notice, a.release_at, a.machine.id))


def last_look(now: datetime, latest: datetime, tick: float) -> datetime:
    """The last moment at or before ``latest`` that an autoscaler looking now and every
    ``tick`` seconds after (0: at any moment) looks; now when ``latest`` has come."""
    if latest <= now:
        return now
    if tick == 0:
        return latest
    looks = math.floor((latest - now).total_seconds() / tick)
    return now + timedelta(seconds=looks * tick)


def committed(
    machines: Iterable[Machine],
    now: datetime,
    billing: Billing,
    rate_of: Callable[[Machine], Rates | None],
    paid_until: Callable[[Machine, datetime], datetime | None],
) -> Decimal | None:
    """The money the cloud bills for these machines whatever happens now: each one's time
    from creation to its ``paid_until`` (a machine being deleted too: its time was billed),
    each of its billed items (``rate_of``: the machine, what its options add) by the rule;
    None when a creation time or a price is unknown."""
    total = Decimal(0)
    for machine in machines:
        rate = rate_of(machine)
        until = paid_until(machine, now)
        if rate is None or until is None or machine.created is None:
            return None
        total += billing.charged(machine.created, until, rate)
    return total
