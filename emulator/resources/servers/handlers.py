"""Server endpoints: create, list, get, update, delete, and the server actions.

`POST /servers` checks the body the way the real API does (host-name names, labels,
references by id or name, image architecture, location support, stock, unique names) and
answers 201 with the server, its `create_server` action, `next_actions` and a root password
when no SSH key was given. A server renders with full `server_type`, `location` and `image`
objects (no `datacenter`: removed from the API on 2026-07-01), and `public_net` with its
primary IPs' ids, `floating_ips` and its `firewalls` (`pending` while being applied or
removed, then `applied`), as hcloud-python and hcloud-go parse it.
"""

from __future__ import annotations

from collections.abc import Callable

from emulator.errors import invalid_field, invalid_input
from emulator.labels import validate_labels
from emulator.project import Project, State
from emulator.render import ipv4_dns_ptr, timestamp
from emulator.resources.actions.handlers import action_json
from emulator.resources.actions.state import Action
from emulator.resources.catalogue import data as catalogue
from emulator.resources.images.handlers import image_json
from emulator.resources.kind import ActionHandler, Kind
from emulator.resources.placement_groups.handlers import placement_group_json
from emulator.resources.primary_ips.state import PrimaryIP
from emulator.resources.servers.state import POWER_ACTIONS, SERVER_STATUSES, Server, ServerSpec
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import (
    MAX_USER_DATA,
    Body,
    id_list,
    is_hostname,
    object_list,
    optional_bool,
    optional_object,
    optional_ref,
    optional_str,
    ref_list,
    required_ref,
    required_str,
)


def _hostname(body: Body, key: str = "name") -> str:
    name = required_str(body, key)
    if not is_hostname(name):
        raise invalid_field(key, "is not a valid hostname")
    return name


def _location(body: Body) -> catalogue.Location | None:
    if body.get("datacenter") is not None:
        raise invalid_field("datacenter", "datacenters were removed on 2026-07-01: use location")
    location_ref = optional_ref(body, "location")
    if location_ref is not None:
        location = catalogue.location(location_ref)
        if location is None:
            raise invalid_input(f"location '{location_ref}' not found")
        return location
    return None


def _unsupported_references(body: Body) -> None:
    """The emulator has no volumes or spare primary IPs."""
    ids = id_list(body, "volumes")
    if ids:
        raise invalid_input(f"volume {ids[0]} not found")
    public_net = optional_object(body, "public_net")
    for key in ("ipv4", "ipv6"):
        if public_net.get(key) is not None:
            raise invalid_input(f"primary ip {public_net[key]} not found")


def _placement_group(body: Body) -> int | None:
    value = body.get("placement_group")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_field("placement_group", "must be an ID")
    return value


def server_spec(body: Body) -> ServerSpec:
    """Check a create request against the catalogue; state-dependent checks come later."""
    name = _hostname(body)
    server_type_ref = required_ref(body, "server_type")
    image_ref = required_ref(body, "image")
    labels = validate_labels(body.get("labels"))
    user_data = optional_str(body, "user_data")
    if user_data is not None and len(user_data.encode()) > MAX_USER_DATA:
        raise invalid_field("user_data", "is too long")
    firewalls = [entry.get("firewall") for entry in object_list(body, "firewalls")]
    if not all(isinstance(fid, int) and not isinstance(fid, bool) for fid in firewalls):
        raise invalid_field("firewalls", "firewall must be an ID")
    ssh_keys = ref_list(body, "ssh_keys")
    optional_bool(body, "automount", False)
    public_net = optional_object(body, "public_net")
    _unsupported_references(body)
    network_ids = id_list(body, "networks")
    placement_group = _placement_group(body)
    server_type = catalogue.server_type(server_type_ref)
    if server_type is None:
        raise invalid_input(f"server type '{server_type_ref}' not found")
    return ServerSpec(
        name=name,
        server_type=server_type,
        location=_location(body),
        image=image_ref,
        labels=labels,
        ssh_keys=ssh_keys,
        firewall_ids=[fid for fid in firewalls if isinstance(fid, int)],
        start_after_create=optional_bool(body, "start_after_create", True),
        enable_ipv4=optional_bool(public_net, "enable_ipv4", True),
        enable_ipv6=optional_bool(public_net, "enable_ipv6", True),
        user_data=user_data or "",
        network_ids=tuple(dict.fromkeys(network_ids)),
        placement_group_id=placement_group,
    )


FIREWALL_COMMANDS = ("apply_firewall", "remove_firewall")


def _firewall_status(project: Project, firewall_id: int, server: Server) -> str:
    """`pending` while the firewall is being applied to or removed from the server."""
    running = project.actions.running(firewall_id, "firewall", FIREWALL_COMMANDS)
    return "pending" if any(a.touches(server.id, "server") for a in running) else "applied"


def _public_ip(ip: PrimaryIP | None) -> Json | None:
    """A server's IPv4 address or IPv6 network in `public_net` (None: disabled)."""
    if ip is None:
        return None
    dns_ptr = ipv4_dns_ptr(ip.ip) if ip.kind == "ipv4" else []
    return {"id": ip.id, "ip": ip.ip, "blocked": False, "dns_ptr": dns_ptr}


def server_json(project: Project, server: Server) -> Json:
    """A server, the way GET /servers/{id} answers it."""
    unavailable = project.stock.unavailable()
    traffic = server.location.included_traffic
    group = project.placement_groups.of_server(server.id)
    return {
        "id": server.id,
        "name": server.name,
        "status": server.status,
        "created": timestamp(server.created),
        "public_net": {
            "ipv4": _public_ip(server.ipv4),
            "ipv6": _public_ip(server.ipv6),
            "floating_ips": [],
            "firewalls": [
                {"id": fw.id, "status": _firewall_status(project, fw.id, server)}
                for fw in project.firewalls.of_server(server)
            ],
        },
        "private_net": [
            {
                "network": network.id,
                "ip": attachment.ip,
                "alias_ips": list(attachment.alias_ips),
                "mac_address": attachment.mac_address,
            }
            for network, attachment in project.networks.of_server(server.id)
        ],
        "server_type": catalogue.server_type_json(
            server.server_type, unavailable, project.epoch, project.now
        ),
        "location": catalogue.location_json(server.location),
        "image": image_json(project, server.image),
        "iso": None,
        "rescue_enabled": False,
        "locked": False,
        "backup_window": server.backup_window,
        "outgoing_traffic": 0,
        "ingoing_traffic": 0,
        "included_traffic": traffic,
        "protection": {"delete": server.delete_protected, "rebuild": server.rebuild_protected},
        "labels": dict(server.labels),
        "volumes": [],
        "load_balancers": [],
        "primary_disk_size": server.disk,
        "placement_group": None if group is None else placement_group_json(group),
    }


def create(state: State, request: Request) -> Response:
    """POST /servers."""
    spec = server_spec(request.body)
    with state.transaction() as project:
        created = project.servers.create(spec)
        return Response(
            201,
            {
                "server": server_json(project, created.server),
                "action": action_json(created.action, project.now),
                "next_actions": [action_json(a, project.now) for a in created.next_actions],
                "root_password": created.root_password,
            },
        )


def _of_status(request: Request) -> Callable[[Server], bool]:
    statuses = request.every("status")
    for status in statuses:
        if status not in SERVER_STATUSES:
            raise invalid_field("status", f"invalid status '{status}'")
    return lambda server: not statuses or server.status in statuses


def change_type(project: Project, server_id: int, body: Json) -> Action:
    """POST /servers/{id}/actions/change_type: {server_type, upgrade_disk}."""
    server_type_ref = required_ref(body, "server_type")
    upgrade_disk = body.get("upgrade_disk")
    if not isinstance(upgrade_disk, bool):
        raise invalid_field("upgrade_disk", "is required and must be a boolean")
    server_type = catalogue.server_type(server_type_ref)
    if server_type is None:
        raise invalid_input(f"server type '{server_type_ref}' not found")
    return project.servers.change_type(server_id, server_type, upgrade_disk=upgrade_disk)


def power(name: str) -> ActionHandler:
    """POST /servers/{id}/actions/{poweron,poweroff,shutdown,reboot,reset}."""
    return lambda project, server_id, _: project.servers.power(server_id, name)


def change_protection(project: Project, server_id: int, body: Json) -> Action:
    """POST /servers/{id}/actions/change_protection: {delete?, rebuild?}."""
    delete_flag = _optional_flag(body, "delete")
    rebuild_flag = _optional_flag(body, "rebuild")
    return project.servers.change_protection(server_id, delete_flag, rebuild_flag)


def backup(*, enabled: bool) -> ActionHandler:
    """POST /servers/{id}/actions/{enable,disable}_backup."""
    return lambda project, server_id, _: project.servers.set_backup(server_id, enabled=enabled)


def add_to_placement_group(project: Project, server_id: int, body: Json) -> Action:
    """POST /servers/{id}/actions/add_to_placement_group: {placement_group} (server off)."""
    group_id = _placement_group(body)
    if group_id is None:
        raise invalid_field("placement_group", "is required")
    return project.servers.move_placement_group(server_id, group_id)


def remove_from_placement_group(project: Project, server_id: int, _: Json) -> Action:
    """POST /servers/{id}/actions/remove_from_placement_group."""
    return project.servers.move_placement_group(server_id, None)


def _optional_flag(body: Json, key: str) -> bool | None:
    return None if body.get(key) is None else optional_bool(body, key, False)


SERVERS: Kind[Server] = Kind(
    "servers",
    "server",
    render=server_json,
    edits=lambda project: project.servers,
    read_name=_hostname,
    filters=_of_status,
    create=create,
    actions={
        **{name: power(name) for name in POWER_ACTIONS},
        "change_protection": change_protection,
        "change_type": change_type,
        "enable_backup": backup(enabled=True),
        "disable_backup": backup(enabled=False),
        "add_to_placement_group": add_to_placement_group,
        "remove_from_placement_group": remove_from_placement_group,
    },
)

ROUTES: list[Endpoint[State]] = SERVERS.routes()
