"""The catalogue: today's types, locations, per-architecture images, deprecations and stock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hcloud import APIException, Client
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.server_types import ServerType

from emulator import Emulator
from testkit.api_schema import conform
from testkit.hetzner import RawApi


def test_each_image_name_exists_once_per_architecture_with_distinct_ids(hcloud: Client) -> None:
    for name in ("ubuntu-22.04", "ubuntu-24.04", "debian-12", "debian-13", "fedora-42"):
        x86 = hcloud.images.get_by_name_and_architecture(name, "x86")
        arm = hcloud.images.get_by_name_and_architecture(name, "arm")
        assert (x86.architecture, arm.architecture) == ("x86", "arm")
        assert x86.id != arm.id
        assert x86.name == arm.name == name


def test_images_filter_by_architecture(hcloud: Client) -> None:
    images = hcloud.images.get_all(architecture=["arm"])

    assert len(images) == 5
    assert {i.architecture for i in images} == {"arm"}


def test_a_deprecated_image_is_listed_only_when_asked_for(hcloud: Client) -> None:
    assert hcloud.images.get_by_name_and_architecture("fedora-41", "x86") is None

    image = hcloud.images.get_by_name_and_architecture("fedora-41", "x86", include_deprecated=True)

    assert image is not None
    assert image.deprecation is not None
    assert image.deprecation.unavailable_after > datetime.now(UTC)
    assert image.deprecation.unavailable_after - image.deprecation.announced == timedelta(days=90)


@pytest.mark.parametrize(
    ("name", "architecture", "cpu_type", "locations"),
    [
        ("cx23", "x86", "shared", {"fsn1", "nbg1", "hel1"}),
        ("cpx22", "x86", "shared", {"fsn1", "nbg1", "hel1", "ash", "hil", "sin"}),
        ("ccx13", "x86", "dedicated", {"fsn1", "nbg1", "hel1", "ash", "hil", "sin"}),
        ("cax11", "arm", "shared", {"fsn1", "nbg1", "hel1"}),
    ],
)
def test_server_types_carry_architecture_and_locations(
    hcloud: Client, name: str, architecture: str, cpu_type: str, locations: set[str]
) -> None:
    server_type = hcloud.server_types.get_by_name(name)

    assert server_type.architecture == architecture
    assert server_type.cpu_type == cpu_type
    assert {loc.location.name for loc in server_type.locations} == locations
    assert {p["location"] for p in server_type.prices} == locations


def test_the_real_server_types_are_listed(hcloud: Client) -> None:
    names = {t.name for t in hcloud.server_types.get_all()}

    assert names == {
        "cx23",
        "cx33",
        "cx43",
        "cx53",
        "cpx12",
        "cpx22",
        "cpx32",
        "cpx42",
        "cpx52",
        "cpx62",
        "ccx13",
        "ccx23",
        "ccx33",
        "ccx43",
        "ccx53",
        "ccx63",
        "cax11",
        "cax21",
        "cax31",
        "cax41",
    }


def test_locations_have_real_names_and_network_zones(hcloud: Client) -> None:
    zones = {loc.name: loc.network_zone for loc in hcloud.locations.get_all()}

    assert zones == {
        "fsn1": "eu-central",
        "nbg1": "eu-central",
        "hel1": "eu-central",
        "ash": "us-east",
        "hil": "us-west",
        "sin": "ap-southeast",
    }


@pytest.mark.parametrize(
    ("name", "cores", "memory", "disk"),
    [
        ("cx23", 2, 4.0, 40),
        ("cx53", 16, 32.0, 320),
        ("cpx12", 1, 2.0, 40),
        ("cpx22", 2, 4.0, 80),
        ("cpx62", 16, 32.0, 640),
        ("cax41", 16, 32.0, 320),
        ("ccx63", 48, 192.0, 960),
    ],
)
def test_server_types_have_their_real_sizes(
    hcloud: Client, name: str, cores: int, memory: float, disk: int
) -> None:
    server_type = hcloud.server_types.get_by_name(name)

    assert (server_type.cores, server_type.memory, server_type.disk) == (cores, memory, disk)
    assert server_type.storage_type == "local"


@pytest.mark.parametrize("removed", ["cx22", "cx32", "cx42", "cx52", "cpx11", "cpx21", "cpx51"])
def test_a_removed_server_type_is_gone_and_cannot_be_created(
    hcloud: Client, emulator_api: RawApi, removed: str
) -> None:
    assert hcloud.server_types.get_by_name(removed) is None

    response = emulator_api.post(
        "/servers",
        json={"name": "old", "server_type": removed, "image": "ubuntu-24.04", "location": "fsn1"},
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"
    assert removed in response.json()["error"]["message"]


def test_datacenters_are_gone_with_410(emulator_api: RawApi) -> None:
    for path in ("/datacenters", "/datacenters/4"):
        response = emulator_api.get(path)

        assert response.status_code == 410
        error = response.json()["error"]
        assert error["code"] == "deprecated_api_endpoint"
        assert error["details"]["announcement"].startswith("https://docs.hetzner.cloud/changelog")


def test_availability_lives_in_each_server_types_locations(emulator_api: RawApi) -> None:
    cpx22 = emulator_api.get("/server_types", params={"name": "cpx22"}).json()["server_types"][0]

    assert cpx22["deprecation"] is None
    assert cpx22["deprecated"] is False
    for entry in cpx22["locations"]:
        assert set(entry) == {"id", "name", "deprecation", "available", "recommended"}
        assert (entry["available"], entry["recommended"], entry["deprecation"]) == (
            True,
            True,
            None,
        )


def test_a_type_deprecated_in_one_location_is_still_orderable_until_its_date(
    hcloud: Client,
) -> None:
    cpx12 = {loc.location.name: loc for loc in hcloud.server_types.get_by_name("cpx12").locations}

    sin = cpx12["sin"]
    assert sin.deprecation is not None
    assert sin.deprecation.announced < datetime.now(UTC) < sin.deprecation.unavailable_after
    assert (sin.available, sin.recommended) == (True, False)
    assert cpx12["fsn1"].deprecation is None

    created = hcloud.servers.create(
        name="old-in-sin",
        server_type=ServerType(name="cpx12"),
        image=Image(id=161547269),
        location=Location(name="sin"),
    )
    assert created.server.location.name == "sin"


def test_a_type_past_its_unavailable_date_in_a_location_cannot_be_created_there(
    hcloud: Client, emulator_api: RawApi
) -> None:
    ccx13 = {loc.location.name: loc for loc in hcloud.server_types.get_by_name("ccx13").locations}
    hil = ccx13["hil"]
    assert hil.deprecation is not None
    assert hil.deprecation.unavailable_after < datetime.now(UTC)
    assert (hil.available, hil.recommended) == (False, False)

    response = emulator_api.post(
        "/servers",
        json={"name": "gone", "server_type": "ccx13", "image": "ubuntu-24.04", "location": "hil"},
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_server_type"
    assert "unavailable in hil since" in error["message"]


def test_without_a_location_an_unavailable_location_is_passed_over(hcloud: Client) -> None:
    server = hcloud.servers.create(
        name="anywhere", server_type=ServerType(name="ccx13"), image=Image(id=161547269)
    ).server

    assert server.location.name == "fsn1"


@pytest.mark.parametrize(
    ("sort", "first"),
    [("name", "ash"), ("name:desc", "sin"), ("id:desc", "sin"), ("id", "fsn1")],
)
def test_locations_honour_sort(emulator_api: RawApi, sort: str, first: str) -> None:
    listed = emulator_api.get("/locations", params={"sort": sort}).json()["locations"]
    names = [loc["name"] for loc in listed]

    assert names[0] == first
    assert len(names) == 6


def test_out_of_stock_is_resource_unavailable(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    with pytest.raises(APIException) as excinfo:
        hcloud.servers.create(
            name="arm-1",
            server_type=ServerType(name="cax11"),
            image=Image(id=161547270),
            location=Location(name="fsn1"),
        )

    assert excinfo.value.code == "resource_unavailable"
    assert excinfo.value.message == "error during placement"


def test_out_of_stock_answers_412(emulator_api: RawApi, emulator: Emulator) -> None:
    emulator.control.set_stock([{"server_type": "cx23", "location": "hel1"}])

    response = emulator_api.post(
        "/servers",
        json={"name": "x", "server_type": "cx23", "image": "ubuntu-24.04", "location": "hel1"},
    )

    assert response.status_code == 412


@pytest.mark.parametrize(
    ("code", "status"), [("placement_error", 422), ("no_space_left_in_location", 422)]
)
def test_other_capacity_codes_can_be_chosen(
    emulator_api: RawApi, emulator: Emulator, code: str, status: int
) -> None:
    emulator.control.set_stock([{"server_type": "cx23", "location": "hel1", "code": code}])

    response = emulator_api.post(
        "/servers",
        json={"name": "x", "server_type": "cx23", "image": "ubuntu-24.04", "location": "hel1"},
    )

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


def test_out_of_stock_shows_in_the_server_types_locations(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    cax11 = hcloud.server_types.get_by_name("cax11")

    assert {loc.location.name: loc.available for loc in cax11.locations} == {
        "fsn1": False,
        "nbg1": True,
        "hel1": True,
    }


def test_the_same_type_still_creates_where_it_is_in_stock(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    server = hcloud.servers.create(
        name="arm-1",
        server_type=ServerType(name="cax11"),
        image=Image(id=161547270),
        location=Location(name="nbg1"),
    ).server

    assert server.location.name == "nbg1"


def test_pricing_lists_every_server_type(emulator_api: RawApi) -> None:
    pricing = emulator_api.get("/pricing").json()["pricing"]

    assert pricing["currency"] == "EUR"
    assert len(pricing["server_types"]) == 20


def test_pricing_has_the_primary_ipv4_price_per_location(emulator_api: RawApi) -> None:
    primary_ips = emulator_api.get("/pricing").json()["pricing"]["primary_ips"]

    conform("primary_ip_prices", primary_ips)
    prices = {entry["type"]: entry["prices"] for entry in primary_ips}
    assert {p["location"] for p in prices["ipv4"]} == {"fsn1", "nbg1", "hel1", "ash", "hil", "sin"}
    for price in prices["ipv4"]:
        assert price["price_monthly"] == {"net": "0.5000000000", "gross": "0.5950000000"}
        assert price["price_hourly"]["net"] == "0.0008000000"
    assert {p["price_monthly"]["net"] for p in prices["ipv6"]} == {"0.0000000000"}


def test_primary_ips_are_the_servers_addresses(hcloud: Client, emulator: Emulator) -> None:
    assert hcloud.primary_ips.get_all() == []
    emulator.control.add_servers(1)

    server = hcloud.servers.get_by_name("server-1")
    ips = {ip.type: ip for ip in hcloud.primary_ips.get_all()}

    assert ips["ipv4"].ip == server.public_net.ipv4.ip
    assert ips["ipv4"].assignee_id == server.id
    assert ips["ipv6"].ip == server.public_net.ipv6.network + "/64"


def test_pricing_states_hetzners_own_hourly_price_beside_the_monthly_cap(
    emulator_api: RawApi,
) -> None:
    """Hetzner lists an hourly price of its own, higher than the monthly one over 730
    hours: the cap is reached after about 624 started hours (cx33: EUR 0.0104 an hour, 6.49
    a month, read from /pricing in May 2026)."""
    pricing = emulator_api.get("/pricing").json()["pricing"]

    figures = {
        (kind["name"], p["location"]): (
            Decimal(p["price_hourly"]["net"]),
            Decimal(p["price_monthly"]["net"]),
        )
        for kind in pricing["server_types"]
        for p in kind["prices"]
    }

    assert figures[("cx33", "fsn1")] == (Decimal("0.0104"), Decimal("6.49"))
    for where, (hourly, monthly) in figures.items():
        assert hourly * 730 > monthly, where
        assert 600 <= monthly / hourly <= 650, where
