"""Network endpoints: create, list (by name, label selector), get, update, delete, the
`add_subnet` / `delete_subnet` / `change_protection` actions, and the server actions
`attach_to_network` / `detach_from_network` / `change_alias_ips`.

A network renders as the real API's: `ip_range`, `subnets` (`type`, `ip_range`,
`network_zone`, `gateway`, `vswitch_id`), `routes`, `servers` (the attached servers' ids),
`load_balancers`, `protection`, `labels`, `created` and `expose_routes_to_vswitch`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from emulator.errors import invalid_field
from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import State
from emulator.render import timestamp
from emulator.resources.actions.handlers import (
    action_json,
    action_listing,
    kind_action,
    kind_actions,
    resource_action,
)
from emulator.resources.networks.state import Network, parse_range, parse_subnet
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import name_and_labels, object_list, optional_bool, resource_name

NETWORK_SORT_KEYS: dict[str, Callable[[Network], Any]] = {
    "id": lambda n: n.id,
    "name": lambda n: n.name,
    "created": lambda n: (n.created, n.id),
}


def network_json(network: Network) -> Json:
    """A network, the way GET /networks/{id} answers it."""
    return {
        "id": network.id,
        "name": network.name,
        "ip_range": str(network.ip_range),
        "subnets": [
            {
                "type": subnet.type,
                "ip_range": str(subnet.ip_range),
                "network_zone": subnet.network_zone,
                "gateway": network.gateway,
                "vswitch_id": None,
            }
            for subnet in network.subnets
        ],
        "routes": [],
        "servers": sorted(network.attachments),
        "load_balancers": [],
        "protection": {"delete": network.delete_protected},
        "labels": dict(network.labels),
        "created": timestamp(network.created),
        "expose_routes_to_vswitch": network.expose_routes_to_vswitch,
    }


def create(state: State, request: Request) -> Response:
    """POST /networks: name, ip_range, subnets, labels, expose_routes_to_vswitch."""
    body = request.body
    name = resource_name(body)
    ip_range = parse_range(body.get("ip_range"), "ip_range")
    subnets = [parse_subnet(raw, ip_range) for raw in object_list(body, "subnets")]
    if body.get("routes"):
        raise invalid_field("routes", "routes are not supported by the emulator")
    labels = validate_labels(body.get("labels"))
    expose = optional_bool(body, "expose_routes_to_vswitch", False)
    with state.transaction() as project:
        network = project.networks.create(
            name, ip_range, subnets, labels, expose_routes_to_vswitch=expose
        )
        return Response(201, {"network": network_json(network)})


def list_networks(state: State, request: Request) -> Response:
    """GET /networks with name, label_selector, sort and pagination."""
    selector = selector_from(request)
    name = request.first("name")
    with state.transaction() as project:
        chosen = [
            n
            for n in project.networks.by_id.values()
            if (name is None or n.name == name) and selector.matches(n.labels)
        ]
        ordered = sort_items(chosen, request.every("sort"), NETWORK_SORT_KEYS)
        return page_response("networks", ordered, request, network_json)


def get_network(state: State, request: Request) -> Response:
    """GET /networks/{id}."""
    network_id = request.path_id(resource="network")
    with state.transaction() as project:
        return Response(200, {"network": network_json(project.networks.get(network_id))})


def update(state: State, request: Request) -> Response:
    """PUT /networks/{id}: name and/or labels."""
    network_id = request.path_id(resource="network")
    name, labels = name_and_labels(request.body)
    with state.transaction() as project:
        network = project.networks.update(network_id, name, labels)
        if request.body.get("expose_routes_to_vswitch") is not None:
            network.expose_routes_to_vswitch = optional_bool(
                request.body, "expose_routes_to_vswitch", False
            )
        return Response(200, {"network": network_json(network)})


def delete(state: State, request: Request) -> Response:
    """DELETE /networks/{id} (204); attached servers are detached."""
    network_id = request.path_id(resource="network")
    with state.transaction() as project:
        project.networks.delete(network_id)
    return Response(204)


def add_subnet(state: State, request: Request) -> Response:
    """POST /networks/{id}/actions/add_subnet: {type, network_zone, ip_range}."""
    network_id = request.path_id(resource="network")
    with state.transaction() as project:
        network = project.networks.get(network_id)
        subnet = parse_subnet(request.body, network.ip_range)
        project.networks.add_subnet(network_id, subnet)
        action = project.actions.start("add_subnet", [(network_id, "network")], 0)
        return Response(201, {"action": action_json(action, project.now)})


def delete_subnet(state: State, request: Request) -> Response:
    """POST /networks/{id}/actions/delete_subnet: {ip_range}."""
    network_id = request.path_id(resource="network")
    ip_range = parse_range(request.body.get("ip_range"), "ip_range", smallest=30)
    with state.transaction() as project:
        project.networks.delete_subnet(network_id, ip_range)
        action = project.actions.start("delete_subnet", [(network_id, "network")], 0)
        return Response(201, {"action": action_json(action, project.now)})


def change_protection(state: State, request: Request) -> Response:
    """POST /networks/{id}/actions/change_protection: {delete}."""
    network_id = request.path_id(resource="network")
    with state.transaction() as project:
        network = project.networks.get(network_id)
        if request.body.get("delete") is not None:
            network.delete_protected = optional_bool(request.body, "delete", False)
        action = project.actions.start("change_protection", [(network_id, "network")], 0)
        return Response(201, {"action": action_json(action, project.now)})


def _network_id(body: Json) -> int:
    value = body.get("network")
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_field("network", "is required and must be an ID")
    return value


def _alias_ips(body: Json) -> tuple[str, ...]:
    raw = body.get("alias_ips") or []
    if not isinstance(raw, list):
        raise invalid_field("alias_ips", "must be a list of IPs")
    try:
        return tuple(str(ipaddress.IPv4Address(value)) for value in raw)
    except (ValueError, TypeError):
        raise invalid_field("alias_ips", "must be a list of IPs") from None


def attach_to_network(state: State, request: Request) -> Response:
    """POST /servers/{id}/actions/attach_to_network: {network, ip?, alias_ips?, ip_range?}.

    The official Terraform/Pulumi provider attaches a server's networks this way after the
    create, not in POST /servers.
    """
    server_id = request.path_id(resource="server")
    body = request.body
    network_id = _network_id(body)
    ip = None
    if body.get("ip") is not None:
        try:
            ip = ipaddress.IPv4Address(body["ip"])
        except (ValueError, TypeError):
            raise invalid_field("ip", "must be an IPv4 address") from None
    ip_range = (
        None
        if body.get("ip_range") is None
        else parse_range(body["ip_range"], "ip_range", smallest=30)
    )
    alias_ips = _alias_ips(body)
    with state.transaction() as project:
        server = project.servers.get(server_id)
        project.networks.attach(
            network_id,
            server.id,
            server.location.network_zone,
            ip=ip,
            ip_range=ip_range,
            alias_ips=alias_ips,
        )
        action = project.actions.start(
            "attach_to_network",
            [(server.id, "server"), (network_id, "network")],
            project.timing.action,
        )
        return Response(201, {"action": action_json(action, project.now)})


def detach_from_network(state: State, request: Request) -> Response:
    """POST /servers/{id}/actions/detach_from_network: {network}."""
    server_id = request.path_id(resource="server")
    network_id = _network_id(request.body)
    with state.transaction() as project:
        server = project.servers.get(server_id)
        project.networks.detach_one(network_id, server.id)
        action = project.actions.start(
            "detach_from_network",
            [(server.id, "server"), (network_id, "network")],
            project.timing.action,
        )
        return Response(201, {"action": action_json(action, project.now)})


def change_alias_ips(state: State, request: Request) -> Response:
    """POST /servers/{id}/actions/change_alias_ips: {network, alias_ips}."""
    server_id = request.path_id(resource="server")
    network_id = _network_id(request.body)
    alias_ips = _alias_ips(request.body)
    with state.transaction() as project:
        server = project.servers.get(server_id)
        project.networks.set_alias_ips(network_id, server.id, alias_ips)
        action = project.actions.start(
            "change_alias_ips", [(server.id, "server"), (network_id, "network")], 0
        )
        return Response(201, {"action": action_json(action, project.now)})


def list_actions(state: State, request: Request) -> Response:
    """GET /networks/{id}/actions."""
    network_id = request.path_id(resource="network")
    with state.transaction() as project:
        project.networks.get(network_id)
        return action_listing(request, project.actions.of(network_id, "network"), project.now)


def get_action(state: State, request: Request) -> Response:
    """GET /networks/{id}/actions/{action_id}."""
    return resource_action(state, request, "network")


def all_network_actions(state: State, request: Request) -> Response:
    """GET /networks/actions (optionally by id)."""
    return kind_actions(state, request, "network")


def one_network_action(state: State, request: Request) -> Response:
    """GET /networks/actions/{id}."""
    return kind_action(state, request, "network")


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/networks", list_networks),
    Endpoint("POST", "/networks", create),
    Endpoint("GET", "/networks/actions", all_network_actions),
    Endpoint("GET", "/networks/actions/{id}", one_network_action),
    Endpoint("GET", "/networks/{id}", get_network),
    Endpoint("PUT", "/networks/{id}", update),
    Endpoint("DELETE", "/networks/{id}", delete),
    Endpoint("GET", "/networks/{id}/actions", list_actions),
    Endpoint("POST", "/networks/{id}/actions/add_subnet", add_subnet),
    Endpoint("POST", "/networks/{id}/actions/delete_subnet", delete_subnet),
    Endpoint("POST", "/networks/{id}/actions/change_protection", change_protection),
    Endpoint("GET", "/networks/{id}/actions/{action_id}", get_action),
    Endpoint("POST", "/servers/{id}/actions/attach_to_network", attach_to_network),
    Endpoint("POST", "/servers/{id}/actions/detach_from_network", detach_from_network),
    Endpoint("POST", "/servers/{id}/actions/change_alias_ips", change_alias_ips),
]
