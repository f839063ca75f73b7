"""Hetzner's server types as one object: architectures, where each is sold, and its stock.

Since 2026 a server type's availability lives in ``server_types[].locations[]``, each with
its own ``deprecation`` (``announced``, ``unavailable_after``) and ``available`` (in stock
now); datacenters are gone. One ``GET /server_types`` answers all of it for every type.
Architectures and deprecation dates are fixed, so ``type`` answers from the last read at
any age (a name it does not know sends one more read once that read is older than the
TTL: a type Hetzner added since); stock changes by the minute, so ``in_stock`` reads again
once the last read is ``ttl`` seconds old (``ORCA_OFFERS_TTL``). Each read tells ``seen``
where each type is in stock (the stock memory forgets a ``no_stock`` there).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hcloud.server_types import BoundServerType

from machines.runtime.clock import Clock
from machines.runtime.errors import UnknownMachineTypeError


@dataclass(frozen=True)
class Deprecation:
    """A server type's deprecation in one location."""

    announced: datetime | None
    unavailable_after: datetime | None

    def ended(self, now: datetime) -> bool:
        """Whether the type can no longer be created there: ``unavailable_after`` has passed."""
        return self.unavailable_after is not None and self.unavailable_after < now


@dataclass(frozen=True)
class Offer:
    """A server type in one location: its deprecation there, and whether it is in stock."""

    deprecation: Deprecation | None
    available: bool


@dataclass(frozen=True)
class TypeInfo:
    """What the runtime keeps of a server type: its architecture and where it is offered."""

    name: str
    architecture: str
    offers: Mapping[str, Offer]  # every location it has, to its deprecation and stock there

    @classmethod
    def of(cls, server_type: BoundServerType) -> TypeInfo:
        """The info of a server type as the API lists it. A location without ``available``
        counts as in stock (the flag is newer than the list)."""
        offers: dict[str, Offer] = {}
        for entry in server_type.locations or []:
            if entry.location is None or not entry.location.name:
                continue
            dep = entry.deprecation
            offers[entry.location.name] = Offer(
                None if dep is None else Deprecation(dep.announced, dep.unavailable_after),
                entry.available is not False,
            )
        return cls(server_type.name or "", server_type.architecture or "", offers)

    def not_sold(self, location: str, now: datetime) -> str | None:
        """Why Hetzner does not sell this type in ``location`` at ``now``, whatever its stock
        (not offered there, or past its ``unavailable_after`` there); None when it does."""
        offer = self.offers.get(location)
        if offer is None:
            where = ", ".join(sorted(self.offers)) or "no location"
            return f"Hetzner does not offer {self.name} in {location!r}: it is sold in {where}"
        dep = offer.deprecation
        if dep is not None and dep.ended(now):
            return (
                f"Hetzner no longer sells {self.name} in {location}: it was deprecated there "
                f"{_day(dep.announced)} and has been unavailable since "
                f"{_day(dep.unavailable_after)}: choose another type or location"
            )
        return None

    def in_stock(self, now: datetime) -> list[str]:
        """The locations, in the API's order, where the type is sold at ``now`` and in stock."""
        return [
            loc
            for loc, offer in self.offers.items()
            if offer.available and self.not_sold(loc, now) is None
        ]

    def deprecation_notice(self, location: str) -> str | None:
        """A sentence saying until when a type deprecated in ``location`` can be created."""
        offer = self.offers.get(location)
        dep = offer.deprecation if offer is not None else None
        if dep is None:
            return None
        return (
            f"{self.name} is deprecated in {location} since {_day(dep.announced)}: it can be "
            f"created there until {_day(dep.unavailable_after)}"
        )


class Catalogue:
    """Every server type of the project, read in one request; safe to share between threads.

    ``read`` is the one request (the provider's, with its retries and deadline); ``seen``
    hears, after each read, each type and the locations where it is in stock.
    """

    def __init__(
        self,
        read: Callable[[], Sequence[BoundServerType]],
        ttl: float,
        clock: Clock = time.time,
        seen: Callable[[str, list[str]], None] | None = None,
    ) -> None:
        self._read = read
        self._ttl = ttl
        self._clock = clock
        self._seen = seen
        self._lock = threading.Lock()
        self._types: dict[str, TypeInfo] | None = None
        self._read_at = 0.0

    def now(self) -> datetime:
        """The clock's time, as the deprecation dates are compared with it."""
        return datetime.fromtimestamp(self._clock(), UTC)

    def type(self, machine_type: str) -> TypeInfo:
        """A server type's architecture and offers, or ``UnknownMachineTypeError`` saying
        which types there are."""
        with self._lock:
            types = self._types if self._types is not None else self._renew()
            if machine_type not in types and self._stale():
                types = self._renew()
        info = types.get(machine_type)
        if info is None:
            raise UnknownMachineTypeError(
                f"Hetzner has no server type {machine_type!r}: use one of "
                f"{', '.join(sorted(types))}"
            )
        return info

    def in_stock(self, machine_type: str) -> list[str]:
        """Where the type is sold and in stock, by a read at most ``ttl`` seconds old."""
        with self._lock:
            if self._types is None or self._stale():
                self._renew()
        return self.type(machine_type).in_stock(self.now())

    def _stale(self) -> bool:
        return self._clock() - self._read_at >= self._ttl

    def _renew(self) -> dict[str, TypeInfo]:
        listed = self._read()
        types = {t.name: TypeInfo.of(t) for t in listed if t.name and t.architecture}
        self._types, self._read_at = types, self._clock()
        if self._seen is not None:
            now = self.now()
            for info in types.values():
                self._seen(info.name, info.in_stock(now))
        return types


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment is not None else "an unknown date"
