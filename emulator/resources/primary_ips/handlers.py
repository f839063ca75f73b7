"""Primary IP endpoints (read-only): each server's IPv4 address and IPv6 network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.project import Project, State
from emulator.render import ipv4_dns_ptr, timestamp
from emulator.resources.catalogue import data as catalogue
from emulator.resources.kind import Kind, query_equals
from emulator.resources.primary_ips.state import PrimaryIP
from emulator.routing import Endpoint, Json

PRIMARY_IP_SORT_KEYS: dict[str, Callable[[PrimaryIP], Any]] = {
    "id": lambda p: p.id,
    "created": lambda p: (p.created, p.id),
}


def primary_ip_json(project: Project, ip: PrimaryIP) -> Json:
    """A primary IP (each server's addresses are primary IPs that are deleted with it); no
    `datacenter` (removed from the API on 2026-07-01)."""
    return {
        "id": ip.id,
        "name": ip.name,
        "ip": ip.ip,
        "type": ip.kind,
        "labels": dict(ip.labels),
        "protection": {"delete": False},
        "dns_ptr": [{"ip": ip.ip, "dns_ptr": ipv4_dns_ptr(ip.ip)}] if ip.kind == "ipv4" else [],
        "assignee_id": ip.server_id,
        "assignee_type": "server",
        "auto_delete": True,
        "blocked": False,
        "created": timestamp(ip.created),
        "location": catalogue.location_json(ip.location),
    }


PRIMARY_IPS: Kind[PrimaryIP] = Kind(
    "primary_ips",
    "primary_ip",
    render=primary_ip_json,
    store=lambda project: project.primary_ips,
    sort_keys=PRIMARY_IP_SORT_KEYS,
    filters=query_equals("ip", lambda ip: ip.ip),
)

ROUTES: list[Endpoint[State]] = PRIMARY_IPS.routes()
