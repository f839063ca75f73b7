"""The Hetzner Cloud API surface the emulator serves under /v1, one module per resource."""

from __future__ import annotations

from emulator.api import actions, catalogue, firewalls, primary_ips, servers, ssh_keys
from emulator.routing import Router
from emulator.state import State


def build_router(state: State) -> Router:
    """Every /v1 route (paths relative to /v1)."""
    router = Router()
    servers.ServersApi(state).register(router)
    ssh_keys.register(router, state)
    firewalls.FirewallsApi(state).register(router)
    primary_ips.register(router, state)
    actions.register(router, state)
    catalogue.register(router, state.project.stock)
    return router
