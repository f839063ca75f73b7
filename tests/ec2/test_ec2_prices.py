"""EC2 prices where AWS's price list cannot be reached: unknown, with the reason, once."""

from __future__ import annotations

from machines.automation.cost import Ec2Prices, money, price_list, region_of
from machines.automation.stock import stock


def test_without_a_reachable_price_list_prices_are_unknown_with_the_reason(ec2_world):
    prices = price_list("ec2", ec2_world.env)
    assert isinstance(prices, Ec2Prices)
    assert prices.monthly("t3.micro", "eu-central-1a") is None
    assert prices.unknown.startswith("AWS's price list could not be reached: ")
    assert money(prices.total([("t3.micro", "eu-central-1a")]), prices.currency) == "price unknown"


def test_after_one_failure_no_further_price_is_asked(ec2_world):
    prices = price_list("ec2", ec2_world.env)
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
