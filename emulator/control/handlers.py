"""The emulator's side of the control API under /_emulator/: stock, rate limit, faults,
failing actions, counts, reset, bulk servers, the clock, seeded snapshots (`client.py` is the
client).

No auth, no rate limit, no faults and not counted, so tests and benchmarks can steer the
emulator without disturbing what they measure. Errors use the Hetzner error body with 400.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from emulator.capacity import OutOfStock, Stock, StockRuleError
from emulator.counts import RequestCounter
from emulator.errors import ApiError
from emulator.faults import FaultRule, FaultRuleError, Faults
from emulator.labels import validate_labels
from emulator.limits import Limits, LimitsError
from emulator.project import State, Timing
from emulator.ratelimit import TokenBucket
from emulator.resources.actions.state import ActionFailure, ActionFailureError
from emulator.resources.catalogue import data as catalogue
from emulator.routing import Endpoint, Request, Response

MAX_BULK = 100_000
R = TypeVar("R")


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
    server_limit: int | None = None


@dataclass(frozen=True)
class Controls:
    """The parts of a running emulator that the control API steers."""

    state: State
    stock: Stock
    timing: Timing
    bucket: TokenBucket
    faults: Faults
    counts: RequestCounter
    startup: Startup
    limits: Limits


def _list_body(request: Request, key: str) -> list[Any]:
    """A body that is a JSON list, or an object holding the list under `key`."""
    raw = request.raw
    if isinstance(raw, dict):
        raw = raw.get(key)
    if not isinstance(raw, list):
        raise bad_request(f"body must be a JSON list (or an object with '{key}')")
    return raw


@dataclass(frozen=True)
class RuleList(Generic[R]):
    """A list the control API shows (GET), replaces (PUT) and, where it has `clear`, clears
    (DELETE), each answering `{key: [...]}`: out-of-stock entries, fault rules, action failures.

    A PUT takes a JSON list, or an object holding it under `key`; `parse` reads each entry and
    its `error` is a 400.
    """

    path: str
    key: str
    parse: Callable[[Any], R]
    error: type[ValueError]
    show: Callable[[Controls], list[object]]  # the list's JSON (with the times rules have left)
    replace: Callable[[Controls, list[R]], None]
    clear: Callable[[Controls], None] | None = None

    def routes(self) -> list[Endpoint[Controls]]:
        """GET, PUT and (with `clear`) DELETE on the list's path."""
        routes = [Endpoint("GET", self.path, self.get), Endpoint("PUT", self.path, self.put)]
        if self.clear is not None:
            routes.append(Endpoint("DELETE", self.path, self.delete))
        return routes

    def get(self, controls: Controls, _: Request) -> Response:
        """The list."""
        return Response(200, {self.key: self.show(controls)})

    def put(self, controls: Controls, request: Request) -> Response:
        """Replace the list."""
        try:
            entries = [self.parse(raw) for raw in _list_body(request, self.key)]
        except self.error as exc:
            raise bad_request(str(exc)) from None
        self.replace(controls, entries)
        return self.get(controls, request)

    def delete(self, controls: Controls, request: Request) -> Response:
        """Empty the list."""
        if self.clear is not None:
            self.clear(controls)
        return self.get(controls, request)


def _action_failures(controls: Controls) -> list[object]:
    with controls.state.transaction() as project:
        return [rule.to_json() for rule in project.actions.failures]


def _set_action_failures(controls: Controls, rules: list[ActionFailure]) -> None:
    with controls.state.transaction() as project:
        project.actions.failures = rules


STOCK = RuleList(
    "/stock",
    "out_of_stock",
    OutOfStock.from_json,
    StockRuleError,
    show=lambda controls: [entry.to_json() for entry in controls.stock.entries()],
    replace=lambda controls, entries: controls.stock.replace(entries),
)
FAULTS = RuleList(
    "/faults",
    "faults",
    FaultRule.from_json,
    FaultRuleError,
    show=lambda controls: [rule.to_json() for rule in controls.faults.rules()],
    replace=lambda controls, rules: controls.faults.replace(rules),  # restarts the seeded RNG
    clear=lambda controls: controls.faults.clear(),
)
ACTION_FAILURES = RuleList(
    "/action_failures",
    "action_failures",
    ActionFailure.from_json,
    ActionFailureError,
    show=_action_failures,
    replace=_set_action_failures,
    clear=lambda controls: _set_action_failures(controls, []),
)


def _number(body: dict[str, Any], key: str, default: float | None = None) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise bad_request(f"'{key}' must be a number >= 0")
    return float(value)


def health(controls: Controls, _: Request) -> Response:
    """GET /health: {"status": "ok"}."""
    return Response(200, {"status": "ok"})


def get_rate_limit(controls: Controls, _: Request) -> Response:
    """GET /rate_limit: {"limit", "per_second", "remaining", "reset"}."""
    limit, per_second = controls.bucket.settings
    status = controls.bucket.peek()
    return Response(
        200,
        {
            "limit": limit,
            "per_second": per_second,
            "remaining": status.remaining,
            "reset": status.reset,
        },
    )


def put_rate_limit(controls: Controls, request: Request) -> Response:
    """PUT /rate_limit: {"limit", "per_second"?}; the bucket starts full."""
    limit = request.body.get("limit")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise bad_request("'limit' must be an integer >= 1")
    per_second = _number(request.body, "per_second", limit / 3600)
    if per_second <= 0:
        raise bad_request("'per_second' must be above 0")
    controls.bucket.configure(limit, per_second)
    return get_rate_limit(controls, request)


def get_requests(controls: Controls, _: Request) -> Response:
    """GET /requests: {"total", "routes": {"GET /v1/servers": n, ...}}."""
    return Response(200, controls.counts.to_json())


def delete_requests(controls: Controls, _: Request) -> Response:
    """DELETE /requests: zero the counts."""
    controls.counts.reset()
    return Response(200, controls.counts.to_json())


def reset(controls: Controls, _: Request) -> Response:
    """POST /reset: drop resources, actions, faults, counts; restore start-up settings."""
    with controls.state.transaction() as project:
        project.reset()
    startup = controls.startup
    controls.faults.clear()
    controls.counts.reset()
    controls.stock.replace(list(startup.out_of_stock))
    controls.bucket.configure(startup.rate_limit, startup.per_second)
    controls.timing.boot_seconds = startup.boot_seconds
    controls.timing.action_seconds = startup.action_seconds
    controls.limits.servers = startup.server_limit
    controls.state.set_now(None)
    return Response(200, {"status": "reset"})


def add_servers(controls: Controls, request: Request) -> Response:
    """POST /servers: insert running servers in bulk; {"ids": [...]}."""
    body = request.body
    count = body.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_BULK:
        raise bad_request(f"'count' must be an integer in 1..{MAX_BULK}")
    prefix = body.get("name_prefix", "server-")
    if not isinstance(prefix, str):
        raise bad_request("'name_prefix' must be a string")
    server_type = catalogue.server_type(str(body.get("server_type", "cx23")))
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
    with controls.state.transaction() as project:
        servers = project.servers.add_running(
            count=count,
            name_prefix=prefix,
            server_type=server_type,
            location=location,
            image=image,
            labels=labels,
        )
    return Response(201, {"ids": [s.id for s in servers]})


def add_image(controls: Controls, request: Request) -> Response:
    """POST /images: a snapshot (or backup) without a server; {"id": ...}.

    Body: {"architecture": "x86" | "arm", "labels": {}, "description": "", "type":
    "snapshot", "disk_size": 40, "os_flavor": "ubuntu", "os_version": null, "created":
    RFC 3339 time (default: now), "status": "available" | "creating"}, so tests can seed
    pre-baked worker snapshots of either architecture, older or newer than each other, and
    one still being made (held ``creating`` until ``PUT /images/{id}`` makes it available).
    """
    body = request.body
    architecture = body.get("architecture", "x86")
    if architecture not in ("x86", "arm"):
        raise bad_request("'architecture' must be x86 or arm")
    kind = body.get("type", "snapshot")
    if kind not in ("snapshot", "backup"):
        raise bad_request("'type' must be snapshot or backup")
    disk_size = body.get("disk_size", 40)
    if isinstance(disk_size, bool) or not isinstance(disk_size, int) or disk_size < 1:
        raise bad_request("'disk_size' must be a positive integer (GB)")
    description = body.get("description", "")
    os_flavor = body.get("os_flavor", "ubuntu")
    os_version = body.get("os_version")
    if not isinstance(description, str) or not isinstance(os_flavor, str):
        raise bad_request("'description' and 'os_flavor' must be strings")
    if os_version is not None and not isinstance(os_version, str):
        raise bad_request("'os_version' must be a string or null")
    status = body.get("status", "available")
    if status not in ("available", "creating"):
        raise bad_request("'status' must be available or creating")
    created_raw = body.get("created")
    labels = validate_labels(body.get("labels"))
    with controls.state.transaction() as project:
        created = project.now
        if created_raw is not None:
            try:
                created = datetime.fromisoformat(str(created_raw)).timestamp()
            except ValueError:
                raise bad_request("'created' must be an RFC 3339 time") from None
        image = project.images.seed(
            architecture=architecture,
            labels=labels,
            description=description,
            created=created,
            disk_size=disk_size,
            kind="backup" if kind == "backup" else "snapshot",
            os_flavor=os_flavor,
            os_version=os_version,
            creating=status == "creating",
        )
    return Response(201, {"id": image.id})


def put_image(controls: Controls, request: Request) -> Response:
    """PUT /images/{id}: {"status": "available"} ends a held ``creating`` image; {"id",
    "status"}."""
    image_id = request.path_id(resource="image")
    if request.body.get("status") != "available":
        raise bad_request("'status' must be available")
    with controls.state.transaction() as project:
        image = project.images.finish(image_id)
    return Response(200, {"id": image.id, "status": image.status})


def user_data(controls: Controls, request: Request) -> Response:
    """GET /servers/{id}/user_data: what the server's metadata service would hand it.

    The API never returns user data; a real server reads it from its metadata service,
    and tests read it here to prove it arrived.
    """
    server_id = request.path_id(resource="server")
    with controls.state.transaction() as project:
        return Response(200, {"user_data": project.servers.get(server_id).user_data})


def get_timing(controls: Controls, _: Request) -> Response:
    """GET /timing: {"boot_seconds", "action_seconds"}."""
    return Response(
        200,
        {
            "boot_seconds": controls.timing.boot_seconds,
            "action_seconds": controls.timing.action_seconds,
        },
    )


def put_timing(controls: Controls, request: Request) -> Response:
    """PUT /timing: change boot_seconds and/or action_seconds (null: as boot)."""
    if "boot_seconds" in request.body:
        controls.timing.boot_seconds = _number(request.body, "boot_seconds")
    if "action_seconds" in request.body:
        raw = request.body["action_seconds"]
        controls.timing.action_seconds = (
            None if raw is None else _number(request.body, "action_seconds")
        )
    return get_timing(controls, request)


def get_limits(controls: Controls, _: Request) -> Response:
    """GET /limits: {"servers"}: the project's limits (null: none)."""
    with controls.state.transaction():
        return Response(200, controls.limits.to_json())


def put_limits(controls: Controls, request: Request) -> Response:
    """PUT /limits: {"servers": N | null}: the project's server limit from now on."""
    try:
        with controls.state.transaction():
            controls.limits.update(request.raw)
    except LimitsError as exc:
        raise bad_request(str(exc)) from None
    return get_limits(controls, request)


def get_clock(controls: Controls, _: Request) -> Response:
    """GET /clock: {"now"}: the project's time in seconds since the epoch."""
    return Response(200, {"now": controls.state.now()})


def put_clock(controls: Controls, request: Request) -> Response:
    """PUT /clock: {"now": seconds since the epoch, or null for the real time}: the
    project's time from now on (it passes as real time does); what a server made then has
    as `created`."""
    if "now" not in request.body:
        raise bad_request("'now' is required: seconds since the epoch, or null")
    raw = request.body["now"]
    controls.state.set_now(None if raw is None else _number(request.body, "now"))
    return get_clock(controls, request)


ROUTES: list[Endpoint[Controls]] = [
    Endpoint("GET", "/health", health),
    *STOCK.routes(),
    Endpoint("GET", "/rate_limit", get_rate_limit),
    Endpoint("PUT", "/rate_limit", put_rate_limit),
    *FAULTS.routes(),
    *ACTION_FAILURES.routes(),
    Endpoint("GET", "/requests", get_requests),
    Endpoint("DELETE", "/requests", delete_requests),
    Endpoint("POST", "/reset", reset),
    Endpoint("POST", "/servers", add_servers),
    Endpoint("POST", "/images", add_image),
    Endpoint("PUT", "/images/{id}", put_image),
    Endpoint("GET", "/servers/{id}/user_data", user_data),
    Endpoint("GET", "/timing", get_timing),
    Endpoint("PUT", "/timing", put_timing),
    Endpoint("GET", "/limits", get_limits),
    Endpoint("PUT", "/limits", put_limits),
    Endpoint("GET", "/clock", get_clock),
    Endpoint("PUT", "/clock", put_clock),
]
