"""The catalogue: real types, locations, datacenters, per-architecture images, and stock."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.server_types import ServerType

from emulator import Emulator
from tests.emulator.emulator_helpers import RawApi


def test_each_image_name_exists_once_per_architecture_with_distinct_ids(client: Client) -> None:
    for name in ("ubuntu-22.04", "ubuntu-24.04", "debian-12", "fedora-41"):
        x86 = client.images.get_by_name_and_architecture(name, "x86")
        arm = client.images.get_by_name_and_architecture(name, "arm")
        assert (x86.architecture, arm.architecture) == ("x86", "arm")
        assert x86.id != arm.id
        assert x86.name == arm.name == name


def test_images_filter_by_architecture(client: Client) -> None:
    images = client.images.get_all(architecture=["arm"])

    assert len(images) == 4
    assert {i.architecture for i in images} == {"arm"}


@pytest.mark.parametrize(
    ("name", "architecture", "cpu_type", "locations"),
    [
        ("cx22", "x86", "shared", {"fsn1", "nbg1", "hel1"}),
        ("cpx11", "x86", "shared", {"fsn1", "nbg1", "hel1", "ash", "hil", "sin"}),
        ("ccx13", "x86", "dedicated", {"fsn1", "nbg1", "hel1", "ash", "hil", "sin"}),
        ("cax11", "arm", "shared", {"fsn1", "nbg1", "hel1"}),
    ],
)
def test_server_types_carry_architecture_and_locations(
    client: Client, name: str, architecture: str, cpu_type: str, locations: set[str]
) -> None:
    server_type = client.server_types.get_by_name(name)

    assert server_type.architecture == architecture
    assert server_type.cpu_type == cpu_type
    assert {loc.location.name for loc in server_type.locations} == locations
    assert {p["location"] for p in server_type.prices} == locations


def test_the_real_server_types_are_listed(client: Client) -> None:
    names = {t.name for t in client.server_types.get_all()}

    assert names == {
        "cx22",
        "cx32",
        "cx42",
        "cx52",
        "cpx11",
        "cpx21",
        "cpx31",
        "cpx41",
        "cpx51",
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


def test_locations_have_real_names_and_network_zones(client: Client) -> None:
    zones = {loc.name: loc.network_zone for loc in client.locations.get_all()}

    assert zones == {
        "fsn1": "eu-central",
        "nbg1": "eu-central",
        "hel1": "eu-central",
        "ash": "us-east",
        "hil": "us-west",
        "sin": "ap-southeast",
    }


def test_datacenters_list_supported_and_available_types(api: RawApi) -> None:
    datacenters = {d["name"]: d for d in api.get("/datacenters").json()["datacenters"]}

    assert set(datacenters) == {
        "fsn1-dc14",
        "nbg1-dc3",
        "hel1-dc2",
        "ash-dc1",
        "hil-dc1",
        "sin-dc1",
    }
    ash = datacenters["ash-dc1"]["server_types"]
    assert 45 not in ash["supported"]  # cax11 is EU only
    assert 22 in ash["supported"]
    assert ash["available"] == ash["supported"]


def test_out_of_stock_is_resource_unavailable(client: Client, emu: Emulator) -> None:
    emu.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    with pytest.raises(APIException) as excinfo:
        client.servers.create(
            name="arm-1",
            server_type=ServerType(name="cax11"),
            image=Image(id=161547270),
            location=Location(name="fsn1"),
        )

    assert excinfo.value.code == "resource_unavailable"
    assert excinfo.value.message == "error during placement"


def test_out_of_stock_answers_412(api: RawApi, emu: Emulator) -> None:
    emu.control.set_stock([{"server_type": "cx22", "location": "hel1"}])

    response = api.post(
        "/servers",
        json={"name": "x", "server_type": "cx22", "image": "ubuntu-24.04", "location": "hel1"},
    )

    assert response.status_code == 412


@pytest.mark.parametrize(
    ("code", "status"), [("placement_error", 422), ("no_space_left_in_location", 422)]
)
def test_other_capacity_codes_can_be_chosen(
    api: RawApi, emu: Emulator, code: str, status: int
) -> None:
    emu.control.set_stock([{"server_type": "cx22", "location": "hel1", "code": code}])

    response = api.post(
        "/servers",
        json={"name": "x", "server_type": "cx22", "image": "ubuntu-24.04", "location": "hel1"},
    )

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


def test_out_of_stock_shows_in_datacenters_and_server_types(
    client: Client, api: RawApi, emu: Emulator
) -> None:
    emu.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    fsn1 = api.get("/datacenters", params={"name": "fsn1-dc14"}).json()["datacenters"][0]
    cax11 = client.server_types.get_by_name("cax11")

    assert 45 in fsn1["server_types"]["supported"]
    assert 45 not in fsn1["server_types"]["available"]
    assert {loc.location.name: loc.available for loc in cax11.locations} == {
        "fsn1": False,
        "nbg1": True,
        "hel1": True,
    }


def test_the_same_type_still_creates_where_it_is_in_stock(client: Client, emu: Emulator) -> None:
    emu.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])

    server = client.servers.create(
        name="arm-1",
        server_type=ServerType(name="cax11"),
        image=Image(id=161547270),
        location=Location(name="nbg1"),
    ).server

    assert server.location.name == "nbg1"


def test_pricing_lists_every_server_type(api: RawApi) -> None:
    pricing = api.get("/pricing").json()["pricing"]

    assert pricing["currency"] == "EUR"
    assert len(pricing["server_types"]) == 19


def test_primary_ips_are_the_servers_addresses(client: Client, emu: Emulator) -> None:
    assert client.primary_ips.get_all() == []
    emu.control.add_servers(1)

    server = client.servers.get_by_name("server-1")
    ips = {ip.type: ip for ip in client.primary_ips.get_all()}

    assert ips["ipv4"].ip == server.public_net.ipv4.ip
    assert ips["ipv4"].assignee_id == server.id
    assert ips["ipv6"].ip == server.public_net.ipv6.network + "/64"
