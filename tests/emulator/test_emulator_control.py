"""The control API and the ways to start the emulator (CLI flags, --port 0, the context manager)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import requests
from hcloud import Client
from hcloud.images import Image
from hcloud.server_types import ServerType

from emulator import ControlError, Emulator, EmulatorStartError, running_emulator
from emulator.process import PROJECT_ROOT
from testkit.hetzner import TOKEN, RawApi, token


def test_bulk_inserted_servers_are_running_with_their_labels(
    hcloud: Client, emulator: Emulator
) -> None:
    ids = emulator.control.add_servers(
        3, name_prefix="node-", server_type="cax11", location="hel1", labels={"pool": "bulk"}
    )

    servers = hcloud.servers.get_all(label_selector="pool=bulk")

    assert sorted(s.id for s in servers) == sorted(ids)
    assert {s.status for s in servers} == {"running"}
    assert {s.image.architecture for s in servers} == {"arm"}
    assert [s.name for s in servers] == ["node-1", "node-2", "node-3"]


def test_a_thousand_servers_insert_quickly(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.add_servers(1000)

    page = hcloud.servers.get_list(per_page=50)

    assert page.meta.pagination.total_entries == 1000


def test_reset_drops_resources_counts_faults_and_restores_stock(
    hcloud: Client, emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.add_servers(2)
    emulator.control.set_stock([{"server_type": "cx23", "location": "fsn1"}])
    emulator.control.set_faults([{"kind": "delay", "seconds": 0}])
    emulator.control.set_rate_limit(10)

    emulator.control.reset()

    assert hcloud.servers.get_all() == []
    assert emulator.control.stock() == []
    assert emulator.control.faults() == []
    assert emulator.control.rate_limit()["limit"] == 1_000_000
    assert emulator.control.requests().total == 1
    assert len(emulator_api.get("/server_types").json()["server_types"]) == 20


def test_stock_can_be_read_back(emulator: Emulator) -> None:
    emulator.control.set_stock(
        [{"server_type": "cx23", "location": "nbg1", "code": "placement_error"}]
    )

    assert emulator.control.stock() == [
        {"server_type": "cx23", "location": "nbg1", "code": "placement_error"}
    ]


def test_stock_entries_must_name_real_types_locations_and_codes(emulator: Emulator) -> None:
    for entry in (
        {"server_type": "cx99", "location": "fsn1"},
        {"server_type": "cx23", "location": "mars"},
        {"server_type": "cx23", "location": "fsn1", "code": "quota"},
    ):
        with pytest.raises(ControlError, match="400"):
            emulator.control.set_stock([entry])


def test_timing_can_be_changed_at_run_time(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_timing(boot_seconds=0)

    created = hcloud.servers.create(
        name="instant", server_type=ServerType(name="cx23"), image=Image(name="debian-12")
    )

    assert created.action.status == "success"
    assert hcloud.servers.get_by_id(created.server.id).status == "running"


def test_port_zero_prints_the_base_url_first() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--port", "0", "--token", TOKEN, "--quiet"],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url)
        assert not url.endswith(":0/v1")
        response = requests.get(
            url + "/locations", timeout=5, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert response.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_cli_flags_set_stock_rate_limit_and_faults_at_start() -> None:
    fault = {
        "kind": "error",
        "method": "DELETE",
        "path": "/v1/servers",
        "code": "conflict",
        "status": 409,
    }
    with running_emulator(
        TOKEN,
        "--out-of-stock",
        "cx23@nbg1:placement_error",
        "--out-of-stock",
        "cax11@hel1",
        "--rate-limit",
        "5/0.5",
        "--fault",
        json.dumps(fault),
        "--quiet",
    ) as emu:
        assert emu.control.stock() == [
            {"server_type": "cx23", "location": "nbg1", "code": "placement_error"},
            {"server_type": "cax11", "location": "hel1", "code": "resource_unavailable"},
        ]
        assert emu.control.rate_limit()["limit"] == 5
        assert emu.control.rate_limit()["per_second"] == 0.5
        assert emu.control.faults()[0]["code"] == "conflict"


def test_several_tokens_share_one_project() -> None:
    other = token("second")
    with running_emulator(TOKEN, "--token", other, "--quiet") as emu:
        emu.control.add_servers(1)
        first = RawApi(emu.url, TOKEN).get("/servers").json()["servers"]
        second = RawApi(emu.url, other).get("/servers").json()["servers"]
        assert first == second
        assert len(first) == 1


def test_a_token_the_api_would_refuse_stops_the_emulator_at_start() -> None:
    short = "orca-test-token"
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "--port", "0", "--token", short],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert "argument --token: a Hetzner Cloud API token has exactly 64 characters" in done.stderr
    assert short not in done.stderr
    assert done.stdout == ""


def test_an_emulator_that_cannot_start_says_why() -> None:
    with (
        pytest.raises(EmulatorStartError, match="rate-limit"),
        running_emulator(TOKEN, "--rate-limit", "lots"),
    ):
        pass


def test_user_data_is_kept_for_the_metadata_view_but_never_in_the_api(
    emulator, hcloud, emulator_api
):
    server = hcloud.servers.create(
        name="u1",
        server_type=ServerType(name="cx23"),
        image=hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "x86"),
        user_data="#cloud-config\nsecret: s3cr3t",
    ).server
    assert emulator.control.user_data(server.id) == "#cloud-config\nsecret: s3cr3t"
    assert "s3cr3t" not in json.dumps(emulator_api.get(f"/servers/{server.id}").json())
    assert "s3cr3t" not in emulator.log()


def test_reset_drops_networks_placement_groups_and_snapshots(
    hcloud: Client, emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator_api.post("/networks", json={"name": "ci", "ip_range": "10.0.0.0/16"})
    emulator_api.post("/placement_groups", json={"name": "pg", "type": "spread"})
    emulator.control.add_image(architecture="arm")

    emulator.control.reset()

    assert hcloud.networks.get_all() == []
    assert hcloud.placement_groups.get_all() == []
    assert hcloud.images.get_all(type=["snapshot"]) == []


def test_the_new_routes_are_counted_by_template(
    hcloud: Client, emulator_api: RawApi, emulator: Emulator
) -> None:
    network = emulator_api.post("/networks", json={"name": "ci", "ip_range": "10.0.0.0/16"})
    network_id = network.json()["network"]["id"]
    subnet = {"type": "cloud", "network_zone": "eu-central", "ip_range": "10.0.1.0/24"}
    emulator_api.post(f"/networks/{network_id}/actions/add_subnet", json=subnet)
    emulator_api.post("/placement_groups", json={"name": "pg", "type": "spread"})
    emulator_api.get("/images", params={"type": "snapshot", "sort": "created:desc"})
    emulator_api.get("/pricing")

    routes = emulator.control.requests().routes

    assert routes["POST /v1/networks"] == 1
    assert routes["POST /v1/networks/{id}/actions/add_subnet"] == 1
    assert routes["POST /v1/placement_groups"] == 1
    assert routes["GET /v1/images"] == 1
    assert routes["GET /v1/pricing"] == 1
