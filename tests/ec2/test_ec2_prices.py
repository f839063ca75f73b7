"""EC2 prices: on-demand where AWS's price list cannot be reached (unknown, with the reason,
once), and spot prices from EC2's DescribeSpotPriceHistory on moto."""

from __future__ import annotations

from decimal import Decimal

import pytest

from machines.automation.availability import stock
from machines.automation.cost import money, price_list
from machines.runtime.clouds.ec2.prices import Ec2Prices, region_of
from machines.runtime.models import Market
from testkit.moto_server import free_port


@pytest.fixture
def ec2_env(ec2_world):
    """The world's settings with a short call: moto answers the Price List API with a 500,
    which the runtime retries, as any 5xx, until the call's time is spent."""
    return {**ec2_world.env, "ORCA_CALL_TIMEOUT": "2"}


def test_an_unreachable_price_list_is_given_up_after_one_request_time_not_the_call(ec2_world):
    env = {**ec2_world.env, "ORCA_REQUEST_TIMEOUT": "2", "ORCA_CALL_TIMEOUT": "3600"}
    prices = price_list("ec2", env)

    assert prices.monthly("t3.micro", "eu-central-1a") is None
    assert prices.unknown.startswith("AWS's price list could not be reached: ")


def test_without_a_reachable_price_list_prices_are_unknown_with_the_reason(ec2_env):
    prices = price_list("ec2", ec2_env)
    assert isinstance(prices, Ec2Prices)
    assert prices.monthly("t3.micro", "eu-central-1a") is None
    assert prices.unknown.startswith("AWS's price list could not be reached: ")
    on_demand = [("t3.micro", "eu-central-1a", Market.ON_DEMAND)]
    assert money(prices.total(on_demand), prices.currency) == "price unknown"


def test_after_one_failure_no_further_price_is_asked(ec2_env):
    prices = price_list("ec2", ec2_env)
    prices.monthly("t3.micro", "eu-central-1a")
    first = prices.unknown
    assert prices.monthly("m5.large", "eu-central-1b") is None
    assert prices.unknown == first


def test_a_zone_is_priced_at_its_region():
    assert region_of("eu-central-1a") == "eu-central-1"
    assert region_of("us-gov-west-1b") == "us-gov-west-1"
    assert region_of("eu-central-1") == "eu-central-1"


def test_ec2_stock_is_the_zones_offering_the_type(ec2_world):
    found = stock("ec2", "t3.micro", None, ec2_world.env)
    assert found.offered_only
    assert found.locations
    assert all(zone.startswith(ec2_world.env["AWS_REGION"]) for zone in found.locations)
    assert found.text().endswith(" (offered)")


def test_a_spot_machine_is_priced_at_the_current_spot_price_of_its_type_and_zone(ec2_world):
    """moto answers DescribeSpotPriceHistory with one fixed price, 0.00001 USD an hour, for
    every type and zone it offers (AWS: the price in effect now, per zone)."""
    prices = price_list("ec2", ec2_world.env)

    spot = prices.monthly("t3.micro", "eu-central-1a", Market.SPOT)

    assert spot == Decimal("0.00001") * 730
    assert money(spot, prices.currency) == "0.01 USD"
    assert "spot price" not in prices.unknown


def test_spot_and_on_demand_prices_are_asked_apart(ec2_env):
    prices = price_list("ec2", ec2_env)
    machines = [
        ("t3.micro", "eu-central-1a", Market.SPOT),
        ("t3.micro", "eu-central-1a", Market.ON_DEMAND),
    ]

    assert prices.total(machines[:1]) == Decimal("0.00730")
    assert prices.total(machines) is None
    assert prices.unknown.startswith("AWS's price list could not be reached: ")


def test_a_zone_without_a_spot_price_is_unknown_saying_so(ec2_world):
    prices = price_list("ec2", ec2_world.env)

    assert prices.monthly("t3.micro", "eu-central-1z", Market.SPOT) is None
    assert (
        "EC2's DescribeSpotPriceHistory has no Linux/UNIX spot price of t3.micro in eu-central-1z"
        in prices.unknown
    )


def test_an_unreachable_ec2_leaves_the_spot_price_unknown_with_the_reason(ec2_env):
    closed = f"http://127.0.0.1:{free_port()}"
    env = {**ec2_env, "AWS_ENDPOINT_URL": closed, "ORCA_REQUEST_TIMEOUT": "1"}
    prices = price_list("ec2", env)

    assert prices.monthly("t3.micro", "eu-central-1a", Market.SPOT) is None
    assert prices.unknown.startswith(
        "the spot price of t3.micro in eu-central-1a could not be read from EC2's "
        "DescribeSpotPriceHistory: "
    )
    assert "testing" not in prices.unknown
