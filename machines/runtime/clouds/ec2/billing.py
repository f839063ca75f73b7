"""EC2's billing rule for an instance, written once.

Source: AWS's EC2 pricing (https://aws.amazon.com/ec2/pricing/on-demand/, "Per Second
Billing"): Linux on-demand and spot instances (the only kind this runtime launches) are
billed per second from launch (``LaunchTime``) until terminated, with a minimum of 60
seconds. So an instance is paid until 60 seconds after its launch, and after that only
until now: keeping an idle one is never free.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from machines.runtime.billing import Billing, Rate, RateOf, as_utc

MINIMUM = timedelta(seconds=60)
"""The least an instance is billed for."""


class Ec2Billing(Billing):
    """Per second after a first minute."""

    source = "https://aws.amazon.com/ec2/pricing/on-demand/ (Per Second Billing)"

    def paid_until(self, created: datetime, now: datetime, rate: RateOf) -> datetime:
        return max(as_utc(created) + MINIMUM, as_utc(now))

    def charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        seconds = max(MINIMUM, as_utc(ended) - as_utc(created)).total_seconds()
        return Decimal(str(seconds)) * rate.hourly / Decimal(3600)


BILLING = Ec2Billing()
