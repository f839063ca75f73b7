"""change_type and the power actions, as the official clients and the hcloud plugin use them."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.server_types import ServerType
from hcloud.servers import BoundServer

from emulator import Emulator


def _stopped(hcloud: Client, emulator: Emulator, server_type: str = "cx23") -> BoundServer:
    """A running server of `server_type`, powered off the way the hcloud plugin does it."""
    [server_id] = emulator.control.add_servers(1, server_type=server_type)
    server = hcloud.servers.get_by_id(server_id)
    server.power_off().wait_until_finished()
    return hcloud.servers.get_by_id(server_id)


def test_change_type_keeps_the_server_and_starts_it_again(
    hcloud: Client, emulator: Emulator
) -> None:
    server = _stopped(hcloud, emulator)
    addresses = (server.public_net.ipv4.ip, server.public_net.ipv6.ip)

    action = server.change_type(ServerType(name="cx33"), upgrade_disk=True)
    assert hcloud.servers.get_by_id(server.id).status == "migrating"
    action.wait_until_finished()

    changed = hcloud.servers.get_by_id(server.id)
    assert action.command == "change_server_type"
    assert (changed.status, changed.server_type.name, changed.primary_disk_size) == (
        "running",
        "cx33",
        80,
    )
    assert (changed.public_net.ipv4.ip, changed.public_net.ipv6.ip) == addresses


def test_a_disk_kept_at_its_size_allows_going_back_down(hcloud: Client, emulator: Emulator) -> None:
    server = _stopped(hcloud, emulator)
    server.change_type(ServerType(name="cx43"), upgrade_disk=False).wait_until_finished()
    assert hcloud.servers.get_by_id(server.id).primary_disk_size == 40

    server.power_off().wait_until_finished()
    server.change_type(ServerType(name="cx23"), upgrade_disk=True).wait_until_finished()

    assert hcloud.servers.get_by_id(server.id).server_type.name == "cx23"


def test_an_upgraded_disk_cannot_shrink(hcloud: Client, emulator: Emulator) -> None:
    server = _stopped(hcloud, emulator, "cx33")

    with pytest.raises(APIException) as refused:
        server.change_type(ServerType(name="cx23"), upgrade_disk=False)

    assert refused.value.code == "invalid_server_type"
    assert "disk" in refused.value.message
    assert hcloud.servers.get_by_id(server.id).server_type.name == "cx33"


def test_another_architecture_is_refused(hcloud: Client, emulator: Emulator) -> None:
    server = _stopped(hcloud, emulator)

    with pytest.raises(APIException) as refused:
        server.change_type(ServerType(name="cax11"), upgrade_disk=True)

    assert refused.value.code == "invalid_server_type"
    assert refused.value.message == "server type has incompatible architecture"


def test_a_running_server_must_be_stopped_first(hcloud: Client, emulator: Emulator) -> None:
    [server_id] = emulator.control.add_servers(1)

    with pytest.raises(APIException) as refused:
        hcloud.servers.get_by_id(server_id).change_type(ServerType(name="cx33"), upgrade_disk=True)

    assert refused.value.code == "server_not_stopped"


def test_a_type_the_location_does_not_offer_is_refused(hcloud: Client, emulator: Emulator) -> None:
    [server_id] = emulator.control.add_servers(1, server_type="ccx13", location="ash")
    server = hcloud.servers.get_by_id(server_id)
    server.power_off().wait_until_finished()

    with pytest.raises(APIException) as refused:
        server.change_type(ServerType(name="cx33"), upgrade_disk=True)

    assert refused.value.code == "invalid_server_type"


def test_shutdown_then_power_on(hcloud: Client, emulator: Emulator) -> None:
    [server_id] = emulator.control.add_servers(1)
    server = hcloud.servers.get_by_id(server_id)

    server.shutdown().wait_until_finished()
    assert hcloud.servers.get_by_id(server_id).status == "off"
    server.power_on().wait_until_finished()

    assert hcloud.servers.get_by_id(server_id).status == "running"


def test_a_server_types_actions_are_listed_per_resource_kind(
    hcloud: Client, emulator: Emulator
) -> None:
    server = _stopped(hcloud, emulator)
    action = server.change_type(ServerType(name="cx33"), upgrade_disk=True)

    assert hcloud.servers.actions.get_by_id(action.id).command == "change_server_type"
    assert action.id in {a.id for a in hcloud.servers.actions.get_all()}
    with pytest.raises(APIException) as elsewhere:
        hcloud.firewalls.actions.get_by_id(action.id)
    assert elsewhere.value.code == "not_found"
