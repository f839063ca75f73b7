"""Actions endpoints: `GET /actions?id=...`, `GET /actions/{id}`; an action's JSON and the
shared action listing (each resource's action routes are `emulator/resources/kind.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from emulator.errors import ApiError, invalid_field
from emulator.listing import page_response, sort_items
from emulator.project import State
from emulator.render import timestamp
from emulator.resources.actions.state import ACTION_STATUSES, Action
from emulator.routing import Endpoint, Json, Request, Response

ACTION_SORT_KEYS: dict[str, Callable[[Action], Any]] = {
    "id": lambda a: a.id,
    "command": lambda a: a.command,
    "status": lambda a: a.status,
    "started": lambda a: (a.started, a.id),
    "finished": lambda a: (a.finished is None, a.finished or 0.0, a.id),
}
REMOVAL = "https://docs.hetzner.cloud/changelog#2025-01-30-listing-arbitrary-actions-in-the-actions-list-endpoint-is-removed"


def action_json(action: Action, now: float) -> Json:
    """An action with its progress (0..99 while running, 100 when done)."""
    if action.status == "running":
        span = action.finishes - action.started
        progress = int(min(99.0, max(0.0, (now - action.started) / span * 100))) if span else 0
    else:
        progress = 100
    return {
        "id": action.id,
        "command": action.command,
        "status": action.status,
        "progress": progress,
        "started": timestamp(action.started),
        "finished": None if action.finished is None else timestamp(action.finished),
        "resources": [{"id": rid, "type": rtype} for rid, rtype in action.resources],
        "error": action.error,
    }


def action_listing(request: Request, actions: Iterable[Action], now: float) -> Response:
    """List actions with the `status` filter, `sort` and pagination every action list has."""
    statuses = request.every("status")
    for status in statuses:
        if status not in ACTION_STATUSES:
            raise invalid_field("status", f"invalid status '{status}'")
    chosen = [a for a in actions if not statuses or a.status in statuses]
    ordered = sort_items(chosen, request.every("sort"), ACTION_SORT_KEYS)
    return page_response("actions", ordered, request, lambda a: action_json(a, now))


def ids_from(request: Request) -> list[int]:
    """The repeated `id` query parameter as integers."""
    ids = request.every("id")
    if not all(value.isdigit() for value in ids):
        raise invalid_field("id", "must be an integer")
    return [int(value) for value in ids]


def list_actions(state: State, request: Request) -> Response:
    """GET /actions?id=..: only by id, as listing every action was removed from the API."""
    ids = ids_from(request)
    if not ids:
        raise ApiError(
            "deprecated_api_endpoint",
            "listing all actions was removed: pass one or more id parameters",
            {"announcement": REMOVAL},
        )
    with state.transaction() as project:
        wanted = set(ids)
        found = [a for a in project.actions.by_id.values() if a.id in wanted]
        return action_listing(request, found, project.now)


def get_action(state: State, request: Request) -> Response:
    """GET /actions/{id}."""
    action_id = request.path_id(resource="action")
    with state.transaction() as project:
        return Response(200, {"action": action_json(project.actions.get(action_id), project.now)})


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/actions", list_actions),
    Endpoint("GET", "/actions/{id}", get_action),
]
