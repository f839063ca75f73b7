"""Servers through the official hcloud client: create, read, lifecycle, validation, actions."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.firewalls import Firewall, FirewallRule
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.server_types import ServerType
from hcloud.servers import BoundServer, CreateServerResponse

from emulator import Emulator
from testkit.hetzner import RawApi


def create(
    hcloud: Client,
    name: str = "web-1",
    server_type: str = "cx23",
    image: str | int = "ubuntu-24.04",
    location: str | None = "fsn1",
    **kwargs: object,
) -> CreateServerResponse:
    image_ref = Image(id=image) if isinstance(image, int) else Image(name=image)
    return hcloud.servers.create(
        name=name,
        server_type=ServerType(name=server_type),
        image=image_ref,
        location=Location(name=location) if location else None,
        **kwargs,
    )


def wait(response: CreateServerResponse) -> None:
    response.action.wait_until_finished()
    for action in response.next_actions:
        action.wait_until_finished()


def error_code(excinfo: pytest.ExceptionInfo[APIException]) -> object:
    return excinfo.value.code


def test_a_server_created_by_names_can_be_read_back(hcloud: Client) -> None:
    created = create(hcloud, labels={"pool": "workers"})

    server = hcloud.servers.get_by_id(created.server.id)

    assert server.name == "web-1"
    assert server.server_type.name == "cx23"
    assert server.image.name == "ubuntu-24.04"
    assert server.location.name == "fsn1"
    assert server.labels == {"pool": "workers"}


def test_a_server_json_has_the_full_shape_of_the_real_api(
    hcloud: Client, emulator_api: RawApi
) -> None:
    server_id = create(hcloud).server.id

    body = emulator_api.get(f"/servers/{server_id}").json()["server"]

    assert {
        "id",
        "name",
        "status",
        "created",
        "public_net",
        "private_net",
        "server_type",
        "location",
        "image",
        "iso",
        "rescue_enabled",
        "locked",
        "backup_window",
        "outgoing_traffic",
        "ingoing_traffic",
        "included_traffic",
        "protection",
        "labels",
        "volumes",
        "load_balancers",
        "primary_disk_size",
        "placement_group",
    } <= set(body)
    assert "datacenter" not in body
    assert body["public_net"]["ipv4"]["id"] > 0
    assert body["public_net"]["ipv4"]["dns_ptr"].endswith(".clients.your-server.de")
    assert body["public_net"]["firewalls"] == []
    assert body["public_net"]["ipv6"]["ip"].endswith("::/64")
    assert body["protection"] == {"delete": False, "rebuild": False}
    assert body["primary_disk_size"] == 40


def test_a_new_server_is_initializing_then_running(hcloud: Client) -> None:
    created = create(hcloud)
    assert created.server.status == "initializing"
    assert [a.command for a in created.next_actions] == ["start_server"]

    wait(created)

    assert hcloud.servers.get_by_id(created.server.id).status == "running"


def test_a_server_not_started_after_create_ends_up_off(hcloud: Client) -> None:
    created = create(hcloud, start_after_create=False)
    assert created.next_actions == []

    wait(created)

    assert hcloud.servers.get_by_id(created.server.id).status == "off"


def test_the_create_action_can_be_polled_until_it_succeeds(hcloud: Client) -> None:
    action = create(hcloud).action
    assert action.status == "running"

    action.wait_until_finished()

    assert action.status == "success"
    assert action.progress == 100
    assert action.finished is not None


def test_a_root_password_is_returned_only_without_ssh_keys(hcloud: Client) -> None:
    assert create(hcloud).root_password


def test_a_deleted_server_is_gone(hcloud: Client) -> None:
    created = create(hcloud)
    wait(created)

    hcloud.servers.delete(created.server).wait_until_finished()

    with pytest.raises(APIException) as excinfo:
        hcloud.servers.get_by_id(created.server.id)
    assert error_code(excinfo) == "not_found"


def test_a_server_being_deleted_shows_deleting_and_keeps_its_name(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_timing(boot_seconds=0, action_seconds=10)
    created = create(hcloud, name="leaving")
    wait(created)

    hcloud.servers.delete(created.server)

    assert hcloud.servers.get_by_id(created.server.id).status == "deleting"
    with pytest.raises(APIException) as excinfo:
        create(hcloud, name="leaving")
    assert error_code(excinfo) == "uniqueness_error"


def test_a_server_deleted_while_booting_stays_deleting(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_timing(boot_seconds=0.05, action_seconds=2.0)
    created = create(hcloud, name="short-lived")
    hcloud.servers.delete(created.server)

    wait(created)

    assert hcloud.servers.get_by_id(created.server.id).status == "deleting"


def test_a_duplicate_name_is_a_uniqueness_error(hcloud: Client, emulator_api: RawApi) -> None:
    create(hcloud, name="twin")

    with pytest.raises(APIException) as excinfo:
        create(hcloud, name="twin")

    assert error_code(excinfo) == "uniqueness_error"
    raw = emulator_api.post(
        "/servers", json={"name": "twin", "server_type": "cx23", "image": "ubuntu-24.04"}
    )
    assert raw.status_code == 409


def test_a_name_that_is_not_a_hostname_is_invalid_input_naming_the_field(
    emulator_api: RawApi,
) -> None:
    response = emulator_api.post(
        "/servers", json={"name": "not_a_host!", "server_type": "cx23", "image": "ubuntu-24.04"}
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["details"]["fields"][0]["name"] == "name"


@pytest.mark.parametrize(
    "labels",
    [{"bad key": "v"}, {"k": "-starts-with-dash"}, {"k": "x" * 64}, {"hetzner.cloud/k": "v"}],
)
def test_invalid_labels_are_invalid_input(hcloud: Client, labels: dict[str, str]) -> None:
    with pytest.raises(APIException) as excinfo:
        create(hcloud, labels=labels)

    assert error_code(excinfo) == "invalid_input"


def test_labels_with_prefixes_and_empty_values_are_accepted(hcloud: Client) -> None:
    labels = {"example.com/role": "web", "just-a-key": "", "a.b_c-d": "v.1_2-3"}

    server = create(hcloud, labels=labels).server

    assert server.labels == labels


@pytest.mark.parametrize(
    ("field", "value"),
    [("server_type", "cx99"), ("image", "windows-95"), ("location", "mars1")],
)
def test_unknown_references_are_invalid_input(emulator_api: RawApi, field: str, value: str) -> None:
    body = {"name": "web-1", "server_type": "cx23", "image": "ubuntu-24.04", field: value}

    response = emulator_api.post("/servers", json=body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"


def test_an_image_of_the_other_architecture_is_refused(hcloud: Client) -> None:
    arm_image = hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "arm")

    with pytest.raises(APIException) as excinfo:
        create(hcloud, server_type="cx23", image=arm_image.id)

    assert error_code(excinfo) == "invalid_input"
    assert "incompatible architecture" in excinfo.value.message


def test_an_arm_server_is_created_from_the_arm_image_id(hcloud: Client) -> None:
    arm_image = hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "arm")

    server = create(hcloud, server_type="cax11", image=arm_image.id).server

    assert server.image.architecture == "arm"
    assert server.server_type.architecture == "arm"


def test_a_type_the_location_does_not_offer_is_invalid_input(hcloud: Client) -> None:
    with pytest.raises(APIException) as excinfo:
        create(hcloud, server_type="cax11", image=103908070, location="ash")

    assert error_code(excinfo) == "invalid_input"
    assert excinfo.value.message == "unsupported location for server type"


def test_without_a_location_the_server_lands_where_its_type_is_in_stock(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_stock([{"server_type": "cx23", "location": "fsn1"}])

    server = create(hcloud, location=None).server

    assert server.location.name == "nbg1"


def test_power_actions_move_the_status(hcloud: Client) -> None:
    created = create(hcloud)
    wait(created)
    server = hcloud.servers.get_by_id(created.server.id)

    server.power_off().wait_until_finished()
    assert hcloud.servers.get_by_id(server.id).status == "off"
    server.power_on().wait_until_finished()
    assert hcloud.servers.get_by_id(server.id).status == "running"
    server.reboot().wait_until_finished()
    server.reset().wait_until_finished()
    server.shutdown().wait_until_finished()
    assert hcloud.servers.get_by_id(server.id).status == "off"
    commands = [a.command for a in server.get_actions()]
    assert commands == [
        "create_server",
        "start_server",
        "stop_server",
        "start_server",
        "reboot_server",
        "reset_server",
        "shutdown_server",
    ]


def test_a_power_action_while_another_runs_is_locked(hcloud: Client) -> None:
    created = create(hcloud)

    with pytest.raises(APIException) as excinfo:
        hcloud.servers.power_off(created.server)

    assert error_code(excinfo) == "locked"


def test_a_server_can_be_renamed_and_relabelled(hcloud: Client) -> None:
    server = create(hcloud).server

    updated = hcloud.servers.update(server, name="web-2", labels={"tier": "front"})

    assert updated.name == "web-2"
    assert hcloud.servers.get_by_name("web-2").labels == {"tier": "front"}
    assert hcloud.servers.get_by_name("web-1") is None


def test_a_delete_protected_server_cannot_be_deleted(hcloud: Client) -> None:
    server = create(hcloud).server
    hcloud.servers.change_protection(server, delete=True, rebuild=True).wait_until_finished()

    with pytest.raises(APIException) as excinfo:
        hcloud.servers.delete(server)

    assert error_code(excinfo) == "protected"


def test_a_server_created_with_a_firewall_shows_it_applied(hcloud: Client) -> None:
    rule = FirewallRule(direction="in", protocol="tcp", port="22", source_ips=["0.0.0.0/0"])
    firewall = hcloud.firewalls.create(name="ssh", rules=[rule]).firewall

    created = create(hcloud, firewalls=[Firewall(id=firewall.id)])
    wait(created)

    server: BoundServer = hcloud.servers.get_by_id(created.server.id)
    assert [(f.firewall.id, f.status) for f in server.public_net.firewalls] == [
        (firewall.id, "applied")
    ]
    assert "apply_firewall" in [a.command for a in created.next_actions]


def test_networks_and_volumes_the_emulator_lacks_are_invalid_input(emulator_api: RawApi) -> None:
    body = {"name": "web-1", "server_type": "cx23", "image": "ubuntu-24.04", "networks": [7]}

    response = emulator_api.post("/servers", json=body)

    assert response.json()["error"]["code"] == "invalid_input"


def test_a_server_type_and_image_may_be_given_by_id(emulator_api: RawApi) -> None:
    body = {"name": "by-id", "server_type": 114, "image": "161547269", "location": 2}

    response = emulator_api.post("/servers", json=body)

    assert response.status_code == 201
    server = response.json()["server"]
    assert (server["server_type"]["name"], server["location"]["name"]) == ("cx23", "nbg1")
