"""Read-only catalogue endpoints: server types, locations, ISOs, pricing.

Images (the catalogue's system images with the project's snapshots) are `images/handlers.py`.

The catalogue itself (and its JSON shapes) is `data.py`; availability reflects the stock and
the per-location deprecations. `/datacenters` answers 410 Gone, as the real API does since
2026-10-01.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from emulator.errors import ApiError, not_found
from emulator.listing import page_response, sort_items
from emulator.project import State
from emulator.resources.catalogue import data
from emulator.routing import Endpoint, Request, Response

T = TypeVar("T", data.Location, data.ServerType, data.Image)

DATACENTERS_REMOVED = "https://docs.hetzner.cloud/changelog#2026-06-02-datacenters-deprecated"
LOCATION_SORT_KEYS: dict[str, Callable[[data.Location], Any]] = {
    "id": lambda loc: loc.id,
    "name": lambda loc: loc.name,
}


def _named(items: Sequence[T], request: Request) -> list[T]:
    name = request.first("name")
    return [item for item in items if name is None or item.name == name]


def _by_id(items: Sequence[T], request: Request, resource: str) -> T:
    item_id = request.path_id(resource=resource)
    found = next((item for item in items if item.id == item_id), None)
    if found is None:
        raise not_found(resource, item_id)
    return found


def list_server_types(state: State, request: Request) -> Response:
    """GET /server_types (by name)."""
    items = _named(data.SERVER_TYPES, request)
    with state.transaction() as project:
        unavailable = project.stock.unavailable()
        return page_response(
            "server_types",
            items,
            request,
            lambda st: data.server_type_json(st, unavailable, project.epoch, project.now),
        )


def get_server_type(state: State, request: Request) -> Response:
    """GET /server_types/{id}."""
    found = _by_id(data.SERVER_TYPES, request, "server_type")
    with state.transaction() as project:
        unavailable = project.stock.unavailable()
        body = data.server_type_json(found, unavailable, project.epoch, project.now)
        return Response(200, {"server_type": body})


def list_locations(state: State, request: Request) -> Response:
    """GET /locations (by name), with `sort` (id, name; :asc or :desc)."""
    items = sort_items(_named(data.LOCATIONS, request), request.every("sort"), LOCATION_SORT_KEYS)
    return page_response("locations", items, request, data.location_json)


def get_location(state: State, request: Request) -> Response:
    """GET /locations/{id}."""
    found = _by_id(data.LOCATIONS, request, "location")
    return Response(200, {"location": data.location_json(found)})


def datacenters_gone(state: State, request: Request) -> Response:
    """GET /datacenters[/{id}]: 410 Gone with the API's deprecated_api_endpoint error."""
    raise ApiError(
        "deprecated_api_endpoint",
        "the datacenters endpoints were removed on 2026-10-01: use GET /locations, and "
        "server_types[].locations[] for where a server type is available",
        {"announcement": DATACENTERS_REMOVED},
    )


def list_isos(state: State, request: Request) -> Response:
    """GET /isos: always empty."""
    return page_response("isos", [], request, lambda item: item)


def pricing(state: State, _: Request) -> Response:
    """GET /pricing."""
    return Response(200, {"pricing": data.pricing_json()})


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/server_types", list_server_types),
    Endpoint("GET", "/server_types/{id}", get_server_type),
    Endpoint("GET", "/locations", list_locations),
    Endpoint("GET", "/locations/{id}", get_location),
    Endpoint("GET", "/datacenters", datacenters_gone),
    Endpoint("GET", "/datacenters/{id}", datacenters_gone),
    Endpoint("GET", "/isos", list_isos),
    Endpoint("GET", "/pricing", pricing),
]
