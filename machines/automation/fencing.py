"""The stack's new machines counted in the fence before an ``up`` makes them
(``machines.program.fencing``, whose rules a plain ``pulumi up``'s program follows too).

An ``up`` (or a ``resize``) that grows a pool's ``size`` makes machines as the autoscaler's
``create`` does, so the pool's ``max`` must hold for them over every process too
(``machines.runtime.fence``): before the engine runs, the machines the stack does not keep
yet are recorded in the fence in one step with the pool's count (its listing, every
process's creates in flight), and the run is refused in one line, nothing changed, when
they would pass the max. A run that failed ends its entries at once (what it made is
counted by the listings from then on); a run that made them leaves them to end at their
hold, by when every listing shows the machines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

from machines.automation.snapshot import StackSnapshot
from machines.program.fencing import new_machines, reserve, stack_holder, wanted
from machines.runtime.errors import MachinesError


@contextmanager
def stack_fenced(stack: str, action: str, taken: StackSnapshot) -> Iterator[None]:
    """Around an engine run of ``action`` on the stack: before an ``up``, each pool's new
    machines recorded in the fence of ``taken``'s provider (none without one, or for pools
    without a max), ``StackAtMaxError`` when they would pass it; after a run, the entries of
    machines it removed ended (a smaller size: the stack's; a destroy: every one of its
    pools, whose reapers deleted the autoscaler's machines too), and every one it held when
    it failed."""
    fence = None if taken.provider is None else taken.provider.fence
    if fence is None or action not in ("up", "destroy"):
        yield
        return
    assert taken.provider is not None
    holder = stack_holder(stack)
    deployment = taken.deployment
    new = [] if deployment is None or action != "up" else new_machines(deployment, taken.listed)
    try:
        for pool, names in new:
            assert deployment is not None
            reserve(stack, fence, deployment, taken.listed[pool] or [], pool, *names)
        yield
    except BaseException:
        with contextlib.suppress(MachinesError):  # else they end at their hold
            for pool, names in new:
                fence.release(pool, names, holder)
        raise
    with contextlib.suppress(MachinesError):
        for bounded in (p for p in taken.provider.pools() if p.max is not None):
            if action == "up":
                fence.release_held(bounded.name, holder, keep=wanted(deployment, bounded.name))
            else:  # the reapers deleted every machine of the pool, the autoscaler's too
                fence.release_held(bounded.name)


def max_warnings(taken: StackSnapshot) -> tuple[str, ...]:
    """A line for each pool whose ``size`` would add machines past its max as its listing
    shows it now (the machines that count toward a max, as the fence counts them): what a
    preview warns of, since the ``up`` would be refused before it changes anything. Creates
    in flight in other processes are not counted (a preview writes nothing and reads no
    fence)."""
    deployment = taken.deployment
    if deployment is None:
        return ()
    warnings = []
    for pool, names in new_machines(deployment, taken.listed):
        config = next(p for p in deployment.pools if p.name == pool)
        count = sum(m.counts_toward_max for m in taken.listed[pool] or [])
        if config.max is not None and count + len(names) > config.max:
            warnings.append(
                f"pool {pool} has {count} machines now, and its size {config.size} would add "
                f"{len(names)} of the stack's, past its max {config.max}: up would be refused; "
                "lower the pool's size, raise its max, or wait for the autoscaler's machines "
                "to go"
            )
    return tuple(warnings)
