"""Hetzner's price list: ``GET /pricing``, per server type and location, net, its two
figures: ``price_hourly`` (each started hour) and ``price_monthly`` (the month's cap).

The request is the provider's (its client, retries, deadline and budget meter); the answer
is checked against the fields read here before it is believed, so one of another shape is
a ``CloudError`` and the prices are unknown, saying why.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from decimal import Decimal

from hcloud import Client
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from machines.runtime.billing import Rate
from machines.runtime.clouds.hetzner.answers import NotTheApi
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.errors import MachinesError
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.prices import PriceList, brief

log = logging.getLogger(__name__)

PRICING = "read the price list"
"""What the provider's call reading ``GET /pricing`` is named in messages."""


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Amount(_Answer):
    net: Decimal


class LocationPrice(_Answer):
    location: str
    monthly: Amount = Field(alias="price_monthly")
    hourly: Amount = Field(alias="price_hourly")

    def rate(self) -> Rate:
        """The two figures as a billed item's ``Rate``."""
        return Rate(self.hourly.net, self.monthly.net)


class TypePrices(_Answer):
    name: str
    prices: list[LocationPrice]


class PrimaryIpPrices(_Answer):
    type: str
    prices: list[LocationPrice]


class Pricing(_Answer):
    """The fields of ``GET /pricing``'s ``pricing`` this package reads."""

    currency: str = "EUR"
    server_types: list[TypePrices]
    primary_ips: list[PrimaryIpPrices] = []


class PricingAnswer(_Answer):
    pricing: Pricing


def read_pricing(client: Client) -> Pricing:
    """One ``GET /pricing``; an answer of another shape is ``NotTheApi``."""
    answer = client.request("GET", "/pricing")
    try:
        return PricingAnswer.model_validate(answer).pricing
    except ValidationError as error:
        raise NotTheApi(f"a price list of another shape ({_first_problem(error)})") from None


class HetznerPrices(PriceList):
    """Hetzner's price list, read once (``read``: the provider's call) when first asked;
    a list that cannot be read says so in one line, logged once."""

    def __init__(self, read: Callable[[], Pricing]) -> None:
        self._read = read
        self._prices: dict[tuple[str, str], Rate] | None = None
        self._ipv4: dict[str, Rate] = {}
        self._why = ""
        self._failed = False
        self._lock = threading.Lock()

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """``price_monthly``, the month's cap. Hetzner sells on-demand only: a pool of
        another market is refused before this."""
        found = self._rate(machine_type, location, market)
        return None if found is None else found.monthly

    def hourly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """``price_hourly``: what each started hour costs, a figure of its own."""
        found = self._rate(machine_type, location, market)
        return None if found is None else found.hourly

    def option_rates(self, pool: Pool, location: str) -> tuple[Rate, ...] | None:
        """A primary IPv4 is billed apart from the server, per location (``primary_ips``),
        at its own hourly price up to its monthly one: a pool with ``ipv4`` on pays it, an
        IPv6-only or private pool does not."""
        if not pool.options_of(HetznerOptions).ipv4:
            return ()
        self._load()
        found = self._ipv4.get(location)
        if found is None:
            if not self._why:
                self._why = f"Hetzner's price list has no primary IPv4 price in {location}"
            return None
        return (found,)

    def saving(self, pool: Pool, location: str) -> Decimal:
        if pool.options_of(HetznerOptions).ipv4:
            return Decimal(0)
        self._load()
        found = self._ipv4.get(location)
        return Decimal(0) if found is None else found.monthly

    def _rate(self, machine_type: str, location: str, market: Market) -> Rate | None:
        prices = self._load()
        return prices.get((machine_type, location)) if market == Market.ON_DEMAND else None

    @property
    def unknown(self) -> str:
        self._load()
        return self._why

    @property
    def read_failed(self) -> bool:
        return self._failed

    def _load(self) -> dict[tuple[str, str], Rate]:
        with self._lock:  # one read, whichever thread asks first; the others wait for it
            if self._prices is None:
                self._prices = self._loaded()
            return self._prices

    def _loaded(self) -> dict[tuple[str, str], Rate]:
        try:
            pricing = self._read()
        except MachinesError as error:
            self._failed = True
            self._why = f"Hetzner's price list could not be read: {brief(error, 400)}"
            log.warning("%s", self._why)
            return {}
        self.currency = pricing.currency or "EUR"
        self._ipv4 = {
            price.location: price.rate()
            for ip in pricing.primary_ips
            if ip.type == "ipv4"
            for price in ip.prices
        }
        return {
            (kind.name, price.location): price.rate()
            for kind in pricing.server_types
            for price in kind.prices
        }


def _first_problem(error: ValidationError) -> str:
    """``pricing.server_types: Field required``: where the answer differs, never its values."""
    problems = error.errors()
    if not problems:
        return "unreadable"
    where = ".".join(str(part) for part in problems[0]["loc"]) or "the answer"
    return f"{where}: {problems[0]['msg']}"
