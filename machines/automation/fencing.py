"""The stack's new machines counted in the fence before an ``up`` makes them.

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
from machines.program.config.models import BaseDeployment
from machines.runtime.errors import MachinesError, SettingsError
from machines.runtime.fence.fence import Fence, Full, InFlight
from machines.runtime.labels import machine_name
from machines.runtime.models import Machine


class StackAtMaxError(SettingsError):
    """An ``up`` would pass a pool's max, counted over every process: nothing was changed."""


def stack_holder(stack: str) -> str:
    """Whose the fence's entries of a stack's machines are: the stack's, so the next run of
    it (its lock keeps them one at a time) takes them as its own, whichever process runs it."""
    return f"stack {stack}"


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
    new = [] if deployment is None or action != "up" else _new_machines(deployment, taken)
    try:
        for pool, names in new:
            assert deployment is not None
            _reserve(stack, fence, deployment, taken.listed[pool] or [], pool, *names)
        yield
    except BaseException:
        with contextlib.suppress(MachinesError):  # else they end at their hold
            for pool, names in new:
                fence.release(pool, names, holder)
        raise
    with contextlib.suppress(MachinesError):
        for bounded in (p for p in taken.provider.pools() if p.max is not None):
            if action == "up":
                fence.release_held(bounded.name, holder, keep=_wanted(deployment, bounded.name))
            else:  # the reapers deleted every machine of the pool, the autoscaler's too
                fence.release_held(bounded.name)


def _wanted(deployment: BaseDeployment | None, pool: str) -> list[str]:
    """The names of the machines ``deployment`` keeps in ``pool``."""
    if deployment is None:
        return []
    config = next((p for p in deployment.pools if p.name == pool), None)
    size = 0 if config is None else config.size
    return [machine_name(deployment.owner, pool, i) for i in range(1, size + 1)]


def _new_machines(deployment: BaseDeployment, taken: StackSnapshot) -> list[tuple[str, list[str]]]:
    """Each pool with a max and the names of the machines its ``size`` wants that the stack
    does not keep yet (by its listing)."""
    found = []
    for pool in deployment.pools:
        listed = taken.listed.get(pool.name)
        if pool.max is None or listed is None:
            continue
        kept = {m.name for m in listed if m.managed_by}
        new = [n for n in _wanted(deployment, pool.name) if n not in kept]
        if new:
            found.append((pool.name, new))
    return found


def _reserve(
    stack: str,
    fence: Fence,
    deployment: BaseDeployment,
    listed: list[Machine],
    pool: str,
    *names: str,
) -> None:
    config = next(p for p in deployment.pools if p.name == pool)
    assert config.max is not None
    first = config.places[0] if config.places else None
    cloud = first.cloud if first is not None else deployment.provider
    place = str(first) if first is not None else (
        f"{deployment.provider} {config.machine_type} in {config.location}"
    )  # fmt: skip
    answer = fence.reserve(
        pool,
        names,
        cloud=cloud,
        place=place,
        limit=config.max,
        listed=listed,
        holder=stack_holder(stack),
    )
    if isinstance(answer, Full):
        elsewhere = f" ({answer.flying} being made now)" if answer.flying else ""
        raise StackAtMaxError(
            f"stack {stack}: pool {pool} has {answer.count} machines{elsewhere}, counted over "
            f"every process that makes them, and its size {config.size} would add "
            f"{len(names)} of the stack's, past its max {config.max}: nothing was changed; "
            "lower the pool's size, raise its max, or wait for the autoscaler's machines to go"
        )
    if isinstance(answer, InFlight):
        raise StackAtMaxError(
            f"stack {stack}: machine {answer.entry.name} of pool {pool} is being made by "
            f"another process ({answer.entry.holder}): nothing was changed; run it again in a "
            "moment"
        )
