"""Primary IP endpoints (read-only): each server's IPv4 address and IPv6 network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.listing import page_response, selector_from, sort_items
from emulator.project import Project, State
from emulator.render import ipv4_dns_ptr, timestamp
from emulator.resources.catalogue import data as catalogue
from emulator.resources.primary_ips.state import PrimaryIP
from emulator.routing import Endpoint, Json, Request, Response

PRIMARY_IP_SORT_KEYS: dict[str, Callable[[PrimaryIP], Any]] = {
    "id": lambda p: p.id,
    "created": lambda p: (p.created, p.id),
}


def primary_ip_json(project: Project, ip: PrimaryIP) -> Json:
    """A primary IP (each server's addresses are primary IPs that are deleted with it); no
    `datacenter` (removed from the API on 2026-07-01)."""
    return {
        "id": ip.id,
        "name": f"primary_ip-{ip.id}",
        "ip": ip.ip,
        "type": ip.kind,
        "labels": {},
        "protection": {"delete": False},
        "dns_ptr": [{"ip": ip.ip, "dns_ptr": ipv4_dns_ptr(ip.ip)}] if ip.kind == "ipv4" else [],
        "assignee_id": ip.server_id,
        "assignee_type": "server",
        "auto_delete": True,
        "blocked": False,
        "created": timestamp(ip.created),
        "location": catalogue.location_json(ip.location),
    }


def list_ips(state: State, request: Request) -> Response:
    """GET /primary_ips with name, ip, label_selector, sort and pagination."""
    selector = selector_from(request)
    name = request.first("name")
    address = request.first("ip")
    with state.transaction() as project:
        chosen = [
            p
            for p in project.primary_ips.by_id.values()
            if (name is None or f"primary_ip-{p.id}" == name)
            and (address is None or p.ip == address)
            and selector.matches({})
        ]
        ordered = sort_items(chosen, request.every("sort"), PRIMARY_IP_SORT_KEYS)
        return page_response("primary_ips", ordered, request, lambda p: primary_ip_json(project, p))


def get_ip(state: State, request: Request) -> Response:
    """GET /primary_ips/{id}."""
    ip_id = request.path_id(resource="primary_ip")
    with state.transaction() as project:
        return Response(
            200, {"primary_ip": primary_ip_json(project, project.primary_ips.get(ip_id))}
        )


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/primary_ips", list_ips),
    Endpoint("GET", "/primary_ips/{id}", get_ip),
]
