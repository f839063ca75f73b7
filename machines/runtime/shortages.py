"""What the cloud said about stock: no capacity for a type in a location, for a while.

Karpenter remembers an insufficient-capacity error for three minutes after it happened; the
provider does the same for every ``no_stock`` answer, so ``offers`` leaves that location out
and a ``create`` there answers ``no_stock`` at once, without a request, until the memory
expires or the cloud shows the type available there again. Spot and on-demand capacity are
remembered apart: no spot capacity says nothing of on-demand's.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from machines.runtime.clock import Clock
from machines.runtime.models import Market
from machines.runtime.settings import ORCA_NO_STOCK_TTL


class StockMemory:
    """``no_stock`` answers per (type, location, market), each kept for ``ttl`` seconds."""

    def __init__(self, ttl: float, clock: Clock = time.time) -> None:
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._until: dict[tuple[str, str, Market], float] = {}

    def remember(self, machine_type: str, location: str, market: Market = Market.ON_DEMAND) -> None:
        """The cloud answered ``no_stock`` for this type, location and market just now."""
        if self._ttl > 0:
            with self._lock:
                self._until[(machine_type, location, market)] = self._clock() + self._ttl

    def seconds_left(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> float:
        """Seconds until this type is tried in this location again; 0 when it may be now."""
        key = (machine_type, location, market)
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return 0.0
            left = until - self._clock()
            if left <= 0:
                del self._until[key]
                return 0.0
            return left

    def short(
        self, machine_type: str, locations: Iterable[str], markets: Iterable[Market] = ()
    ) -> set[str]:
        """The ``locations`` remembered as out of stock for ``machine_type`` now in every one
        of ``markets`` (default: on-demand)."""
        wanted = tuple(markets) or (Market.ON_DEMAND,)
        return {
            loc
            for loc in locations
            if all(self.seconds_left(machine_type, loc, m) > 0 for m in wanted)
        }

    def remembered(self) -> list[tuple[str, str, Market, float]]:
        """(type, location, market, seconds until it is tried again) of each one remembered
        now."""
        now = self._clock()
        with self._lock:
            return sorted((t, loc, market, until - now)
                          for (t, loc, market), until in self._until.items()
                          if until > now)  # fmt: skip

    def available(self, machine_type: str, locations: Iterable[str]) -> None:
        """The cloud shows the type in stock in ``locations``: forget what it said before."""
        with self._lock:
            for location in locations:
                self._until.pop((machine_type, location, Market.ON_DEMAND), None)

    def reason(
        self,
        cloud: str,
        machine_type: str,
        location: str,
        code: str = "",
        market: Market = Market.ON_DEMAND,
    ) -> str:
        """Why a create answers ``no_stock``, and when the location will be tried again."""
        left = self.seconds_left(machine_type, location, market)
        said = f" ({code})" if code else ""
        what = f"spot capacity of {machine_type}" if market == Market.SPOT else machine_type
        if left <= 0:
            return (
                f"{cloud} has no {what} in {location} now{said}: try again later or in "
                "another location"
            )
        return (
            f"{cloud} has no {what} in {location} now{said}: it will be tried there "
            f"again in {math.ceil(left)} s ({ORCA_NO_STOCK_TTL}) or once offers() lists it; "
            "try another location meanwhile"
        )


@dataclass(frozen=True)
class Full:
    """The account remembered at its limit: for how many seconds more, the cloud's code and
    the answer that said so (one line)."""

    seconds_left: float
    code: str
    why: str


class FullAccount:
    """The account's last "at its limit" answer per market (Hetzner's
    ``resource_limit_exceeded``, EC2's ``VcpuLimitExceeded``), kept for ``ttl`` seconds.

    A full account is no stock for every type and location of that cloud at once: while it
    is remembered, a create in that market sends the cloud nothing (one refused request per
    window, not one per create), and a pool that spans clouds passes the cloud over. It is
    forgotten when the window ends or when this provider deletes one of its machines (that
    frees room), whichever comes first. ``ttl`` is ``ORCA_NO_STOCK_TTL``, as for stock.
    """

    def __init__(self, ttl: float, clock: Clock = time.time) -> None:
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._until: dict[Market, tuple[float, str, str]] = {}

    def remember(self, market: Market, code: str, why: str) -> None:
        """The cloud answered just now that the account is at a limit for ``market``
        (``code``, and ``why``: its answer, one line)."""
        if self.ttl > 0:
            with self._lock:
                self._until[market] = (self._clock() + self.ttl, code, why)

    def full(self, markets: Iterable[Market]) -> Full | None:
        """The account remembered at its limit in every one of ``markets`` (the soonest to
        end), or None when a create in one of them may be sent."""
        found = []
        with self._lock:
            for market in markets:
                held = self._until.get(market)
                left = -1.0 if held is None else held[0] - self._clock()
                if held is None or left <= 0:
                    self._until.pop(market, None)
                    return None
                found.append(Full(left, held[1], held[2]))
        return min(found, key=lambda f: f.seconds_left, default=None)

    def forget(self) -> None:
        """A machine of this provider's went: there may be room again in every market."""
        with self._lock:
            self._until.clear()
