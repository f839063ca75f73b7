"""Where a machine type can be had now, as the provider of its cloud says (``offers``).

Hetzner states per server type and location whether it is in stock now; EC2 publishes no
stock, only the zones that offer a type (``DescribeInstanceTypeOfferings``), so its zones
are shown as offered (``Provider.offers_stock``). Either way it is the runtime's answer,
with its retries and deadline: the locations a create could go to now (on EC2, the zones
the settings have subnets for), less those a recent ``no_stock`` answer is remembered for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from pulumi import automation as auto
from pydantic import BaseModel, ConfigDict

from machines.automation.diff import Diff
from machines.automation.engine_output import resource_errors
from machines.automation.snapshot import StackSnapshot
from machines.program.config.models import BaseDeployment, PoolConfig
from machines.program.placement import NO_PLACE
from machines.runtime.clouds import account_limit_codes, account_limit_help, no_stock_codes
from machines.runtime.clouds import cloud as facts_of
from machines.runtime.errors import MachinesError
from machines.runtime.labels import is_machine_key
from machines.runtime.pool import Place
from machines.runtime.provider import Provider
from machines.runtime.secrets import mask


class Stock(BaseModel):
    """The locations where a type is in stock (or, on EC2, offered), or why that is unknown."""

    model_config = ConfigDict(frozen=True)

    locations: tuple[str, ...] = ()
    offered_only: bool = False
    unknown: str = ""

    def text(self) -> str:
        if self.unknown:
            return "unknown"
        shown = ",".join(self.locations) or "none"
        return f"{shown} (offered)" if self.offered_only else shown


def stock(
    kind: str, machine_type: str, provider: Provider | None, environ: Mapping[str, str] | None
) -> Stock:
    """Where ``machine_type`` can be created now, by ``provider``'s ``offers`` (None: the
    provider ``kind`` configured from ``environ``); unknown, saying why, when the settings
    or the cloud fail."""
    try:
        source = provider or Provider.of(kind, "", environ)
        offered = source.offers(machine_type)
    except MachinesError as error:
        return Stock(unknown=mask(" ".join(str(error).split())))
    return Stock(locations=tuple(sorted(offered)), offered_only=not source.offers_stock)


class NoStockError(MachinesError):
    """An engine run stopped at a machine the cloud has no stock for, or that it refused for
    its account being at its limit (``code``): the cloud's "not here, not now", not a
    mistake. The CLI exits with its no-stock status; what the run made is kept. For a pool
    that names its places, ``place`` is where the machine was to be made, and ``passed`` the
    places earlier attempts of the same ``up`` found out."""

    def __init__(
        self,
        stack: str,
        action: str,
        cloud: str,
        pool: PoolConfig,
        *,
        place: Place | None = None,
        passed: Sequence[Place] = (),
        code: str = "",
    ) -> None:
        self.pool = pool
        self.place = place
        self.passed = tuple(passed)
        self.code = code
        full = code in account_limit_codes()
        if place is None:
            what = (
                f"{cloud}'s account is at its limit ({code}) for pool {pool.name}"
                if full
                else f"{cloud} has no stock of {pool.machine_type} in {pool.location} for "
                f"pool {pool.name} now"
            )
            fix = (
                account_limit_help(code)
                if full
                else "give the pool another location or machine type in its stack file, or run "
                "up again later"
            )
            super().__init__(
                f"stack {stack}: {action} stopped: {what}; the machines it made are kept: {fix}"
            )
            return
        tried = "".join(f", nor had {p}" for p in self.passed if p != place)
        what = (
            f"{place} is on a cloud whose account is at its limit ({code}) for pool {pool.name}"
            if full
            else f"{place} has no stock for pool {pool.name} now"
        )
        super().__init__(
            f"stack {stack}: {action} stopped: {what}{tried}, and no other place of the pool "
            "has stock as far as its clouds say; the machines it made are kept: add a place to "
            "the pool, or run up again later"
        )

    @property
    def why(self) -> str:
        """Why the place made nothing, in words: no stock, or its account at its limit."""
        if self.code in account_limit_codes():
            return f"is on a cloud whose account is at its limit ({self.code})"
        return "has no stock now"


PlaceOf = Callable[[PoolConfig, str], Place | None]
"""Where a failed engine run was making a pool's machine (its name in the stack)."""


def out_of_stock_pool(text: str, deployment: BaseDeployment) -> tuple[PoolConfig, str, str] | None:
    """The pool whose machine a failed engine run (``text``, its ``CommandError``) could
    not make for want of stock or for its cloud's account being at its limit, that
    machine's name in the stack, and the cloud's code; None when no failure was that."""
    known = sorted(no_stock_codes() | account_limit_codes())
    codes = re.compile(r"\b(" + "|".join(known) + r")\b")
    for line in resource_errors(text):
        resource, _, why = line.partition(": ")
        found = codes.search(why)
        if found is None:
            continue
        for pool in deployment.pools:
            if is_machine_key(resource, deployment.owner, pool.name):
                return pool, resource, found.group(1)
    return None


@contextmanager
def no_stock_refused(
    stack: str,
    action: str,
    deployment: BaseDeployment | None,
    place_of: PlaceOf | None = None,
    passed: Sequence[Place] = (),
) -> Iterator[None]:
    """Around an engine run: a failure for want of stock becomes ``NoStockError`` naming
    the pool, its type and location (for a pool that names its places, the place
    ``place_of`` says, on its cloud); any other passes on as it was."""
    try:
        yield
    except auto.CommandError as error:
        found = None if deployment is None else out_of_stock_pool(str(error), deployment)
        if found is None or deployment is None:
            raise
        pool, key, code = found
        place = place_of(pool, key) if place_of is not None else None
        cloud = deployment.cloud if place is None else facts_of(place.cloud).name
        raise NoStockError(
            stack, action, cloud, pool, place=place, passed=passed, code=code
        ) from None


def stock_warnings(diff: Diff, taken: StackSnapshot) -> tuple[str, ...]:
    """A line for each pool the change makes machines of whose type its cloud has no stock
    of in its location now, by the snapshot's provider (``offers``: the catalogue's stock
    per location, less the types its no-stock memory holds); none when that is unknown."""
    deployment, provider = taken.deployment, taken.provider
    if deployment is None or provider is None:
        return ()
    warnings = []
    for pool in deployment.pools:
        made = any(
            c.op in ("create", "replace") and is_machine_key(c.name, deployment.owner, pool.name)
            for c in diff.changes
        )
        if not made:
            continue
        if pool.places:
            warnings += _no_place_warnings(taken, pool)
            continue
        try:
            offered = provider.offers(pool.machine_type, pool.name)
        except MachinesError:
            continue  # unknown: the run itself will tell
        if pool.location not in offered:
            where = ", ".join(sorted(offered)) or "none"
            warnings.append(
                f"pool {pool.name}: {deployment.cloud} has no stock of {pool.machine_type} in "
                f"{pool.location} now (in stock in: {where}); up would stop at its first "
                "machine there: give the pool another location or machine type, or run up later"
            )
    return tuple(warnings)


def _no_place_warnings(taken: StackSnapshot, pool: PoolConfig) -> list[str]:
    """For a pool that names its places: a line when no place has stock as far as its
    clouds say (its new machines would go to the first and meet its refusal); none when
    one has, the program sends them there."""
    placed = taken.placement(pool)
    if placed is None:
        return []  # unknown: the run itself will tell
    return [note for note in placed.notes if NO_PLACE in note]
