"""A pool may rank its places by the next hour's price instead of as written
(``placeOrder: price``), in one currency by ``ORCA_EXCHANGE_RATES``: here Hetzner (EUR) on
the emulator and the third cloud (``testkit.fake_cloud``, XFC, billed by the second), and
how often creates so ranked read each cloud's price list (once per ``ORCA_OFFERS_TTL``),
EC2's on moto behind the fault proxy too."""

from __future__ import annotations

import calendar
import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from botocore.stub import Stubber

from machines import MachineSpec, Provider
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.errors import SettingsError
from machines.runtime.pool import Place
from testkit.clouds import Cloud
from testkit.fake_cloud import Store
from testkit.fault_proxy import Fault
from testkit.hetzner import RawApi
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


def listed_hourly(api: RawApi, place: Place) -> tuple[Decimal, Decimal, Decimal]:
    """The emulator's ``/pricing`` for ``place``: the type's hourly price there, the primary
    IPv4's hourly and monthly ones."""
    pricing = api.get("/pricing").json()["pricing"]
    (kind,) = [k for k in pricing["server_types"] if k["name"] == place.machine_type]
    (server,) = [p for p in kind["prices"] if p["location"] == place.location]
    (ips,) = [ip for ip in pricing["primary_ips"] if ip["type"] == "ipv4"]
    (ipv4,) = [p for p in ips["prices"] if p["location"] == place.location]
    return (
        Decimal(server["price_hourly"]["net"]),
        Decimal(ipv4["price_hourly"]["net"]),
        Decimal(ipv4["price_monthly"]["net"]),
    )


def test_a_hetzner_place_counts_its_primary_ipv4_at_the_lists_hourly_price(
    priced: Store, emulator_api: RawApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The place's next hour is the type's ``price_hourly`` plus the primary IPv4's own
    (``primary_ips[].prices[].price_hourly``), each a started hour: not the address's
    monthly price over 730 hours."""
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,XFC=100")
    server, ipv4_hourly, ipv4_monthly = listed_hourly(emulator_api, HETZNER)

    made = Provider.of("hetzner", OWNER).create(spec("ci-1"))

    assert made.ok, made.reason
    assert f"{HETZNER} {server + ipv4_hourly:.4f}" in made.ordered
    assert f"{server + ipv4_hourly:.4f}" != f"{server + ipv4_monthly / 730:.4f}"


def test_an_ipv6_only_hetzner_place_counts_no_primary_ipv4(
    fake_span: Store, emulator_api: RawApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    places = json.loads(pools_json(HETZNER, FAKE, place_order="price"))
    places[0]["hetzner"] = {"ipv4": False}
    monkeypatch.setenv("ORCA_POOLS", json.dumps(places))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,XFC=100")
    server, _, _ = listed_hourly(emulator_api, HETZNER)

    made = Provider.of("hetzner", OWNER).create(spec("ci-1"))

    assert made.ok, made.reason
    assert f"{HETZNER} {server:.4f}" in made.ordered


def test_an_ec2_place_counts_its_root_volume_as_its_months_share_of_the_gb_month_price(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EBS bills a GB-month price by the second, each second a share of its calendar month:
    the volume's next hour is the month's share, not the monthly price over 730 hours. (The
    Price List's answer is botocore's Stubber's, as AWS gives it: moto has none.)"""
    spot = Place(cloud="ec2", machine_type="t4g.micro", location="eu-central-1a", market="spot")
    monkeypatch.setenv("ORCA_POOLS", pools_json(spot, HETZNER, place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,USD=1")
    provider = span.provider()
    ec2 = provider.on("ec2")
    hourly = ec2.prices().hourly(spot.machine_type, spot.location, spot.market)
    assert hourly is not None
    volume = ec2.pool("ci").options_of(Ec2Options).root_volume
    gb_month = Decimal("0.0952")
    now = datetime.now(UTC)
    hours = Decimal(calendar.monthrange(now.year, now.month)[1] * 24)  # this month's

    with Stubber(ec2._pricing_client()) as stub:  # type: ignore[attr-defined]
        stub.add_response("get_products", {"PriceList": [gp3_product(gb_month)]})
        made = provider.create(span.spec("ci-1", spot))

    assert made.ok, made.reason
    expected = hourly + gb_month * volume.size / hours
    assert f"{spot} {expected:.4f}" in made.ordered
    assert f"{expected:.4f}" != f"{hourly + gb_month * volume.size / 730:.4f}"


def gp3_product(gb_month: Decimal) -> str:
    """The Price List's product of a gp3 volume, as ``GetProducts`` answers it."""
    dimension = {"unit": "GB-Mo", "pricePerUnit": {"USD": str(gb_month)}}
    return json.dumps(
        {
            "product": {"productFamily": "Storage", "attributes": {"volumeApiName": "gp3"}},
            "terms": {"OnDemand": {"T": {"priceDimensions": {"D": dimension}}}},
        }
    )


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
    span: Span,
    recorded: Recorded,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """moto has no Price List: it answers ``GetProducts`` with its HTML 500 page. The page
    is asked for once in the window, said in one line (logged once) and never quoted."""
    spot = Place(cloud="ec2", machine_type="t4g.micro", location="eu-central-1a", market="spot")
    monkeypatch.setenv("ORCA_POOLS", pools_json(spot, HETZNER, place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,USD=1")
    caplog.set_level("WARNING", logger="machines")
    provider = span.provider()

    made = [provider.create(span.spec(f"ci-{i}", spot)) for i in (1, 2, 3)]

    assert all(m.ok and m.machine is not None and m.machine.cloud == "ec2" for m in made)
    # the list that could not be read leaves the place where it was written, every create
    assert all(
        f"{spot} as written (AWS's price list cannot be read: AWS Price List GetProducts in "
        "us-east-1 at " in m.ordered
        for m in made
    )
    assert all("<" not in m.ordered and "Internal Server Error<" not in m.ordered for m in made)
    priced = [r.getMessage() for r in caplog.records if "price list" in r.getMessage()]
    assert len(priced) == 1
    assert "<" not in priced[0]
    assert span.ec2.reads("prices") == 1 + recorded.retried("DescribeSpotPriceHistory")
    assert span.proxy.requests["GetProducts"] == 1  # asked once for the window


def test_a_price_list_refused_names_the_permission_in_the_order(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    spot = Place(cloud="ec2", machine_type="t4g.micro", location="eu-central-1a", market="spot")
    monkeypatch.setenv("ORCA_POOLS", pools_json(spot, HETZNER, place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,USD=1")
    span.proxy.set_faults(Fault("error", "GetProducts", status=400, code="AccessDeniedException"))

    made = span.provider().create(span.spec("ci-1", spot))

    assert made.ok, made.reason
    assert "(the credentials need pricing:GetProducts in us-east-1)" in made.ordered
    assert span.proxy.requests["GetProducts"] == 1


def test_a_spanning_provider_keeps_its_home_clouds_price_list_not_a_copy(span: Span) -> None:
    """Billing of the home cloud's machines and a caller of the spanning provider's
    ``kept_prices`` read one list, once."""
    provider = span.provider()

    assert provider.kept_prices(None) is provider.on(provider.kind).kept_prices(None)
