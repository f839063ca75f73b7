"""What machines cost per month, from the cloud's own price list; never a table kept here.

Hetzner publishes its prices (``GET /pricing``: ``server_types[].prices[]`` per location,
net and gross, monthly and hourly). AWS publishes EC2's on-demand prices through its Price
List Query API (``pricing:GetProducts``), reached where the credentials and the network
allow, and the current spot price of a type in a zone through EC2's own
``DescribeSpotPriceHistory`` (the endpoint the runtime uses); where one cannot be reached a
price is unknown and says why, rather than a number that goes stale. Prices are net
(without VAT), in the currency the cloud states.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import requests

from machines.clouds.ec2.settings import Ec2Settings
from machines.clouds.hetzner.settings import HetznerSettings
from machines.errors import MachinesError
from machines.models import Market
from machines.secrets import mask

HOURS_PER_MONTH = Decimal(730)
"""AWS's own month for monthly figures from hourly prices (365 * 24 / 12)."""

PRICING_REGION = "us-east-1"
"""A region serving the AWS Price List Query API (it serves every region's prices)."""

_ZONE = re.compile(r"^([a-z]{2}(?:-[a-z]+)+-\d+)[a-z]$")


Priced = tuple[str, str, Market]
"""A machine as priced: its type, location and market."""


class PriceList:
    """Monthly prices per (machine type, location, market), fetched once, or why unknown."""

    currency: str = ""

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """The net monthly price of one machine, or None when unknown (see ``unknown``)."""
        raise NotImplementedError

    @property
    def unknown(self) -> str:
        """Why prices are unknown (empty when the price list was read)."""
        return ""

    def total(self, machines: Iterable[Priced]) -> Decimal | None:
        """The monthly price of these machines; None if any price is unknown."""
        total = Decimal(0)
        for machine_type, location, market in machines:
            price = self.monthly(machine_type, location, market)
            if price is None:
                return None
            total += price
        return total


class HetznerPrices(PriceList):
    """Hetzner's price list, ``GET /pricing``, read with the provider's token and endpoint."""

    def __init__(self, settings: HetznerSettings) -> None:
        self._settings = settings
        self._prices: dict[tuple[str, str], Decimal] | None = None
        self._why = ""

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """Hetzner sells on-demand only: a pool of another market is refused before this."""
        return self._load().get((machine_type, location)) if market == Market.ON_DEMAND else None

    @property
    def unknown(self) -> str:
        self._load()
        return self._why

    def _load(self) -> dict[tuple[str, str], Decimal]:
        if self._prices is None:
            self._prices = {}
            try:
                self._prices = self._read()
            except (requests.RequestException, ValueError, KeyError, TypeError) as error:
                self._why = f"Hetzner's price list could not be read: {_brief(error)}"
        return self._prices

    def _read(self) -> dict[tuple[str, str], Decimal]:
        token = self._settings.token.get_secret_value()
        answer = requests.get(
            f"{self._settings.endpoint.rstrip('/')}/pricing",
            headers={"Authorization": f"Bearer {token}"},
            timeout=self._settings.timeouts.request,
        )
        if answer.status_code != 200:
            raise ValueError(f"GET /pricing answered {answer.status_code}")
        pricing = answer.json()["pricing"]
        self.currency = str(pricing.get("currency") or "EUR")
        return {
            (str(kind["name"]), str(price["location"])): Decimal(str(price["price_monthly"]["net"]))
            for kind in pricing["server_types"]
            for price in kind["prices"]
        }


class Ec2Prices(PriceList):
    """EC2 Linux prices: on-demand from the AWS Price List Query API, per type and region;
    spot from EC2's ``DescribeSpotPriceHistory``, the current price per type and zone.

    On-demand: a location is a zone (``eu-central-1a``) or a region; its region's price is
    used; one ``GetProducts`` request per (type, region), asked once. Spot: one
    ``DescribeSpotPriceHistory`` request per (type, zone), asked once, at the endpoint and
    with the credentials the runtime has; the newest price of ``Linux/UNIX``.
    """

    currency = "USD"

    def __init__(self, settings: Ec2Settings, environ: Mapping[str, str]) -> None:
        self._settings = settings
        self._environ = environ
        self._prices: dict[tuple[str, str], Decimal | None] = {}
        self._spot: dict[tuple[str, str], Decimal | None] = {}
        self._why = ""
        self._spot_why: list[str] = []
        self._client: Any = None
        self._ec2: Any = None

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        if market == Market.SPOT:
            spot = (machine_type, location)
            if spot not in self._spot:
                self._spot[spot] = self._ask_spot(*spot)
            return self._spot[spot]
        key = (machine_type, region_of(location))
        if key not in self._prices:
            self._prices[key] = self._ask(*key)
        return self._prices[key]

    @property
    def unknown(self) -> str:
        return "; ".join(why for why in (self._why, *self._spot_why) if why)

    def _ask_spot(self, machine_type: str, zone: str) -> Decimal | None:
        try:
            hourly = self._spot_hourly(machine_type, zone)
        except Exception as error:  # any failure of this read-only call: unknown, with why
            self._spot_why.append(
                f"the spot price of {machine_type} in {zone} could not be read from EC2's "
                f"DescribeSpotPriceHistory: {_brief(error)}"
            )
            return None
        if hourly is None:
            self._spot_why.append(
                f"EC2's DescribeSpotPriceHistory has no Linux/UNIX spot price of "
                f"{machine_type} in {zone}"
            )
            return None
        return hourly * HOURS_PER_MONTH

    def _spot_hourly(self, machine_type: str, zone: str) -> Decimal | None:
        """The newest spot price in effect now (AWS answers, for a start time of now, the
        price each zone has had since its last change)."""
        from machines.clouds.ec2.answers import SpotPrices  # noqa: PLC0415 (boto3 on demand)

        if self._ec2 is None:
            from machines.clouds.ec2.client import client  # noqa: PLC0415

            self._ec2 = client(self._settings, self._environ)
        answer = SpotPrices.model_validate(
            self._ec2.describe_spot_price_history(
                InstanceTypes=[machine_type],
                ProductDescriptions=["Linux/UNIX"],
                Filters=[{"Name": "availability-zone", "Values": [zone]}],
                StartTime=datetime.now(UTC),
                MaxResults=10,
            )
        )
        prices = [p for p in answer.prices if p.type == machine_type and p.zone == zone]
        if not prices:
            return None
        newest = max(prices, key=lambda p: p.at)
        try:
            return Decimal(newest.price)
        except InvalidOperation:
            raise ValueError(f"spot price {newest.price!r} is not a number") from None

    def _ask(self, machine_type: str, region: str) -> Decimal | None:
        if self._why:
            return None
        try:
            hourly = self._hourly(machine_type, region)
        except Exception as error:  # any failure of an optional API: unknown
            self._why = f"AWS's price list could not be reached: {_brief(error)}"
            return None
        return None if hourly is None else hourly * HOURS_PER_MONTH

    def _hourly(self, machine_type: str, region: str) -> Decimal | None:
        filters = {
            "instanceType": machine_type,
            "regionCode": region,
            "operatingSystem": "Linux",
            "tenancy": "Shared",
            "preInstalledSw": "NA",
            "capacitystatus": "Used",
        }
        answer = self._pricing().get_products(
            ServiceCode="AmazonEC2",
            Filters=[{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()],
            MaxResults=10,
        )
        for item in answer.get("PriceList", []):
            product = json.loads(item) if isinstance(item, str) else item
            for term in product.get("terms", {}).get("OnDemand", {}).values():
                for dimension in term.get("priceDimensions", {}).values():
                    usd = dimension.get("pricePerUnit", {}).get("USD")
                    if usd is not None and dimension.get("unit") == "Hrs":
                        return Decimal(str(usd))
        return None

    def _pricing(self) -> Any:
        if self._client is None:
            import boto3  # noqa: PLC0415 (boto3 loads only when EC2 prices are asked for)
            from botocore.config import Config  # noqa: PLC0415

            timeout = self._settings.timeouts.request
            self._client = boto3.session.Session().client(
                "pricing",
                region_name=PRICING_REGION,
                config=Config(
                    connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1}
                ),
            )
        return self._client


class NoPrices(PriceList):
    """A price list that could not be made (settings missing): every price unknown."""

    def __init__(self, why: str) -> None:
        self._why = why

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        return None

    @property
    def unknown(self) -> str:
        return self._why


def price_list(kind: str, environ: Mapping[str, str] | None = None) -> PriceList:
    """The price list of a provider kind, configured as the runtime provider would be."""
    env = os.environ if environ is None else environ
    try:
        if kind == "hetzner":
            return HetznerPrices(HetznerSettings.from_env(env))
        if kind == "ec2":
            return Ec2Prices(Ec2Settings.from_env(env), env)
    except MachinesError as error:
        return NoPrices(f"prices unknown: {_brief(error)}")
    return NoPrices(f"prices unknown: no price list for provider {kind}")


def region_of(location: str) -> str:
    """The region of an EC2 zone (``eu-central-1a`` → ``eu-central-1``); a region as it is."""
    found = _ZONE.match(location)
    return found.group(1) if found else location


def money(amount: Decimal | None, currency: str) -> str:
    """``12.34 EUR``, or ``price unknown``."""
    if amount is None:
        return "price unknown"
    return f"{amount.quantize(Decimal('0.01'))} {currency}".strip()


def _brief(error: Exception) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return mask(text)[:200]
