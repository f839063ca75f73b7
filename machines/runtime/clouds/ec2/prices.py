"""EC2's prices: on-demand from AWS's Price List Query API, spot from EC2 itself.

On-demand Linux prices come from ``pricing:GetProducts`` (the Price List Query API, served
in ``client.PRICING_REGION`` for every region; at ``AWS_ENDPOINT_URL`` when that is set, as
boto3 does for every service), reached where the credentials and the network allow. A spot price is
the newest of ``DescribeSpotPriceHistory`` for the type in the zone, at the endpoint the
runtime uses. Every request is the provider's call (``Ec2Provider._call``: its retries, its
deadline, its telemetry) and every answer is checked against the fields read here, so an
answer of another shape leaves the price unknown, saying why.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from machines.runtime.clouds.ec2.answers import SpotPrices
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.errors import MachinesError
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.prices import HOURS_PER_MONTH, PriceList, brief

T = TypeVar("T")

_ZONE = re.compile(r"^([a-z]{2}(?:-[a-z]+)+-\d+)[a-z]$")


class Call(Protocol):
    """The provider's call: ``fn`` with retries within the deadline (the call's, or
    ``deadline`` seconds), its failures turned into ``CloudError``; ``where`` names the
    service and endpoint in its messages."""

    def __call__(
        self, operation: str, fn: Callable[[], T], *, where: str = "", deadline: float = 0.0
    ) -> T: ...


def region_of(location: str) -> str:
    """The region of an EC2 zone (``eu-central-1a`` → ``eu-central-1``); a region as it is."""
    found = _ZONE.match(location)
    return found.group(1) if found else location


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class Dimension(_Answer):
    unit: str = ""
    per_unit: dict[str, Decimal] = Field(default={}, alias="pricePerUnit")


class Term(_Answer):
    dimensions: dict[str, Dimension] = Field(default={}, alias="priceDimensions")


class Terms(_Answer):
    on_demand: dict[str, Term] = Field(default={}, alias="OnDemand")


class Product(_Answer):
    terms: Terms = Terms()

    def hourly_usd(self) -> Decimal | None:
        """The on-demand price per hour in USD, if the product states one."""
        return self.usd_per("Hrs")

    def usd_per(self, unit: str) -> Decimal | None:
        """The on-demand price in USD per ``unit`` (``Hrs``, ``GB-Mo``), if stated."""
        for term in self.terms.on_demand.values():
            for dimension in term.dimensions.values():
                usd = dimension.per_unit.get("USD")
                if usd is not None and dimension.unit == unit:
                    return usd
        return None


class Products(_Answer):
    """``GetProducts``' answer: each product is a JSON document in a string."""

    products: list[Product] = Field(alias="PriceList")

    @field_validator("products", mode="before")
    @classmethod
    def _decoded(cls, value: object) -> object:
        if isinstance(value, list):
            return [json.loads(v) if isinstance(v, str) else v for v in value]
        return value


ON_DEMAND_FILTERS: Mapping[str, str] = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}
"""What makes a price Linux on-demand on shared hardware, beside the type and region."""


class Ec2Prices(PriceList):
    """EC2 Linux prices: on-demand per type and region, spot per type and zone.

    On-demand: a location is a zone (``eu-central-1a``) or a region; its region's price is
    used; one ``GetProducts`` request per (type, region), asked once; after one failure no
    further on-demand price is asked. Spot: one ``DescribeSpotPriceHistory`` request per
    (type, zone), asked once; the newest price of ``Linux/UNIX``.
    """

    currency = "USD"

    def __init__(
        self,
        call: Call,
        ec2: Any,
        pricing: Callable[[], Any],
        pricing_at: str,
        pricing_deadline: float,
    ) -> None:
        """``ec2``: the provider's EC2 client; ``pricing``: its Price List client, made when
        first asked (at ``pricing_at``, for messages). The Price List is optional and often
        out of reach (it needs ``pricing:GetProducts`` and the network to it), so its tries
        end after ``pricing_deadline`` seconds, not the call's whole time."""
        self._call = call
        self._pricing_deadline = pricing_deadline
        self._ec2 = ec2
        self._pricing = pricing
        self._pricing_at = pricing_at
        self._prices: dict[tuple[str, str], Decimal | None] = {}
        self._spot: dict[tuple[str, str], Decimal | None] = {}
        self._why = ""
        self._spot_why: list[str] = []
        self._volumes: dict[tuple[str, str], Decimal | None] = {}
        self._volume_why: list[str] = []
        self._lock = threading.Lock()  # each price asked once, whichever thread asks first

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        with self._lock:
            if market == Market.SPOT:
                spot = (machine_type, location)
                if spot not in self._spot:
                    self._spot[spot] = self._ask_spot(*spot)
                return self._spot[spot]
            key = (machine_type, region_of(location))
            if key not in self._prices:
                self._prices[key] = self._ask(*key)
            return self._prices[key]

    def options(self, pool: Pool, location: str) -> Decimal | None:
        """The root volume: its size at its type's price per GB-month in the region (one
        ``GetProducts`` per type and region, asked once). Provisioned IOPS and throughput
        above gp3's included 3000 and 125 MiB/s are not counted."""
        volume = pool.options_of(Ec2Options).root_volume
        key = (volume.type, region_of(location))
        with self._lock:
            if key not in self._volumes:
                self._volumes[key] = self._ask_volume(*key)
            per_gb = self._volumes[key]
        return None if per_gb is None else per_gb * volume.size

    def _ask_volume(self, volume_type: str, region: str) -> Decimal | None:
        if self._why:
            return None
        filters = {"volumeApiName": volume_type, "regionCode": region, "productFamily": "Storage"}
        try:
            answer = self._call(
                "GetProducts",
                lambda: Products.model_validate(
                    self._pricing().get_products(
                        ServiceCode="AmazonEC2",
                        Filters=[
                            {"Type": "TERM_MATCH", "Field": k, "Value": v}
                            for k, v in filters.items()
                        ],
                        MaxResults=10,
                    )
                ),
                where=f"AWS Price List GetProducts at {self._pricing_at}",
                deadline=self._pricing_deadline,
            )
        except MachinesError as error:
            self._why = f"AWS's price list could not be reached: {brief(error)}"
            return None
        for product in answer.products:
            monthly = product.usd_per("GB-Mo")
            if monthly is not None:
                return monthly
        self._volume_why.append(
            f"AWS's price list has no {volume_type} volume price in {region}: the root "
            "volume's price unknown"
        )
        return None

    @property
    def unknown(self) -> str:
        return "; ".join(why for why in (self._why, *self._spot_why, *self._volume_why) if why)

    def _ask_spot(self, machine_type: str, zone: str) -> Decimal | None:
        try:
            hourly = self._spot_hourly(machine_type, zone)
        except MachinesError as error:
            self._spot_why.append(
                f"the spot price of {machine_type} in {zone} could not be read from EC2's "
                f"DescribeSpotPriceHistory: {brief(error)}"
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
        answer = self._call(
            "DescribeSpotPriceHistory",
            lambda: SpotPrices.model_validate(
                self._ec2.describe_spot_price_history(
                    InstanceTypes=[machine_type],
                    ProductDescriptions=["Linux/UNIX"],
                    Filters=[{"Name": "availability-zone", "Values": [zone]}],
                    StartTime=datetime.now(UTC),
                    MaxResults=10,
                )
            ),
        )
        prices = [p for p in answer.prices if p.type == machine_type and p.zone == zone]
        if not prices:
            return None
        return max(prices, key=lambda p: p.at).price

    def _ask(self, machine_type: str, region: str) -> Decimal | None:
        if self._why:
            return None
        try:
            hourly = self._on_demand_hourly(machine_type, region)
        except MachinesError as error:
            self._why = f"AWS's price list could not be reached: {brief(error)}"
            return None
        return None if hourly is None else hourly * HOURS_PER_MONTH

    def _on_demand_hourly(self, machine_type: str, region: str) -> Decimal | None:
        filters = {"instanceType": machine_type, "regionCode": region, **ON_DEMAND_FILTERS}
        answer = self._call(
            "GetProducts",
            lambda: Products.model_validate(
                self._pricing().get_products(
                    ServiceCode="AmazonEC2",
                    Filters=[
                        {"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()
                    ],
                    MaxResults=10,
                )
            ),
            where=f"AWS Price List GetProducts at {self._pricing_at}",
            deadline=self._pricing_deadline,
        )
        for product in answer.products:
            hourly = product.hourly_usd()
            if hourly is not None:
                return hourly
        return None
