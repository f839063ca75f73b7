"""Injected faults: errors, delays, connections dropped before or after the work is done."""

from __future__ import annotations

import time

import pytest
import requests
from hcloud import APIException, Client
from hcloud.images import Image
from hcloud.server_types import ServerType

from emulator import ControlError, Emulator
from emulator.faults import FaultRule, Faults
from testkit.engine_run import wait_for
from testkit.hetzner import RawApi


def create(hcloud: Client, name: str = "web-1") -> None:
    hcloud.servers.create(
        name=name, server_type=ServerType(name="cx23"), image=Image(name="ubuntu-24.04")
    )


def test_an_error_fault_answers_the_hetzner_error_it_names(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_faults(
        [
            {
                "kind": "error",
                "method": "POST",
                "path": "/v1/servers",
                "status": 503,
                "code": "unavailable",
                "message": "try later",
                "times": 1,
            }
        ]
    )

    with pytest.raises(APIException) as excinfo:
        create(hcloud)
    create(hcloud)

    assert (excinfo.value.code, excinfo.value.message) == ("unavailable", "try later")
    assert [s.name for s in hcloud.servers.get_all()] == ["web-1"]


def test_an_error_fault_carries_extra_headers_and_rate_limit_headers(
    emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.set_faults(
        [
            {
                "kind": "error",
                "status": 429,
                "code": "rate_limit_exceeded",
                "headers": {"Retry-After": "7"},
            }
        ]
    )

    response = emulator_api.get("/servers")

    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert "RateLimit-Reset" in response.headers


def test_the_official_client_retries_a_conflict_fault(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_faults(
        [{"kind": "error", "method": "GET", "status": 409, "code": "conflict", "times": 1}]
    )

    assert hcloud.servers.get_all() == []
    assert emulator.control.requests().get("GET /v1/servers") == 2


def test_a_delay_fault_slows_the_answer_down(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_faults(
        [{"kind": "delay", "method": "GET", "path": "/v1/servers", "seconds": 0.3}]
    )

    started = time.monotonic()
    hcloud.servers.get_all()

    assert time.monotonic() - started >= 0.3


def test_a_delay_past_the_clients_timeout_ends_when_the_client_gives_up(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.set_faults(
        [{"kind": "delay", "method": "POST", "path": "/v1/servers", "seconds": 3600.0}]
    )
    api = RawApi(emulator.url)

    with pytest.raises(requests.exceptions.ReadTimeout):
        api.session.post(
            f"{emulator.url}/servers",
            json={"name": "web-1", "server_type": "cx23", "image": "ubuntu-24.04"},
            timeout=1,
        )

    wait_for(
        lambda: [s.name for s in hcloud.servers.get_all()] == ["web-1"],
        "the held create, once its client had gone,",
        seconds=60,
    )


def test_drop_before_loses_the_request(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_faults(
        [{"kind": "drop_before", "method": "POST", "path_regex": "/v1/servers", "times": 1}]
    )

    with pytest.raises(requests.exceptions.ConnectionError):
        create(hcloud)

    assert hcloud.servers.get_all() == []


def test_drop_after_does_the_work_but_loses_the_answer(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.set_faults(
        [{"kind": "drop_after", "method": "POST", "path_regex": "/v1/servers", "times": 1}]
    )

    with pytest.raises(requests.exceptions.ConnectionError):
        create(hcloud)

    assert [s.name for s in hcloud.servers.get_all()] == ["web-1"]
    with pytest.raises(APIException) as excinfo:  # the naive retry meets its own server
        create(hcloud)
    assert excinfo.value.code == "uniqueness_error"


def test_a_fault_fires_only_the_given_number_of_times(
    emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.set_faults([{"kind": "error", "path": "/v1/servers", "times": 2}])

    statuses = [emulator_api.get("/servers").status_code for _ in range(3)]

    assert statuses == [503, 503, 200]
    assert emulator.control.faults()[0]["times"] == 0


def test_a_fault_matches_only_its_method_and_path(emulator_api: RawApi, emulator: Emulator) -> None:
    emulator.control.set_faults([{"kind": "error", "method": "POST", "path": "/v1/ssh_keys"}])

    assert emulator_api.get("/ssh_keys").status_code == 200
    assert emulator_api.post("/servers", json={}).status_code == 422
    assert emulator_api.post("/ssh_keys", json={}).status_code == 503


def test_clearing_faults_restores_normal_answers(emulator_api: RawApi, emulator: Emulator) -> None:
    emulator.control.set_faults([{"kind": "error"}])
    assert emulator_api.get("/servers").status_code == 503

    emulator.control.clear_faults()

    assert emulator_api.get("/servers").status_code == 200


def test_a_malformed_fault_rule_is_refused(emulator: Emulator) -> None:
    with pytest.raises(ControlError, match="kind"):
        emulator.control.set_faults([{"kind": "explode"}])


def test_probabilities_are_reproducible_with_the_same_seed() -> None:
    def draws(seed: int) -> list[bool]:
        faults = Faults(seed, [FaultRule(kind="error", probability=0.5)])
        return [faults.plan("GET", "/v1/servers").terminal is not None for _ in range(40)]

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)
    assert 5 < sum(draws(7)) < 35
