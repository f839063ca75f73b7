"""The control API under /_emulator/: stock, rate limit, faults, counts, reset, bulk servers.

No auth, no rate limit, no faults and not counted, so tests and benchmarks can steer the
emulator without disturbing what they measure. Errors use the Hetzner error body with 400.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from emulator import catalogue
from emulator.counts import RequestCounts
from emulator.errors import ApiError
from emulator.faults import FaultRule, FaultRuleError, Faults
from emulator.labels import validate_labels
from emulator.ratelimit import TokenBucket
from emulator.routing import Request, Response, Router
from emulator.state import State, Timing
from emulator.stock import OutOfStock, Stock, StockRuleError

MAX_BULK = 100_000


def bad_request(message: str) -> ApiError:
    """A control-API input error."""
    return ApiError("invalid_input", message, {}, status=400)


@dataclass(frozen=True)
class Startup:
    """The settings the emulator started with, which `reset` restores."""

    out_of_stock: tuple[OutOfStock, ...]
    rate_limit: int
    per_second: float
    boot_seconds: float
    action_seconds: float | None


@dataclass(frozen=True)
class Controls:
    """The parts of a running emulator that the control API steers."""

    state: State
    stock: Stock
    timing: Timing
    bucket: TokenBucket
    faults: Faults
    counts: RequestCounts
    startup: Startup


def _list_body(request: Request, key: str) -> list[Any]:
    """A body that is a JSON list, or an object holding the list under `key`."""
    raw = request.raw
    if isinstance(raw, dict):
        raw = raw.get(key)
    if not isinstance(raw, list):
        raise bad_request(f"body must be a JSON list (or an object with '{key}')")
    return raw


def _number(body: dict[str, Any], key: str, default: float | None = None) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise bad_request(f"'{key}' must be a number >= 0")
    return float(value)


class ControlApi:
    """The /_emulator handlers."""

    def __init__(self, controls: Controls) -> None:
        self.c = controls

    def register(self, router: Router) -> None:
        """Add the /_emulator routes (paths relative to /_emulator)."""
        router.add("GET", "/health", self.health)
        router.add("GET", "/stock", self.get_stock)
        router.add("PUT", "/stock", self.put_stock)
        router.add("GET", "/rate_limit", self.get_rate_limit)
        router.add("PUT", "/rate_limit", self.put_rate_limit)
        router.add("GET", "/faults", self.get_faults)
        router.add("PUT", "/faults", self.put_faults)
        router.add("DELETE", "/faults", self.delete_faults)
        router.add("GET", "/requests", self.get_requests)
        router.add("DELETE", "/requests", self.delete_requests)
        router.add("POST", "/reset", self.reset)
        router.add("POST", "/servers", self.add_servers)
        router.add("GET", "/servers/{id}/user_data", self.user_data)
        router.add("GET", "/timing", self.get_timing)
        router.add("PUT", "/timing", self.put_timing)

    def health(self, _: Request) -> Response:
        """GET /health: {"status": "ok"}."""
        return Response(200, {"status": "ok"})

    def get_stock(self, _: Request) -> Response:
        """GET /stock: {"out_of_stock": [...]}."""
        return Response(200, {"out_of_stock": [e.to_json() for e in self.c.stock.entries()]})

    def put_stock(self, request: Request) -> Response:
        """PUT /stock: a list of {"server_type", "location", "code"?} (replaces the list)."""
        try:
            entries = [OutOfStock.from_json(raw) for raw in _list_body(request, "out_of_stock")]
        except StockRuleError as exc:
            raise bad_request(str(exc)) from None
        self.c.stock.replace(entries)
        return self.get_stock(request)

    def get_rate_limit(self, _: Request) -> Response:
        """GET /rate_limit: {"limit", "per_second", "remaining", "reset"}."""
        limit, per_second = self.c.bucket.settings
        status = self.c.bucket.peek()
        return Response(
            200,
            {
                "limit": limit,
                "per_second": per_second,
                "remaining": status.remaining,
                "reset": status.reset,
            },
        )

    def put_rate_limit(self, request: Request) -> Response:
        """PUT /rate_limit: {"limit", "per_second"?}; the bucket starts full."""
        limit = request.body.get("limit")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise bad_request("'limit' must be an integer >= 1")
        per_second = _number(request.body, "per_second", limit / 3600)
        if per_second <= 0:
            raise bad_request("'per_second' must be above 0")
        self.c.bucket.configure(limit, per_second)
        return self.get_rate_limit(request)

    def get_faults(self, _: Request) -> Response:
        """GET /faults: {"faults": [...]} with the times each rule has left."""
        return Response(200, {"faults": [rule.to_json() for rule in self.c.faults.rules()]})

    def put_faults(self, request: Request) -> Response:
        """PUT /faults: a list of rules (replaces them; restarts the seeded RNG)."""
        try:
            rules = [FaultRule.from_json(raw) for raw in _list_body(request, "faults")]
        except FaultRuleError as exc:
            raise bad_request(str(exc)) from None
        self.c.faults.replace(rules)
        return self.get_faults(request)

    def delete_faults(self, request: Request) -> Response:
        """DELETE /faults: no more faults."""
        self.c.faults.clear()
        return self.get_faults(request)

    def get_requests(self, _: Request) -> Response:
        """GET /requests: {"total", "routes": {"GET /v1/servers": n, ...}}."""
        return Response(200, self.c.counts.to_json())

    def delete_requests(self, _: Request) -> Response:
        """DELETE /requests: zero the counts."""
        self.c.counts.reset()
        return Response(200, self.c.counts.to_json())

    def reset(self, _: Request) -> Response:
        """POST /reset: drop resources, actions, faults, counts; restore start-up settings."""
        with self.c.state.transaction() as project:
            project.reset()
        startup = self.c.startup
        self.c.faults.clear()
        self.c.counts.reset()
        self.c.stock.replace(list(startup.out_of_stock))
        self.c.bucket.configure(startup.rate_limit, startup.per_second)
        self.c.timing.boot_seconds = startup.boot_seconds
        self.c.timing.action_seconds = startup.action_seconds
        return Response(200, {"status": "reset"})

    def add_servers(self, request: Request) -> Response:
        """POST /servers: insert running servers in bulk; {"ids": [...]}."""
        body = request.body
        count = body.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_BULK:
            raise bad_request(f"'count' must be an integer in 1..{MAX_BULK}")
        prefix = body.get("name_prefix", "server-")
        if not isinstance(prefix, str):
            raise bad_request("'name_prefix' must be a string")
        server_type = catalogue.server_type(str(body.get("server_type", "cx22")))
        location = catalogue.location(str(body.get("location", "fsn1")))
        if server_type is None or location is None:
            raise bad_request("unknown server_type or location")
        image = next(
            (
                i
                for i in catalogue.IMAGES
                if i.name == body.get("image", "ubuntu-24.04")
                and i.architecture == server_type.architecture
            ),
            None,
        )
        if image is None:
            raise bad_request("unknown image for this architecture")
        labels = validate_labels(body.get("labels"))
        with self.c.state.transaction() as project:
            servers = project.add_servers(
                count=count,
                name_prefix=prefix,
                server_type=server_type,
                location=location,
                image=image,
                labels=labels,
            )
        return Response(201, {"ids": [s.id for s in servers]})

    def user_data(self, request: Request) -> Response:
        """GET /servers/{id}/user_data: what the server's metadata service would hand it.

        The API never returns user data; a real server reads it from its metadata service,
        and tests read it here to prove it arrived.
        """
        server_id = request.path_id(resource="server")
        with self.c.state.transaction() as project:
            return Response(200, {"user_data": project.server(server_id).user_data})

    def get_timing(self, _: Request) -> Response:
        """GET /timing: {"boot_seconds", "action_seconds"}."""
        return Response(
            200,
            {
                "boot_seconds": self.c.timing.boot_seconds,
                "action_seconds": self.c.timing.action_seconds,
            },
        )

    def put_timing(self, request: Request) -> Response:
        """PUT /timing: change boot_seconds and/or action_seconds (null: as boot)."""
        if "boot_seconds" in request.body:
            self.c.timing.boot_seconds = _number(request.body, "boot_seconds")
        if "action_seconds" in request.body:
            raw = request.body["action_seconds"]
            self.c.timing.action_seconds = (
                None if raw is None else _number(request.body, "action_seconds")
            )
        return self.get_timing(request)
