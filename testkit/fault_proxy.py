"""A fault-injecting HTTP proxy on loopback, in front of moto's server.

It reads the action of each request (the ``Action=`` of EC2's form body; the
``X-Amz-Target`` header of the JSON services, the Price List's ``GetProducts`` and KMS's
``DescribeKey``) and, by the rules a test sets, answers an error itself (in the protocol of
the request's service), closes the connection before or after moto acted on the request, or
holds moto's answer back. Providers talk to the proxy; tests look at moto directly.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from emulator.faults import hold

Kind = Literal["error", "delay", "drop_before", "drop_after"]


@dataclass(frozen=True)
class Fault:
    """What the proxy does to requests of ``action`` (every action when None).

    - ``error``: answer ``status`` with EC2's error body of ``code``, without asking moto;
    - ``delay``: pass the request on, then hold moto's answer back ``seconds``, or until the
      client has gone (a delay past its timeout costs only that timeout);
    - ``drop_before``: close the connection without passing the request on;
    - ``drop_after``: pass the request on (moto acts on it), then close without answering.

    ``times`` limits how often the rule fires (None: always); ``skip`` lets that many of the
    requests it matches pass first; ``probability`` draws from the proxy's seeded random
    numbers, so a run is reproducible. ``when`` limits it to requests whose form has these
    parameters (``{"InstanceMarketOptions.MarketType": "spot"}``).
    """

    kind: Kind
    action: str | None = None
    status: int = 500
    code: str = "InternalError"
    seconds: float = 0.0
    times: int | None = None
    probability: float = 1.0
    when: tuple[tuple[str, str], ...] = ()
    skip: int = 0


def throttled(action: str | None = None, **fields: Any) -> Fault:
    """EC2's answer when the account's request rate is spent."""
    return Fault("error", action, status=503, code="RequestLimitExceeded", **fields)


def no_spot_capacity(code: str = "InsufficientInstanceCapacity", **fields: Any) -> Fault:
    """EC2's answer to a spot launch when there is no spot capacity for it (moto never
    gives one); on-demand launches pass."""
    spot = (("InstanceMarketOptions.MarketType", "spot"),)
    return Fault("error", "RunInstances", status=500, code=code, when=spot, **fields)


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


def json_error(code: str, message: str) -> bytes:
    """An error body as AWS's JSON services (the Price List, KMS) write it."""
    return json.dumps({"__type": code, "message": message}).encode()


JSON_ERROR_TYPE = "application/x-amz-json-1.1"


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

    def plan(self, action: str, form: Mapping[str, list[str]] | None = None) -> Fault | None:
        """Count a request and pick the fault that fires for it, if any."""
        given = form or {}
        with self._lock:
            self.requests[action] += 1
            for index, fault in enumerate(self._faults):
                if fault.action not in (None, action) or fault.times == 0:
                    continue
                if any(given.get(key) != [value] for key, value in fault.when):
                    continue
                if fault.skip > 0:
                    self._faults[index] = replace(fault, skip=fault.skip - 1)
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
            target = self.headers.get("X-Amz-Target", "")
            form = {} if target else parse_qs(body.decode(errors="replace"))
            action = target.rpartition(".")[2] if target else form.get("Action", [""])[0]
            fault = proxy.plan(action, form)
            kind = fault.kind if fault else None
            if fault is not None and fault.kind == "error":
                if target:
                    error = json_error(fault.code, "injected fault")
                    self.answer(fault.status, JSON_ERROR_TYPE, error)
                else:
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
                hold(self.connection, fault.seconds)
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
