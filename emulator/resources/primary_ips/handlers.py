"""Primary IP endpoints (read-only): each server's IPv4 address and IPv6 network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.errors import not_found
from emulator.listing import page_response, selector_from, sort_items
from emulator.models import PrimaryIP
from emulator.render import primary_ip_json
from emulator.routing import Request, Response, Router
from emulator.state import State

PRIMARY_IP_SORT_KEYS: dict[str, Callable[[PrimaryIP], Any]] = {
    "id": lambda p: p.id,
    "created": lambda p: (p.created, p.id),
}


def register(router: Router, state: State) -> None:
    """Add the /primary_ips routes."""

    def list_ips(request: Request) -> Response:
        selector = selector_from(request)
        name = request.first("name")
        address = request.first("ip")
        with state.transaction() as project:
            chosen = [
                p
                for p in project.primary_ips.values()
                if (name is None or f"primary_ip-{p.id}" == name)
                and (address is None or p.ip == address)
                and selector.matches({})
            ]
            ordered = sort_items(chosen, request.every("sort"), PRIMARY_IP_SORT_KEYS)
            return page_response(
                "primary_ips", ordered, request, lambda p: primary_ip_json(project, p)
            )

    def get_ip(request: Request) -> Response:
        ip_id = request.path_id(resource="primary_ip")
        with state.transaction() as project:
            if ip_id not in project.primary_ips:
                raise not_found("primary_ip", ip_id)
            return Response(
                200, {"primary_ip": primary_ip_json(project, project.primary_ips[ip_id])}
            )

    router.add("GET", "/primary_ips", list_ips)
    router.add("GET", "/primary_ips/{id}", get_ip)
