"""Hetzner's price list: ``GET /pricing``, per server type and location, net monthly.

The request is the provider's (its client, retries, deadline and budget meter); the answer
is checked against the fields read here before it is believed, so one of another shape is
a ``CloudError`` and the prices are unknown, saying why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal

from hcloud import Client
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from machines.runtime.clouds.hetzner.answers import NotTheApi
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.errors import MachinesError
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.prices import PriceList, brief


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Amount(_Answer):
    net: Decimal


class LocationPrice(_Answer):
    location: str
    monthly: Amount = Field(alias="price_monthly")
    hourly: Amount | None = Field(default=None, alias="price_hourly")


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
    """Hetzner's price list, read once (``read``: the provider's call) when first asked."""

    def __init__(self, read: Callable[[], Pricing]) -> None:
        self._read = read
        self._prices: dict[tuple[str, str], Decimal] | None = None
        self._hourly: dict[tuple[str, str], Decimal] = {}
        self._ipv4: dict[str, Decimal] = {}
        self._why = ""
        self._lock = threading.Lock()

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """Hetzner sells on-demand only: a pool of another market is refused before this."""
        return self._load().get((machine_type, location)) if market == Market.ON_DEMAND else None

    def hourly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """Hetzner's own ``price_hourly`` (what a started hour costs), else the monthly one
        over the hours of a month."""
        self._load()
        stated = self._hourly.get((machine_type, location))
        if stated is not None and market == Market.ON_DEMAND:
            return stated
        return super().hourly(machine_type, location, market)

    def options(self, pool: Pool, location: str) -> Decimal | None:
        """A primary IPv4 is billed apart from the server, per location (``primary_ips``):
        a pool with ``ipv4`` on pays it, an IPv6-only or private pool does not."""
        if not pool.options_of(HetznerOptions).ipv4:
            return Decimal(0)
        self._load()
        found = self._ipv4.get(location)
        if found is None and not self._why:
            self._why = f"Hetzner's price list has no primary IPv4 price in {location}"
        return found

    def saving(self, pool: Pool, location: str) -> Decimal:
        if pool.options_of(HetznerOptions).ipv4:
            return Decimal(0)
        self._load()
        return self._ipv4.get(location, Decimal(0))

    @property
    def unknown(self) -> str:
        self._load()
        return self._why

    def _load(self) -> dict[tuple[str, str], Decimal]:
        with self._lock:  # one read, whichever thread asks first; the others wait for it
            if self._prices is None:
                self._prices = self._loaded()
            return self._prices

    def _loaded(self) -> dict[tuple[str, str], Decimal]:
        try:
            pricing = self._read()
        except MachinesError as error:
            self._why = f"Hetzner's price list could not be read: {brief(error)}"
            return {}
        self.currency = pricing.currency or "EUR"
        self._hourly = {
            (kind.name, price.location): price.hourly.net
            for kind in pricing.server_types
            for price in kind.prices
            if price.hourly is not None
        }
        self._ipv4 = {
            price.location: price.monthly.net
            for ip in pricing.primary_ips
            if ip.type == "ipv4"
            for price in ip.prices
        }
        return {
            (kind.name, price.location): price.monthly.net
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
