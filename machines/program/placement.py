"""Where the stack's own machines of a pool that spans places go: a machine kept where it
is, a new one at the pool's first place with stock.

A pool with ``places`` makes its ``size`` machines at them: the program asks the clouds,
read-only, through the runtime's spanning provider (so the stack and the autoscaler judge
stock alike) what the pool's machines are now (one listing per cloud) and which place has
stock (a cloud's memory and catalogue; Hetzner's says, EC2's only a create can). A machine
the stack already has stays at the place it is in, whatever its stock and however the places
are reordered (a later ``up`` never moves it); one it does not have yet goes to the pool's
first place that no cloud knows is out. When every place is known out, the first one is
taken, and the engine's create answers for it.

Only a stack with a pool that spans asks (``machines.program.reading``, which lists each
pool once for the whole program): one whose pools name one place each makes no request here.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from machines.program.config.models import BaseDeployment, PoolConfig
from machines.program.reading import Read
from machines.runtime.labels import machine_name
from machines.runtime.models import Machine, Status
from machines.runtime.pool import Place, Pool
from machines.runtime.settings import ORCA_PLACES_OUT
from machines.runtime.span import SpanningProvider

NO_PLACE = "no place has stock as far as its clouds say"
"""What the program says of a pool none of whose places has stock (a preview warns of it)."""


@dataclass(frozen=True)
class Placement:
    """A pool's machine ``n`` (from 1) at ``places[n - 1]``, and what the program said of it."""

    places: tuple[Place, ...]
    notes: tuple[str, ...] = ()


SPANS = "names its places"
"""Why the program reads a pool whose places span (``machines.program.reading``)."""


def spanning_pools(deployment: BaseDeployment) -> dict[str, str]:
    """The pools the program reads to place their machines, and why: those that span and
    keep machines."""
    return {p.name: SPANS for p in deployment.pools if p.spans(deployment.provider) and p.size}


def placements(
    deployment: BaseDeployment, read: Read | None, environ: Mapping[str, str]
) -> dict[str, Placement]:
    """Each spanning pool's machines' places, by pool name (none for a stack without one),
    given what the program ``read`` of the clouds (``spanning_pools`` among it) and the
    places an earlier attempt found out (``environ``'s ``ORCA_PLACES_OUT``)."""
    spanning = [p for p in deployment.pools if p.spans(deployment.provider)]
    found = {p.name: Placement(()) for p in spanning if not p.size}
    if read is None or len(found) == len(spanning):
        return found
    provider = read.provider
    assert isinstance(provider, SpanningProvider)
    out = places_out(environ)
    for pool in spanning:
        if pool.size:
            found[pool.name] = placement_of(provider, deployment, pool, read.listed[pool.name], out)
    return found


def placement_of(
    provider: SpanningProvider,
    deployment: BaseDeployment,
    pool: PoolConfig,
    listed: Iterable[Machine],
    out: Collection[Place] = (),
) -> Placement:
    """``pool``'s machines given its machines ``listed`` now (the pool's listing on every
    cloud): what the program declares, and what a preview counted on the same listing shows.
    ``out``: places an earlier attempt of the same ``up`` found out of stock."""
    kept_now = {m.name: m for m in listed if m.managed_by and m.status != Status.DELETING}
    settings = deployment.runtime_pool(pool)
    notes: list[str] = []
    new: Place | None = None
    places: list[Place] = []
    for index in range(1, pool.size + 1):
        kept = kept_now.get(machine_name(deployment.owner, pool.name, index))
        if kept is not None:
            places.append(kept_at(pool.places, kept))
            continue
        if new is None:
            passed = [(p, _out(provider, settings, p, out)) for p in pool.places]
            new = next((p for p, why in passed if not why), pool.places[0])
            notes += _said(pool.name, new, passed)
        places.append(new)
    return Placement(tuple(places), tuple(notes))


def _out(provider: SpanningProvider, pool: Pool, place: Place, out: Collection[Place]) -> str:
    """Why no new machine goes to ``place`` now; empty when it is worth a try."""
    if place in out:
        return "its cloud refused a machine there for want of stock earlier in this up"
    return provider.passed_over(pool, place)


def places_out(environ: Mapping[str, str]) -> tuple[Place, ...]:
    """The places ``ORCA_PLACES_OUT`` names (set by ``orca-machines up`` for its next
    attempt); none when unset or unreadable (the program then asks the clouds alone)."""
    try:
        items = json.loads(environ.get(ORCA_PLACES_OUT) or "[]")
        return tuple(Place.model_validate(item) for item in items)
    except (ValueError, TypeError):
        return ()


def places_out_env(places: Iterable[Place]) -> dict[str, str]:
    """``ORCA_PLACES_OUT`` of ``places``, for the program of an ``up``'s next attempt."""
    listed = [p.model_dump(mode="json", by_alias=True) for p in places]
    return {ORCA_PLACES_OUT: json.dumps(listed, separators=(",", ":"))} if listed else {}


def kept_at(places: tuple[Place, ...], machine: Machine) -> Place:
    """The place a kept ``machine`` is at: the pool's place of its cloud, location and type,
    else of its cloud and location (its type changes in place), else where it is, though
    the pool names that place no more (it is not moved)."""
    where = (machine.cloud, machine.location)
    same = [p for p in places if (p.cloud, p.location) == where]
    exact = [p for p in same if p.machine_type == machine.machine_type]
    if exact or same:
        return (exact or same)[0]
    return Place(
        cloud=machine.cloud,
        machine_type=machine.machine_type,
        location=machine.location,
        market=machine.market,
    )


def _said(pool: str, chosen: Place, passed: list[tuple[Place, str]]) -> list[str]:
    """What the program tells of a pool whose new machines are not at its first place."""
    out = [(p, why) for p, why in passed if why]
    if not out:
        return []
    why = "; ".join(f"{p}: {reason}" for p, reason in out)
    if len(out) == len(passed):
        return [
            f"pool {pool}: {NO_PLACE} ({why}): new machines go to its first place, {chosen}, "
            "whose cloud answers the create"
        ]
    return [f"pool {pool}: new machines go to {chosen}, passing over {why}"]
