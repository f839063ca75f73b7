"""The API's rate limit: a token bucket per project, reported in RateLimit-* headers.

The real API allows 3,600 requests per hour, refilling one per second, with bursts; every
response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (the UNIX
time when the bucket is full again). Over the limit it answers 429 `rate_limit_exceeded`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_LIMIT = 1_000_000  # effectively unlimited, for tests
REAL_LIMIT = 3600
REAL_PER_SECOND = 1.0


@dataclass(frozen=True)
class RateLimitStatus:
    """What the headers of one response say about the bucket."""

    limit: int
    remaining: int
    reset: int  # UNIX timestamp when the bucket is full

    def headers(self) -> dict[str, str]:
        """The three RateLimit-* headers."""
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset),
        }


class TokenBucket:
    """A thread-safe token bucket; each API request takes one token."""

    def __init__(
        self,
        limit: int = DEFAULT_LIMIT,
        per_second: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._limit = limit
        self._per_second = per_second if per_second is not None else limit / 3600
        self._tokens = float(limit)
        self._updated = clock()

    def configure(self, limit: int, per_second: float) -> None:
        """Change the limit and refill rate, and start again with a full bucket."""
        if limit < 1 or per_second <= 0:
            raise ValueError("limit must be at least 1 and per_second above 0")
        with self._lock:
            self._limit = limit
            self._per_second = per_second
            self._tokens = float(limit)
            self._updated = self._clock()

    @property
    def settings(self) -> tuple[int, float]:
        """(limit, per_second)."""
        with self._lock:
            return self._limit, self._per_second

    def take(self) -> tuple[bool, RateLimitStatus]:
        """Take a token if there is one; say whether it was allowed, and the status after."""
        with self._lock:
            now = self._refill()
            allowed = self._tokens >= 1
            if allowed:
                self._tokens -= 1
            return allowed, self._status(now)

    def peek(self) -> RateLimitStatus:
        """The status without taking a token (for answers that bypass the limit)."""
        with self._lock:
            return self._status(self._refill())

    def _refill(self) -> float:
        now = self._clock()
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(float(self._limit), self._tokens + elapsed * self._per_second)
        self._updated = now
        return now

    def _status(self, now: float) -> RateLimitStatus:
        missing = self._limit - self._tokens
        reset = math.ceil(now + missing / self._per_second)
        return RateLimitStatus(self._limit, int(self._tokens), reset)
