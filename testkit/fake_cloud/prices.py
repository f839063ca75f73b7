"""The fake cloud's price list and billing rule: fixed prices in its own currency (``XFC``),
a month's and an hour's, billed by the second; a location without a price is unknown,
saying so."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from machines.runtime.billing import Billing, Rate, RateOf
from machines.runtime.models import Market
from machines.runtime.prices import PriceList

CURRENCY = "XFC"
MONTHLY = {("f1.small", "here"): Decimal("7.30"), ("f1.arm", "here"): Decimal("3.65")}
"""A month of each type where it has a price: ``there`` has none."""

HOURLY = {("f1.small", "here"): Decimal("0.010"), ("f1.arm", "here"): Decimal("0.005")}
"""An hour of each type where it has a price, as the list states it."""


class FakePrices(PriceList):
    currency = CURRENCY

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        return MONTHLY.get((machine_type, location))

    def hourly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        return HOURLY.get((machine_type, location))

    @property
    def unknown(self) -> str:
        return "the fake cloud has no price there"


class BySecond(Billing):
    """Each second of a machine, at its hourly rate."""

    source = "testkit.fake_cloud.prices"

    def paid_until(self, created: datetime, now: datetime, rates: RateOf) -> datetime:
        return now

    def item_charged(self, created: datetime, ended: datetime, rate: Rate) -> Decimal:
        seconds = Decimal(str(max((ended - created).total_seconds(), 0)))
        return rate.per_hour(created) * seconds / 3600


BILLING = BySecond()
