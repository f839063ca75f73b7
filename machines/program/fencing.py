"""A stack's new machines counted in its pools' fence before they are made.

A stack whose ``up`` grows a pool's ``size`` makes machines as the autoscaler's ``create``
does, so the pool's ``max`` holds for them over every process too
(``machines.runtime.fence``): the machines the stack does not keep yet are recorded in the
fence in one step with the pool's count (its listing, every process's creates in flight),
under the stack's own holder, and the run is refused in one line, nothing changed, when
they would pass the max.

Two paths ask it. ``orca-machines up`` and the automation ask before the engine runs
(``machines.automation.fencing``, which also ends the entries when the run fails or
removes machines). A plain ``pulumi up`` has no such step, so its program asks
(``fence_plain_up``), before it declares anything: its entries end at their hold, by when
every listing shows the machines it made.
"""

from __future__ import annotations

from collections.abc import Mapping

from machines.program.config.models import BaseDeployment
from machines.program.reading import Read
from machines.runtime.errors import SettingsError
from machines.runtime.fence.fence import Fence, Full, InFlight
from machines.runtime.labels import machine_name
from machines.runtime.models import Machine
from machines.runtime.settings import PULUMI_AUTOMATION_API

BOUNDED = "has a max counted over every process"
"""Why a plain ``up``'s program reads a pool with a max (``machines.program.reading``)."""


class StackAtMaxError(SettingsError):
    """An ``up`` would pass a pool's max, counted over every process: nothing was changed."""


def stack_holder(stack: str) -> str:
    """Whose the fence's entries of a stack's machines are: the stack's, so the next run of
    it (its lock keeps them one at a time) takes them as its own, whichever process runs it."""
    return f"stack {stack}"


def plain_up(environ: Mapping[str, str], dry_run: bool) -> bool:
    """Whether the program runs for a plain ``pulumi up`` (not a preview, not through the
    automation, which fences before the engine runs)."""
    return not dry_run and environ.get(PULUMI_AUTOMATION_API) != "true"


def bounded_pools(deployment: BaseDeployment) -> dict[str, str]:
    """The pools a plain ``up``'s program reads to fence their new machines, and why: those
    with a max that keep machines."""
    return {p.name: BOUNDED for p in deployment.pools if p.max is not None and p.size}


def fence_plain_up(stack: str, deployment: BaseDeployment, read: Read | None) -> None:
    """Before a plain ``up`` declares anything: each bounded pool's new machines recorded
    in the fence of ``read``'s provider (none without one), ``StackAtMaxError`` when they
    would pass the max."""
    if read is None or read.provider.fence is None:
        return
    fence = read.provider.fence
    for pool, names in new_machines(deployment, read.listed):
        reserve(stack, fence, deployment, read.listed[pool], pool, *names)


def wanted(deployment: BaseDeployment | None, pool: str) -> list[str]:
    """The names of the machines ``deployment`` keeps in ``pool``."""
    if deployment is None:
        return []
    config = next((p for p in deployment.pools if p.name == pool), None)
    size = 0 if config is None else config.size
    return [machine_name(deployment.owner, pool, i) for i in range(1, size + 1)]


def new_machines(
    deployment: BaseDeployment, listed: Mapping[str, list[Machine] | None]
) -> list[tuple[str, list[str]]]:
    """Each pool with a max and the names of the machines its ``size`` wants that the stack
    does not keep yet (by its ``listed`` machines; a pool not listed is left out)."""
    found = []
    for pool in deployment.pools:
        machines = listed.get(pool.name)
        if pool.max is None or machines is None:
            continue
        kept = {m.name for m in machines if m.managed_by}
        new = [n for n in wanted(deployment, pool.name) if n not in kept]
        if new:
            found.append((pool.name, new))
    return found


def reserve(
    stack: str,
    fence: Fence,
    deployment: BaseDeployment,
    listed: list[Machine],
    pool: str,
    *names: str,
) -> None:
    """``names`` of ``pool`` recorded in ``fence`` as the stack's, ``StackAtMaxError`` when
    they would pass its max or another process is making one of them."""
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
