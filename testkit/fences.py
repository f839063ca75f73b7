"""What a fence's store holds, read behind the provider's back: for the fence's tests."""

from __future__ import annotations

import time

from machines.runtime.fence.fence import Fence
from machines.runtime.fence.held import Held


def entries(
    fence: Fence | None, pool: str = "ci", *, live: bool = False
) -> list[dict[str, object]]:
    """The entries ``fence`` keeps for ``pool``, as stored (``live``: only those still
    holding a slot now), each as a dict."""
    assert fence is not None
    found: list[dict[str, object]] = []

    def decide(held: Held) -> tuple[None, None]:
        kept = held.live(time.time()) if live else held.entries
        found.extend(e.model_dump() for e in kept)
        return None, None

    fence.store.transact(fence.key(pool), decide, 10)
    return found
