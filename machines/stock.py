"""What the cloud said about stock: no capacity for a type in a location, for a while.

Karpenter remembers an insufficient-capacity error for three minutes after it happened; the
provider does the same for every ``no_stock`` answer, so ``offers`` leaves that location out
and a ``create`` there answers ``no_stock`` at once, without a request, until the memory
expires or the cloud shows the type available there again.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable

from machines.listing import Clock
from machines.settings import ORCA_NO_STOCK_TTL


class StockMemory:
    """``no_stock`` answers per (type, location), each kept for ``ttl`` seconds."""

    def __init__(self, ttl: float, clock: Clock = time.time) -> None:
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._until: dict[tuple[str, str], float] = {}

    def remember(self, machine_type: str, location: str) -> None:
        """The cloud answered ``no_stock`` for this type and location just now."""
        if self._ttl > 0:
            with self._lock:
                self._until[(machine_type, location)] = self._clock() + self._ttl

    def seconds_left(self, machine_type: str, location: str) -> float:
        """Seconds until this type is tried in this location again; 0 when it may be now."""
        with self._lock:
            until = self._until.get((machine_type, location))
            if until is None:
                return 0.0
            left = until - self._clock()
            if left <= 0:
                del self._until[(machine_type, location)]
                return 0.0
            return left

    def short(self, machine_type: str, locations: Iterable[str]) -> set[str]:
        """The ``locations`` remembered as out of stock for ``machine_type`` now."""
        return {loc for loc in locations if self.seconds_left(machine_type, loc) > 0}

    def remembered(self) -> list[tuple[str, str, float]]:
        """(type, location, seconds until it is tried again) of each pair remembered now."""
        now = self._clock()
        with self._lock:
            return sorted((t, loc, until - now) for (t, loc), until in self._until.items()
                          if until > now)  # fmt: skip

    def available(self, machine_type: str, locations: Iterable[str]) -> None:
        """The cloud shows the type in stock in ``locations``: forget what it said before."""
        with self._lock:
            for location in locations:
                self._until.pop((machine_type, location), None)

    def reason(self, cloud: str, machine_type: str, location: str, code: str = "") -> str:
        """Why a create answers ``no_stock``, and when the location will be tried again."""
        left = self.seconds_left(machine_type, location)
        said = f" ({code})" if code else ""
        if left <= 0:
            return (
                f"{cloud} has no {machine_type} in {location} now{said}: try again later or in "
                "another location"
            )
        return (
            f"{cloud} has no {machine_type} in {location} now{said}: it will be tried there "
            f"again in {math.ceil(left)} s ({ORCA_NO_STOCK_TTL}) or once offers() lists it; "
            "try another location meanwhile"
        )
