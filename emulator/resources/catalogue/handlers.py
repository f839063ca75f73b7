"""Read-only catalogue endpoints: server types, locations, datacenters, images, ISOs, pricing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from emulator import catalogue as data
from emulator.errors import invalid_field, not_found
from emulator.listing import page_response, selector_from, sort_items
from emulator.routing import Json, Request, Response, Router
from emulator.stock import Stock

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


def register(router: Router, stock: Stock) -> None:
    """Add the catalogue routes; availability reflects the current stock."""

    def server_type(st: data.ServerType) -> Json:
        return data.server_type_json(st, stock.unavailable())

    def datacenter(dc: data.Datacenter) -> Json:
        return data.datacenter_json(dc, stock.unavailable())

    def list_server_types(request: Request) -> Response:
        items = _named(data.SERVER_TYPES, request)
        return page_response("server_types", items, request, server_type)

    def get_server_type(request: Request) -> Response:
        found = _by_id(data.SERVER_TYPES, request, "server_type")
        return Response(200, {"server_type": server_type(found)})

    def list_locations(request: Request) -> Response:
        items = _named(data.LOCATIONS, request)
        return page_response("locations", items, request, data.location_json)

    def get_location(request: Request) -> Response:
        found = _by_id(data.LOCATIONS, request, "location")
        return Response(200, {"location": data.location_json(found)})

    def list_datacenters(request: Request) -> Response:
        items = _named(data.DATACENTERS, request)
        response = page_response("datacenters", items, request, datacenter)
        assert response.body is not None
        response.body["recommendation"] = data.DATACENTERS[0].id
        return response

    def get_datacenter(request: Request) -> Response:
        found = _by_id(data.DATACENTERS, request, "datacenter")
        return Response(200, {"datacenter": datacenter(found)})

    def list_images(request: Request) -> Response:
        return page_response("images", _images(request), request, data.image_json)

    def get_image(request: Request) -> Response:
        found = _by_id(data.IMAGES, request, "image")
        return Response(200, {"image": data.image_json(found)})

    def list_isos(request: Request) -> Response:
        return page_response("isos", [], request, lambda item: item)

    def pricing(_: Request) -> Response:
        return Response(200, {"pricing": data.pricing_json()})

    router.add("GET", "/server_types", list_server_types)
    router.add("GET", "/server_types/{id}", get_server_type)
    router.add("GET", "/locations", list_locations)
    router.add("GET", "/locations/{id}", get_location)
    router.add("GET", "/datacenters", list_datacenters)
    router.add("GET", "/datacenters/{id}", get_datacenter)
    router.add("GET", "/images", list_images)
    router.add("GET", "/images/{id}", get_image)
    router.add("GET", "/isos", list_isos)
    router.add("GET", "/pricing", pricing)
