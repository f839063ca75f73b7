"""A pool may rank its places by the next hour's price instead of as written
(``placeOrder: price``), in one currency by ``ORCA_EXCHANGE_RATES``: here Hetzner (EUR) on
the emulator and the third cloud (``testkit.fake_cloud``, XFC, billed by the second)."""

from __future__ import annotations

import pytest

from machines import MachineSpec, Provider
from machines.runtime.errors import SettingsError
from machines.runtime.pool import Place
from testkit.fake_cloud import Store
from testkit.span import pools_json
from testkit.specs import OWNER

HETZNER = Place(cloud="hetzner", machine_type="cax11", location="fsn1")
FAKE = Place.model_construct(cloud="fake", machine_type="f1.arm", location="here")
UNPRICED = Place.model_construct(cloud="fake", machine_type="f1.arm", location="there")


def spec(name: str, place: Place = HETZNER) -> MachineSpec:
    return MachineSpec(name, place.machine_type, place.location, "", "ci")


@pytest.fixture
def priced(fake_span: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """Pool ``ci`` with Hetzner written first, the fake cloud second, ranked by price."""
    monkeypatch.setenv("ORCA_POOLS", pools_json(HETZNER, FAKE, place_order="price"))
    return fake_span


def test_the_cheaper_place_is_tried_first_whatever_the_written_order(
    priced: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,XFC=0.001")

    made = Provider.of("hetzner", OWNER).create(spec("ci-1"))

    assert made.ok, made.reason
    assert made.machine is not None
    assert made.machine.cloud == "fake"
    assert made.passed_over == ()
    assert made.ordered.startswith("places by the next hour's price")
    assert made.ordered.index(str(FAKE)) < made.ordered.index(str(HETZNER))


def test_a_dearer_rate_sends_it_to_the_written_first(
    priced: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,XFC=100")

    made = Provider.of("hetzner", OWNER).create(spec("ci-1"))

    assert made.machine is not None
    assert made.machine.cloud == "hetzner"
    assert priced.live() == []


def test_a_place_without_a_price_keeps_its_written_place_and_says_why(
    fake_span: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(UNPRICED, HETZNER, FAKE, place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,XFC=0.001")

    made = Provider.of("hetzner", OWNER).create(spec("ci-1", UNPRICED))

    assert made.machine is not None
    assert (made.machine.cloud, made.machine.location) == ("fake", "there")
    assert f"{UNPRICED} as written (the fake cloud has no price there)" in made.ordered
    assert made.ordered.index(str(FAKE)) < made.ordered.index(str(HETZNER))


def test_a_price_order_without_a_rate_is_refused_naming_the_variable(
    priced: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1")

    with pytest.raises(SettingsError, match="ORCA_EXCHANGE_RATES has no rate for XFC"):
        Provider.of("hetzner", OWNER)


@pytest.mark.parametrize("rates", ["EUR=1,USD", "eur=1", "EUR=0", "EUR=1,EUR=2", "EUR=x"])
def test_rates_that_cannot_be_read_are_refused(
    priced: Store, monkeypatch: pytest.MonkeyPatch, rates: str
) -> None:
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", rates)

    with pytest.raises(SettingsError, match="ORCA_EXCHANGE_RATES"):
        Provider.of("hetzner", OWNER)
