"""Firewall endpoints: CRUD plus `set_rules`, `apply_to_resources`, `remove_from_resources`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.api.actions import action_listing
from emulator.errors import not_found
from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.models import Action, Firewall, FirewallRule
from emulator.render import action_json, firewall_json
from emulator.routing import Request, Response, Router
from emulator.state import State
from emulator.validation import Body, object_list, resource_name

FIREWALL_SORT_KEYS: dict[str, Callable[[Firewall], Any]] = {
    "id": lambda f: f.id,
    "name": lambda f: f.name,
    "created": lambda f: (f.created, f.id),
}


def _rules(body: Body) -> list[FirewallRule]:
    return [FirewallRule.from_json(raw) for raw in object_list(body, "rules")]


class FirewallsApi:
    """The /firewalls handlers over one project state."""

    def __init__(self, state: State) -> None:
        self.state = state

    def register(self, router: Router) -> None:
        """Add the /firewalls routes."""
        router.add("GET", "/firewalls", self.list_firewalls)
        router.add("POST", "/firewalls", self.create)
        router.add("GET", "/firewalls/{id}", self.get_firewall)
        router.add("PUT", "/firewalls/{id}", self.update)
        router.add("DELETE", "/firewalls/{id}", self.delete)
        router.add("GET", "/firewalls/{id}/actions", self.list_actions)
        router.add("POST", "/firewalls/{id}/actions/set_rules", self.set_rules)
        router.add("POST", "/firewalls/{id}/actions/apply_to_resources", self.apply_to)
        router.add("POST", "/firewalls/{id}/actions/remove_from_resources", self.remove_from)
        router.add("GET", "/firewalls/{id}/actions/{action_id}", self.get_action)

    def create(self, request: Request) -> Response:
        """POST /firewalls: name, labels, rules, apply_to."""
        body = request.body
        name = resource_name(body)
        labels = validate_labels(body.get("labels"))
        rules = _rules(body)
        apply_to = object_list(body, "apply_to")
        with self.state.transaction() as project:
            firewall, actions = project.create_firewall(name, labels, rules, apply_to)
            return Response(
                201,
                {
                    "firewall": firewall_json(project, firewall),
                    "actions": [action_json(a, project.now) for a in actions],
                },
            )

    def list_firewalls(self, request: Request) -> Response:
        """GET /firewalls with name, label_selector, sort and pagination."""
        selector = selector_from(request)
        name = request.first("name")
        with self.state.transaction() as project:
            chosen = [
                f
                for f in project.firewalls.values()
                if (name is None or f.name == name) and selector.matches(f.labels)
            ]
            ordered = sort_items(chosen, request.every("sort"), FIREWALL_SORT_KEYS)
            return page_response("firewalls", ordered, request, lambda f: firewall_json(project, f))

    def get_firewall(self, request: Request) -> Response:
        """GET /firewalls/{id}."""
        firewall_id = request.path_id(resource="firewall")
        with self.state.transaction() as project:
            firewall = project.firewall(firewall_id)
            return Response(200, {"firewall": firewall_json(project, firewall)})

    def update(self, request: Request) -> Response:
        """PUT /firewalls/{id}: name and/or labels."""
        firewall_id = request.path_id(resource="firewall")
        body = request.body
        name = resource_name(body) if body.get("name") is not None else None
        labels = validate_labels(body["labels"]) if body.get("labels") is not None else None
        with self.state.transaction() as project:
            firewall = project.update_firewall(firewall_id, name, labels)
            return Response(200, {"firewall": firewall_json(project, firewall)})

    def delete(self, request: Request) -> Response:
        """DELETE /firewalls/{id} (204; resource_in_use while applied)."""
        firewall_id = request.path_id(resource="firewall")
        with self.state.transaction() as project:
            project.delete_firewall(firewall_id)
        return Response(204)

    def set_rules(self, request: Request) -> Response:
        """POST /firewalls/{id}/actions/set_rules."""
        firewall_id = request.path_id(resource="firewall")
        rules = _rules(request.body)
        with self.state.transaction() as project:
            return _actions(project.set_firewall_rules(firewall_id, rules), project.now)

    def apply_to(self, request: Request) -> Response:
        """POST /firewalls/{id}/actions/apply_to_resources."""
        firewall_id = request.path_id(resource="firewall")
        resources = object_list(request.body, "apply_to")
        with self.state.transaction() as project:
            return _actions(project.apply_firewall(firewall_id, resources), project.now)

    def remove_from(self, request: Request) -> Response:
        """POST /firewalls/{id}/actions/remove_from_resources."""
        firewall_id = request.path_id(resource="firewall")
        resources = object_list(request.body, "remove_from")
        with self.state.transaction() as project:
            return _actions(project.remove_firewall(firewall_id, resources), project.now)

    def list_actions(self, request: Request) -> Response:
        """GET /firewalls/{id}/actions."""
        firewall_id = request.path_id(resource="firewall")
        with self.state.transaction() as project:
            project.firewall(firewall_id)
            actions = project.actions_of(firewall_id, "firewall")
            return action_listing(request, actions, project.now)

    def get_action(self, request: Request) -> Response:
        """GET /firewalls/{id}/actions/{action_id}."""
        firewall_id = request.path_id(resource="firewall")
        action_id = request.path_id("action_id", resource="action")
        with self.state.transaction() as project:
            action = project.action(action_id)
            if not action.touches(firewall_id, "firewall"):
                raise not_found("action", action_id)
            return Response(200, {"action": action_json(action, project.now)})


def _actions(actions: list[Action], now: float) -> Response:
    return Response(201, {"actions": [action_json(a, now) for a in actions]})
