"""How long to wait before trying again: exponential, half fixed and half jitter.

One rule for every wait of the runtime: a call's retries (``machines.runtime.retry``) and a
fence's lost races and locks (``machines.runtime.fence``), which must not pull a cloud's
HTTP stack in with ``retry``.
"""

from __future__ import annotations

import random

BASE_DELAY = 0.25
MAX_DELAY = 20.0


def backoff(attempt: int, base: float | None = None, cap: float | None = None) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): half fixed, half jitter.

    The fixed half keeps clients from hammering; the random half keeps many autoscaler
    threads that failed together from retrying together.
    """
    base = BASE_DELAY if base is None else base
    cap = MAX_DELAY if cap is None else cap
    ceiling = min(cap, base * 2.0**attempt)
    return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 (jitter, not crypto)
