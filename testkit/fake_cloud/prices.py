"""The fake cloud's price list and billing rule: fixed prices in its own currency (``XFC``),
billed by the second; a location without a price is unknown, saying so."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from machines.runtime.billing import Billing, Rate, RateOf
from machines.runtime.models import Market
from machines.runtime.prices import PriceList

CURRENCY = "XFC"
MONTHLY = {("f1.small", "here"): Decimal("7.30"), ("f1.arm", "here"): Decimal("3.65")}
"""A month of each type where it has a price: ``there`` has none."""


class FakePrices(PriceList):
    currency = CURRENCY

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        return MONTHLY.get((machine_type, location))

    @property
    def unknown(self) -> str:
        return "the fake cloud has no price there"


class BySecond(Billing):
    """Each second of a machine, at its hourly rate."""

    source = "testkit.fake_cloud.prices"

    def paid_until(self, created: datetime, now: datetime, rate: RateOf) -> datetime:
        return now

    def charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        seconds = Decimal(str(max((ended - created).total_seconds(), 0)))
        return rate.hourly * seconds / 3600


BILLING = BySecond()
