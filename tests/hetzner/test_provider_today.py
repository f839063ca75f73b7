"""The runtime on today's Hetzner API: per-location deprecation, failed create actions, no
datacenters. Against the emulator, whose catalogue has cpx12 deprecated (still sold) in sin
and ccx13 unavailable in hil for 30 days."""

from __future__ import annotations

import logging
from datetime import datetime

import pytest
from hcloud import Client
from hcloud.actions import ActionFailedException
from hcloud.deprecation.domain import DeprecationInfo

from emulator import Emulator
from machines import MachineSpec, Status
from machines.runtime.clouds.hetzner.provider import HetznerProvider


def spec(name: str, machine_type: str, location: str) -> MachineSpec:
    return MachineSpec(name=name, machine_type=machine_type, location=location, pool="ci")


def deprecation(hcloud: Client, machine_type: str, location: str) -> DeprecationInfo:
    """The type's deprecation in the location, as the API gives it.

    Its dates count from the emulator's start, so a test that ran past midnight after the
    emulator started would see another day than its own clock's: the API is what to compare.
    """
    server_type = hcloud.server_types.get_by_name(machine_type)
    assert server_type is not None
    assert server_type.locations is not None
    (found,) = [place for place in server_type.locations if place.location.name == location]
    assert found.deprecation is not None
    return found.deprecation


def day(moment: datetime | None) -> str:
    assert moment is not None
    return moment.date().isoformat()


def creates(emulator: Emulator) -> int:
    return emulator.control.requests().routes.get("POST /v1/servers", 0)


def test_a_type_no_longer_sold_in_the_location_fails_saying_since_when(
    hetzner_provider: HetznerProvider, emulator: Emulator, hcloud: Client
) -> None:
    created = hetzner_provider.create(spec("ci-1", "ccx13", "hil"))

    since = day(deprecation(hcloud, "ccx13", "hil").unavailable_after)
    assert created.failed
    assert "no longer sells ccx13 in hil" in created.reason
    assert f"unavailable since {since}" in created.reason
    assert creates(emulator) == 0


def test_a_type_deprecated_in_the_location_is_created_and_its_end_date_logged(
    hetzner_provider: HetznerProvider, hcloud: Client, caplog: pytest.LogCaptureFixture
) -> None:
    until = day(deprecation(hcloud, "cpx12", "sin").unavailable_after)

    with caplog.at_level(logging.WARNING, logger="machines"):
        created = hetzner_provider.create(spec("ci-1", "cpx12", "sin"))

    assert created.ok
    assert "cpx12 is deprecated in sin since" in caplog.text
    assert f"until {until}" in caplog.text


def test_no_stock_of_a_deprecated_type_says_when_it_stops(
    hetzner_provider: HetznerProvider, emulator: Emulator
) -> None:
    emulator.control.set_stock([{"server_type": "cpx12", "location": "sin"}])

    created = hetzner_provider.create(spec("ci-1", "cpx12", "sin"))

    assert created.no_stock
    assert "it can be created there until" in created.reason


def test_a_type_not_offered_in_the_location_says_where_it_is(
    hetzner_provider: HetznerProvider, emulator: Emulator
) -> None:
    created = hetzner_provider.create(spec("ci-1", "cax11", "ash"))

    assert created.failed
    assert created.reason == "Hetzner does not offer cax11 in 'ash': it is sold in fsn1, hel1, nbg1"
    assert creates(emulator) == 0


def test_a_create_whose_action_fails_at_once_is_deleted_and_reported(
    hetzner_provider: HetznerProvider, emulator: Emulator, hcloud: Client
) -> None:
    emulator.control.set_timing(0)
    emulator.control.set_action_failures([{"command": "create_server"}])

    created = hetzner_provider.create(spec("ci-1", "cx23", "fsn1"))

    assert created.failed
    assert "its create action failed (action_failed: Action failed)" in created.reason
    assert "was deleted" in created.reason
    assert [s.status for s in hcloud.servers.get_all()] in ([], ["deleting"])


def test_a_create_whose_action_fails_later_is_listed_as_failed(
    hetzner_provider: HetznerProvider, emulator: Emulator, hcloud: Client
) -> None:
    emulator.control.set_action_failures([{"command": "create_server"}])
    created = hetzner_provider.create(spec("ci-1", "cx23", "fsn1"))
    assert created.ok
    assert created.machine is not None
    actions = hcloud.servers.get_by_id(int(created.machine.id)).get_actions()
    for action in actions:
        with pytest.raises(ActionFailedException):
            action.wait_until_finished()

    assert [(m.name, m.status) for m in hetzner_provider.machines("ci")] == [
        ("ci-1", Status.FAILED)
    ]
    assert hetzner_provider.delete(created.machine.id) is True


def test_an_off_server_that_was_made_is_not_failed(
    hetzner_provider: HetznerProvider, emulator: Emulator, hcloud: Client
) -> None:
    created = hetzner_provider.create(spec("ci-1", "cx23", "fsn1"))
    assert created.machine is not None
    server = hcloud.servers.get_by_id(int(created.machine.id))
    for action in [*server.get_actions()]:
        action.wait_until_finished()
    server.power_off().wait_until_finished()

    assert [m.status for m in hetzner_provider.machines("ci")] == [Status.OFF]


def test_no_operation_asks_for_datacenters(
    hetzner_provider: HetznerProvider, emulator: Emulator
) -> None:
    created = hetzner_provider.create(spec("ci-1", "cax11", "fsn1"))
    hetzner_provider.arch("cx23")
    hetzner_provider.machines("ci")
    assert created.machine is not None
    hetzner_provider.delete(created.machine.id)

    routes = emulator.control.requests().routes
    assert not [route for route in routes if "datacenter" in route]
