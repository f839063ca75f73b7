"""How a cloud bills a machine's time: the shape every cloud's billing rule has.

Each cloud states its rule once, in its own package (``machines.runtime.clouds.<kind>.billing``),
with the source it follows; the runtime asks it for a machine's ``paid_until`` (the end of
the time the cloud bills whatever happens now) and what a machine's time has cost
(``charged``), and never knows the rule itself. Times are aware datetimes in UTC.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Rate:
    """What one billed item of a machine costs (the machine itself, or what its options add
    apart: Hetzner's primary IPv4, EC2's root volume), net, in the price list's currency, as
    the cloud's list states it: per hour, and per month (a cap where the cloud has one).
    ``hourly`` is None where the list states a monthly price only, billed as a share of it
    by the time in each calendar month (EC2's EBS volumes: per GB-month, by the second)."""

    hourly: Decimal | None
    monthly: Decimal

    def per_hour(self, moment: datetime) -> Decimal:
        """What an hour costs around ``moment``: the listed hourly price, or the share of
        the monthly one an hour is in ``moment``'s calendar month (UTC)."""
        if self.hourly is not None:
            return self.hourly
        start = month_start(as_utc(moment))
        return self.monthly / Decimal((next_month(start) - start) // HOUR)


Rates = Sequence[Rate]
"""A machine's billed items: the machine first, then each item its options add."""

RateOf = Callable[[], Rates | None]
"""The machine's rates, asked only when the rule needs them (None: a price is unknown)."""


class Billing(ABC):
    """One cloud's billing rule for a machine's time, from creation until deletion."""

    source: str
    """Where the rule is stated (the cloud's own pricing pages)."""

    @abstractmethod
    def paid_until(self, created: datetime, now: datetime, rates: RateOf) -> datetime:
        """The end of the time billed for a machine made at ``created`` if it is deleted at
        ``now``: deleting it any time before then costs nothing more."""

    def charged(self, created: datetime, ended: datetime, rates: Rates) -> Decimal:
        """What a machine made at ``created`` and deleted at ``ended`` is billed: each of
        its items (``rates``) by the rule."""
        return sum((self.item_charged(created, ended, rate) for rate in rates), Decimal(0))

    @abstractmethod
    def item_charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        """What one billed item of a machine made at ``created`` and deleted at ``ended``
        is billed."""


def utc(seconds: float) -> datetime:
    """A clock's seconds (``machines.runtime.clock``) as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, UTC)


def month_start(moment: datetime) -> datetime:
    """The first instant of ``moment``'s calendar month (in ``moment``'s zone: UTC here)."""
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month(moment: datetime) -> datetime:
    """The first instant of the calendar month after ``moment``'s."""
    start = month_start(moment)
    if start.month == 12:
        return start.replace(year=start.year + 1, month=1)
    return start.replace(month=start.month + 1)


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive one is taken as UTC already (as boto3 and hcloud parse
    the clouds' times aware, this only guards a double that drops the offset)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
