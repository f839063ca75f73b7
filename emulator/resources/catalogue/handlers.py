"""Read-only catalogue endpoints: server types, locations, datacenters, images, ISOs, pricing.

The catalogue itself (and its JSON shapes) is `data.py`; availability reflects the stock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from emulator.errors import invalid_field, not_found
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import State
from emulator.resources.catalogue import data
from emulator.routing import Endpoint, Json, Request, Response

T = TypeVar("T", data.Location, data.Datacenter, data.ServerType, data.Image)

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
    images = [
        image
        for image in _named(data.IMAGES, request)
        if (not architectures or image.architecture in architectures)
        and (not types or "system" in types)
        and (not statuses or "available" in statuses)
        and request.first("bound_to") is None
        and selector.matches({})
    ]
    return sort_items(images, request.every("sort") or ["id"], IMAGE_SORT_KEYS)


def _server_type(state: State, st: data.ServerType) -> Json:
    return data.server_type_json(st, state.project.stock.unavailable())


def _datacenter(state: State, dc: data.Datacenter) -> Json:
    return data.datacenter_json(dc, state.project.stock.unavailable())


def list_server_types(state: State, request: Request) -> Response:
    """GET /server_types (by name)."""
    items = _named(data.SERVER_TYPES, request)
    return page_response("server_types", items, request, lambda st: _server_type(state, st))


def get_server_type(state: State, request: Request) -> Response:
    """GET /server_types/{id}."""
    found = _by_id(data.SERVER_TYPES, request, "server_type")
    return Response(200, {"server_type": _server_type(state, found)})


def list_locations(state: State, request: Request) -> Response:
    """GET /locations (by name)."""
    items = _named(data.LOCATIONS, request)
    return page_response("locations", items, request, data.location_json)


def get_location(state: State, request: Request) -> Response:
    """GET /locations/{id}."""
    found = _by_id(data.LOCATIONS, request, "location")
    return Response(200, {"location": data.location_json(found)})


def list_datacenters(state: State, request: Request) -> Response:
    """GET /datacenters (by name), with the recommended one."""
    items = _named(data.DATACENTERS, request)
    response = page_response("datacenters", items, request, lambda dc: _datacenter(state, dc))
    assert response.body is not None
    response.body["recommendation"] = data.DATACENTERS[0].id
    return response


def get_datacenter(state: State, request: Request) -> Response:
    """GET /datacenters/{id}."""
    found = _by_id(data.DATACENTERS, request, "datacenter")
    return Response(200, {"datacenter": _datacenter(state, found)})


def list_images(state: State, request: Request) -> Response:
    """GET /images with its filters, sort and pagination."""
    return page_response("images", _images(request), request, data.image_json)


def get_image(state: State, request: Request) -> Response:
    """GET /images/{id}."""
    found = _by_id(data.IMAGES, request, "image")
    return Response(200, {"image": data.image_json(found)})


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
    Endpoint("GET", "/datacenters", list_datacenters),
    Endpoint("GET", "/datacenters/{id}", get_datacenter),
    Endpoint("GET", "/images", list_images),
    Endpoint("GET", "/images/{id}", get_image),
    Endpoint("GET", "/isos", list_isos),
    Endpoint("GET", "/pricing", pricing),
]
