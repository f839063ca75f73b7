"""How a cloud bills a machine's time: the shape every cloud's billing rule has.

Each cloud states its rule once, in its own package (``machines.runtime.clouds.<kind>.billing``),
with the source it follows; the runtime asks it for a machine's ``paid_until`` (the end of
the time the cloud bills whatever happens now) and what a machine's time has cost
(``charged``), and never knows the rule itself. Times are aware datetimes in UTC.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal


@dataclass(frozen=True)
class Rate:
    """What one machine of a type in a location costs: per hour, and per month (a cap
    where the cloud has one), net, in the price list's currency."""

    hourly: Decimal
    monthly: Decimal


RateOf = Callable[[], Rate | None]
"""The machine's rate, asked only when the rule needs it (None: the price is unknown)."""


class Billing(ABC):
    """One cloud's billing rule for a machine's time, from creation until deletion."""

    source: str
    """Where the rule is stated (the cloud's own pricing pages)."""

    @abstractmethod
    def paid_until(self, created: datetime, now: datetime, rate: RateOf) -> datetime:
        """The end of the time billed for a machine made at ``created`` if it is deleted at
        ``now``: deleting it any time before then costs nothing more."""

    @abstractmethod
    def charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        """What a machine made at ``created`` and deleted at ``ended`` is billed."""


def utc(seconds: float) -> datetime:
    """A clock's seconds (``machines.runtime.clock``) as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, UTC)


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive one is taken as UTC already (as boto3 and hcloud parse
    the clouds' times aware, this only guards a double that drops the offset)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
