"""Hetzner Cloud's billing rule for a server, written once.

Source: Hetzner's billing FAQ and price list (https://docs.hetzner.com/cloud/billing/faq/,
https://www.hetzner.com/cloud/): a server is billed for every started hour from its
creation until its deletion, whatever its power state, and no more in a month than the
monthly price of its type in its location (``GET /pricing``: ``price_hourly`` and
``price_monthly``). So a server is paid until the end of its current started hour (hours
counted from its ``created``), and, once the hours started in this calendar month (UTC) have
reached the month's price, until the month's end.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from decimal import Decimal

from machines.runtime.billing import Billing, Rate, RateOf, as_utc

HOUR = timedelta(hours=1)

CAP_FLOOR = 24
"""Started hours in a month below which the monthly cap is never reached: a monthly price
below a day's hourly ones would be no cap. Below it the price list is not asked."""


def month_start(moment: datetime) -> datetime:
    """The first instant of ``moment``'s calendar month (UTC)."""
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month(moment: datetime) -> datetime:
    """The first instant of the calendar month after ``moment``'s (UTC)."""
    start = month_start(moment)
    if start.month == 12:
        return start.replace(year=start.year + 1, month=1)
    return start.replace(month=start.month + 1)


def _hours_before(created: datetime, moment: datetime) -> int:
    """How many hours counted from ``created`` start before ``moment`` (0 if none)."""
    return max(0, math.ceil((moment - created) / HOUR))


class HetznerBilling(Billing):
    """Per started hour since creation, up to the monthly price per calendar month."""

    source = (
        "https://docs.hetzner.com/cloud/billing/faq/ and GET /pricing (price_hourly, price_monthly)"
    )

    def paid_until(self, created: datetime, now: datetime, rate: RateOf) -> datetime:
        created, now = as_utc(created), as_utc(now)
        started = max(0, math.floor((now - created) / HOUR)) + 1
        hour_end = created + started * HOUR
        this_month = started - _hours_before(created, month_start(now))
        if this_month >= CAP_FLOOR:
            found = rate()
            if found is not None and this_month * found.hourly >= found.monthly:
                return max(hour_end, next_month(now))
        return hour_end

    def charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        """Each calendar month's started hours at the hourly price, capped at the monthly."""
        created, ended = as_utc(created), as_utc(ended)
        hours = max(1, math.ceil((ended - created) / HOUR))
        last_start = created + (hours - 1) * HOUR
        total = Decimal(0)
        month = month_start(created)
        while month <= last_start:
            after = next_month(month)
            count = min(hours, _hours_before(created, after)) - _hours_before(created, month)
            total += min(count * rate.hourly, rate.monthly)
            month = after
        return total


BILLING = HetznerBilling()
