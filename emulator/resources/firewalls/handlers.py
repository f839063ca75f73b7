"""Firewall endpoints: CRUD plus `set_rules`, `apply_to_resources`, `remove_from_resources`."""

from __future__ import annotations

from emulator.labels import validate_labels
from emulator.project import Project, State
from emulator.render import timestamp
from emulator.resources.actions.handlers import action_json
from emulator.resources.actions.state import Action
from emulator.resources.firewalls.state import Firewall, FirewallRule
from emulator.resources.kind import Kind
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import Body, object_list, resource_name


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


def set_rules(project: Project, firewall_id: int, body: Json) -> list[Action]:
    """POST /firewalls/{id}/actions/set_rules."""
    rules = _rules(body)
    return project.firewalls.set_rules(firewall_id, rules)


def apply_to(project: Project, firewall_id: int, body: Json) -> list[Action]:
    """POST /firewalls/{id}/actions/apply_to_resources."""
    return project.firewalls.apply(firewall_id, object_list(body, "apply_to"))


def remove_from(project: Project, firewall_id: int, body: Json) -> list[Action]:
    """POST /firewalls/{id}/actions/remove_from_resources."""
    return project.firewalls.remove(firewall_id, object_list(body, "remove_from"))


FIREWALLS: Kind[Firewall] = Kind(
    "firewalls",
    "firewall",
    render=firewall_json,
    edits=lambda project: project.firewalls,
    create=create,
    actions={
        "set_rules": set_rules,
        "apply_to_resources": apply_to,
        "remove_from_resources": remove_from,
    },
)

ROUTES: list[Endpoint[State]] = FIREWALLS.routes()
