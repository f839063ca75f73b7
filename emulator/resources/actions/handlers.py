"""Actions endpoints: `GET /actions?id=...`, `GET /actions/{id}`, and the shared action listing."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from emulator.errors import ApiError, invalid_field
from emulator.listing import page_response, sort_items
from emulator.models import ACTION_STATUSES, Action
from emulator.render import action_json
from emulator.routing import Request, Response, Router
from emulator.state import State

ACTION_SORT_KEYS: dict[str, Callable[[Action], Any]] = {
    "id": lambda a: a.id,
    "command": lambda a: a.command,
    "status": lambda a: a.status,
    "started": lambda a: (a.started, a.id),
    "finished": lambda a: (a.finished is None, a.finished or 0.0, a.id),
}
REMOVAL = "https://docs.hetzner.cloud/changelog#2025-01-30-listing-arbitrary-actions-in-the-actions-list-endpoint-is-removed"


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


def register(router: Router, state: State) -> None:
    """Add the /actions routes."""

    def list_actions(request: Request) -> Response:
        ids = ids_from(request)
        if not ids:
            raise ApiError(
                "deprecated_api_endpoint",
                "listing all actions was removed: pass one or more id parameters",
                {"announcement": REMOVAL},
            )
        with state.transaction() as project:
            wanted = set(ids)
            found = [a for a in project.actions.values() if a.id in wanted]
            return action_listing(request, found, project.now)

    def get_action(request: Request) -> Response:
        action_id = request.path_id(resource="action")
        with state.transaction() as project:
            return Response(200, {"action": action_json(project.action(action_id), project.now)})

    router.add("GET", "/actions", list_actions)
    router.add("GET", "/actions/{id}", get_action)
