"""EC2 prices: on-demand where AWS's price list cannot be read (unknown, with the reason in
one line, asked once), and spot prices from EC2's DescribeSpotPriceHistory on moto."""

from __future__ import annotations

from decimal import Decimal

import pytest

from machines.automation.availability import stock
from machines.automation.cost import money, price_list
from machines.runtime.clouds.ec2.prices import Ec2Prices, region_of
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.provider import Provider
from testkit.fault_proxy import Fault
from testkit.moto_server import free_port
from testkit.specs import ec2_spec

CANNOT = "AWS's price list cannot be read"


@pytest.fixture
def ec2_env(ec2_world):
    """The world's settings with a short call: moto has no Price List (it answers
    ``GetProducts`` with an HTML 500 page)."""
    return {**ec2_world.env, "ORCA_CALL_TIMEOUT": "2"}


@pytest.fixture
def proxied(ec2_world, fault_proxy, monkeypatch):
    """This process's environment at moto through the fault proxy (which counts each
    ``GetProducts``), with time for several tries were an answer tried again."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", fault_proxy.url)
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", "5")
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "30")
    return fault_proxy


def test_an_unreachable_price_list_is_given_up_after_one_request_time_not_the_call(ec2_world):
    closed = f"http://127.0.0.1:{free_port()}"
    env = {
        **ec2_world.env,
        "AWS_ENDPOINT_URL": closed,
        "ORCA_REQUEST_TIMEOUT": "2",
        "ORCA_CALL_TIMEOUT": "3600",
    }
    prices = price_list("ec2", env)

    assert prices.monthly("t3.micro", "eu-central-1a") is None
    assert prices.unknown.startswith(f"{CANNOT}: ")
    assert "could not be reached" in prices.unknown


def test_a_price_list_answering_a_page_is_asked_once_and_said_in_one_line(proxied, caplog):
    """moto answers GetProducts with its HTML 500 page: an answer that is not the Price
    List's comes back the same on every try, so it is asked once, and said in one line
    that names where it was asked and what came back, never the page."""
    caplog.set_level("INFO", logger="machines")
    prices = Provider.of("ec2", "prod").prices()

    assert prices.monthly("t3.micro", "eu-central-1a") is None
    assert prices.hourly("m5.large", "eu-central-1b") is None
    assert prices.options(Pool(name="ci"), "eu-central-1a") is None

    assert proxied.requests["GetProducts"] == 1
    why = prices.unknown
    assert why.startswith(f"{CANNOT}: AWS Price List GetProducts in us-east-1 at {proxied.url}")
    assert "answered HTTP 500, an answer without an AWS error (text/html, " in why
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("machines")]
    assert logged == [why]
    assert "<" not in why
    assert "html lang" not in why


def test_a_refused_price_list_names_the_permission_and_region_it_needs(proxied):
    proxied.set_faults(Fault("error", "GetProducts", status=400, code="AccessDeniedException"))
    prices = Provider.of("ec2", "prod").prices()

    assert prices.monthly("t3.micro", "eu-central-1a") is None

    assert prices.unknown.startswith(
        f"{CANNOT} (the credentials need pricing:GetProducts in us-east-1): "
    )
    assert "AccessDeniedException" in prices.unknown
    assert proxied.requests["GetProducts"] == 1


def test_committed_asks_an_unreadable_price_list_once_per_window(proxied, make_clocked_ec2, clock):
    """The billing rule's list (``committed``, ``paid_until``) is the provider's kept one: a
    list that could not be read is not asked again until ``ORCA_OFFERS_TTL`` has passed,
    then once."""
    provider = make_clocked_ec2(AWS_ENDPOINT_URL=proxied.url, ORCA_OFFERS_TTL="60")
    made = provider.create(ec2_spec("ci-1"))
    assert made.machine is not None, made.reason

    assert provider.committed([made.machine]) is None
    assert provider.committed([made.machine]) is None
    assert proxied.requests["GetProducts"] == 1
    clock.advance(61)
    assert provider.committed([made.machine]) is None
    assert proxied.requests["GetProducts"] == 2


def test_without_a_reachable_price_list_prices_are_unknown_with_the_reason(ec2_env):
    prices = price_list("ec2", ec2_env)
    assert isinstance(prices, Ec2Prices)
    assert prices.monthly("t3.micro", "eu-central-1a") is None
    assert prices.unknown.startswith(f"{CANNOT}: ")
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
    assert prices.unknown.startswith(f"{CANNOT}: ")


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
