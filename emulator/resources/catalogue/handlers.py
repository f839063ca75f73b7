"""Read-only catalogue endpoints: server types, locations, images, ISOs, pricing.

The catalogue itself (and its JSON shapes) is `data.py`; availability reflects the stock and
the per-location deprecations. `/datacenters` answers 410 Gone, as the real API does since
2026-10-01.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from emulator.errors import ApiError, invalid_field, not_found
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import State
from emulator.resources.catalogue import data
from emulator.routing import Endpoint, Request, Response

T = TypeVar("T", data.Location, data.ServerType, data.Image)

DATACENTERS_REMOVED = "https://docs.hetzner.cloud/changelog#2026-06-02-datacenters-deprecated"
LOCATION_SORT_KEYS: dict[str, Callable[[data.Location], Any]] = {
    "id": lambda loc: loc.id,
    "name": lambda loc: loc.name,
}
IMAGE_SORT_KEYS: dict[str, Callable[[data.Image], Any]] = {
    "id": lambda i: i.id,
    "name": lambda i: i.name,
    "created": lambda i: i.id,
}
IMAGE_TYPES = ("system", "snapshot", "backup", "app")
ARCHITECTURES = ("x86", "arm")


def _named(items: Sequence[T], request: Request) -> list[T]:
    name = request.first("name")
    return [item for item in items if name is None or item.name == name]


def _by_id(items: Sequence[T], request: Request, resource: str) -> T:
    item_id = request.path_id(resource=resource)
    found = next((item for item in items if item.id == item_id), None)
    if found is None:
        raise not_found(resource, item_id)
    return found


def _images(request: Request) -> list[data.Image]:
    architectures = request.every("architecture")
    types = request.every("type")
    for arch in architectures:
        if arch not in ARCHITECTURES:
            raise invalid_field("architecture", f"invalid architecture '{arch}'")
    for kind in types:
        if kind not in IMAGE_TYPES:
            raise invalid_field("type", f"invalid type '{kind}'")
    selector = selector_from(request)
    statuses = request.every("status")
    include_deprecated = (request.first("include_deprecated") or "").lower() == "true"
    images = [
        image
        for image in _named(data.IMAGES, request)
        if (include_deprecated or image.deprecation is None)
        and (not architectures or image.architecture in architectures)
        and (not types or "system" in types)
        and (not statuses or "available" in statuses)
        and request.first("bound_to") is None
        and selector.matches({})
    ]
    return sort_items(images, request.every("sort") or ["id"], IMAGE_SORT_KEYS)


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


def list_images(state: State, request: Request) -> Response:
    """GET /images with its filters (deprecated ones only with include_deprecated=true)."""
    epoch = state.project.epoch
    return page_response("images", _images(request), request, lambda i: data.image_json(i, epoch))


def get_image(state: State, request: Request) -> Response:
    """GET /images/{id}."""
    found = _by_id(data.IMAGES, request, "image")
    return Response(200, {"image": data.image_json(found, state.project.epoch)})


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
    Endpoint("GET", "/images", list_images),
    Endpoint("GET", "/images/{id}", get_image),
    Endpoint("GET", "/isos", list_isos),
    Endpoint("GET", "/pricing", pricing),
]
