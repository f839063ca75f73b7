"""change_type and the power actions, as the official clients and the hcloud plugin use them."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.server_types import ServerType
from hcloud.servers import BoundServer

from emulator import Emulator


def _stopped(client: Client, emu: Emulator, server_type: str = "cx23") -> BoundServer:
    """A running server of `server_type`, powered off the way the hcloud plugin does it."""
    [server_id] = emu.control.add_servers(1, server_type=server_type)
    server = client.servers.get_by_id(server_id)
    server.power_off().wait_until_finished()
    return client.servers.get_by_id(server_id)


def test_change_type_keeps_the_server_and_starts_it_again(client: Client, emu: Emulator) -> None:
    server = _stopped(client, emu)
    addresses = (server.public_net.ipv4.ip, server.public_net.ipv6.ip)

    action = server.change_type(ServerType(name="cx33"), upgrade_disk=True)
    assert client.servers.get_by_id(server.id).status == "migrating"
    action.wait_until_finished()

    changed = client.servers.get_by_id(server.id)
    assert action.command == "change_server_type"
    assert (changed.status, changed.server_type.name, changed.primary_disk_size) == (
        "running",
        "cx33",
        80,
    )
    assert (changed.public_net.ipv4.ip, changed.public_net.ipv6.ip) == addresses


def test_a_disk_kept_at_its_size_allows_going_back_down(client: Client, emu: Emulator) -> None:
    server = _stopped(client, emu)
    server.change_type(ServerType(name="cx43"), upgrade_disk=False).wait_until_finished()
    assert client.servers.get_by_id(server.id).primary_disk_size == 40

    server.power_off().wait_until_finished()
    server.change_type(ServerType(name="cx23"), upgrade_disk=True).wait_until_finished()

    assert client.servers.get_by_id(server.id).server_type.name == "cx23"


def test_an_upgraded_disk_cannot_shrink(client: Client, emu: Emulator) -> None:
    server = _stopped(client, emu, "cx33")

    with pytest.raises(APIException) as refused:
        server.change_type(ServerType(name="cx23"), upgrade_disk=False)

    assert refused.value.code == "invalid_server_type"
    assert "disk" in refused.value.message
    assert client.servers.get_by_id(server.id).server_type.name == "cx33"


def test_another_architecture_is_refused(client: Client, emu: Emulator) -> None:
    server = _stopped(client, emu)

    with pytest.raises(APIException) as refused:
        server.change_type(ServerType(name="cax11"), upgrade_disk=True)

    assert refused.value.code == "invalid_server_type"
    assert refused.value.message == "server type has incompatible architecture"


def test_a_running_server_must_be_stopped_first(client: Client, emu: Emulator) -> None:
    [server_id] = emu.control.add_servers(1)

    with pytest.raises(APIException) as refused:
        client.servers.get_by_id(server_id).change_type(ServerType(name="cx33"), upgrade_disk=True)

    assert refused.value.code == "server_not_stopped"


def test_a_type_the_location_does_not_offer_is_refused(client: Client, emu: Emulator) -> None:
    [server_id] = emu.control.add_servers(1, server_type="ccx13", location="ash")
    server = client.servers.get_by_id(server_id)
    server.power_off().wait_until_finished()

    with pytest.raises(APIException) as refused:
        server.change_type(ServerType(name="cx33"), upgrade_disk=True)

    assert refused.value.code == "invalid_server_type"


def test_shutdown_then_power_on(client: Client, emu: Emulator) -> None:
    [server_id] = emu.control.add_servers(1)
    server = client.servers.get_by_id(server_id)

    server.shutdown().wait_until_finished()
    assert client.servers.get_by_id(server_id).status == "off"
    server.power_on().wait_until_finished()

    assert client.servers.get_by_id(server_id).status == "running"


def test_a_server_types_actions_are_listed_per_resource_kind(client: Client, emu: Emulator) -> None:
    server = _stopped(client, emu)
    action = server.change_type(ServerType(name="cx33"), upgrade_disk=True)

    assert client.servers.actions.get_by_id(action.id).command == "change_server_type"
    assert action.id in {a.id for a in client.servers.actions.get_all()}
    with pytest.raises(APIException) as elsewhere:
        client.firewalls.actions.get_by_id(action.id)
    assert elsewhere.value.code == "not_found"
