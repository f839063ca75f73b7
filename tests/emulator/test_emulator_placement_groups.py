"""Spread placement groups through the official hcloud client: membership at create, the
10-server limit and its error, leaving on delete, and deleting a group in use."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.placement_groups import BoundPlacementGroup
from hcloud.server_types import ServerType
from hcloud.servers import CreateServerResponse

from testkit.api_schema import conform
from testkit.hetzner import RawApi


def group(hcloud: Client, name: str = "workers") -> BoundPlacementGroup:
    made = hcloud.placement_groups.create(name=name, type="spread", labels={"orca": "pool"})
    assert made.action is None
    return made.placement_group


def server(hcloud: Client, name: str, placement: BoundPlacementGroup) -> CreateServerResponse:
    return hcloud.servers.create(
        name=name,
        server_type=ServerType(name="cx23"),
        image=Image(name="ubuntu-24.04"),
        location=Location(name="fsn1"),
        placement_group=placement,
    )


def test_a_server_created_in_a_group_is_listed_both_ways(
    hcloud: Client, emulator_api: RawApi
) -> None:
    pg = group(hcloud)

    made = server(hcloud, "w-1", pg).server

    assert hcloud.servers.get_by_id(made.id).placement_group.id == pg.id
    read = hcloud.placement_groups.get_by_name("workers")
    assert read is not None
    assert (read.type, read.servers, read.labels) == ("spread", [made.id], {"orca": "pool"})
    listed = emulator_api.get(f"/placement_groups/{pg.id}").json()["placement_group"]
    conform("placement_group", listed)
    body = emulator_api.get(f"/servers/{made.id}").json()["server"]
    conform("placement_group", body["placement_group"])


def test_placement_groups_list_by_label_selector_and_type(
    hcloud: Client, emulator_api: RawApi
) -> None:
    group(hcloud, "workers")
    hcloud.placement_groups.create(name="other", type="spread", labels={"orca": "else"})

    found = hcloud.placement_groups.get_all(label_selector="orca=pool")
    by_type = emulator_api.get("/placement_groups", params={"type": "spread"}).json()

    assert [g.name for g in found] == ["workers"]
    assert [g["name"] for g in by_type["placement_groups"]] == ["workers", "other"]


def test_only_spread_groups_exist(hcloud: Client) -> None:
    with pytest.raises(APIException) as excinfo:
        hcloud.placement_groups.create(name="x", type="cluster")
    assert excinfo.value.code == "invalid_input"


def test_an_eleventh_server_is_refused_with_the_real_apis_error(hcloud: Client) -> None:
    pg = group(hcloud)
    for index in range(1, 11):
        server(hcloud, f"w-{index}", pg)

    with pytest.raises(APIException) as excinfo:
        server(hcloud, "w-11", pg)

    assert excinfo.value.code == "placement_group_member_limit_reached"
    assert excinfo.value.message == f"placement group with ID {pg.id} contains already 10 servers"
    assert hcloud.servers.get_by_name("w-11") is None
    assert len(hcloud.placement_groups.get_by_id(pg.id).servers) == 10


def test_a_deleted_server_frees_its_place(hcloud: Client) -> None:
    pg = group(hcloud)
    made = [server(hcloud, f"w-{index}", pg) for index in range(1, 11)]

    made[0].server.delete().wait_until_finished()
    server(hcloud, "w-11", pg)

    assert len(hcloud.placement_groups.get_by_id(pg.id).servers) == 10
    assert made[0].server.id not in hcloud.placement_groups.get_by_id(pg.id).servers


def test_a_group_in_use_cannot_be_deleted(hcloud: Client) -> None:
    pg = group(hcloud)
    made = server(hcloud, "w-1", pg)

    with pytest.raises(APIException) as excinfo:
        pg.delete()
    assert excinfo.value.code == "resource_in_use"

    made.server.delete().wait_until_finished()
    assert pg.delete() is True
    assert hcloud.placement_groups.get_all() == []


def test_an_unknown_group_is_refused(hcloud: Client) -> None:
    with pytest.raises(APIException) as excinfo:
        server(hcloud, "w-1", BoundPlacementGroup(hcloud.placement_groups, {"id": 4242}))

    assert excinfo.value.code == "invalid_input"
    assert hcloud.servers.get_all() == []


def test_a_stopped_server_moves_in_and_out_of_a_group(hcloud: Client) -> None:
    pg = group(hcloud)
    made = hcloud.servers.create(
        name="w-1",
        server_type=ServerType(name="cx23"),
        image=Image(name="ubuntu-24.04"),
        location=Location(name="fsn1"),
        start_after_create=False,
    )
    made.action.wait_until_finished()

    made.server.add_to_placement_group(pg).wait_until_finished()
    inside = hcloud.placement_groups.get_by_id(pg.id).servers
    made.server.remove_from_placement_group().wait_until_finished()

    assert inside == [made.server.id]
    assert hcloud.placement_groups.get_by_id(pg.id).servers == []
    assert hcloud.servers.get_by_id(made.server.id).placement_group is None
