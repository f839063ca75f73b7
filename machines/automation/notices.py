"""Machines under the cloud's notice, as the reports show them (``status``, the preview's pool
lines, the CI comment): per pool and place, how many of each kind, and the first end.

A machine is under notice when the cloud said it will go while it still runs
(``Machine.under_notice``: EC2's spot interruption warning, rebalance recommendation or a
scheduled change, read from the stack's queue by the runtime's listing; Hetzner gives none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from machines.runtime.models import Ending, Machine, Status

ORDER = (Ending.INTERRUPTING, Ending.REBALANCE, Ending.SCHEDULED)
"""The kinds in the order the reports name them: the most pressing first (``NOTICES``)."""


def notices(machines: Iterable[Machine] | None) -> dict[str, int]:
    """How many of ``machines`` (none when unknown) are under each kind of notice, by the
    kind's value, in ``ORDER``; machines being deleted left out."""
    found = Counter(
        m.ending for m in machines or () if m.under_notice and m.status != Status.DELETING
    )
    return {kind.value: found[kind] for kind in ORDER if found[kind]}


def notices_text(counts: Mapping[str, int]) -> str:
    """``1 interrupting, 2 rebalance``; empty for none."""
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)


def notices_line(pool: str, machines: Iterable[Machine] | None, where: str = "") -> str:
    """The report's line on a pool (``where``: at one of its places) whose machines are
    under notice, with the first end the cloud named; empty when none is."""
    listed = [m for m in machines or () if m.under_notice and m.status != Status.DELETING]
    counts = notices(listed)
    if not counts:
        return ""
    ends = [m.ends_at for m in listed if m.ends_at is not None]
    first = f", the first ending {min(ends):%Y-%m-%d %H:%M} UTC" if ends else ""
    total = sum(counts.values())
    return (
        f"pool {pool}{where}: {total} machine{'' if total == 1 else 's'} under the cloud's "
        f"notice ({notices_text(counts)}){first}: start nothing new on them; the autoscaler "
        "lets them go and makes their replacements elsewhere"
    )
