"""The real API's JSON shapes for the project's resources (servers, actions, keys, firewalls, IPs).

Shapes follow the API reference and what hcloud-python and hcloud-go parse: a server carries
full `server_type`, `datacenter` (with its location), `location` and `image` objects, and
`public_net` with the primary IPs' ids, `floating_ips` and applied `firewalls`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from emulator import catalogue
from emulator.models import Action, Firewall, FirewallRule, PrimaryIP, Server, SSHKey
from emulator.state import Project

Json = dict[str, Any]


def timestamp(seconds: float) -> str:
    """RFC 3339 time in UTC, as the API writes it (2024-05-01T10:00:00+00:00)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def action_json(action: Action, now: float) -> Json:
    """An action with its progress (0..99 while running, 100 when done)."""
    if action.status == "running":
        span = action.finishes - action.started
        progress = int(min(99.0, max(0.0, (now - action.started) / span * 100))) if span else 0
    else:
        progress = 100
    return {
        "id": action.id,
        "command": action.command,
        "status": action.status,
        "progress": progress,
        "started": timestamp(action.started),
        "finished": None if action.finished is None else timestamp(action.finished),
        "resources": [{"id": rid, "type": rtype} for rid, rtype in action.resources],
        "error": action.error,
    }


def _ipv4_dns_ptr(ip: str) -> str:
    return "static." + ".".join(reversed(ip.split("."))) + ".clients.your-server.de"


def server_json(project: Project, server: Server) -> Json:
    """A server, the way GET /servers/{id} answers it."""
    unavailable = project.stock.unavailable()
    ipv4 = server.ipv4
    ipv6 = server.ipv6
    traffic = server.location.included_traffic
    return {
        "id": server.id,
        "name": server.name,
        "status": server.status,
        "created": timestamp(server.created),
        "public_net": {
            "ipv4": None
            if ipv4 is None
            else {
                "id": ipv4.id,
                "ip": ipv4.ip,
                "blocked": False,
                "dns_ptr": _ipv4_dns_ptr(ipv4.ip),
            },
            "ipv6": None
            if ipv6 is None
            else {
                "id": ipv6.id,
                "ip": ipv6.ip,
                "blocked": False,
                "dns_ptr": [],
            },
            "floating_ips": [],
            "firewalls": [
                {"id": fw.id, "status": "applied"} for fw in project.firewalls_of(server)
            ],
        },
        "private_net": [],
        "server_type": catalogue.server_type_json(server.server_type, unavailable),
        "datacenter": catalogue.datacenter_json(
            catalogue.datacenter_of(server.location), unavailable
        ),
        "location": catalogue.location_json(server.location),
        "image": catalogue.image_json(server.image),
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
        "primary_disk_size": server.server_type.disk,
        "placement_group": None,
    }


def ssh_key_json(key: SSHKey) -> Json:
    """An SSH key."""
    return {
        "id": key.id,
        "name": key.name,
        "fingerprint": key.fingerprint,
        "public_key": key.public_key,
        "labels": dict(key.labels),
        "created": timestamp(key.created),
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
                for server in project.selected_servers(applied)
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


def primary_ip_json(project: Project, ip: PrimaryIP) -> Json:
    """A primary IP (each server's addresses are primary IPs that are deleted with it)."""
    unavailable = project.stock.unavailable()
    return {
        "id": ip.id,
        "name": f"primary_ip-{ip.id}",
        "ip": ip.ip,
        "type": ip.kind,
        "labels": {},
        "protection": {"delete": False},
        "dns_ptr": [{"ip": ip.ip, "dns_ptr": _ipv4_dns_ptr(ip.ip)}] if ip.kind == "ipv4" else [],
        "assignee_id": ip.server_id,
        "assignee_type": "server",
        "auto_delete": True,
        "blocked": False,
        "created": timestamp(ip.created),
        "location": catalogue.location_json(ip.location),
        "datacenter": catalogue.datacenter_json(catalogue.datacenter_of(ip.location), unavailable),
    }
