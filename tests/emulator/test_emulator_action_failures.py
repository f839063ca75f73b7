"""Actions the control API tells to fail end as the real API's failed actions do."""

from __future__ import annotations

import pytest
import requests
from hcloud import Client
from hcloud.actions import ActionFailedException
from hcloud.firewalls import FirewallResource
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.server_types import ServerType
from hcloud.servers import CreateServerResponse

from emulator import Emulator


def _create(hcloud: Client, name: str = "web-1") -> CreateServerResponse:
    return hcloud.servers.create(
        name=name,
        server_type=ServerType(name="cx23"),
        image=Image(id=161547269),
        location=Location(name="fsn1"),
    )


def test_a_failed_create_ends_in_error_and_leaves_the_server_off(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_action_failures([{"command": "create_server"}])

    created = _create(hcloud)
    with pytest.raises(ActionFailedException) as failed:
        created.action.wait_until_finished()
    for follow_up in created.next_actions:
        with pytest.raises(ActionFailedException):
            follow_up.wait_until_finished()

    assert failed.value.action.status == "error"
    assert failed.value.action.error == {"code": "action_failed", "message": "Action failed"}
    assert hcloud.servers.get_by_id(created.server.id).status == "off"


def test_a_rule_runs_out_after_its_times(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_action_failures([{"command": "create_server", "times": 1}])

    _create(hcloud, "first")
    assert emulator.control.action_failures() == []
    second = _create(hcloud, "second")
    second.action.wait_until_finished()

    assert second.action.status == "success"


def test_a_failed_change_type_keeps_the_old_type(hcloud: Client, emulator: Emulator) -> None:
    [server_id] = emulator.control.add_servers(1)
    server = hcloud.servers.get_by_id(server_id)
    server.power_off().wait_until_finished()
    emulator.control.set_action_failures(
        [{"command": "change_server_type", "code": "server_error", "message": "host failed"}]
    )

    with pytest.raises(ActionFailedException) as failed:
        server.change_type(ServerType(name="cx33"), upgrade_disk=True).wait_until_finished()

    after = hcloud.servers.get_by_id(server_id)
    assert failed.value.action.error == {"code": "server_error", "message": "host failed"}
    assert (after.status, after.server_type.name) == ("off", "cx23")


def test_a_failed_firewall_apply_leaves_the_server_without_it(
    hcloud: Client, emulator: Emulator
) -> None:
    [server_id] = emulator.control.add_servers(1)
    server = hcloud.servers.get_by_id(server_id)
    firewall = hcloud.firewalls.create(name="web").firewall
    emulator.control.set_action_failures([{"command": "apply_firewall"}])

    [action] = hcloud.firewalls.apply_to_resources(
        firewall, [FirewallResource(type="server", server=server)]
    )
    with pytest.raises(ActionFailedException):
        action.wait_until_finished()

    assert hcloud.servers.get_by_id(server_id).public_net.firewalls == []


def test_malformed_rules_are_refused(emulator: Emulator) -> None:
    response = requests.put(
        emulator.control.root + "/_emulator/action_failures", json=[{"times": 0}], timeout=10
    )

    assert response.status_code == 400
    assert emulator.control.action_failures() == []


def test_reset_clears_the_rules(emulator: Emulator) -> None:
    emulator.control.set_action_failures([{"command": "create_server", "times": None}])

    emulator.control.reset()

    assert emulator.control.action_failures() == []
