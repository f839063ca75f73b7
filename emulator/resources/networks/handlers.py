"""Network endpoints: create, list (by name, label selector), get, update, delete, the
`add_subnet` / `delete_subnet` / `change_protection` actions, and the server actions
`attach_to_network` / `detach_from_network` / `change_alias_ips`.

A network renders as the real API's: `ip_range`, `subnets` (`type`, `ip_range`,
`network_zone`, `gateway`, `vswitch_id`), `routes`, `servers` (the attached servers' ids),
`load_balancers`, `protection`, `labels`, `created` and `expose_routes_to_vswitch`.
"""

from __future__ import annotations

import ipaddress

from emulator.errors import invalid_field
from emulator.labels import validate_labels
from emulator.project import Project, State
from emulator.render import timestamp
from emulator.resources.actions.state import Action
from emulator.resources.kind import Kind, action_routes
from emulator.resources.networks.state import Network, parse_range, parse_subnet
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import name_and_labels, object_list, optional_bool, resource_name


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


def _update(project: Project, network_id: int, body: Json) -> Network:
    """PUT /networks/{id}: name, labels and/or expose_routes_to_vswitch."""
    network = project.networks.update(network_id, *name_and_labels(body))
    if body.get("expose_routes_to_vswitch") is not None:
        network.expose_routes_to_vswitch = optional_bool(body, "expose_routes_to_vswitch", False)
    return network


def add_subnet(project: Project, network_id: int, body: Json) -> Action:
    """POST /networks/{id}/actions/add_subnet: {type, network_zone, ip_range}."""
    network = project.networks.get(network_id)
    project.networks.add_subnet(network_id, parse_subnet(body, network.ip_range))
    return project.actions.start("add_subnet", [(network_id, "network")], 0)


def delete_subnet(project: Project, network_id: int, body: Json) -> Action:
    """POST /networks/{id}/actions/delete_subnet: {ip_range}."""
    ip_range = parse_range(body.get("ip_range"), "ip_range", smallest=30)
    project.networks.delete_subnet(network_id, ip_range)
    return project.actions.start("delete_subnet", [(network_id, "network")], 0)


def change_protection(project: Project, network_id: int, body: Json) -> Action:
    """POST /networks/{id}/actions/change_protection: {delete}."""
    network = project.networks.get(network_id)
    if body.get("delete") is not None:
        network.delete_protected = optional_bool(body, "delete", False)
    return project.actions.start("change_protection", [(network_id, "network")], 0)


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


def _server_action(
    project: Project, command: str, server_id: int, network_id: int, seconds: float
) -> Action:
    refs = [(server_id, "server"), (network_id, "network")]
    return project.actions.start(command, refs, seconds)


def attach_to_network(project: Project, server_id: int, body: Json) -> Action:
    """POST /servers/{id}/actions/attach_to_network: {network, ip?, alias_ips?, ip_range?}.

    The official Terraform/Pulumi provider attaches a server's networks this way after the
    create, not in POST /servers.
    """
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
    server = project.servers.get(server_id)
    project.networks.attach(
        network_id,
        server.id,
        server.location.network_zone,
        ip=ip,
        ip_range=ip_range,
        alias_ips=alias_ips,
    )
    return _server_action(
        project, "attach_to_network", server.id, network_id, project.timing.action
    )


def detach_from_network(project: Project, server_id: int, body: Json) -> Action:
    """POST /servers/{id}/actions/detach_from_network: {network}."""
    network_id = _network_id(body)
    server = project.servers.get(server_id)
    project.networks.detach_one(network_id, server.id)
    return _server_action(
        project, "detach_from_network", server.id, network_id, project.timing.action
    )


def change_alias_ips(project: Project, server_id: int, body: Json) -> Action:
    """POST /servers/{id}/actions/change_alias_ips: {network, alias_ips}."""
    network_id = _network_id(body)
    alias_ips = _alias_ips(body)
    server = project.servers.get(server_id)
    project.networks.set_alias_ips(network_id, server.id, alias_ips)
    return _server_action(project, "change_alias_ips", server.id, network_id, 0)


NETWORKS: Kind[Network] = Kind(
    "networks",
    "network",
    render=lambda _, network: network_json(network),
    edits=lambda project: project.networks,
    create=create,
    update=_update,
    actions={
        "add_subnet": add_subnet,
        "delete_subnet": delete_subnet,
        "change_protection": change_protection,
    },
)

ROUTES: list[Endpoint[State]] = [
    *NETWORKS.routes(),
    *action_routes(
        "servers",
        "server",
        {
            "attach_to_network": attach_to_network,
            "detach_from_network": detach_from_network,
            "change_alias_ips": change_alias_ips,
        },
    ),
]
