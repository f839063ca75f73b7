"""Reaping a pool: delete every machine the autoscaler made in it, and wait for them to go.

What the stack runs when a pool leaves it (``pulumi destroy``, or a pool removed from the
stack's configuration): the stack's own machines go with their resources, the autoscaler's
with this. Only machines of the provider's owner and of ``pool`` are listed, and those the
stack keeps (``orca-managed-by=pulumi``) are never touched here.
"""

from __future__ import annotations

import logging
import time

from machines.runtime.errors import MachinesError
from machines.runtime.models import Machine, Status
from machines.runtime.provider import Provider

log = logging.getLogger(__name__)

REAP_SECONDS = 600.0
"""How long a reap waits for the autoscaler's machines to be gone or deleting."""


def autoscaled(machines: list[Machine]) -> list[Machine]:
    """The machines the autoscaler made (no ``orca-managed-by``), not yet being deleted."""
    return [m for m in machines if not m.managed_by and m.status != Status.DELETING]


def reap(
    provider: Provider, pool: str, *, seconds: float = REAP_SECONDS, poll: float = 1.0
) -> list[Machine]:
    """Delete the autoscaler's machines of ``pool``; return them once all are gone or deleting.

    Machines the autoscaler makes while this runs are deleted too. Raise ``MachinesError``
    naming what is left when ``seconds`` pass first.
    """
    deadline = time.monotonic() + seconds
    reaped: dict[str, Machine] = {}
    while True:
        left = autoscaled(provider.machines(pool))
        if not left:
            return list(reaped.values())
        if time.monotonic() > deadline:
            names = ", ".join(sorted(m.name for m in left))
            raise MachinesError(
                f"pool {pool} of owner {provider.owner}: {len(left)} machines of the "
                f"autoscaler are still there after {seconds:.0f} s ({names}): delete them "
                "(orca-machines rm) and run the operation again"
            )
        for machine in left:
            if machine.id not in reaped:
                provider.delete(machine.id)
                log.info("reaped %s (%s) of pool %s", machine.id, machine.name, pool)
                reaped[machine.id] = machine
        time.sleep(poll)
