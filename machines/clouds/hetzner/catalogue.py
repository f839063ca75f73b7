"""Where a Hetzner server type can be created: its architecture and per-location deprecation.

Since 2026 a server type's availability lives in ``server_types[].locations[]``, each with
its own ``deprecation`` (``announced``, ``unavailable_after``); datacenters are gone. The
deprecation dates are fixed, so they are read once with the types and a create can be
refused (or warned about) without asking the API. Whether a type is in stock now
(``available``) changes by the minute: the create's own answer says that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from hcloud.server_types import BoundServerType


@dataclass(frozen=True)
class Deprecation:
    """A server type's deprecation in one location."""

    announced: datetime | None
    unavailable_after: datetime | None


@dataclass(frozen=True)
class TypeInfo:
    """What the runtime keeps of a server type: its architecture and where it is sold."""

    name: str
    architecture: str
    deprecations: Mapping[str, Deprecation | None]  # every location it has, to its deprecation

    @classmethod
    def of(cls, server_type: BoundServerType) -> TypeInfo:
        """The info of a server type as the API lists it."""
        deprecations: dict[str, Deprecation | None] = {}
        for entry in server_type.locations or []:
            if entry.location is None or not entry.location.name:
                continue
            dep = entry.deprecation
            deprecations[entry.location.name] = (
                None if dep is None else Deprecation(dep.announced, dep.unavailable_after)
            )
        return cls(server_type.name or "", server_type.architecture or "", deprecations)

    def refusal(self, location: str, now: datetime) -> str | None:
        """Why the API would refuse this type in ``location`` whatever its stock; None if not."""
        if location not in self.deprecations:
            where = ", ".join(sorted(self.deprecations)) or "no location"
            return f"Hetzner does not offer {self.name} in {location!r}: it is sold in {where}"
        dep = self.deprecations[location]
        if dep is not None and dep.unavailable_after is not None and dep.unavailable_after < now:
            return (
                f"Hetzner no longer sells {self.name} in {location}: it was deprecated there "
                f"{_day(dep.announced)} and has been unavailable since "
                f"{_day(dep.unavailable_after)}: choose another type or location"
            )
        return None

    def deprecation_notice(self, location: str) -> str | None:
        """A sentence saying until when a type deprecated in ``location`` can be created."""
        dep = self.deprecations.get(location)
        if dep is None:
            return None
        return (
            f"{self.name} is deprecated in {location} since {_day(dep.announced)}: it can be "
            f"created there until {_day(dep.unavailable_after)}"
        )


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment is not None else "an unknown date"
