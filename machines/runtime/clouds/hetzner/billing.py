"""Hetzner Cloud's billing rule for a server, written once.

Source: Hetzner's billing FAQ and price list (https://docs.hetzner.com/cloud/billing/faq/,
https://www.hetzner.com/cloud/): a server is billed for every started hour from its
creation until its deletion, whatever its power state, and no more in a month than the
monthly price of its type in its location (``GET /pricing``: ``price_hourly`` and
``price_monthly``, two figures of their own: the cap is reached after about 624 hours, not
730). Its primary IPv4 is billed the same way at its own two figures (``primary_ips``). So a
server is paid until the end of its current started hour (hours counted from its
``created``), and, once the hours started in this calendar month (UTC) have reached the
month's price of every item billed with it, until the month's end.

Since 2026-06-15 a server keeps the price it was ordered (or last rescaled) at, and the API
lists only today's: a server older than a price change is billed at a price ``/pricing``
no longer shows, which the runtime cannot know.
"""

from __future__ import annotations

import math
from datetime import datetime
from decimal import Decimal

from machines.runtime.billing import (
    HOUR,
    Billing,
    Rate,
    RateOf,
    as_utc,
    month_start,
    next_month,
)

CAP_FLOOR = 24
"""Started hours in a month below which the monthly cap is never reached: a monthly price
below a day's hourly ones would be no cap. Below it the price list is not asked."""


def _hours_before(created: datetime, moment: datetime) -> int:
    """How many hours counted from ``created`` start before ``moment`` (0 if none)."""
    return max(0, math.ceil((moment - created) / HOUR))


class HetznerBilling(Billing):
    """Per started hour since creation, up to the monthly price per calendar month."""

    source = (
        "https://docs.hetzner.com/cloud/billing/faq/ and GET /pricing (price_hourly, price_monthly)"
    )

    def paid_until(self, created: datetime, now: datetime, rates: RateOf) -> datetime:
        created, now = as_utc(created), as_utc(now)
        started = max(0, math.floor((now - created) / HOUR)) + 1
        hour_end = created + started * HOUR
        this_month = started - _hours_before(created, month_start(now))
        if this_month >= CAP_FLOOR:
            found = rates()
            if found and all(this_month * r.per_hour(now) >= r.monthly for r in found):
                return max(hour_end, next_month(now))
        return hour_end

    def item_charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        """Each calendar month's started hours at the hourly price, capped at the monthly."""
        created, ended = as_utc(created), as_utc(ended)
        hours = max(1, math.ceil((ended - created) / HOUR))
        last_start = created + (hours - 1) * HOUR
        total = Decimal(0)
        month = month_start(created)
        while month <= last_start:
            after = next_month(month)
            count = min(hours, _hours_before(created, after)) - _hours_before(created, month)
            total += min(count * rate.per_hour(month), rate.monthly)
            month = after
        return total


BILLING = HetznerBilling()
