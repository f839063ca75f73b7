"""Monthly prices and stock from the emulator's catalogue, checked with the official client."""

from __future__ import annotations

from decimal import Decimal

from machines.automation.availability import stock
from machines.automation.cost import money, price_list
from machines.runtime.clouds.hetzner.prices import HetznerPrices
from machines.runtime.models import Market

ON_DEMAND = Market.ON_DEMAND


def listed(hcloud, machine_type: str, location: str, figure: str = "price_monthly") -> Decimal:
    """The net monthly (or ``figure``) price the API lists for one server of the type in
    the location."""
    kind = hcloud.server_types.get_by_name(machine_type)
    [price] = [p for p in kind.prices if p["location"] == location]
    return Decimal(price[figure]["net"])


def test_an_hourly_price_is_the_api_s_own_not_the_monthly_one_over_730_hours(hetzner_env, hcloud):
    prices = price_list("hetzner", hetzner_env)

    hourly = prices.hourly("cx33", "fsn1")

    assert hourly == listed(hcloud, "cx33", "fsn1", "price_hourly")
    assert hourly != listed(hcloud, "cx33", "fsn1") / 730


def test_a_price_is_the_api_s_net_monthly_price_for_the_type_and_location(hetzner_env, hcloud):
    prices = price_list("hetzner", hetzner_env)
    assert isinstance(prices, HetznerPrices)
    assert prices.monthly("cx23", "fsn1") == listed(hcloud, "cx23", "fsn1")
    assert prices.monthly("ccx13", "ash") == listed(hcloud, "ccx13", "ash")
    assert prices.monthly("ccx13", "ash") != prices.monthly("ccx13", "fsn1")
    assert (prices.currency, prices.unknown) == ("EUR", "")


def test_a_pool_costs_the_sum_of_its_machines(hetzner_env, hcloud):
    prices = price_list("hetzner", hetzner_env)
    machines = [("cx23", "fsn1", ON_DEMAND)] * 3 + [("cax11", "hel1", ON_DEMAND)] * 7
    expected = 3 * listed(hcloud, "cx23", "fsn1") + 7 * listed(hcloud, "cax11", "hel1")
    assert prices.total(machines) == expected
    assert money(prices.total(machines), prices.currency) == f"{expected:.2f} EUR"


def test_the_price_list_is_read_once(hetzner_env, emulator):
    prices = price_list("hetzner", hetzner_env)
    emulator.control.reset_requests()
    for _ in range(5):
        prices.monthly("cx23", "fsn1")
    assert emulator.control.requests().routes == {"GET /v1/pricing": 1}


def test_a_type_or_location_without_a_price_is_unknown_and_so_is_the_total(hetzner_env):
    prices = price_list("hetzner", hetzner_env)
    assert prices.monthly("cx23", "mars1") is None
    assert prices.total([("cx23", "fsn1", ON_DEMAND), ("nope", "fsn1", ON_DEMAND)]) is None
    assert money(None, "EUR") == "price unknown"


def test_an_unreadable_price_list_says_why_without_the_token(hetzner_env):
    prices = price_list("hetzner", {**hetzner_env, "HCLOUD_TOKEN": "wrongtoken" + "x" * 54})
    assert prices.monthly("cx23", "fsn1") is None
    assert prices.unknown == (
        "Hetzner's price list could not be read: read the price list: Hetzner answered "
        "unauthorized: unable to authenticate: check HCLOUD_TOKEN"
    )
    assert "wrongtoken" not in prices.unknown


def test_missing_settings_make_every_price_unknown_with_the_variable_named():
    prices = price_list("hetzner", {})
    assert prices.monthly("cx23", "fsn1") is None
    assert "HCLOUD_TOKEN" in prices.unknown


def test_stock_lists_the_locations_with_the_type_available_now(hetzner_env, emulator):
    assert stock("hetzner", "cax11", None, hetzner_env).locations == ("fsn1", "hel1", "nbg1")
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    found = stock("hetzner", "cax11", None, hetzner_env)
    assert (found.locations, found.text()) == (("fsn1", "hel1"), "fsn1,hel1")


def test_stock_of_an_unknown_type_is_unknown_with_the_reason(hetzner_env):
    found = stock("hetzner", "cx999", None, hetzner_env)
    assert found.text() == "unknown"
    assert found.unknown.startswith("Hetzner has no server type 'cx999': use one of ")
