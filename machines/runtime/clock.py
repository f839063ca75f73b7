"""Time as the runtime reads it: one type for every clock it is given."""

from __future__ import annotations

from collections.abc import Callable

Clock = Callable[[], float]
"""Seconds, as ``time.time`` counts them; tests and benchmarks pass a clock of their own."""
