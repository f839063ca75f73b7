"""A pool may rank its places by the next hour's price instead of as written
(``placeOrder: price``), in one currency by ``ORCA_EXCHANGE_RATES``: here Hetzner (EUR) on
the emulator and the third cloud (``testkit.fake_cloud``, XFC, billed by the second), and
how often creates so ranked read each cloud's price list (once per ``ORCA_OFFERS_TTL``),
EC2's on moto behind the fault proxy too."""

from __future__ import annotations

import pytest

from machines import MachineSpec, Provider
from machines.runtime.errors import SettingsError
from machines.runtime.pool import Place
from testkit.clouds import Cloud
from testkit.fake_cloud import Store
from testkit.fault_proxy import Fault
from testkit.span import Span, pools_json
from testkit.specs import OWNER
from testkit.telemetry import Recorded

HETZNER = Place(cloud="hetzner", machine_type="cax11", location="fsn1")
FAKE = Place.model_construct(cloud="fake", machine_type="f1.arm", location="here")
NBG1 = Place(cloud="hetzner", machine_type="cax11", location="nbg1")
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


def price_ordered_creates(monkeypatch: pytest.MonkeyPatch, offers_ttl: str) -> list[str]:
    """Three price-ordered creates of one provider for a pool of two Hetzner places and the
    fake cloud's, with ``ORCA_OFFERS_TTL`` so: each create's ranking."""
    monkeypatch.setenv("ORCA_POOLS", pools_json(HETZNER, NBG1, FAKE, place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,XFC=100")
    monkeypatch.setenv("ORCA_OFFERS_TTL", offers_ttl)
    provider = Provider.of("hetzner", OWNER)
    made = [provider.create(spec(f"ci-{i}")) for i in (1, 2, 3)]
    assert all(m.ok for m in made), [m.reason for m in made]
    assert all(m.machine is not None and m.machine.cloud == "hetzner" for m in made)
    return [m.ordered for m in made]


def test_price_ordered_creates_read_the_price_list_once_per_window(
    fake_span: Store, hetzner_cloud: Cloud, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    ordered = price_ordered_creates(monkeypatch, offers_ttl="3600")

    assert all(f"{HETZNER} 0.0" in o and f"{NBG1} 0.0" in o for o in ordered), ordered
    assert len(set(ordered)) == 1  # one price list, one ranking
    # one read for both Hetzner places and all three creates (a try a loaded machine
    # answered after its timeout is asked again, and counted)
    assert hetzner_cloud.reads("prices") == 1 + recorded.retried("GET /pricing")


def test_a_window_of_zero_reads_the_price_list_once_a_create(
    fake_span: Store, hetzner_cloud: Cloud, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    ordered = price_ordered_creates(monkeypatch, offers_ttl="0")

    assert all(f"{HETZNER} 0.0" in o for o in ordered), ordered
    assert hetzner_cloud.reads("prices") == 3 + recorded.retried("GET /pricing")


def test_price_ordered_creates_read_ec2s_prices_once_per_window(
    span: Span, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    spot = Place(cloud="ec2", machine_type="t4g.micro", location="eu-central-1a", market="spot")
    monkeypatch.setenv("ORCA_POOLS", pools_json(spot, HETZNER, place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,USD=1")
    # The Price List (its JSON requests have no Action=) refuses for good: moto has none,
    # and its own 500 would be tried again until the Price List's deadline.
    span.proxy.set_faults(Fault("error", "", status=400, code="AccessDeniedException"))
    provider = span.provider()

    made = [provider.create(span.spec(f"ci-{i}", spot)) for i in (1, 2, 3)]

    assert all(m.ok and m.machine is not None and m.machine.cloud == "ec2" for m in made)
    # the list that could not be read leaves the place where it was written, every create
    assert all(
        f"{spot} as written (AWS's price list could not be reached" in m.ordered for m in made
    )
    assert span.ec2.reads("prices") == 1 + recorded.retried("DescribeSpotPriceHistory")
    assert span.proxy.requests[""] == 1  # GetProducts, refused once for the window


def test_a_spanning_provider_keeps_its_home_clouds_price_list_not_a_copy(span: Span) -> None:
    """Billing of the home cloud's machines and a caller of the spanning provider's
    ``kept_prices`` read one list, once."""
    provider = span.provider()

    assert provider.kept_prices(None) is provider.on(provider.kind).kept_prices(None)
