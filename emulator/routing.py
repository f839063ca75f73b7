"""Request routing: path templates like `/servers/{id}` mapped to handlers, per method.

Every handler module declares its routes the same way: a `ROUTES` list of `Endpoint`s whose
handlers take a context (the project `State` for /v1, the `Controls` for /_emulator) and
the request; `router_for` binds them to that context. A path that matches a template under
another method is a 405 rather than a 404, as in the real API. The template (not the
concrete path) names the route in request counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from emulator.errors import ApiError, invalid_field, not_found

Json = dict[str, Any]
Context = TypeVar("Context")


@dataclass
class Response:
    """An answer: status, JSON body (None for no body), extra headers, or a dropped connection."""

    status: int
    body: Json | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    note: str | None = None  # for the log line only (e.g. the repr of an unexpected error)

    @classmethod
    def from_error(cls, error: ApiError) -> Response:
        """The Hetzner error body for an ApiError."""
        return cls(error.status, error.body())

    @classmethod
    def dropped(cls) -> Response:
        """Close the connection without answering."""
        return cls(0, drop=True)


@dataclass(frozen=True)
class Request:
    """What a handler sees: path parameters, query parameters and the JSON body.

    `body` is the body when it is a JSON object ({} otherwise); `raw` is the parsed body as
    sent (the control API accepts lists).
    """

    params: dict[str, str]
    query: dict[str, list[str]]
    body: Json
    raw: Any = None

    def path_id(self, name: str = "id", resource: str = "resource") -> int:
        """A numeric path parameter; anything else is not found."""
        raw = self.params[name]
        if not raw.isdigit():
            raise not_found(resource, raw)
        return int(raw)

    def first(self, key: str) -> str | None:
        """The first value of a query parameter, or None."""
        values = self.query.get(key)
        return values[0] if values else None

    def every(self, key: str) -> list[str]:
        """Every value of a repeatable query parameter."""
        return list(self.query.get(key, []))

    def int_param(self, key: str, default: int) -> int:
        """An integer query parameter; a non-integer is invalid_input."""
        raw = self.first(key)
        if raw is None or raw == "":
            return default
        try:
            return int(raw)
        except ValueError:
            raise invalid_field(key, "must be an integer") from None


Handler = Callable[[Request], Response]


@dataclass(frozen=True)
class Endpoint(Generic[Context]):
    """One route as a handler module declares it: its handler also takes the context."""

    method: str
    template: str
    handler: Callable[[Context, Request], Response]

    def bound(self, context: Context) -> Handler:
        """The handler with its context filled in."""
        handler = self.handler
        return lambda request: handler(context, request)


@dataclass(frozen=True)
class Route:
    """One method + path template and its handler."""

    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Handler


@dataclass(frozen=True)
class Match:
    """The outcome of routing: the route (if the method fits), its params, and the template."""

    route: Route | None
    params: dict[str, str]
    template: str | None  # set whenever the path matched some route


class Router:
    """An ordered list of routes; literal templates should come before parametrised ones."""

    def __init__(self) -> None:
        self._routes: list[Route] = []

    def add(self, method: str, template: str, handler: Handler) -> None:
        """Register a handler for `method` on `template` (`{name}` matches one path segment)."""
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
        self._routes.append(Route(method, template, re.compile(regex), handler))

    def match(self, method: str, path: str) -> Match:
        """Find the route for a request; `route` is None for 404 (template None) or 405."""
        template: str | None = None
        for route in self._routes:
            found = route.pattern.fullmatch(path)
            if found is None:
                continue
            if route.method == method:
                return Match(route, found.groupdict(), route.template)
            template = template or route.template
        return Match(None, {}, template)


def router_for(context: Context, endpoints: Iterable[Endpoint[Context]]) -> Router:
    """A router over `endpoints`, in their order, each bound to `context`."""
    router = Router()
    for endpoint in endpoints:
        router.add(endpoint.method, endpoint.template, endpoint.bound(context))
    return router
