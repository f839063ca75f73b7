"""The cloud's request budget as its last answer stated it, and how long a listing may last.

Hetzner states its budget in every answer (``RateLimit-Limit``, ``RateLimit-Remaining``,
``RateLimit-Reset``: the UNIX time the bucket is full again); EC2 states none. The meter
keeps the last statement and turns it into the listing's freshness window:

- a listing spends at most ``list_share`` of the budget's refill: a listing of many pages
  stays fresh longer (4 pages at 1 request a second and 3 %: 133 s), but never longer than
  ``list_max_age`` (180 s), so a large owner is never stale for many minutes (its
  20 pages every 180 s are 11 % of Hetzner's budget);
- when the budget is below ``budget_reserve`` (counting what has refilled since), the
  listing stays fresh until it is above again, so the last requests go to creates and
  deletes, not to listing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from machines.runtime.clock import Clock
from machines.runtime.settings import Freshness

HOUR = 3600.0
MEASURABLE = 10.0
"""Seconds to a full bucket from which its refill is read off the answer; nearer than that,
``RateLimit-Reset``'s whole seconds blur it, and the limit per hour is taken instead."""


class Budget(BaseModel):
    """The request budget as the cloud's last answer stated it; ``stated`` False when the
    cloud states none (EC2), then the numbers are None and ``note`` says so."""

    model_config = ConfigDict(frozen=True)

    stated: bool
    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    per_second: float | None = None
    seen_at: float | None = None
    low: bool = False
    list_window: float = 0.0
    note: str = ""


class BudgetMeter:
    """Keeps the last stated budget (thread-safe) and says how long a listing stays fresh."""

    def __init__(self, freshness: Freshness, clock: Clock = time.time, note: str = "") -> None:
        self._freshness = freshness
        self._clock = clock
        self._note = note
        self._lock = threading.Lock()
        self._limit: int | None = None
        self._remaining: int | None = None
        self._reset: float | None = None
        self._seen_at: float | None = None

    def observe(self, headers: Mapping[str, str]) -> None:
        """Read ``RateLimit-*`` headers of an answer; answers without them change nothing."""
        try:
            limit = int(headers["RateLimit-Limit"])
            remaining = int(headers["RateLimit-Remaining"])
            reset = float(headers.get("RateLimit-Reset") or 0) or None
        except (KeyError, ValueError):
            return
        with self._lock:
            self._limit, self._remaining, self._reset = limit, remaining, reset
            self._seen_at = self._clock()

    def window(self, pages: int) -> float:
        """Seconds a listing of ``pages`` requests stays fresh now (0: list every time)."""
        with self._lock:
            return self._window(pages)

    def budget(self, pages: int = 1) -> Budget:
        """What the last answer stated, the budget's refill, and the listing's window now."""
        with self._lock:
            if self._limit is None or self._remaining is None:
                return Budget(stated=False, list_window=self._window(pages), note=self._note)
            return Budget(
                stated=True,
                limit=self._limit,
                remaining=self._remaining,
                reset=self._reset,
                per_second=self._per_second(),
                seen_at=self._seen_at,
                low=self._low(pages),
                list_window=self._window(pages),
            )

    def _window(self, pages: int) -> float:
        ttl = self._freshness.list_ttl
        if ttl <= 0:
            return 0.0
        if self._limit is None:
            return ttl
        if self._low(pages):
            return float("inf")
        paced = pages / (self._freshness.list_share * self._per_second())
        return max(ttl, min(paced, self._freshness.list_max_age))

    def _per_second(self) -> float:
        """The bucket's refill: what the answer implies (missing over the time to full),
        else the limit per hour, as Hetzner's 3,600 an hour refill one a second."""
        assert self._limit is not None
        assert self._remaining is not None
        missing = self._limit - self._remaining
        if self._reset is not None and self._seen_at is not None:
            until_full = self._reset - self._seen_at
            if until_full >= MEASURABLE:
                return missing / until_full
        return self._limit / HOUR

    def _low(self, pages: int) -> bool:
        """True while the budget, with what has refilled since, is below the reserve."""
        if self._limit is None or self._remaining is None or self._seen_at is None:
            return False
        refilled = max(0.0, self._clock() - self._seen_at) * self._per_second()
        now = min(float(self._limit), self._remaining + refilled)
        return now < self._freshness.budget_reserve * self._limit + pages
