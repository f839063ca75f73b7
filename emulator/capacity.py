"""Out-of-stock rules: which server types a location cannot place right now, and with which error.

The real API answers a create for a type that a location supports but has no capacity for
with `resource_unavailable` (or `placement_error`, `no_space_left_in_location`); the
type shows `available: false` in that location (`server_types[].locations[]`). Tests switch
stock on and off here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from emulator.resources.catalogue import data as catalogue

STOCK_CODES = ("resource_unavailable", "placement_error", "no_space_left_in_location")
_MESSAGES = {
    "resource_unavailable": "error during placement",
    "placement_error": "error during placement",
    "no_space_left_in_location": "no space left in location",
}


class StockRuleError(ValueError):
    """An out-of-stock entry names an unknown server type, location or code."""


@dataclass(frozen=True)
class OutOfStock:
    """One server type that a location cannot place, and the error it answers."""

    server_type: str
    location: str
    code: str = "resource_unavailable"

    @property
    def message(self) -> str:
        """The error message the real API gives with this code."""
        return _MESSAGES[self.code]

    def to_json(self) -> dict[str, str]:
        """The entry as the control API shows it."""
        return {"server_type": self.server_type, "location": self.location, "code": self.code}

    @classmethod
    def from_json(cls, raw: object) -> OutOfStock:
        """Read one `{"server_type", "location", "code"?}` entry, checking the names."""
        if not isinstance(raw, dict):
            raise StockRuleError("each entry must be an object")
        entry: dict[str, Any] = raw
        return cls.checked(
            entry.get("server_type"),
            entry.get("location"),
            entry.get("code", "resource_unavailable"),
        )

    @classmethod
    def parse(cls, text: str) -> OutOfStock:
        """Read the CLI form `TYPE@LOCATION[:code]`."""
        spec, _, code = text.partition(":")
        server_type, at, location = spec.partition("@")
        if not at:
            raise StockRuleError(f"expected TYPE@LOCATION[:code], got '{text}'")
        return cls.checked(server_type, location, code or "resource_unavailable")

    @classmethod
    def checked(cls, server_type: object, location: object, code: object) -> OutOfStock:
        """Build an entry after checking it names a real type, location and stock code."""
        if not isinstance(server_type, str) or catalogue.server_type(server_type) is None:
            raise StockRuleError(f"unknown server type {server_type!r}")
        if not isinstance(location, str) or catalogue.location(location) is None:
            raise StockRuleError(f"unknown location {location!r}")
        if code not in STOCK_CODES:
            raise StockRuleError(f"code must be one of {', '.join(STOCK_CODES)}")
        st = catalogue.server_type(server_type)
        loc = catalogue.location(location)
        assert st is not None
        assert loc is not None
        return cls(st.name, loc.name, str(code))


class Stock:
    """The current out-of-stock entries; thread-safe, replaced as a whole."""

    def __init__(self, entries: list[OutOfStock] | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: list[OutOfStock] = list(entries or [])

    def replace(self, entries: list[OutOfStock]) -> None:
        """Set the out-of-stock list (an empty list means everything is in stock)."""
        with self._lock:
            self._entries = list(entries)

    def entries(self) -> list[OutOfStock]:
        """The current entries."""
        with self._lock:
            return list(self._entries)

    def unavailable(self) -> catalogue.Unavailable:
        """The (server type, location) pairs that are out of stock."""
        with self._lock:
            return frozenset((e.server_type, e.location) for e in self._entries)

    def shortage(self, server_type: str, location: str) -> OutOfStock | None:
        """The entry that stops this type from being placed in this location, if any."""
        with self._lock:
            return next(
                (
                    e
                    for e in self._entries
                    if e.server_type == server_type and e.location == location
                ),
                None,
            )
