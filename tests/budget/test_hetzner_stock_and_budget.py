"""Hetzner: offers from the server types' stock, no_stock remembered, the budget in sight."""

from __future__ import annotations

import math

import pytest
from hcloud import Client

from machines import MachineSpec, SettingsError, UnknownMachineTypeError
from machines.runtime.labels import pool_labels
from machines.runtime.settings import Freshness
from testkit.specs import OWNER

SERVER_TYPES = "GET /v1/server_types"
POST_SERVERS = "POST /v1/servers"
GET_SERVERS = "GET /v1/servers"


def spec(name: str, location: str = "nbg1") -> MachineSpec:
    return MachineSpec(name=name, machine_type="cax11", location=location, pool="ci")


def test_offers_are_the_locations_with_the_type_in_stock(clocked_hetzner, emulator):
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])

    assert set(clocked_hetzner.offers("cax11")) == {"fsn1", "hel1"}


def test_offers_of_every_type_cost_one_request_while_cached(clocked_hetzner, emulator, clock):
    clocked_hetzner.offers("cax11")
    clocked_hetzner.offers("ccx23")
    clock.advance(59)
    clocked_hetzner.offers("cax11")

    assert emulator.control.requests().get(SERVER_TYPES) == 1


def test_offers_of_an_unknown_type_name_the_known_ones(clocked_hetzner):
    with pytest.raises(UnknownMachineTypeError, match="cx999.*cax11"):
        clocked_hetzner.offers("cx999")


def test_no_stock_is_remembered_and_answered_without_a_request(clocked_hetzner, emulator):
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    assert clocked_hetzner.create(spec("prod-ci-a1")).no_stock
    emulator.control.reset_requests()

    again = clocked_hetzner.create(spec("prod-ci-a2"))

    assert again.no_stock
    assert "again in 180 s" in again.reason
    assert emulator.control.requests().total == 0


def test_offers_leave_out_a_location_remembered_as_out_of_stock(clocked_hetzner, emulator):
    clocked_hetzner.offers("cax11")
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    assert clocked_hetzner.create(spec("prod-ci-a1")).no_stock

    assert "nbg1" not in clocked_hetzner.offers("cax11")


def test_the_stock_memory_expires(clocked_hetzner, emulator, clock):
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    assert clocked_hetzner.create(spec("prod-ci-a1")).no_stock
    emulator.control.set_stock([])

    assert clocked_hetzner.create(spec("prod-ci-a2")).no_stock
    clock.advance(180)

    assert clocked_hetzner.create(spec("prod-ci-a3")).ok


def test_the_cloud_showing_stock_again_clears_the_memory(clocked_hetzner, emulator, clock):
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    assert clocked_hetzner.create(spec("prod-ci-a1")).no_stock
    emulator.control.set_stock([])
    clock.advance(60)

    assert "nbg1" in clocked_hetzner.offers("cax11")
    assert clocked_hetzner.create(spec("prod-ci-a2")).ok


def test_the_stock_memory_setting_is_read(make_clocked_hetzner, emulator):
    provider = make_clocked_hetzner(ORCA_NO_STOCK_TTL="0")
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    provider.create(spec("prod-ci-a1"))
    emulator.control.reset_requests()

    provider.create(spec("prod-ci-a2"))

    assert emulator.control.requests().get(POST_SERVERS) == 1


def test_the_budget_is_what_the_last_answer_stated(clocked_hetzner, emulator):
    emulator.control.set_rate_limit(3600, per_second=1)
    clocked_hetzner.machines("ci")

    budget = clocked_hetzner.budget()

    assert budget.stated
    assert (budget.limit, budget.remaining) == (3600, 3599)
    assert budget.reset is not None
    assert not budget.low


def test_a_listing_of_many_pages_spends_at_most_its_share(clocked_hetzner, emulator, clock):
    emulator.control.set_rate_limit(3600, per_second=1)
    emulator.control.add_servers(
        200, name_prefix="prod-ci-", server_type="cax11", labels=pool_labels("ci", OWNER)
    )
    clocked_hetzner.machines("ci")

    window = clocked_hetzner.budget().list_window

    share = Freshness().list_share
    assert math.isclose(window, 4 / (share * 1.0), rel_tol=0.01)  # 4 pages, share of 1 a second


def test_the_listing_window_never_passes_its_max_age(make_clocked_hetzner, emulator, clock):
    emulator.control.set_rate_limit(3600, per_second=1)
    provider = make_clocked_hetzner(ORCA_LIST_MAX_AGE="60")
    emulator.control.add_servers(
        200, name_prefix="prod-ci-", server_type="cax11", labels=pool_labels("ci", OWNER)
    )
    provider.machines("ci")
    emulator.control.reset_requests()

    clock.advance(59)
    provider.machines("ci")
    clock.advance(1)
    provider.machines("ci")

    assert provider.budget().list_window == 60
    assert emulator.control.requests().get(GET_SERVERS) == 4  # one listing of 4 pages


def spend(hcloud: Client, requests: int) -> None:
    """Requests of another client of the same project: they share its budget."""
    for _ in range(requests):
        hcloud.server_types.get_list(per_page=1)


def test_a_low_budget_stretches_the_listing_window(clocked_hetzner, emulator, clock, hcloud):
    emulator.control.set_rate_limit(100, per_second=0.01)
    clocked_hetzner.machines("ci")
    spend(hcloud, 90)
    made = clocked_hetzner.create(spec("prod-ci-a1", location="fsn1"))
    emulator.control.reset_requests()

    for _ in range(10):
        clock.advance(5)
        clocked_hetzner.machines("ci")

    budget = clocked_hetzner.budget()
    assert budget.low
    assert budget.list_window == math.inf
    assert emulator.control.requests().get(GET_SERVERS) == 0
    assert made.machine is not None
    assert made.machine.id in {m.id for m in clocked_hetzner.machines("ci")}


def test_the_stretch_ends_as_the_budget_refills(clocked_hetzner, emulator, clock, hcloud):
    emulator.control.set_rate_limit(100, per_second=0.01)
    clocked_hetzner.machines("ci")
    spend(hcloud, 95)
    clocked_hetzner.offers("cax11")
    assert clocked_hetzner.budget().low

    clock.advance(100 / 0.01)
    emulator.control.reset_requests()

    assert not clocked_hetzner.budget().low
    clocked_hetzner.machines("ci")
    assert emulator.control.requests().get(GET_SERVERS) == 1


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ORCA_LIST_TTL", "-1"),
        ("ORCA_LIST_SHARE", "1.5"),
        ("ORCA_LIST_MAX_AGE", "0"),
        ("ORCA_BUDGET_RESERVE", "ten"),
        ("ORCA_NO_STOCK_TTL", "soon"),
        ("ORCA_OFFERS_TTL", "-5"),
    ],
)
def test_a_bad_freshness_setting_names_its_variable(make_clocked_hetzner, variable, value):
    with pytest.raises(SettingsError, match=variable):
        make_clocked_hetzner(**{variable: value})
