"""EC2's prices: on-demand from AWS's Price List Query API, spot from EC2 itself.

On-demand Linux prices come from ``pricing:GetProducts`` (the Price List Query API, served
in ``client.PRICING_REGION`` for every region; at ``AWS_ENDPOINT_URL`` when that is set, as
boto3 does for every service), reached where the credentials and the network allow. A spot price is
the newest of ``DescribeSpotPriceHistory`` for the type in the zone, at the endpoint the
runtime uses. Every request is the provider's call (``Ec2Provider._call``: its retries, its
deadline, its telemetry) and every answer is checked against the fields read here, so an
answer of another shape leaves the price unknown, saying why.

AWS states an instance's price per hour (its ``Hrs``), the monthly figure is AWS's own
convention from it (730 hours); a volume's per GB-month, billed as a share of each calendar
month (``billing``). The Price List is often out of reach (it needs ``pricing:GetProducts``,
is served in a few regions only, and a stand-in such as moto has none): a list that cannot
be read says so in one line, logged once, naming the region, the permission and the
answer; an answer that will not change by asking again (a refusal, or one that is not the
Price List's at all) is not asked again while the list is kept.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from machines.runtime.billing import Rate
from machines.runtime.clouds.ec2.answers import SpotPrices, cloud_error, without_aws_error
from machines.runtime.clouds.ec2.client import PRICING_REGION
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.errors import CloudError, MachinesError
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.prices import PriceList, brief

T = TypeVar("T")

log = logging.getLogger(__name__)

HOURS_PER_MONTH = Decimal(730)
"""AWS's own month for monthly figures from hourly prices (365 * 24 / 12)."""

DENIED = frozenset({"AccessDeniedException", "AccessDenied", "UnauthorizedOperation"})
"""The Price List's refusals of what the credentials may do."""

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
    further Price List request is sent (``unknown`` says why). Spot: one
    ``DescribeSpotPriceHistory`` request per (type, zone), asked once; the newest price of
    ``Linux/UNIX``.
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
        out of reach, so its tries end after ``pricing_deadline`` seconds, not the call's
        whole time."""
        self._call = call
        self._pricing_deadline = pricing_deadline
        self._ec2 = ec2
        self._pricing = pricing
        self._where = f"AWS Price List GetProducts in {PRICING_REGION} at {pricing_at}"
        self._hourly: dict[tuple[str, str], Decimal | None] = {}
        self._spot: dict[tuple[str, str], Decimal | None] = {}
        self._why = ""
        self._spot_why: list[str] = []
        self._volumes: dict[tuple[str, str], Decimal | None] = {}
        self._volume_why: list[str] = []
        self._lock = threading.Lock()  # each price asked once, whichever thread asks first

    def hourly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """AWS's price per hour: the Price List's on-demand one in the location's region,
        or the spot price in the zone."""
        with self._lock:
            if market == Market.SPOT:
                spot = (machine_type, location)
                if spot not in self._spot:
                    self._spot[spot] = self._ask_spot(*spot)
                return self._spot[spot]
            key = (machine_type, region_of(location))
            if key not in self._hourly:
                self._hourly[key] = self._ask(*key)
            return self._hourly[key]

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """The hourly price times AWS's month of 730 hours (EC2 has no monthly cap)."""
        hourly = self.hourly(machine_type, location, market)
        return None if hourly is None else hourly * HOURS_PER_MONTH

    def option_rates(self, pool: Pool, location: str) -> tuple[Rate, ...] | None:
        """The root volume: its size at its type's price per GB-month in the region (one
        ``GetProducts`` per type and region, asked once), billed as a share of each
        calendar month (no hourly figure: ``Rate.hourly`` is None). Provisioned IOPS and
        throughput above gp3's included 3000 and 125 MiB/s are not counted."""
        volume = pool.options_of(Ec2Options).root_volume
        key = (volume.type, region_of(location))
        with self._lock:
            if key not in self._volumes:
                self._volumes[key] = self._ask_volume(*key)
            per_gb = self._volumes[key]
        return None if per_gb is None else (Rate(None, per_gb * volume.size),)

    @property
    def unknown(self) -> str:
        return "; ".join(why for why in (self._why, *self._spot_why, *self._volume_why) if why)

    @property
    def read_failed(self) -> bool:
        return bool(self._why)

    def _ask_volume(self, volume_type: str, region: str) -> Decimal | None:
        filters = {"volumeApiName": volume_type, "regionCode": region, "productFamily": "Storage"}
        answer = self._products(filters)
        if answer is None:
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
        return hourly

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
        filters = {"instanceType": machine_type, "regionCode": region, **ON_DEMAND_FILTERS}
        answer = self._products(filters)
        if answer is None:
            return None
        for product in answer.products:
            hourly = product.hourly_usd()
            if hourly is not None:
                return hourly
        return None

    def _products(self, filters: Mapping[str, str]) -> Products | None:
        """One ``GetProducts`` of the EC2 products ``filters`` match; None once the list
        could not be read (``_why`` then says why, in one line logged once). Throttling and
        AWS's own transient errors are tried again within the deadline; a refusal and an
        answer that is not the Price List's are not: asking again within the price list's
        window would get the same."""
        if self._why:
            return None

        def ask() -> Products:
            try:
                answer = self._pricing().get_products(
                    ServiceCode="AmazonEC2",
                    Filters=[
                        {"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()
                    ],
                    MaxResults=10,
                )
            except ClientError as error:
                if without_aws_error(error):  # the same page again on every try
                    raise cloud_error(self._where, "GetProducts", error, 1) from None
                raise
            return Products.model_validate(answer)

        try:
            return self._call(
                "GetProducts", ask, where=self._where, deadline=self._pricing_deadline
            )
        except MachinesError as error:
            self._why = unreadable(error)
            log.warning("%s", self._why)
            return None


def unreadable(error: MachinesError) -> str:
    """The one line saying why AWS's price list cannot be read: where it was asked (the
    region, the endpoint), the permission it needs when that is what was refused, and the
    answer, described."""
    code = error.code if isinstance(error, CloudError) else ""
    need = (
        f" (the credentials need pricing:GetProducts in {PRICING_REGION})" if code in DENIED else ""
    )
    return (
        f"AWS's price list cannot be read{need}: {brief(error, 400)}; EC2's on-demand and "
        "root volume prices are unknown"
    )
