"""The project's resource limits: how many servers it may hold at once.

Every Hetzner Cloud project has limits (servers, cores, primary IPs, ...; new accounts have
low ones, seen in the Cloud Console's Limits page). A create past one is refused with
`resource_limit_exceeded` (HTTP 403) whatever its type or location, until a resource of the
project is deleted or Hetzner raises the limit on request; the API does not list the limits
(hcloud-go #302). The emulator models the server limit (none unless set: `--server-limit`,
the control API's `/limits`); every server the project holds counts, one being deleted too,
until it is gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from emulator.errors import ApiError

LIMIT_CODE = "resource_limit_exceeded"


class LimitsError(ValueError):
    """A limit that is not a whole number >= 0 (or null)."""


@dataclass
class Limits:
    """The project's limits; None: no limit."""

    servers: int | None = None

    def check_server(self, held: int) -> None:
        """Refuse a new server when the project holds ``held`` and that is its limit."""
        if self.servers is not None and held >= self.servers:
            raise ApiError(
                LIMIT_CODE,
                "server limit reached",
                {"limits": [{"name": "server_limit", "limit": self.servers}]},
            )

    def to_json(self) -> dict[str, Any]:
        """As the control API shows them."""
        return {"servers": self.servers}

    def update(self, raw: object) -> None:
        """Set the limits a control API body names (`{"servers": N | null}`)."""
        if not isinstance(raw, dict) or set(raw) - {"servers"}:
            raise LimitsError('the body is {"servers": N} (null: no limit)')
        if "servers" in raw:
            self.servers = count(raw["servers"])


def count(value: object) -> int | None:
    """A limit as given: a whole number >= 0, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LimitsError("a limit is a whole number >= 0, or null for none")
    return value
