"""Image endpoints: list (system images, snapshots and backups), get, update, delete, their
actions; and `POST /servers/{id}/actions/create_image` (routed with the servers).

`GET /images` filters as the real API does: `type` (system, snapshot, backup, app),
`status` (available, creating, unavailable), `name` (snapshots have none), `label_selector`,
`architecture`, `bound_to` (the server a backup belongs to), `include_deprecated` (system
images past their deprecation are left out otherwise), and sorts by `id`, `name` or
`created` (`:asc`/`:desc`; `sort=created:desc` gives the newest first, ties by id).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from emulator.errors import invalid_field
from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import Project, State
from emulator.render import timestamp
from emulator.resources.actions.handlers import action_json
from emulator.resources.actions.state import Action
from emulator.resources.catalogue import data as catalogue
from emulator.resources.images.state import IMAGE_KINDS, AnyImage, ImageKind, Snapshot
from emulator.resources.kind import Kind, action_routes
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import optional_bool, optional_str

IMAGE_TYPES = ("system", "snapshot", "backup", "app")
IMAGE_STATUSES = ("available", "creating", "unavailable")
ARCHITECTURES = ("x86", "arm")
SYSTEM_CREATED = datetime.fromisoformat(catalogue.CATALOGUE_CREATED).timestamp()


def _created(image: AnyImage) -> float:
    return image.created if isinstance(image, Snapshot) else SYSTEM_CREATED


def _kind(image: AnyImage) -> str:
    return image.type if isinstance(image, Snapshot) else "system"


def _status(image: AnyImage) -> str:
    return image.status if isinstance(image, Snapshot) else "available"


def _bound_to(image: AnyImage) -> int | None:
    return image.bound_to if isinstance(image, Snapshot) else None


def _deprecation(image: AnyImage) -> catalogue.Deprecation | None:
    return image.deprecation if isinstance(image, catalogue.Image) else None


IMAGE_SORT_KEYS: dict[str, Callable[[AnyImage], Any]] = {
    "id": lambda i: i.id,
    "name": lambda i: (i.name or "", i.id),
    "created": lambda i: (_created(i), i.id),
}


def image_json(project: Project, image: AnyImage) -> Json:
    """Any image, the way GET /images/{id} answers it."""
    if isinstance(image, catalogue.Image):
        return catalogue.image_json(image, project.epoch)
    created_from = image.created_from
    return {
        "id": image.id,
        "type": image.type,
        "status": image.status,
        "name": None,
        "description": image.description,
        "image_size": image.image_size,
        "disk_size": image.disk_size,
        "created": timestamp(image.created),
        "created_from": None
        if created_from is None
        else {"id": created_from[0], "name": created_from[1]},
        "bound_to": image.bound_to,
        "os_flavor": image.os_flavor,
        "os_version": image.os_version,
        "rapid_deploy": False,
        "protection": {"delete": image.delete_protected},
        "deprecated": None,
        "deprecation": None,
        "deleted": None,
        "labels": dict(image.labels),
        "architecture": image.architecture,
    }


def _choices(request: Request, key: str, allowed: tuple[str, ...]) -> list[str]:
    values = request.every(key)
    for value in values:
        if value not in allowed:
            raise invalid_field(key, f"invalid {key} '{value}'")
    return values


def _matching(project: Project, request: Request) -> list[AnyImage]:
    architectures = _choices(request, "architecture", ARCHITECTURES)
    types = _choices(request, "type", IMAGE_TYPES)
    statuses = _choices(request, "status", IMAGE_STATUSES)
    bound_to = request.every("bound_to")
    if not all(value.isdigit() for value in bound_to):
        raise invalid_field("bound_to", "must be a server ID")
    servers = {int(value) for value in bound_to}
    selector = selector_from(request)
    name = request.first("name")
    include_deprecated = (request.first("include_deprecated") or "").lower() == "true"
    everything: list[AnyImage] = [*catalogue.IMAGES, *project.images.by_id.values()]
    chosen = [
        image
        for image in everything
        if (name is None or image.name == name)
        and (include_deprecated or _deprecation(image) is None)
        and (not architectures or image.architecture in architectures)
        and (not types or _kind(image) in types)
        and (not statuses or _status(image) in statuses)
        and (not servers or _bound_to(image) in servers)
        and selector.matches(image.labels)
    ]
    return sort_items(chosen, request.every("sort") or ["id"], IMAGE_SORT_KEYS)


def list_images(state: State, request: Request) -> Response:
    """GET /images with its filters and sort."""
    with state.transaction() as project:
        found = _matching(project, request)
        return page_response("images", found, request, lambda i: image_json(project, i))


def _update(project: Project, image_id: int, body: Json) -> Snapshot:
    """PUT /images/{id}: description, labels, type (a backup becomes a snapshot)."""
    description = optional_str(body, "description")
    labels = validate_labels(body["labels"]) if body.get("labels") is not None else None
    kind = optional_str(body, "type")
    return project.images.update(image_id, description, labels, kind)


def _delete(project: Project, image_id: int) -> None:
    """DELETE /images/{id} (204): a snapshot or backup."""
    project.images.delete(image_id)


def change_protection(project: Project, image_id: int, body: Json) -> Action:
    """POST /images/{id}/actions/change_protection: {delete}."""
    image = project.images.own(image_id)
    if body.get("delete") is not None:
        image.delete_protected = optional_bool(body, "delete", False)
    return project.actions.start("change_protection", [(image_id, "image")], 0)


def create_image(project: Project, server_id: int, body: Json) -> Response:
    """POST /servers/{id}/actions/create_image: {type, description, labels} -> image, action."""
    kind = optional_str(body, "type") or "snapshot"
    if kind not in IMAGE_KINDS:
        raise invalid_field("type", f"invalid image type '{kind}': snapshot or backup")
    image_kind: ImageKind = "backup" if kind == "backup" else "snapshot"
    description = optional_str(body, "description")
    labels = validate_labels(body.get("labels"))
    server = project.servers.get(server_id)
    image, action = project.images.snapshot(server, image_kind, description, labels)
    return Response(
        201, {"image": image_json(project, image), "action": action_json(action, project.now)}
    )


IMAGES: Kind[AnyImage] = Kind(
    "images",
    "image",
    render=image_json,
    store=lambda project: project.images,
    lister=list_images,
    update=_update,
    delete=_delete,
    actions={"change_protection": change_protection},
)

ROUTES: list[Endpoint[State]] = [
    *IMAGES.routes(),
    *action_routes("servers", "server", {"create_image": create_image}),
]
