"""The Hetzner provider's metrics and spans, read with the SDK's in-memory reader against the
emulator, faults included: every try of a request is counted once, by what it came to."""

import gc
import weakref

import pytest

from machines import CloudError, ForeignMachineError, Provider
from machines.runtime.telemetry import (
    CALL,
    ERROR_TYPE,
    HTTP_METHOD,
    HTTP_STATUS,
    LOCATION,
    MACHINE_ID,
    MACHINE_TYPE,
    OPERATION,
    OUTCOME,
    OWNER,
    POOL,
    PROVIDER,
    URL_TEMPLATE,
)
from testkit import timeouts
from testkit.hetzner import TOKEN, foreign_server
from testkit.hostile_server import HTML, HostileServer
from testkit.specs import OWNER as OWNER_NAME
from testkit.specs import spec

USER_DATA = "#cloud-config\nwrite_files: [{path: /etc/secret, content: s3cr3t-user-data}]"
CREATE = "POST /servers"
LIST = "GET /servers"


def fault(kind: str, method: str, path: str, **fields: object) -> dict[str, object]:
    return {"kind": kind, "method": method, "path": path, **fields}


@pytest.fixture
def quick(hetzner_env, monkeypatch):
    """A provider with short timeouts, so faults resolve in test time."""
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", str(timeouts.REQUEST))
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(timeouts.CALL))
    monkeypatch.setenv("ORCA_LIST_TTL", "0")
    return Provider.of("hetzner", owner=OWNER_NAME)


def tries(recorded, operation, outcome):
    return recorded.total(
        "orca.machines.requests", {PROVIDER: "hetzner", OPERATION: operation, OUTCOME: outcome}
    )


def retries(recorded, operation, outcome):
    return recorded.total(
        "orca.machines.retries", {PROVIDER: "hetzner", OPERATION: operation, OUTCOME: outcome}
    )


def test_a_create_is_counted_by_pool_type_and_location(recorded, quick):
    assert quick.create(spec(user_data=USER_DATA)).ok

    where = {PROVIDER: "hetzner", POOL: "ci", MACHINE_TYPE: "cx23", LOCATION: "fsn1"}
    assert recorded.total("orca.machines.creates", {**where, OUTCOME: "ok"}) == 1
    assert tries(recorded, CREATE, "ok") == 1
    assert recorded.total("orca.machines.call.duration", {CALL: "create", OUTCOME: "ok"}) == 1


def test_a_create_span_holds_one_span_per_http_request(recorded, quick):
    made = quick.create(spec(user_data=USER_DATA)).machine

    (create,) = recorded.spans("Provider.create")
    beneath = [s.name for s in recorded.children(create)]
    assert "POST /v1/servers" in beneath
    assert "GET /v1/server_types" in beneath
    assert create.attributes[MACHINE_ID] == made.id
    assert create.attributes[OUTCOME] == "ok"
    (post,) = recorded.spans("POST /v1/servers")
    assert post.attributes[HTTP_STATUS] == 201
    assert post.attributes[URL_TEMPLATE] == "/v1/servers"


def test_http_durations_follow_the_semantic_conventions(recorded, quick):
    made = quick.create(spec()).machine
    quick.delete(made.id)

    durations = recorded.points("http.client.request.duration")
    delete = [a for a, _ in durations if a[HTTP_METHOD] == "DELETE"]
    assert delete == [
        {
            HTTP_METHOD: "DELETE",
            "server.address": "127.0.0.1",
            "server.port": delete[0]["server.port"],
            HTTP_STATUS: 200,
            URL_TEMPLATE: "/v1/servers/{id}",
            PROVIDER: "hetzner",
            OPERATION: "DELETE /servers/{id}",
        }
    ]


def test_5xx_answers_are_counted_as_tries_and_retries(recorded, quick, emulator):
    quick.arch("cx23")
    emulator.control.set_faults(
        [fault("error", "POST", "/v1/servers", status=503, code="service_error", times=2)]
    )

    assert quick.create(spec()).ok

    assert tries(recorded, CREATE, "5xx") == 2
    assert retries(recorded, CREATE, "5xx") == 2
    assert tries(recorded, CREATE, "ok") == 1
    statuses = [
        a[HTTP_STATUS]
        for a, p in recorded.points("http.client.request.duration")
        for _ in range(p.count)
        if a[OPERATION] == CREATE
    ]
    assert sorted(statuses) == [201, 503, 503]


def test_throttling_is_counted_apart(recorded, quick, emulator):
    emulator.control.set_faults(
        [fault("error", "GET", "/v1/servers", status=429, code="rate_limit_exceeded", times=3)]
    )

    assert quick.machines("ci") == []

    assert tries(recorded, LIST, "throttled") == 3
    assert retries(recorded, LIST, "throttled") == 3
    assert tries(recorded, LIST, "ok") == 1


def test_lost_answers_are_counted(recorded, quick, emulator):
    emulator.control.set_faults([fault("drop_before", "GET", "/v1/servers", times=2)])

    assert quick.machines("ci") == []

    assert tries(recorded, LIST, "lost_answer") == 2
    assert tries(recorded, LIST, "ok") == 1
    errors = {a.get(ERROR_TYPE) for a, _ in recorded.points("http.client.request.duration")}
    assert "requests.exceptions.ConnectionError" in errors


def test_a_locked_server_is_busy(recorded, quick, emulator):
    machine = quick.create(spec()).machine
    emulator.control.set_faults(
        [fault("error", "DELETE", "/v1/servers", status=423, code="locked", times=2)]
    )

    assert quick.delete(machine.id)

    assert tries(recorded, "DELETE /servers/{id}", "busy") == 2
    assert recorded.total("orca.machines.deletes", {OUTCOME: "ok"}) == 1


def test_a_final_refusal_is_counted_once_without_retry(recorded, quick, emulator):
    emulator.control.set_faults(
        [fault("error", "GET", "/v1/servers", status=403, code="forbidden", times=1)]
    )

    with pytest.raises(Exception, match="forbidden"):
        quick.machines("ci")

    assert tries(recorded, LIST, "refused") == 1
    assert recorded.total("orca.machines.retries") == 0
    assert recorded.total("orca.machines.call.duration", {CALL: "machines", OUTCOME: "error"})


def test_an_answer_that_is_not_the_api_is_counted(recorded):
    with HostileServer().serving() as hostile:
        hostile.answer_with(HTML)
        provider = Provider.of(
            "hetzner", OWNER_NAME, {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": hostile.url}
        )
        with pytest.raises(CloudError):
            provider.machines("ci")

    assert tries(recorded, LIST, "not_the_api") == 1
    assert recorded.total("orca.machines.requests") == 1


def test_no_stock_is_counted_and_remembered(recorded, quick, emulator):
    quick.arch("cx23")
    emulator.control.set_stock(
        [{"server_type": "cx23", "location": "fsn1", "code": "resource_unavailable"}]
    )

    assert quick.create(spec()).no_stock
    assert quick.create(spec("ci-2")).no_stock

    where = {POOL: "ci", MACHINE_TYPE: "cx23", LOCATION: "fsn1", OUTCOME: "no_stock"}
    assert recorded.total("orca.machines.creates", where) == 2
    assert tries(recorded, CREATE, "refused") == 1
    (left,) = recorded.values(
        "orca.machines.stock.short",
        {PROVIDER: "hetzner", OWNER: OWNER_NAME, MACHINE_TYPE: "cx23", LOCATION: "fsn1"},
    )
    assert 0 < left <= 180


def test_the_budget_and_the_listing_are_gauges(recorded, hetzner_env, emulator):
    emulator.control.set_rate_limit(limit=3600)
    provider = Provider.of("hetzner", owner=OWNER_NAME)
    provider.machines("ci")
    budget = provider.budget()

    mine = {PROVIDER: "hetzner", OWNER: OWNER_NAME}
    assert recorded.values("orca.machines.budget.limit", mine) == [3600]
    assert recorded.values("orca.machines.budget.remaining", mine) == [budget.remaining]
    assert recorded.values("orca.machines.listing.window", mine) == [budget.list_window]
    (age,) = recorded.values("orca.machines.listing.age", mine)
    assert age >= 0


def test_a_foreign_delete_is_refused_and_counted(recorded, quick, hcloud):
    server = foreign_server(hcloud, "other-1", {"orca": "pool", "orca-owner": "else"})

    with pytest.raises(ForeignMachineError):
        quick.delete(str(server))

    assert recorded.total("orca.machines.deletes", {OUTCOME: "refused"}) == 1


def test_a_provider_that_advised_is_not_kept_alive_by_the_gauges(recorded, hetzner_env):
    """The paid-time gauges remember what a provider's advice kept, weakly: a provider the
    autoscaler drops is freed, and its gauges go with it (a strong reference leaked every
    provider that ever advised, and reported it for ever)."""
    provider = Provider.of("hetzner", owner=OWNER_NAME)
    provider.keep_advice([])
    gone = weakref.ref(provider)
    del provider
    gc.collect()
    assert gone() is None
