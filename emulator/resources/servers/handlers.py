"""Server endpoints: create, list, get, update, delete, and the server actions.

`POST /servers` checks the body the way the real API does (host-name names, labels,
references by id or name, image architecture, location support, stock, unique names) and
answers 201 with the server, its `create_server` action, `next_actions` and a root password
when no SSH key was given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator import catalogue
from emulator.api.actions import action_listing
from emulator.errors import invalid_field, invalid_input, not_found
from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.models import SERVER_STATUSES, Server, ServerSpec
from emulator.render import action_json, server_json
from emulator.routing import Json, Request, Response, Router
from emulator.state import POWER_ACTIONS, State
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

SERVER_SORT_KEYS: dict[str, Callable[[Server], Any]] = {
    "id": lambda s: s.id,
    "name": lambda s: s.name,
    "created": lambda s: (s.created, s.id),
}


def _hostname(body: Body, key: str = "name") -> str:
    name = required_str(body, key)
    if not is_hostname(name):
        raise invalid_field(key, "is not a valid hostname")
    return name


def _location(body: Body) -> catalogue.Location | None:
    location_ref = optional_ref(body, "location")
    datacenter_ref = optional_ref(body, "datacenter")
    if location_ref is not None and datacenter_ref is not None:
        raise invalid_input("location and datacenter are mutually exclusive")
    if location_ref is not None:
        location = catalogue.location(location_ref)
        if location is None:
            raise invalid_input(f"location '{location_ref}' not found")
        return location
    if datacenter_ref is not None:
        datacenter = catalogue.datacenter(datacenter_ref)
        if datacenter is None:
            raise invalid_input(f"datacenter '{datacenter_ref}' not found")
        return datacenter.location
    return None


def _unsupported_references(body: Body) -> None:
    """The emulator has no networks, volumes, placement groups or spare primary IPs."""
    for key in ("networks", "volumes"):
        ids = id_list(body, key)
        if ids:
            raise invalid_input(f"{key[:-1]} {ids[0]} not found")
    if body.get("placement_group") is not None:
        raise invalid_input(f"placement group {body['placement_group']} not found")
    public_net = optional_object(body, "public_net")
    for key in ("ipv4", "ipv6"):
        if public_net.get(key) is not None:
            raise invalid_input(f"primary ip {public_net[key]} not found")


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
    server_type = catalogue.server_type(server_type_ref)
    if server_type is None:
        raise invalid_input(f"server type '{server_type_ref}' not found")
    image = catalogue.image(image_ref)
    if image is None:
        raise invalid_input(f"image '{image_ref}' not found")
    if image.architecture != server_type.architecture:
        raise invalid_input("image has incompatible architecture")
    return ServerSpec(
        name=name,
        server_type=server_type,
        location=_location(body),
        image=image,
        labels=labels,
        ssh_keys=ssh_keys,
        firewall_ids=[fid for fid in firewalls if isinstance(fid, int)],
        start_after_create=optional_bool(body, "start_after_create", True),
        enable_ipv4=optional_bool(public_net, "enable_ipv4", True),
        enable_ipv6=optional_bool(public_net, "enable_ipv6", True),
        user_data=user_data or "",
    )


class ServersApi:
    """The /servers handlers over one project state."""

    def __init__(self, state: State) -> None:
        self.state = state

    def register(self, router: Router) -> None:
        """Add the /servers routes."""
        router.add("GET", "/servers", self.list_servers)
        router.add("POST", "/servers", self.create)
        router.add("GET", "/servers/actions", self.all_server_actions)
        router.add("GET", "/servers/{id}", self.get_server)
        router.add("PUT", "/servers/{id}", self.update)
        router.add("DELETE", "/servers/{id}", self.delete)
        router.add("GET", "/servers/{id}/actions", self.list_actions)
        for action_name in POWER_ACTIONS:
            router.add("POST", f"/servers/{{id}}/actions/{action_name}", self.power(action_name))
        router.add("POST", "/servers/{id}/actions/change_protection", self.change_protection)
        router.add("POST", "/servers/{id}/actions/enable_backup", self.backup(enabled=True))
        router.add("POST", "/servers/{id}/actions/disable_backup", self.backup(enabled=False))
        router.add("GET", "/servers/{id}/actions/{action_id}", self.get_action)

    def create(self, request: Request) -> Response:
        """POST /servers."""
        spec = server_spec(request.body)
        with self.state.transaction() as project:
            created = project.create_server(spec)
            return Response(
                201,
                {
                    "server": server_json(project, created.server),
                    "action": action_json(created.action, project.now),
                    "next_actions": [action_json(a, project.now) for a in created.next_actions],
                    "root_password": created.root_password,
                },
            )

    def list_servers(self, request: Request) -> Response:
        """GET /servers with name, status, label_selector, sort and pagination."""
        selector = selector_from(request)
        name = request.first("name")
        statuses = request.every("status")
        for status in statuses:
            if status not in SERVER_STATUSES:
                raise invalid_field("status", f"invalid status '{status}'")
        with self.state.transaction() as project:
            chosen = [
                s
                for s in project.servers.values()
                if (name is None or s.name == name)
                and (not statuses or s.status in statuses)
                and selector.matches(s.labels)
            ]
            ordered = sort_items(chosen, request.every("sort"), SERVER_SORT_KEYS)
            return page_response("servers", ordered, request, lambda s: server_json(project, s))

    def get_server(self, request: Request) -> Response:
        """GET /servers/{id}."""
        server_id = request.path_id(resource="server")
        with self.state.transaction() as project:
            return Response(200, {"server": server_json(project, project.server(server_id))})

    def update(self, request: Request) -> Response:
        """PUT /servers/{id}: name and/or labels."""
        server_id = request.path_id(resource="server")
        body = request.body
        name = _hostname(body) if body.get("name") is not None else None
        labels = validate_labels(body["labels"]) if body.get("labels") is not None else None
        with self.state.transaction() as project:
            server = project.update_server(server_id, name, labels)
            return Response(200, {"server": server_json(project, server)})

    def delete(self, request: Request) -> Response:
        """DELETE /servers/{id}: answers the delete_server action."""
        server_id = request.path_id(resource="server")
        with self.state.transaction() as project:
            action = project.delete_server(server_id)
            return Response(200, {"action": action_json(action, project.now)})

    def list_actions(self, request: Request) -> Response:
        """GET /servers/{id}/actions."""
        server_id = request.path_id(resource="server")
        with self.state.transaction() as project:
            project.server(server_id)
            return action_listing(request, project.actions_of(server_id, "server"), project.now)

    def get_action(self, request: Request) -> Response:
        """GET /servers/{id}/actions/{action_id}."""
        server_id = request.path_id(resource="server")
        action_id = request.path_id("action_id", resource="action")
        with self.state.transaction() as project:
            action = project.action(action_id)
            if not action.touches(server_id, "server"):
                raise not_found("action", action_id)
            return Response(200, {"action": action_json(action, project.now)})

    def all_server_actions(self, request: Request) -> Response:
        """GET /servers/actions (optionally by id)."""
        ids = set(request.every("id"))
        with self.state.transaction() as project:
            found = [
                a
                for a in project.actions.values()
                if any(rtype == "server" for _, rtype in a.resources)
                and (not ids or str(a.id) in ids)
            ]
            return action_listing(request, found, project.now)

    def power(self, name: str) -> Callable[[Request], Response]:
        """POST /servers/{id}/actions/{poweron,poweroff,shutdown,reboot,reset}."""

        def handler(request: Request) -> Response:
            server_id = request.path_id(resource="server")
            with self.state.transaction() as project:
                action = project.power(server_id, name)
                return Response(201, {"action": action_json(action, project.now)})

        return handler

    def change_protection(self, request: Request) -> Response:
        """POST /servers/{id}/actions/change_protection."""
        server_id = request.path_id(resource="server")
        delete_flag = _optional_flag(request.body, "delete")
        rebuild_flag = _optional_flag(request.body, "rebuild")
        with self.state.transaction() as project:
            action = project.change_protection(server_id, delete_flag, rebuild_flag)
            return Response(201, {"action": action_json(action, project.now)})

    def backup(self, *, enabled: bool) -> Callable[[Request], Response]:
        """POST /servers/{id}/actions/{enable,disable}_backup."""

        def handler(request: Request) -> Response:
            server_id = request.path_id(resource="server")
            with self.state.transaction() as project:
                action = project.set_backup(server_id, enabled=enabled)
                return Response(201, {"action": action_json(action, project.now)})

        return handler


def _optional_flag(body: Json, key: str) -> bool | None:
    return None if body.get(key) is None else optional_bool(body, key, False)
