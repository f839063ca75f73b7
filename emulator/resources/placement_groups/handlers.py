"""Placement group endpoints: create, list (by name, type, label selector), get, update, delete.

A group renders as the real API's: `id`, `name`, `labels`, `type`, `created` and `servers`
(the ids of its servers). `POST /placement_groups` answers the group and `action: null`, as
the real API does for a group made at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.errors import invalid_field
from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import State
from emulator.render import timestamp
from emulator.resources.placement_groups.state import PLACEMENT_GROUP_TYPES, PlacementGroup
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import name_and_labels, required_str, resource_name

PLACEMENT_GROUP_SORT_KEYS: dict[str, Callable[[PlacementGroup], Any]] = {
    "id": lambda g: g.id,
    "name": lambda g: g.name,
    "created": lambda g: (g.created, g.id),
}


def placement_group_json(group: PlacementGroup) -> Json:
    """A placement group, the way GET /placement_groups/{id} answers it."""
    return {
        "id": group.id,
        "name": group.name,
        "labels": dict(group.labels),
        "type": group.type,
        "created": timestamp(group.created),
        "servers": list(group.server_ids),
    }


def _kind(value: str, key: str = "type") -> str:
    if value not in PLACEMENT_GROUP_TYPES:
        raise invalid_field(key, f"invalid placement group type '{value}'")
    return value


def create(state: State, request: Request) -> Response:
    """POST /placement_groups: name, type (spread), labels."""
    body = request.body
    name = resource_name(body)
    kind = _kind(required_str(body, "type"))
    labels = validate_labels(body.get("labels"))
    with state.transaction() as project:
        group = project.placement_groups.create(name, kind, labels)
        return Response(201, {"placement_group": placement_group_json(group), "action": None})


def list_groups(state: State, request: Request) -> Response:
    """GET /placement_groups with name, type, label_selector, sort and pagination."""
    selector = selector_from(request)
    name = request.first("name")
    kinds = [_kind(kind) for kind in request.every("type")]
    with state.transaction() as project:
        chosen = [
            g
            for g in project.placement_groups.by_id.values()
            if (name is None or g.name == name)
            and (not kinds or g.type in kinds)
            and selector.matches(g.labels)
        ]
        ordered = sort_items(chosen, request.every("sort"), PLACEMENT_GROUP_SORT_KEYS)
        return page_response("placement_groups", ordered, request, placement_group_json)


def get_group(state: State, request: Request) -> Response:
    """GET /placement_groups/{id}."""
    group_id = request.path_id(resource="placement_group")
    with state.transaction() as project:
        group = project.placement_groups.get(group_id)
        return Response(200, {"placement_group": placement_group_json(group)})


def update(state: State, request: Request) -> Response:
    """PUT /placement_groups/{id}: name and/or labels."""
    group_id = request.path_id(resource="placement_group")
    name, labels = name_and_labels(request.body)
    with state.transaction() as project:
        group = project.placement_groups.update(group_id, name, labels)
        return Response(200, {"placement_group": placement_group_json(group)})


def delete(state: State, request: Request) -> Response:
    """DELETE /placement_groups/{id} (204); refused while servers are in it."""
    group_id = request.path_id(resource="placement_group")
    with state.transaction() as project:
        project.placement_groups.delete(group_id)
    return Response(204)


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/placement_groups", list_groups),
    Endpoint("POST", "/placement_groups", create),
    Endpoint("GET", "/placement_groups/{id}", get_group),
    Endpoint("PUT", "/placement_groups/{id}", update),
    Endpoint("DELETE", "/placement_groups/{id}", delete),
]
