"""Request counts per route, so benchmarks can tell how many API calls an operation costs.

Keys are `METHOD /v1/path-template`, e.g. `GET /v1/servers/{id}`; every request that
reaches the API is counted, including those answered with an error or a fault.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

UNMATCHED = "<unmatched>"


class RequestCounter:
    """A thread-safe counter of API requests by route template."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, route: str) -> None:
        """Count one request."""
        with self._lock:
            self._counts[route] += 1

    def reset(self) -> None:
        """Forget every count."""
        with self._lock:
            self._counts.clear()

    def to_json(self) -> dict[str, Any]:
        """`{"total": N, "routes": {"GET /v1/servers": n, ...}}`."""
        with self._lock:
            routes = dict(sorted(self._counts.items()))
            return {"total": sum(routes.values()), "routes": routes}
