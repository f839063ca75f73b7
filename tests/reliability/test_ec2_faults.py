"""The EC2 provider on a bad day: throttling, 5xx, timeouts and lost answers.

Faults come from a real HTTP proxy on loopback in front of moto's server: it reads the
``Action=`` of each request's form body and, by the rules a test sets, answers an error
itself, closes the connection before or after moto acted on the request, or holds moto's
answer back. The provider talks to the proxy; the tests look at moto directly.
"""

from __future__ import annotations

import base64
import http.client
import logging
import os
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

import pytest

from machines.ec2 import AWS_LOGGERS, Ec2Provider, RedactSecrets
from machines.errors import CloudError
from machines.models import Created
from machines.provider import Provider
from tests.ec2 import moto_server
from tests.ec2.moto_server import World, spec

Kind = Literal["error", "delay", "drop_before", "drop_after"]


@dataclass(frozen=True)
class Fault:
    """What the proxy does to requests of ``action`` (every action when None).

    - ``error``: answer ``status`` with EC2's error body of ``code``, without asking moto;
    - ``delay``: pass the request on, then hold moto's answer back ``seconds``;
    - ``drop_before``: close the connection without passing the request on;
    - ``drop_after``: pass the request on (moto acts on it), then close without answering.

    ``times`` limits how often the rule fires (None: always); ``probability`` draws from the
    proxy's seeded random numbers, so a run is reproducible.
    """

    kind: Kind
    action: str | None = None
    status: int = 500
    code: str = "InternalError"
    seconds: float = 0.0
    times: int | None = None
    probability: float = 1.0


def throttled(action: str | None = None, **fields: Any) -> Fault:
    """EC2's answer when the account's request rate is spent."""
    return Fault("error", action, status=503, code="RequestLimitExceeded", **fields)


def unavailable(action: str | None = None, **fields: Any) -> Fault:
    return Fault("error", action, status=503, code="Unavailable", **fields)


def ec2_error(code: str, message: str) -> bytes:
    """An error body as EC2 (and moto) write it."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Response><Errors><Error><Code>{escape(code)}</Code>"
        f"<Message>{escape(message)}</Message></Error></Errors>"
        f"<RequestID>{uuid.uuid4()}</RequestID></Response>"
    ).encode()


class FaultProxy:
    """A real HTTP proxy on loopback that passes EC2 requests to ``upstream``, with faults.

    ``requests`` counts what arrived per action, faulted or not; ``fired`` counts the
    faults per kind.
    """

    def __init__(self, upstream: str, seed: int = 7) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.requests: Counter[str] = Counter()
        self.fired: Counter[str] = Counter()
        self._faults: list[Fault] = []
        self._seed = seed
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def set_faults(self, *faults: Fault) -> None:
        """Replace the rules (the first that fires wins) and restart the random numbers."""
        with self._lock:
            self._faults = list(faults)
            self._rng = random.Random(self._seed)

    def reset(self) -> None:
        """No rules, no counts."""
        self.set_faults()
        with self._lock:
            self.requests.clear()
            self.fired.clear()

    def plan(self, action: str) -> Fault | None:
        """Count a request and pick the fault that fires for it, if any."""
        with self._lock:
            self.requests[action] += 1
            for index, fault in enumerate(self._faults):
                if fault.action not in (None, action) or fault.times == 0:
                    continue
                if fault.probability < 1.0 and self._rng.random() >= fault.probability:
                    continue
                if fault.times is not None:
                    self._faults[index] = replace(fault, times=fault.times - 1)
                self.fired[fault.kind] += 1
                return fault
            return None

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        """moto's answer to the request: status, content type and body."""
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            return answer.status, answer.getheader("Content-Type", "text/xml"), answer.read()
        finally:
            connection.close()

    @contextmanager
    def serving(self) -> Iterator[FaultProxy]:
        thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}


def _handler_for(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else each answer waits for a delayed ACK (40 ms)

        def do_POST(self) -> None:
            self.relay()

        def do_GET(self) -> None:
            self.relay()

        def relay(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            action = parse_qs(body.decode(errors="replace")).get("Action", [""])[0]
            fault = proxy.plan(action)
            kind = fault.kind if fault else None
            if fault is not None and fault.kind == "error":
                self.answer(fault.status, "text/xml", ec2_error(fault.code, "injected fault"))
                return
            if kind == "drop_before":
                self.close_connection = True
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            status, content_type, answer = proxy.forward(self.command, self.path, headers, body)
            if kind == "drop_after":
                self.close_connection = True
                return
            if fault is not None and fault.kind == "delay":
                time.sleep(fault.seconds)
            self.answer(status, content_type, answer)

        def answer(self, status: int, content_type: str, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                self.close_connection = True  # the client gave up waiting

        def log_message(self, *_: Any) -> None:
            pass

    return Relay


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture(scope="module")
def running_proxy(moto: moto_server.MotoServer) -> Iterator[FaultProxy]:
    with FaultProxy(moto.url).serving() as proxy:
        yield proxy


@pytest.fixture
def proxy(running_proxy: FaultProxy) -> FaultProxy:
    """The proxy, with no rules and no counts."""
    running_proxy.reset()
    return running_proxy


ISOLATED = (
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL_EC2",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "ORCA_EC2_IMAGE",
)
"""Variables of the developer's shell that would change what a test sees."""


@pytest.fixture
def world(
    moto: moto_server.MotoServer, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> World:
    """A fresh account; this process's environment points at it through the proxy, with
    half-second requests and five-second calls."""
    moto.reset()
    built = moto_server.build_world(moto.url)
    for name in ISOLATED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    for name, value in built.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", "0.5")
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "5")
    return built


@pytest.fixture
def aws(moto: moto_server.MotoServer) -> Any:
    """moto's EC2, not through the proxy: to look at what really exists."""
    return moto_server.client(moto.url)


@pytest.fixture
def provider(world: World) -> Ec2Provider:
    made = Provider.of("ec2", "prod")
    assert isinstance(made, Ec2Provider)
    return made


def instances_named(aws: Any, name: str) -> list[dict[str, Any]]:
    """The instances of that Name that are not terminated."""
    reservations = aws.describe_instances(
        Filters=[
            {"Name": "tag:Name", "Values": [name]},
            {"Name": "instance-state-name", "Values": ["pending", "running"]},
        ]
    )["Reservations"]
    return [i for r in reservations for i in r["Instances"]]


def launched(provider: Ec2Provider, name: str = "ci-1", pool: str = "ci") -> str:
    created = provider.create(spec(name, pool=pool))
    assert created.machine is not None, created.reason
    return created.machine.id


def test_throttling_is_retried(
    provider: Ec2Provider, proxy: FaultProxy, caplog: pytest.LogCaptureFixture
) -> None:
    proxy.set_faults(throttled("DescribeInstances", times=1))

    assert provider.machines("ci") == []

    assert proxy.requests["DescribeInstances"] == 2
    assert "RequestLimitExceeded" in caplog.text


def test_server_errors_are_retried(provider: Ec2Provider, proxy: FaultProxy, aws: Any) -> None:
    proxy.set_faults(Fault("error", "RunInstances", status=500, times=2))

    assert provider.create(spec("ci-1")).ok

    assert proxy.requests["RunInstances"] == 3
    assert len(instances_named(aws, "ci-1")) == 1


def test_a_lost_launch_answer_makes_one_instance(
    provider: Ec2Provider, proxy: FaultProxy, aws: Any
) -> None:
    proxy.set_faults(Fault("drop_after", "RunInstances", times=1))

    created = provider.create(spec("ci-1"))

    assert created.ok, created.reason
    [instance] = instances_named(aws, "ci-1")
    assert created.machine is not None
    assert created.machine.id == instance["InstanceId"]
    assert {t["Key"]: t["Value"] for t in instance["Tags"]}["orca-owner"] == "prod"
    assert proxy.requests["RunInstances"] == 1


def test_a_launch_dropped_before_ec2_saw_it_is_sent_again(
    provider: Ec2Provider, proxy: FaultProxy, aws: Any
) -> None:
    proxy.set_faults(Fault("drop_before", "RunInstances", times=1))

    assert provider.create(spec("ci-1")).ok

    assert proxy.requests["RunInstances"] == 2
    assert len(instances_named(aws, "ci-1")) == 1


def test_a_launch_answered_after_its_timeout_makes_one_instance(
    provider: Ec2Provider, proxy: FaultProxy, aws: Any
) -> None:
    proxy.set_faults(Fault("delay", "RunInstances", seconds=1.0, times=1))

    assert provider.create(spec("ci-1")).ok

    assert len(instances_named(aws, "ci-1")) == 1


def test_a_lost_terminate_answer_is_still_true(
    provider: Ec2Provider, proxy: FaultProxy, aws: Any
) -> None:
    instance_id = launched(provider)
    proxy.set_faults(Fault("drop_after", "TerminateInstances", times=1))

    assert provider.delete(instance_id) is True

    assert instances_named(aws, "ci-1") == []


def test_a_request_past_its_timeout_is_retried(provider: Ec2Provider, proxy: FaultProxy) -> None:
    launched(provider)
    proxy.reset()
    proxy.set_faults(Fault("delay", "DescribeInstances", seconds=1.0, times=1))

    assert [m.name for m in provider.machines("ci")] == ["ci-1"]

    assert proxy.requests["DescribeInstances"] == 2


CALL = 2
"""Seconds per call in the tests of persistent faults."""
SLACK = 0.5
"""What a call may take past its time: the try under way, and the lookups before a launch."""


def test_persistent_throttling_is_one_clear_error_within_the_call_time(
    provider: Ec2Provider, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(CALL))
    quick = Provider.of("ec2", "prod")
    proxy.set_faults(throttled())
    start = time.monotonic()

    with pytest.raises(CloudError, match=r"after \d+ tries\): RequestLimitExceeded") as raised:
        quick.machines("ci")

    assert time.monotonic() - start < CALL + SLACK
    assert raised.value.code == "RequestLimitExceeded"


def test_persistent_server_errors_fail_create_within_the_call_time(
    provider: Ec2Provider, proxy: FaultProxy, aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(CALL))
    quick = Provider.of("ec2", "prod")
    quick.arch("t3.micro")
    proxy.set_faults(Fault("error", "RunInstances", status=500))
    start = time.monotonic()

    created = quick.create(spec("ci-1"))

    assert time.monotonic() - start < CALL + SLACK
    assert created.failed
    assert "InternalError" in created.reason
    assert proxy.requests["RunInstances"] > 1
    assert instances_named(aws, "ci-1") == []


def test_launches_that_never_answer_fail_saying_the_instance_may_exist(
    provider: Ec2Provider, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(CALL))
    quick = Provider.of("ec2", "prod")
    quick.arch("t3.micro")
    proxy.set_faults(Fault("drop_before", "RunInstances"))
    start = time.monotonic()

    created = quick.create(spec("ci-1"))

    assert time.monotonic() - start < CALL + SLACK
    assert created.failed
    assert "may have launched" in created.reason
    assert "machines('ci') will show it" in created.reason


def test_threads_sharing_a_provider_get_what_sequential_calls_get(
    provider: Ec2Provider, proxy: FaultProxy
) -> None:
    proxy.set_faults(
        Fault("error", "RunInstances", status=503, code="Unavailable", probability=0.2),
        Fault("drop_after", "RunInstances", probability=0.1),
    )
    pools = [f"p{i}" for i in range(8)]

    def scale(pool: str) -> list[Created]:
        names = [f"{pool}-{n}" for n in range(4)]
        return [provider.create(spec(name, pool=pool)) for name in names + names]

    with ThreadPoolExecutor(len(pools)) as threads:
        outcomes = [o for made in threads.map(scale, pools) for o in made]

    assert all(outcome.ok for outcome in outcomes), [o.reason for o in outcomes if not o.ok]
    for pool in pools:
        assert [m.name for m in provider.machines(pool)] == [f"{pool}-{n}" for n in range(4)]
    assert proxy.requests["DescribeInstanceTypes"] == 1
    assert proxy.requests["DescribeImages"] == 1


SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYs3cr3tKEY"
SESSION_TOKEN = "FwoGZXIvYXdzEs3ss10nT0KEN"
USER_DATA = "#cloud-config\nwrite_files: [{path: /etc/token, content: s3cr3t-user-data}]\n"


def test_neither_user_data_nor_credentials_reach_the_logs(
    world: World,
    proxy: FaultProxy,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    caplog.set_level(logging.DEBUG)
    provider = Provider.of("ec2", "prod")
    proxy.set_faults(Fault("error", "RunInstances", status=500, times=1))

    created = provider.create(spec("ci-1", user_data=USER_DATA))

    assert created.ok, created.reason
    assert "Making request for OperationModel(name=RunInstances)" in caplog.text
    assert "retry" in caplog.text
    encoded = base64.b64encode(USER_DATA.encode()).decode()
    for secret in ("s3cr3t-user-data", encoded, SECRET_KEY, SESSION_TOKEN):
        assert secret not in caplog.text
        assert secret not in created.model_dump_json()


def test_each_aws_logger_gets_one_redacting_filter_however_many_providers(world: World) -> None:
    for _ in range(3):
        Provider.of("ec2", "prod")

    for name in AWS_LOGGERS:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, RedactSecrets) for f in filters) == 1, name
