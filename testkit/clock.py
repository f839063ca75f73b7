"""A clock the tests move by hand: the provider's listing, stock memory and budget read it."""

from __future__ import annotations

import threading
import time


class ManualClock:
    """Seconds since the epoch, starting now, that pass only when ``advance`` says so."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
