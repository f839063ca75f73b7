"""HTTP behaviour: auth, rate limit and its headers, error bodies, routing, request counts."""

from __future__ import annotations

import time

import pytest
from hcloud import APIException, Client
from hcloud.images import Image
from hcloud.server_types import ServerType

from emulator import Emulator
from emulator.auth import TokenError
from emulator.config import Config
from emulator.server import App
from testkit.hetzner import TOKEN, RawApi


@pytest.mark.parametrize(
    ("method", "path", "token"),
    [
        ("GET", "/servers", TOKEN),
        ("GET", "/servers", "wrong"),
        ("GET", "/no/such/path", TOKEN),
        ("POST", "/servers", TOKEN),
        ("GET", "/actions/1", TOKEN),
    ],
)
def test_every_api_response_carries_rate_limit_headers(
    emulator: Emulator, method: str, path: str, token: str
) -> None:
    response = RawApi(emulator.url, token).request(method, path, json={})

    assert int(response.headers["RateLimit-Limit"]) >= 1
    assert int(response.headers["RateLimit-Remaining"]) >= 0
    assert int(response.headers["RateLimit-Reset"]) >= int(time.time())


def test_remaining_counts_down_and_reset_is_when_the_bucket_is_full(
    emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.set_rate_limit(3600, per_second=1)

    before = int(time.time())
    first = emulator_api.get("/servers").headers
    second = emulator_api.get("/servers").headers
    after = int(time.time())

    assert int(first["RateLimit-Limit"]) == 3600
    assert int(second["RateLimit-Remaining"]) == int(first["RateLimit-Remaining"]) - 1
    # two requests at one a second: full two seconds after the second, whenever it was answered
    assert before < int(second["RateLimit-Reset"]) <= after + 3


def test_over_the_rate_limit_is_429_rate_limit_exceeded(
    emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.set_rate_limit(3, per_second=0.01)

    statuses = [emulator_api.get("/servers").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    limited = emulator_api.get("/servers")
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert limited.headers["RateLimit-Remaining"] == "0"


def test_the_bucket_refills_over_time(emulator_api: RawApi, emulator: Emulator) -> None:
    # One token a minute: only a minute between two requests could refill it, however slow
    # the machine; the project's clock, which the bucket follows, is moved instead of waited.
    emulator.control.set_rate_limit(1, per_second=1 / 60)
    assert emulator_api.get("/servers").status_code == 200
    assert emulator_api.get("/servers").status_code == 429

    emulator.control.set_clock(emulator.control.clock() + 61)

    assert emulator_api.get("/servers").status_code == 200


def test_a_wrong_token_is_unauthorized(emulator: Emulator) -> None:
    client = Client(token="not-the-token", api_endpoint=emulator.url)

    with pytest.raises(APIException) as excinfo:
        client.servers.get_all()

    assert excinfo.value.code == "unauthorized"


@pytest.mark.parametrize(
    "malformed",
    [TOKEN[:63], TOKEN + "0", TOKEN[:32] + "-" + TOKEN[33:], f"{TOKEN} extra"],
    ids=["63 characters", "65 characters", "a dash", "a space"],
)
def test_a_token_of_a_form_the_api_never_issues_is_unauthorized(
    emulator: Emulator, malformed: str
) -> None:
    response = RawApi(emulator.url, token=malformed).get("/servers")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    ("given", "why"),
    [("t" * 63, "exactly 64 characters; this one has 63"), ("t" * 63 + "-", "letters and digits")],
)
def test_the_emulator_takes_only_tokens_the_api_could_issue(given: str, why: str) -> None:
    with pytest.raises(TokenError, match=why) as refused:
        Config(tokens=(TOKEN, given))

    assert given not in str(refused.value)


def test_a_missing_token_is_401(emulator: Emulator) -> None:
    response = RawApi(emulator.url, token=None).get("/servers")

    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "unauthorized", "message": "unable to authenticate", "details": None}
    }


def test_malformed_json_is_a_json_error(emulator_api: RawApi) -> None:
    response = emulator_api.post(
        "/servers", data=b'{"name": "web-1",', headers={"Content-Type": "application/json"}
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "json_error"


def test_an_unknown_path_is_not_found(emulator_api: RawApi) -> None:
    response = emulator_api.get("/volcanoes")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_wrong_method_is_method_not_allowed(emulator_api: RawApi) -> None:
    response = emulator_api.request("PATCH", "/servers")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_requests_are_counted_per_route_template(hcloud: Client, emulator: Emulator) -> None:
    emulator.control.add_servers(2)
    emulator.control.reset_requests()

    server = hcloud.servers.get_by_name("server-1")
    hcloud.servers.get_by_id(server.id)
    hcloud.servers.get_by_id(server.id)

    counts = emulator.control.requests()
    assert counts.routes == {"GET /v1/servers": 1, "GET /v1/servers/{id}": 2}
    assert counts.total == 3


def test_an_unexpected_failure_is_a_service_error_without_a_trace() -> None:
    app = App(Config(tokens=(TOKEN,)))

    def explode(_: object) -> object:
        raise RuntimeError("secret internals")

    app.api.add("GET", "/explode", explode)  # type: ignore[arg-type]

    response = app.handle("GET", "/v1/explode", f"Bearer {TOKEN}", b"")

    assert response.status == 500
    assert response.body == {
        "error": {
            "code": "service_error",
            "message": "internal error in the emulator",
            "details": None,
        }
    }
    assert "RateLimit-Remaining" in response.headers


def test_the_log_has_one_line_per_request_without_secrets(
    hcloud: Client, emulator: Emulator
) -> None:
    hcloud.servers.create(
        name="logged",
        server_type=ServerType(name="cx23"),
        image=Image(name="ubuntu-24.04"),
        user_data="#cloud-config\npassword: hunter2\n",
    )

    log = emulator.log()

    assert "POST /v1/servers 201" in log
    assert TOKEN not in log
    assert "hunter2" not in log
