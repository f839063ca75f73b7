"""A firewall is `pending` on a server while it is applied or removed, then `applied`."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.firewalls import FirewallResource
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.server_types import ServerType

from emulator import Emulator


def _statuses(hcloud: Client, server_id: int) -> list[str]:
    return [f.status for f in hcloud.servers.get_by_id(server_id).public_net.firewalls]


def test_an_applied_firewall_is_pending_until_its_action_ends(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_timing(0.2, action_seconds=0.5)
    [server_id] = emulator.control.add_servers(1)
    firewall = hcloud.firewalls.create(name="web").firewall
    target = FirewallResource(type="server", server=hcloud.servers.get_by_id(server_id))

    [action] = hcloud.firewalls.apply_to_resources(firewall, [target])
    assert _statuses(hcloud, server_id) == ["pending"]
    action.wait_until_finished()

    assert _statuses(hcloud, server_id) == ["applied"]


def test_a_server_created_with_a_firewall_has_it_pending_while_booting(
    hcloud: Client, emulator: Emulator
) -> None:
    firewall = hcloud.firewalls.create(name="web").firewall
    created = hcloud.servers.create(
        name="web-1",
        server_type=ServerType(name="cx23"),
        image=Image(id=161547269),
        location=Location(name="fsn1"),
        firewalls=[firewall],
    )

    assert [f.status for f in created.server.public_net.firewalls] == ["pending"]
    for action in [created.action, *created.next_actions]:
        action.wait_until_finished()
    assert _statuses(hcloud, created.server.id) == ["applied"]


def test_a_removed_firewall_can_be_deleted_once_the_removal_ends(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_timing(0.2, action_seconds=0.5)
    [server_id] = emulator.control.add_servers(1)
    firewall = hcloud.firewalls.create(name="web").firewall
    target = FirewallResource(type="server", server=hcloud.servers.get_by_id(server_id))
    for action in hcloud.firewalls.apply_to_resources(firewall, [target]):
        action.wait_until_finished()

    [removal] = hcloud.firewalls.remove_from_resources(firewall, [target])
    assert _statuses(hcloud, server_id) == ["pending"]
    with pytest.raises(APIException) as in_use:
        hcloud.firewalls.delete(firewall)
    removal.wait_until_finished()

    assert in_use.value.code == "resource_in_use"
    assert _statuses(hcloud, server_id) == []
    assert hcloud.firewalls.delete(firewall) is True


def test_firewall_actions_are_listed_for_the_kind(hcloud: Client) -> None:
    response = hcloud.firewalls.create(name="web")
    [action] = response.actions

    assert hcloud.firewalls.actions.get_by_id(action.id).command == "set_firewall_rules"
    assert action.id in {a.id for a in hcloud.firewalls.actions.get_all()}
