"""Hundreds of autoscaler rounds with faults on: nothing lost or leaked, no one else touched."""

import pytest
from hcloud import Client

from machines import Provider
from machines.runtime.labels import ORCA_LABEL, OWNER_LABEL, POOL_LABEL
from testkit import timeouts
from testkit.hetzner import TOKEN
from testkit.simulation import simulate

FAULTS = [
    {
        "kind": "error",
        "method": "POST",
        "path": "/v1/servers",
        "status": 503,
        "code": "service_error",
        "probability": 0.1,
    },
    {"kind": "drop_after", "method": "POST", "path": "/v1/servers", "probability": 0.1},
    {"kind": "drop_after", "method": "DELETE", "path": "/v1/servers", "probability": 0.1},
    {"kind": "drop_before", "method": "GET", "path": "/v1/servers", "probability": 0.05},
    {
        "kind": "error",
        "method": "GET",
        "path": "/v1/servers",
        "status": 429,
        "code": "rate_limit_exceeded",
        "probability": 0.05,
    },
    {
        "kind": "error",
        "method": "DELETE",
        "path": "/v1/servers",
        "status": 423,
        "code": "locked",
        "probability": 0.05,
    },
    {
        "kind": "delay",
        "method": "GET",
        "path": "/v1/servers",
        "seconds": timeouts.PAST_REQUEST,
        "probability": 0.01,
    },
]


@pytest.fixture
def providers(hetzner_env, monkeypatch) -> dict[str, Provider]:
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", str(timeouts.REQUEST))
    return {owner: Provider.of("hetzner", owner=owner) for owner in ("blue", "green")}


def test_hetzner_autoscaler_keeps_its_invariants_under_faults(providers, emulator):
    hcloud = Client(token=TOKEN, api_endpoint=emulator.url)
    bystander = hcloud.servers.create(
        name="blue-ci-by-hand",
        server_type=hcloud.server_types.get_by_name("cx23"),
        image=hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "x86"),
        labels={ORCA_LABEL: "pool", POOL_LABEL: "ci"},
    ).server
    emulator.control.set_stock([])
    emulator.control.set_faults(FAULTS)

    ledger = simulate(providers, ["ci", "gpu", "build"], "cx23", "fsn1", rounds=300)

    emulator.control.clear_faults()
    truth: dict[tuple[str, str], dict[str, str]] = {}
    for server in hcloud.servers.get_all():
        if server.status == "deleting":
            assert str(server.id) in ledger.deleted
            continue
        labels = server.labels
        if OWNER_LABEL in labels:
            truth.setdefault((labels[OWNER_LABEL], labels[POOL_LABEL]), {})[str(server.id)] = (
                server.name
            )
    told = {key: names for key, names in ledger.alive.items() if names}
    assert truth == told
    assert ledger.rounds == 300
    assert hcloud.servers.get_by_id(bystander.id).name == "blue-ci-by-hand"
    faults_fired = emulator.control.requests().total
    assert faults_fired > 300
