"""Placement group endpoints: create, list (by name, type, label selector), get, update, delete.

A group renders as the real API's: `id`, `name`, `labels`, `type`, `created` and `servers`
(the ids of its servers). `POST /placement_groups` answers the group and `action: null`, as
the real API does for a group made at once.
"""

from __future__ import annotations

from collections.abc import Callable

from emulator.errors import invalid_field
from emulator.labels import validate_labels
from emulator.project import State
from emulator.render import timestamp
from emulator.resources.kind import Kind
from emulator.resources.placement_groups.state import PLACEMENT_GROUP_TYPES, PlacementGroup
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import required_str, resource_name


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


def _of_type(request: Request) -> Callable[[PlacementGroup], bool]:
    kinds = [_kind(kind) for kind in request.every("type")]
    return lambda group: not kinds or group.type in kinds


PLACEMENT_GROUPS: Kind[PlacementGroup] = Kind(
    "placement_groups",
    "placement_group",
    render=lambda _, group: placement_group_json(group),
    edits=lambda project: project.placement_groups,
    filters=_of_type,
    create=create,
)

ROUTES: list[Endpoint[State]] = PLACEMENT_GROUPS.routes()
