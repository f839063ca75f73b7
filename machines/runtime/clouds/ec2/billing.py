"""EC2's billing rule for an instance and its root volume, written once.

Source: AWS's EC2 pricing (https://aws.amazon.com/ec2/pricing/on-demand/, "Per Second
Billing"): Linux on-demand and spot instances (the only kind this runtime launches) are
billed per second from launch (``LaunchTime``) until terminated, with a minimum of 60
seconds. So an instance is paid until 60 seconds after its launch, and after that only
until now: keeping an idle one is never free. Its EBS root volume is priced per GB-month and
billed by the second too, each second a share of the month it falls in
(https://aws.amazon.com/ebs/pricing/: "$0.10 per GB-month * 2000 GB * 43,200 seconds /
(86,400 seconds/day * 30 day-month)"), not of 730 hours.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from machines.runtime.billing import Billing, Rate, RateOf, as_utc, next_month

MINIMUM = timedelta(seconds=60)
"""The least an instance is billed for."""

SECONDS_PER_HOUR = Decimal(3600)


class Ec2Billing(Billing):
    """Per second after a first minute."""

    source = (
        "https://aws.amazon.com/ec2/pricing/on-demand/ (Per Second Billing), "
        "https://aws.amazon.com/ebs/pricing/ (per GB-month, by the second)"
    )

    def paid_until(self, created: datetime, now: datetime, rates: RateOf) -> datetime:
        return max(as_utc(created) + MINIMUM, as_utc(now))

    def item_charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        """Each second at the hourly price, or at its month's share of the monthly one."""
        start = as_utc(created)
        end = max(start + MINIMUM, as_utc(ended))
        if rate.hourly is not None:
            return _seconds(end - start) * rate.hourly / SECONDS_PER_HOUR
        total = Decimal(0)
        while start < end:
            until = min(end, next_month(start))
            total += _seconds(until - start) * rate.per_hour(start) / SECONDS_PER_HOUR
            start = until
        return total


def _seconds(span: timedelta) -> Decimal:
    return Decimal(str(span.total_seconds()))


BILLING = Ec2Billing()
