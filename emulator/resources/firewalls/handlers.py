"""Firewall endpoints: CRUD plus `set_rules`, `apply_to_resources`, `remove_from_resources`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import Project, State
from emulator.render import timestamp
from emulator.resources.actions.handlers import (
    action_json,
    action_listing,
    kind_action,
    kind_actions,
    resource_action,
)
from emulator.resources.actions.state import Action
from emulator.resources.firewalls.state import Firewall, FirewallRule
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import Body, name_and_labels, object_list, resource_name

FIREWALL_SORT_KEYS: dict[str, Callable[[Firewall], Any]] = {
    "id": lambda f: f.id,
    "name": lambda f: f.name,
    "created": lambda f: (f.created, f.id),
}


def _rule_json(rule: FirewallRule) -> Json:
    return {
        "direction": rule.direction,
        "source_ips": list(rule.source_ips),
        "destination_ips": list(rule.destination_ips),
        "protocol": rule.protocol,
        "port": rule.port,
        "description": rule.description,
    }


def firewall_json(project: Project, firewall: Firewall) -> Json:
    """A firewall with its rules and what it is applied to."""
    applied_to: list[Json] = [
        {"type": "server", "server": {"id": server_id}} for server_id in firewall.server_ids
    ]
    applied_to.extend(
        {
            "type": "label_selector",
            "label_selector": {"selector": applied.text},
            "applied_to_resources": [
                {"type": "server", "server": {"id": server.id}}
                for server in project.firewalls.selected_servers(applied)
            ],
        }
        for applied in firewall.selectors
    )
    return {
        "id": firewall.id,
        "name": firewall.name,
        "labels": dict(firewall.labels),
        "created": timestamp(firewall.created),
        "rules": [_rule_json(rule) for rule in firewall.rules],
        "applied_to": applied_to,
    }


def _rules(body: Body) -> list[FirewallRule]:
    return [FirewallRule.from_json(raw) for raw in object_list(body, "rules")]


def _actions(actions: list[Action], now: float) -> Response:
    return Response(201, {"actions": [action_json(a, now) for a in actions]})


def create(state: State, request: Request) -> Response:
    """POST /firewalls: name, labels, rules, apply_to."""
    body = request.body
    name = resource_name(body)
    labels = validate_labels(body.get("labels"))
    rules = _rules(body)
    apply_to = object_list(body, "apply_to")
    with state.transaction() as project:
        firewall, actions = project.firewalls.create(name, labels, rules, apply_to)
        return Response(
            201,
            {
                "firewall": firewall_json(project, firewall),
                "actions": [action_json(a, project.now) for a in actions],
            },
        )


def list_firewalls(state: State, request: Request) -> Response:
    """GET /firewalls with name, label_selector, sort and pagination."""
    selector = selector_from(request)
    name = request.first("name")
    with state.transaction() as project:
        chosen = [
            f
            for f in project.firewalls.by_id.values()
            if (name is None or f.name == name) and selector.matches(f.labels)
        ]
        ordered = sort_items(chosen, request.every("sort"), FIREWALL_SORT_KEYS)
        return page_response("firewalls", ordered, request, lambda f: firewall_json(project, f))


def get_firewall(state: State, request: Request) -> Response:
    """GET /firewalls/{id}."""
    firewall_id = request.path_id(resource="firewall")
    with state.transaction() as project:
        firewall = project.firewalls.get(firewall_id)
        return Response(200, {"firewall": firewall_json(project, firewall)})


def update(state: State, request: Request) -> Response:
    """PUT /firewalls/{id}: name and/or labels."""
    firewall_id = request.path_id(resource="firewall")
    name, labels = name_and_labels(request.body)
    with state.transaction() as project:
        firewall = project.firewalls.update(firewall_id, name, labels)
        return Response(200, {"firewall": firewall_json(project, firewall)})


def delete(state: State, request: Request) -> Response:
    """DELETE /firewalls/{id} (204; resource_in_use while applied)."""
    firewall_id = request.path_id(resource="firewall")
    with state.transaction() as project:
        project.firewalls.delete(firewall_id)
    return Response(204)


def set_rules(state: State, request: Request) -> Response:
    """POST /firewalls/{id}/actions/set_rules."""
    firewall_id = request.path_id(resource="firewall")
    rules = _rules(request.body)
    with state.transaction() as project:
        return _actions(project.firewalls.set_rules(firewall_id, rules), project.now)


def apply_to(state: State, request: Request) -> Response:
    """POST /firewalls/{id}/actions/apply_to_resources."""
    firewall_id = request.path_id(resource="firewall")
    resources = object_list(request.body, "apply_to")
    with state.transaction() as project:
        return _actions(project.firewalls.apply(firewall_id, resources), project.now)


def remove_from(state: State, request: Request) -> Response:
    """POST /firewalls/{id}/actions/remove_from_resources."""
    firewall_id = request.path_id(resource="firewall")
    resources = object_list(request.body, "remove_from")
    with state.transaction() as project:
        return _actions(project.firewalls.remove(firewall_id, resources), project.now)


def list_actions(state: State, request: Request) -> Response:
    """GET /firewalls/{id}/actions."""
    firewall_id = request.path_id(resource="firewall")
    with state.transaction() as project:
        project.firewalls.get(firewall_id)
        actions = project.actions.of(firewall_id, "firewall")
        return action_listing(request, actions, project.now)


def get_action(state: State, request: Request) -> Response:
    """GET /firewalls/{id}/actions/{action_id}."""
    return resource_action(state, request, "firewall")


def all_firewall_actions(state: State, request: Request) -> Response:
    """GET /firewalls/actions (optionally by id)."""
    return kind_actions(state, request, "firewall")


def one_firewall_action(state: State, request: Request) -> Response:
    """GET /firewalls/actions/{id}."""
    return kind_action(state, request, "firewall")


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/firewalls", list_firewalls),
    Endpoint("POST", "/firewalls", create),
    Endpoint("GET", "/firewalls/actions", all_firewall_actions),
    Endpoint("GET", "/firewalls/actions/{id}", one_firewall_action),
    Endpoint("GET", "/firewalls/{id}", get_firewall),
    Endpoint("PUT", "/firewalls/{id}", update),
    Endpoint("DELETE", "/firewalls/{id}", delete),
    Endpoint("GET", "/firewalls/{id}/actions", list_actions),
    Endpoint("POST", "/firewalls/{id}/actions/set_rules", set_rules),
    Endpoint("POST", "/firewalls/{id}/actions/apply_to_resources", apply_to),
    Endpoint("POST", "/firewalls/{id}/actions/remove_from_resources", remove_from),
    Endpoint("GET", "/firewalls/{id}/actions/{action_id}", get_action),
]
