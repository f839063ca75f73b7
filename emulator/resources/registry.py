"""The registry of the Hetzner Cloud API resources the emulator serves under /v1.

One line per resource: its `handlers` module, whose `ROUTES` are registered in this order
(within a module, a literal path such as /servers/actions comes before /servers/{id}).
"""

from __future__ import annotations

from emulator.project import State
from emulator.resources.actions import handlers as actions
from emulator.resources.catalogue import handlers as catalogue
from emulator.resources.firewalls import handlers as firewalls
from emulator.resources.images import handlers as images
from emulator.resources.networks import handlers as networks
from emulator.resources.placement_groups import handlers as placement_groups
from emulator.resources.primary_ips import handlers as primary_ips
from emulator.resources.servers import handlers as servers
from emulator.resources.ssh_keys import handlers as ssh_keys
from emulator.routing import Endpoint

RESOURCES = (
    servers,
    ssh_keys,
    firewalls,
    primary_ips,
    networks,
    placement_groups,
    images,
    actions,
    catalogue,
)


def api_routes() -> list[Endpoint[State]]:
    """Every /v1 route (paths relative to /v1), resource by resource."""
    return [route for resource in RESOURCES for route in resource.ROUTES]
