"""Prices and stock of a cloud registered by its line in ``machines.runtime.clouds.CLOUDS``
alone: its price list is its provider's ``prices()`` (a cloud without one says so), its
stock is its ``offers``."""

from __future__ import annotations

from decimal import Decimal

import pytest

from machines.automation.availability import stock
from machines.automation.cost import price_list
from machines.runtime.models import Market
from machines.runtime.prices import money
from machines.runtime.provider import Provider
from testkit import fake_cloud


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path) -> str:
    fake_cloud.register(monkeypatch, tmp_path / "cloud.json")
    return fake_cloud.KIND


def test_a_registered_clouds_price_list_is_its_own(fake):
    prices = price_list(fake)

    assert prices.currency == "XFC"
    assert prices.monthly("f1.small", "here", Market.ON_DEMAND) == Decimal("7.30")
    assert prices.monthly("f1.small", "there", Market.ON_DEMAND) is None
    assert prices.total([("f1.small", "there", Market.ON_DEMAND)]) is None


def test_a_cloud_without_a_price_list_says_so_for_every_price(fake):
    prices = Provider.prices(Provider.of(fake))  # what a cloud that writes no prices() has

    assert prices.monthly("f1.small", "here", Market.ON_DEMAND) is None
    assert prices.total([("f1.small", "here", Market.ON_DEMAND)]) is None
    assert prices.unknown == "prices unknown: no price list for provider fake"


def test_a_registered_clouds_stock_is_its_offers(fake):
    found = stock(fake, "f1.small", None, None)

    assert (found.locations, found.offered_only, found.text()) == (
        ("here", "there"),
        False,
        "here,there",
    )


def test_a_kind_nobody_registered_has_neither_prices_nor_stock():
    prices = price_list("nimbus", {})
    found = stock("nimbus", "small", None, {})

    assert prices.unknown.startswith("prices unknown: unknown provider kind 'nimbus'")
    assert found.unknown.startswith("unknown provider kind 'nimbus'")


def test_money_is_two_places_and_the_currency_or_price_unknown():
    assert money(Decimal("12.3"), "EUR") == "12.30 EUR"
    assert money(None, "EUR") == "price unknown"
