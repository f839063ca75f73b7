"""The HTTP side: a threading stdlib server that counts, faults, rate-limits, authenticates, routes.

`App.handle` is the whole request pipeline without sockets (tests can call it directly);
`EmulatorServer` wires it to `http.server` with HTTP/1.1 keep-alive. Any unexpected error
becomes a `service_error` body with status 500: never a stack trace.
"""

from __future__ import annotations

import json
import socket
import sys
import time
import uuid
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

from emulator.auth import Tokens
from emulator.capacity import Stock
from emulator.config import Config
from emulator.control import handlers as control
from emulator.counts import UNMATCHED, RequestCounter
from emulator.errors import ApiError, service_error
from emulator.faults import Faults, hold
from emulator.limits import Limits
from emulator.project import State, Timing
from emulator.ratelimit import TokenBucket
from emulator.resources.registry import api_routes
from emulator.routing import Match, Request, Response, router_for

API_PREFIX = "/v1"
CONTROL_PREFIX = "/_emulator"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class App:
    """One emulator: the project state plus the rules that shape each API answer."""

    def __init__(self, config: Config, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.stock = Stock(list(config.out_of_stock))
        self.timing = Timing(config.boot_seconds, config.action_seconds)
        self.limits = Limits(config.server_limit)
        self.state = State(self.stock, self.timing, config.seed, limits=self.limits)
        # The bucket refills by the project's time, so a test moves it with the clock.
        self.bucket = TokenBucket(config.rate_limit, config.refill, clock=self.state.now)
        self.faults = Faults(config.seed, list(config.faults))
        self.counts = RequestCounter()
        self._tokens = Tokens(config.tokens)
        self._sleep = sleep
        self.api = router_for(self.state, api_routes())
        controls = control.Controls(
            state=self.state,
            stock=self.stock,
            timing=self.timing,
            bucket=self.bucket,
            faults=self.faults,
            counts=self.counts,
            limits=self.limits,
            startup=control.Startup(
                config.out_of_stock,
                config.rate_limit,
                config.refill,
                config.boot_seconds,
                config.action_seconds,
                config.server_limit,
            ),
        )
        self.control = router_for(controls, control.ROUTES)

    def handle(
        self,
        method: str,
        target: str,
        authorization: str | None,
        body: bytes,
        wait: Callable[[float], None] | None = None,
    ) -> Response:
        """Answer one request (`target` is the path with its query string); `wait` holds a
        delay fault (default: the app's sleep)."""
        url = urlsplit(target)
        query = parse_qs(url.query, keep_blank_values=True)
        path = url.path
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            return self._api(method, path, query, authorization, body, wait=wait or self._sleep)
        if path.startswith(CONTROL_PREFIX + "/"):
            match = self.control.match(method, path[len(CONTROL_PREFIX) :])
            return _dispatch(match, query, body)
        response = Response.from_error(ApiError("not_found", "not found", {}))
        response.headers.update(self.bucket.peek().headers())
        return response

    def _api(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        authorization: str | None,
        body: bytes,
        *,
        wait: Callable[[float], None],
    ) -> Response:
        match = self.api.match(method, path[len(API_PREFIX) :] or "/")
        route = f"{API_PREFIX}{match.template}" if match.template else UNMATCHED
        self.counts.add(f"{method} {route}")
        plan = self.faults.plan(method, path)
        if plan.delay:
            wait(plan.delay)
        fault = plan.terminal
        if fault is not None and fault.kind == "drop_before":
            return Response.dropped()
        if fault is not None and fault.kind == "error":
            error = ApiError(fault.code, fault.message, fault.details, fault.status)
            headers = {**self.bucket.peek().headers(), **fault.headers}
            return Response(error.status, error.body(), headers, note="injected error")
        allowed, status = self.bucket.take()
        if not allowed:
            limit = status.limit
            response = Response.from_error(
                ApiError("rate_limit_exceeded", f"limit of {limit} requests per hour reached", {})
            )
        elif not self._tokens.authorized(authorization):
            response = Response.from_error(ApiError("unauthorized", "unable to authenticate"))
        else:
            response = _dispatch(match, query, body)
        response.headers = {**status.headers(), **response.headers}
        if fault is not None and fault.kind == "drop_after":
            response.drop = True
        return response


def _dispatch(match: Match, query: dict[str, list[str]], body: bytes) -> Response:
    """Run the matched handler; 404/405 when nothing matched; errors become error bodies."""
    if match.route is None:
        if match.template is not None:
            error = ApiError("method_not_allowed", "method not allowed", {})
        else:
            error = ApiError("not_found", "not found", {})
        return Response.from_error(error)
    try:
        raw = _parse_json(body) if match.route.method in BODY_METHODS else None
        request = Request(match.params, query, raw if isinstance(raw, dict) else {}, raw)
        return match.route.handler(request)
    except ApiError as error:
        return Response.from_error(error)
    except Exception as exc:
        response = Response.from_error(service_error())
        response.note = repr(exc)
        return response


def _parse_json(body: bytes) -> Any:
    if not body.strip():
        return None
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError("json_error", f"failed to parse JSON body: {exc}") from None


class _Handler(BaseHTTPRequestHandler):
    """Turns each HTTP request into an `App.handle` call and writes the answer."""

    protocol_version = "HTTP/1.1"
    server_version = "hcloud-emulator"
    sys_version = ""
    server: EmulatorServer

    def setup(self) -> None:
        """Disable Nagle's algorithm: headers and body must not wait for a delayed ACK."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        started = time.monotonic()
        try:
            body = self._read_body()
            response = self.server.app.handle(
                self.command,
                self.path,
                self.headers.get("Authorization"),
                body,
                partial(hold, self.connection),
            )
        except Exception as exc:
            response = Response.from_error(service_error())
            response.note = repr(exc)
        if response.drop:
            self.close_connection = True
            self._log("dropped", started, response.note)
            return
        self._send(response)
        self._log(str(response.status), started, response.note)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _send(self, response: Response) -> None:
        payload = b"" if response.body is None else json.dumps(response.body).encode()
        try:
            self.send_response(response.status)
            if response.body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("X-Correlation-Id", uuid.uuid4().hex[:16])
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _log(self, outcome: str, started: float, note: str | None) -> None:
        if self.server.app.config.quiet:
            return
        path = urlsplit(self.path).path  # no query string, no headers, no body: no secrets
        elapsed = (time.monotonic() - started) * 1000
        extra = f" ({note})" if note else ""
        self.server.log.write(f"{self.command} {path} {outcome} {elapsed:.1f}ms{extra}\n")
        self.server.log.flush()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence http.server's own logging; `_log` writes one line per request."""


class EmulatorServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that serves one App."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, app: App, log: TextIO = sys.stderr) -> None:
        host = app.config.host
        if ":" in host:
            self.address_family = socket.AF_INET6
        self.app = app
        self.log = log
        super().__init__((host, app.config.port), _Handler)

    @property
    def base_url(self) -> str:
        """The API base URL, e.g. http://127.0.0.1:8080/v1."""
        host = self.app.config.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.server_address[1]}{API_PREFIX}"


def serve(config: Config, out: TextIO = sys.stdout) -> None:
    """Serve until interrupted, after printing the base URL as the first line of `out`."""
    httpd = EmulatorServer(App(config))
    print(httpd.base_url, file=out, flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
