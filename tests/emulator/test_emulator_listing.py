"""Listing servers: label selectors, pagination, sorting and filters, as the real API lists."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client

from emulator import Emulator
from testkit.hetzner import RawApi


@pytest.fixture
def labelled(emulator: Emulator) -> None:
    """a-1, a-2 (pool=a, env=prod), b-1, b-2 (pool=b), c-1 (no labels)."""
    emulator.control.add_servers(2, name_prefix="a-", labels={"pool": "a", "env": "prod"})
    emulator.control.add_servers(2, name_prefix="b-", labels={"pool": "b"})
    emulator.control.add_servers(1, name_prefix="c-")


@pytest.mark.usefixtures("labelled")
@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("pool=a", {"a-1", "a-2"}),
        ("pool==b", {"b-1", "b-2"}),
        ("pool!=a", {"b-1", "b-2", "c-1"}),
        ("pool", {"a-1", "a-2", "b-1", "b-2"}),
        ("!pool", {"c-1"}),
        ("pool in (a,b)", {"a-1", "a-2", "b-1", "b-2"}),
        ("pool in (b)", {"b-1", "b-2"}),
        ("pool notin (a)", {"b-1", "b-2", "c-1"}),
        ("pool=a,env=prod", {"a-1", "a-2"}),
        ("pool in (a, b),!env", {"b-1", "b-2"}),
        ("pool=zzz", set()),
    ],
)
def test_label_selector_operators_select_the_right_servers(
    hcloud: Client, selector: str, expected: set[str]
) -> None:
    servers = hcloud.servers.get_all(label_selector=selector)

    assert {s.name for s in servers} == expected


@pytest.mark.parametrize("selector", ["pool in ()", "pool in (a", "a,,b", "=x", "k=v w"])
def test_an_invalid_label_selector_is_invalid_input(hcloud: Client, selector: str) -> None:
    with pytest.raises(APIException) as excinfo:
        hcloud.servers.get_all(label_selector=selector)

    assert excinfo.value.code == "invalid_input"


def test_get_all_walks_every_page_beyond_fifty(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.add_servers(120, name_prefix="bulk-", labels={"bulk": "yes"})
    emulator.control.add_servers(3, name_prefix="other-")
    emulator.control.reset_requests()

    servers = hcloud.servers.get_all(label_selector="bulk=yes")

    assert len(servers) == 120
    assert len({s.id for s in servers}) == 120
    assert emulator.control.requests().get("GET /v1/servers") == 3


def test_a_page_reports_its_neighbours_in_meta(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.add_servers(120)

    page = hcloud.servers.get_list(page=2, per_page=50)

    pagination = page.meta.pagination
    assert len(page.servers) == 50
    assert (pagination.page, pagination.per_page) == (2, 50)
    assert (pagination.previous_page, pagination.next_page) == (1, 3)
    assert (pagination.last_page, pagination.total_entries) == (3, 120)


def test_per_page_defaults_to_25_and_is_capped_at_50(
    emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.add_servers(60)

    default = emulator_api.get("/servers").json()
    capped = emulator_api.get("/servers", params={"per_page": 500}).json()

    assert len(default["servers"]) == 25
    assert default["meta"]["pagination"]["previous_page"] is None
    assert len(capped["servers"]) == 50
    assert capped["meta"]["pagination"]["per_page"] == 50


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("name", ["s-1", "s-2", "s-3"]),
        ("name:desc", ["s-3", "s-2", "s-1"]),
        ("id:desc", ["s-3", "s-2", "s-1"]),
        ("id:asc", ["s-1", "s-2", "s-3"]),
        ("created", ["s-1", "s-2", "s-3"]),
    ],
)
def test_servers_sort_by_the_sort_parameter(
    emulator_api: RawApi, emulator: Emulator, sort: str, expected: list[str]
) -> None:
    emulator.control.add_servers(3, name_prefix="s-")

    names = [
        s["name"] for s in emulator_api.get("/servers", params={"sort": sort}).json()["servers"]
    ]

    assert names == expected


def test_an_unknown_sort_is_invalid_input(emulator_api: RawApi) -> None:
    response = emulator_api.get("/servers", params={"sort": "colour"})

    assert response.json()["error"]["code"] == "invalid_input"


def test_the_status_filter_is_repeatable(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.add_servers(2, name_prefix="up-")
    stopped = hcloud.servers.get_by_name("up-1")
    stopped.power_off().wait_until_finished()

    off = hcloud.servers.get_all(status=["off"])
    both = hcloud.servers.get_all(status=["off", "running"])

    assert [s.name for s in off] == ["up-1"]
    assert len(both) == 2


def test_the_name_filter_finds_one_server(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.add_servers(5, name_prefix="n-")

    assert hcloud.servers.get_by_name("n-4").name == "n-4"
    assert hcloud.servers.get_by_name("n-9") is None
