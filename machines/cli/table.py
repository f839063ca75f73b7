"""The machine table ``ls`` and ``create`` print: one row a machine, columns padded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from machines.runtime.models import Machine

COLUMNS: tuple[tuple[str, Callable[[Machine], str]], ...] = (
    ("ID", lambda m: m.id),
    ("NAME", lambda m: m.name),
    ("STATUS", lambda m: str(m.status)),
    ("TYPE", lambda m: m.machine_type),
    ("LOCATION", lambda m: m.location),
    ("KEPT BY", lambda m: "stack" if m.managed_by else "autoscaler"),
    ("ADDRESS", lambda m: m.address),
)
"""The machine table's columns: ``KEPT BY`` is ``stack`` for a machine the Pulumi stack
keeps (``orca-managed-by=pulumi``: change its pool's size to remove it), ``autoscaler`` for
one the runtime's ``create`` made (``rm`` deletes it)."""

TIME_COLUMNS: tuple[tuple[str, Callable[[Machine], str]], ...] = (
    ("AGE", lambda m: _age(m.created)),
    ("PAID UNTIL", lambda m: _moment(m.paid_until)),
)
"""``ls`` adds how long ago the cloud made each machine and until when it is paid (UTC):
deleting it before then costs nothing more (``Machine.paid_until``)."""


def _age(created: datetime | None) -> str:
    """``2d03h``, ``1h05m``, ``4m``; ``-`` when the cloud did not say."""
    if created is None:
        return "-"
    minutes = max(0, int((datetime.now(UTC) - created).total_seconds() // 60))
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days}d{hours:02d}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def _moment(moment: datetime | None) -> str:
    """``2026-03-01T10:00:00Z``; ``-`` when unknown."""
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def table(machines: Sequence[Machine], with_time: bool = False) -> str:
    """The machines as a table; ``with_time``: their age and paid-until time too."""
    columns = COLUMNS + TIME_COLUMNS if with_time else COLUMNS
    rows = [[header for header, _ in columns]]
    rows += [[cell(m) for _, cell in columns] for m in machines]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
