"""Primary IPs: each server's public IPv4 address and IPv6 /64 network, made and deleted with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from emulator.resources.catalogue.data import Location
from emulator.resources.collection import Collection

if TYPE_CHECKING:
    from emulator.project import Project

FIRST_ID = 50_000_001


@dataclass
class PrimaryIP:
    """A public IPv4 address or IPv6 /64 network, created with and deleted with its server."""

    id: int
    kind: Literal["ipv4", "ipv6"]
    ip: str
    location: Location
    created: float
    server_id: int | None

    @property
    def name(self) -> str:
        """Its name: the real API's default for an address made with a server."""
        return f"primary_ip-{self.id}"

    @property
    def labels(self) -> dict[str, str]:
        """None: an address made with a server has no labels here."""
        return {}


class PrimaryIPs(Collection[PrimaryIP]):
    """The project's primary IPs; addresses are drawn from each location's emulated prefix.

    A reset drops them all; ids and addresses keep counting up.
    """

    kind = "primary_ip"
    first_id = FIRST_ID

    def __init__(self, project: Project) -> None:
        super().__init__(project)
        self._counter = 0

    def create(
        self, kind: Literal["ipv4", "ipv6"], location: Location, server_id: int
    ) -> PrimaryIP:
        """A new address (IPv4) or /64 network (IPv6) in `location`, assigned to a server."""
        self._counter += 1
        n = self._counter
        if kind == "ipv4":
            address = f"{location.ipv4_prefix}.{n // 250 % 256}.{n % 250 + 2}"
        else:
            address = f"{location.ipv6_prefix}:{n:x}::/64"
        ip = PrimaryIP(next(self._ids), kind, address, location, self.project.now, server_id)
        return self._added(ip)

    def delete(self, ip_id: int) -> None:
        """Forget a primary IP (its server is gone); nothing if it is already gone."""
        self.by_id.pop(ip_id, None)
