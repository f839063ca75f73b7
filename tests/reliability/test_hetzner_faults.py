"""The Hetzner provider on a bad day: errors, rate limits, timeouts and lost answers."""

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hcloud import Client

from machines import CloudError, Provider
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from testkit import timeouts
from testkit.hetzner import TOKEN
from testkit.specs import OWNER, spec

USER_DATA = "#cloud-config\nwrite_files: [{path: /etc/secret, content: s3cr3t-user-data}]"


def fault(kind: str, method: str, path: str, **fields: object) -> dict[str, object]:
    return {"kind": kind, "method": method, "path": path, **fields}


@pytest.fixture
def quick(hetzner_env, monkeypatch) -> HetznerProvider:
    """A provider with short timeouts, so faults resolve in test time."""
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", str(timeouts.REQUEST))
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(timeouts.CALL))
    made = Provider.of("hetzner", owner=OWNER)
    assert isinstance(made, HetznerProvider)
    return made


def servers_named(hcloud: Client, name: str) -> int:
    return len(hcloud.servers.get_all(name=name))


def test_server_errors_are_retried(quick, emulator, hcloud):
    emulator.control.set_faults(
        [fault("error", "POST", "/v1/servers", status=503, code="service_error", times=2)]
    )
    assert quick.create(spec(user_data=USER_DATA)).ok
    assert servers_named(hcloud, "ci-1") == 1


def test_a_lost_create_answer_makes_no_second_machine(quick, emulator, hcloud):
    quick.arch("cx23")
    emulator.control.set_faults([fault("drop_after", "POST", "/v1/servers", times=1)])
    created = quick.create(spec(user_data=USER_DATA))
    assert created.ok, created.reason
    assert servers_named(hcloud, "ci-1") == 1
    assert hcloud.servers.get_by_name("ci-1").labels["orca-owner"] == OWNER


def test_a_connection_dropped_before_the_request_is_retried(quick, emulator):
    quick.create(spec(user_data=USER_DATA))
    emulator.control.set_faults([fault("drop_before", "GET", "/v1/servers", times=2)])
    assert [m.name for m in quick.machines("ci")] == ["ci-1"]


def test_a_request_past_its_timeout_is_retried(quick, emulator):
    quick.create(spec(user_data=USER_DATA))
    emulator.control.set_faults(
        [fault("delay", "GET", "/v1/servers", seconds=timeouts.PAST_REQUEST, times=1)]
    )
    assert len(quick.machines("ci")) == 1


def test_a_lost_delete_answer_is_still_true(quick, emulator, hcloud):
    machine = quick.create(spec(user_data=USER_DATA)).machine
    emulator.control.set_faults([fault("drop_after", "DELETE", "/v1/servers", times=1)])
    assert quick.delete(machine.id) is True
    assert [s.status for s in hcloud.servers.get_all(name="ci-1")] in ([], ["deleting"])


def test_a_locked_server_is_retried(quick, emulator):
    machine = quick.create(spec(user_data=USER_DATA)).machine
    emulator.control.set_faults(
        [fault("error", "DELETE", "/v1/servers", status=423, code="locked", times=2)]
    )
    assert quick.delete(machine.id) is True


def test_a_rate_limit_burst_is_waited_out(quick, emulator):
    quick.create(spec(user_data=USER_DATA))
    emulator.control.set_rate_limit(limit=3, per_second=20)
    assert all(len(quick.machines("ci")) == 1 for _ in range(12))


def test_rate_limited_requests_wait_for_the_reset_the_api_names(quick, emulator, caplog):
    emulator.control.set_faults(
        [fault("error", "GET", "/v1/servers", status=429, code="rate_limit_exceeded", times=1)]
    )
    caplog.set_level(logging.WARNING, logger="machines")
    assert quick.machines("ci") == []
    assert "rate_limit_exceeded" in caplog.text


def test_persistent_errors_end_in_one_clear_error_within_the_call_time(
    hetzner_env, monkeypatch, emulator
):
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "1")
    provider = Provider.of("hetzner", owner=OWNER)
    emulator.control.set_faults(
        [fault("error", "GET", "/v1/servers", status=503, code="service_error")]
    )
    with pytest.raises(CloudError, match=r"service_error.*after \d+ attempts") as error:
        provider.machines("ci")
    assert error.value.code == "service_error"


def test_persistent_errors_make_create_fail_with_a_reason(
    hetzner_env, monkeypatch, emulator, hcloud
):
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "1")
    provider = Provider.of("hetzner", owner=OWNER)
    provider.arch("cx23")
    emulator.control.set_faults(
        [fault("error", "POST", "/v1/servers", status=500, code="service_error")]
    )
    created = provider.create(spec(user_data=USER_DATA))
    assert created.failed
    assert "service_error" in created.reason
    assert servers_named(hcloud, "ci-1") == 0


def test_a_create_that_never_got_an_answer_says_the_server_may_exist(
    hetzner_env, monkeypatch, emulator, hcloud
):
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "1")
    provider = Provider.of("hetzner", owner=OWNER)
    provider.arch("cx23")
    emulator.control.set_faults([fault("drop_after", "POST", "/v1/servers")])
    created = provider.create(spec(user_data=USER_DATA))
    assert created.failed
    assert "ci-1 may have been created" in created.reason
    emulator.control.clear_faults()
    again = provider.create(spec(user_data=USER_DATA))
    assert again.ok
    assert [m.id for m in provider.machines("ci")] == [again.machine.id]


def test_an_unreachable_endpoint_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("HCLOUD_TOKEN", TOKEN)
    monkeypatch.setenv("HCLOUD_ENDPOINT", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "1")
    with pytest.raises(CloudError, match="could not reach the Hetzner API.*HCLOUD_ENDPOINT"):
        Provider.of("hetzner").machines("ci")


@pytest.fixture
def web_page() -> Iterator[str]:
    """A real web server on loopback that is not the Hetzner API: it answers HTML."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body>It works!</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_an_endpoint_that_is_not_the_api_is_one_clear_error(hetzner_env, monkeypatch, web_page):
    monkeypatch.setenv("HCLOUD_ENDPOINT", web_page)
    with pytest.raises(CloudError, match="HTTP 200 without a Hetzner API error.*HCLOUD_ENDPOINT"):
        Provider.of("hetzner").machines("ci")


def test_neither_token_nor_user_data_reach_the_logs(quick, emulator, caplog):
    caplog.set_level(logging.DEBUG)
    emulator.control.set_faults(
        [
            fault("error", "POST", "/v1/servers", status=503, code="service_error", times=1),
            fault("drop_after", "POST", "/v1/servers", times=1),
        ]
    )
    created = quick.create(spec(user_data=USER_DATA))
    assert created.ok
    assert "retry" in caplog.text
    for secret in (TOKEN, "s3cr3t-user-data"):
        assert secret not in caplog.text
        assert secret not in created.model_dump_json()
        assert secret not in emulator.log()


@pytest.mark.parametrize(
    "late", [None, "/v1/server_types", "/v1/images"], ids=["in-time", "late-types", "late-image"]
)
def test_one_provider_shared_by_threads_matches_sequential_calls(
    recorded, quick, emulator, hcloud, late
):
    """The threads share one read of the catalogue and of the image. A loaded machine may
    answer that read after the request's timeout (``late``): the provider asks again, and
    it is still one read, which the cloud counts with its retries."""
    faults = [
        fault("error", "POST", "/v1/servers", status=503, code="service_error", probability=0.2)
    ]
    if late is not None:
        faults.insert(0, fault("delay", "GET", late, seconds=timeouts.PAST_REQUEST, times=1))
    emulator.control.set_faults(faults)
    results: dict[str, bool] = {}

    def scale(pool: str) -> None:
        for n in range(6):
            name = f"{pool}-{n}"
            results[name] = quick.create(spec(name, pool=pool, user_data=USER_DATA)).ok
            results[name + "/again"] = quick.create(spec(name, pool=pool, user_data=USER_DATA)).ok

    threads = [threading.Thread(target=scale, args=(f"p{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results.values())
    for i in range(6):
        assert sorted(m.name for m in quick.machines(f"p{i}")) == [f"p{i}-{n}" for n in range(6)]
    counts = emulator.control.requests()
    assert counts.get("GET /v1/server_types") == 1 + recorded.retried("GET /server_types")
    assert counts.get("GET /v1/images") == 1 + recorded.retried("GET /images")
    if late is not None:
        assert recorded.retried(f"GET {late.removeprefix('/v1')}") == 1


@pytest.mark.parametrize(
    ("status", "code"), [(503, "unavailable"), (500, "server_error"), (502, "")]
)
def test_any_5xx_is_retried_whatever_its_code(quick, emulator, hcloud, status, code):
    emulator.control.set_faults(
        [fault("error", "POST", "/v1/servers", status=status, code=code, times=1)]
    )
    created = quick.create(spec())
    assert created.ok, created.reason
    emulator.control.set_faults(
        [fault("error", "GET", "/v1/servers", status=status, code=code, times=1)]
    )
    assert [m.name for m in quick.machines("ci")] == ["ci-1"]
