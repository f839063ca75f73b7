"""What a change does to each pool: machines kept before and after, the autoscaler's, cost.

Before is what the stack keeps now (its ``pools`` output; nothing for a stack never
brought up), after is what the stack file asks for. The counts of kept, autoscaler and
deleted machines are the preview's own (``Diff.pools``, the pool contract: the stack's
machines carry ``orca-managed-by=pulumi``; a pool the change removes takes the
autoscaler's machines with it). Costs come from the cloud's price list (``cost``) for the
machines listed now, autoscaler machines at their current number, those being deleted
left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from machines.automation.checks import Catalogue, catalogue_env, deployment_of
from machines.automation.cost import PriceList, money, price_list
from machines.automation.diff import OPS, Change, Diff, PoolCount
from machines.automation.notices import notices_line
from machines.automation.places import (
    PlacePrices,
    PlaceReport,
    by_place,
    in_currency,
    monthly_after,
    monthly_now,
)
from machines.automation.snapshot import StackSnapshot
from machines.program.components import POOL_TYPE
from machines.program.config.models import BaseDeployment
from machines.program.reaper import REAPER_TYPE
from machines.runtime.clouds import cloud, stack_environ
from machines.runtime.labels import is_machine_key
from machines.runtime.models import Machine, Market, Status
from machines.runtime.pool import Pool, option_changes
from machines.runtime.reaping import autoscaled
from machines.runtime.secrets import mask


class PoolSide(BaseModel):
    """A pool as the stack keeps it on one side of a change."""

    model_config = ConfigDict(frozen=True)

    machine_type: str
    location: str
    kept: int
    market: Market = Market.ON_DEMAND
    """The market of the kept machines (``Market.kept`` of the pool's)."""
    settings: Pool | None = None
    """The pool's settings on this side (before: as the stack last exported them in
    ``ORCA_POOLS``; None for a stack of before them): its options and what they cost."""


class PoolChange(BaseModel):
    """One pool a change touches; ``autoscaler`` is None when the cloud could not be listed."""

    model_config = ConfigDict(frozen=True)

    pool: str
    before: PoolSide | None
    after: PoolSide | None
    autoscaler: int | None
    deletes_kept: int
    deletes_autoscaler: int | None
    cost_before: Decimal | None
    cost_after: Decimal | None
    market: Market = Market.ON_DEMAND
    on_demand_after: Decimal | None = None
    """For a pool that buys spot: its machines after the change at on-demand prices."""
    places: tuple[PlaceReport, ...] = ()
    """For a pool that names its places: each place before and after, its money after the
    change in its cloud's currency (the pool's costs are their sums in the stack's)."""

    def sentence(self) -> str:
        """What the change does to the pool, in the words a reviewer reads first."""
        name = f"pool `{self.pool}`"
        before, after = self.before, self.after
        if after is None:
            theirs = _autoscaler(self.deletes_autoscaler)
            return f"removes {name}: {_kept(self.deletes_kept)} and {theirs}"
        if before is None:
            return f"adds {name}: {_kept(after.kept)} of {after.machine_type} in {after.location}"
        parts = []
        if (before.machine_type, before.location) != (after.machine_type, after.location):
            parts.append(
                f"moves {name} from {before.machine_type} in {before.location} "
                f"to {after.machine_type} in {after.location}"
            )
        if before.kept != after.kept:
            parts.append(f"resizes {name}: {before.kept} → {after.kept} kept machines")
        options = option_changes(before.settings, after.settings)
        if options:
            listed = ", ".join(f"{o.key} {o.before} → {o.after}" for o in options)
            kept = min(before.kept, after.kept)
            if any(o.replaces for o in options):
                replacing = ", ".join(o.key for o in options if o.replaces)
                how = f"replaces its {_kept(kept)} ({replacing})" if kept else "replaces machines"
            else:
                how = f"in place on its {_kept(kept)}" if kept else "in place"
            parts.append(
                f"changes {name}'s options: {listed}: {how}; the autoscaler's machines get them "
                "when next made"
            )
        if not parts:
            parts.append(f"changes {name}")
        text = "; ".join(parts)
        if self.deletes_kept:
            text += f" (deletes {_kept(self.deletes_kept)})"
        return text


class StackChanges(BaseModel):
    """A stack's change counted as reviewers weigh it: machines (the stack's by their names,
    the autoscaler's that the pools' reapers delete), then every other resource; the reapers
    themselves are no resource to count, their machines are."""

    model_config = ConfigDict(frozen=True)

    create: int = 0
    update: int = 0
    replace: int = 0
    delete_kept: int = 0
    delete_autoscaler: int | None = 0
    others: dict[str, int] = {}

    def text(self) -> str:
        """``machines: 1 to create, 10 to delete (3 kept, 7 autoscaler); other resources: 1 to
        update``."""
        theirs = self.delete_autoscaler
        deleted = self.delete_kept + (theirs or 0)
        parts = [f"{n} to {op}" for op, n in (("create", self.create), ("update", self.update),
                 ("replace", self.replace)) if n]  # fmt: skip
        if deleted or theirs is None:
            known = "" if theirs is not None else "at least "
            parts.append(
                f"{known}{deleted} to delete ({self.delete_kept} kept, "
                f"{'unknown' if theirs is None else theirs} autoscaler)"
            )
        machines = f"machines: {', '.join(parts) or 'none to create or delete'}"
        others = ", ".join(f"{n} to {op}" for op, n in self.others.items() if n)
        return f"{machines}; other resources: {others or 'no changes'}"


class StackPools(BaseModel):
    """The pools a stack's change touches, with the stack's monthly cost before and after."""

    model_config = ConfigDict(frozen=True)

    stack: str
    changes: StackChanges = StackChanges()
    pools: tuple[PoolChange, ...] = ()
    currency: str = ""
    cost_before: Decimal | None = None
    cost_after: Decimal | None = None
    notes: tuple[str, ...] = ()

    def cost_line(self) -> str:
        """``monthly cost: 12.34 EUR → 18.02 EUR (+5.68 EUR)``."""
        before, after = self.cost_before, self.cost_after
        if before is None and after is None:
            return money(None, self.currency)
        line = f"{money(before, self.currency)} → {money(after, self.currency)}"
        if before is not None and after is not None and before != after:
            line += (
                f" ({'+' if after > before else '-'}{money(abs(after - before), self.currency)})"
            )
        return line


def kept_ids(pool: Mapping[str, object]) -> set[str]:
    """The ids of the machines a ``pools`` output entry lists."""
    listed = pool.get("machines")
    if not isinstance(listed, list):
        return set()
    return {str(m.get("id")) for m in listed if isinstance(m, dict) and m.get("id")}


def is_kept(machine: Machine) -> bool:
    """A machine the stack keeps (``orca-managed-by=pulumi``), not the autoscaler's."""
    return bool(machine.managed_by)


def touched_pools(
    diff: Diff,
    before: Mapping[str, PoolSide],
    after: Mapping[str, PoolSide],
    owner: str,
) -> list[str]:
    """Pools whose kept side differs, or whose component or machines the diff changes."""
    names = set(before) | set(after)
    touched = {n for n in names if before.get(n) != after.get(n)}
    for change in diff.changes:
        if change.type == POOL_TYPE:
            touched.add(change.name)
        touched.update(n for n in names if is_machine_key(change.name, owner, n))
    return sorted(touched)


def pool_changes(
    diff: Diff,
    snapshot: StackSnapshot,
    *,
    project: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    prices: PriceList | None = None,
    catalogue: Catalogue = catalogue_env,
) -> StackPools:
    """The pools ``diff`` touches in its stack, counted against the cloud as ``snapshot``
    (the one the preview was counted against) found it: nothing is read again but the
    price list (``prices``, else the snapshot's provider's). ``catalogue``: the
    operation's, when it has one."""
    env = os.environ if environ is None else environ
    deployment = snapshot.deployment or deployment_of(diff.stack, project)
    before = before_sides(snapshot)
    after = after_sides(deployment)
    notes: list[str] = []
    if snapshot.refused is not None:
        notes.append(f"autoscaler machines unknown: {mask(str(snapshot.refused))}")
    settings = stack_environ(env, {**catalogue(deployment), **snapshot.exported})
    prices = prices or price_list(deployment.provider, settings, snapshot.provider)
    names = sorted(set(before) | set(after))
    listed = {name: snapshot.listed.get(name) for name in names}
    notes += [
        f"pool {name}: autoscaler machines unknown: {mask(str(snapshot.failures[name]))}"
        for name in names
        if name in snapshot.failures
    ]
    sides = Sides(before, after, {p.name: p.market for p in deployment.pools})
    changes = [
        pool_change(
            name,
            diff,
            owner=deployment.owner,
            sides=sides,
            machines=listed.get(name),
            prices=prices,
        )
        for name in touched_pools(diff, before, after, deployment.owner)
    ]
    lists = PlacePrices(deployment.provider, prices, settings, snapshot.provider)
    spans = {
        c.pool: _spanning_costs(
            c, sides, listed.get(c.pool), lists=lists, deployment=deployment, notes=notes
        )
        for c in diff.pools
        if c.places
    }
    changes = [_with_places(c, spans.get(c.pool)) for c in changes]
    notes += price_notes({k: v for k, v in after.items() if k not in spans}, prices)
    notes += [f"pool {p.pool}: new machines boot {p.boots}" for p in diff.pools if p.boots]
    notes += [line for name in names if (line := notices_line(name, listed.get(name)))]
    costs = {name: (s.before, s.after) for name, s in spans.items()}
    return StackPools(
        stack=diff.stack,
        changes=stack_changes(diff, deployment.owner, set(names), changes),
        pools=tuple(changes),
        currency=prices.currency,
        cost_before=_total(prices, before, listed, side="before", spanning=costs),
        cost_after=_total(prices, after, listed, side="after", spanning=costs),
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class SpanningCosts:
    """A pool that names its places around a change: each place priced by its own cloud,
    and the pool's monthly cost before and after in the stack's currency."""

    places: tuple[PlaceReport, ...]
    before: Decimal | None
    after: Decimal | None


def _spanning_costs(
    count: PoolCount,
    sides: Sides,
    machines: Sequence[Machine] | None,
    *,
    lists: PlacePrices,
    deployment: BaseDeployment,
    notes: list[str],
) -> SpanningCosts:
    """``count``'s places (``Diff.pools``) priced: before, what runs at each now; after,
    the stack's machines there once the change is applied and the autoscaler's that stay."""
    side = sides.after.get(count.pool) or sides.before.get(count.pool)
    settings = side.settings if side is not None else None
    if settings is None or machines is None:
        return SpanningCosts(count.places, None, None)
    live = [m for m in machines if m.status != Status.DELETING]
    now = by_place(settings.places, live)
    theirs = by_place(settings.places, autoscaled(live))
    priced, before, after = [], [], []
    for report in count.places:
        kind, place = report.place.cloud, report.place
        listed, currency = lists.of(kind), cloud(kind).currency
        staying = [] if count.reaped or count.pool not in sides.after else theirs.get(place, [])
        monthly = monthly_after(report, listed, settings, staying)
        priced.append(report.model_copy(update={"currency": currency, "monthly": monthly}))
        before.append((monthly_now(listed, settings.at(place), now.get(place, [])), currency))
        after.append((monthly, currency))
    rates, currency = deployment.exchange_rates, lists.home.currency
    cost_before, _ = in_currency(before, currency, rates)
    cost_after, why = in_currency(after, currency, rates)
    if why:
        notes.append(f"pool {count.pool}: {why}")
    return SpanningCosts(tuple(priced), cost_before, cost_after)


def _with_places(change: PoolChange, costs: SpanningCosts | None) -> PoolChange:
    """``change`` with its places and, for a pool that names them, their sums as its costs."""
    if costs is None:
        return change
    update = {"places": costs.places, "cost_before": costs.before, "cost_after": costs.after}
    return change.model_copy(update=update)


def before_sides(snapshot: StackSnapshot) -> dict[str, PoolSide]:
    """Each pool as the stack keeps it now (its ``pools`` output), with the settings it
    last exported."""
    exported_pools = snapshot.exported_pools
    return {
        name: PoolSide(
            machine_type=str(pool.get("machineType", "")),
            location=str(pool.get("location", "")),
            kept=len(kept_ids(pool)),
            market=Market(str(pool.get("market") or Market.ON_DEMAND)).kept,
            settings=exported_pools.get(name),
        )
        for name, pool in snapshot.kept.items()
    }


def after_sides(deployment: BaseDeployment) -> dict[str, PoolSide]:
    """Each pool as the stack file asks for it."""
    return {
        p.name: PoolSide(
            machine_type=p.machine_type,
            location=p.location,
            kept=p.size,
            market=p.market.kept,
            settings=deployment.runtime_pool(p),
        )
        for p in deployment.pools
    }


@dataclass(frozen=True)
class Sides:
    """The pools before and after the change, and the market each buys after it."""

    before: Mapping[str, PoolSide]
    after: Mapping[str, PoolSide]
    markets: Mapping[str, Market]


def pool_change(
    name: str,
    diff: Diff,
    *,
    owner: str,
    sides: Sides,
    machines: list[Machine] | None,
    prices: PriceList,
) -> PoolChange:
    """One pool the change touches: its sides, the machines it deletes, what it costs."""
    before, after = sides.before.get(name), sides.after.get(name)
    stays = name in sides.after
    theirs = None if machines is None else autoscaled(machines)
    count = next((c for c in diff.pools if c.pool == name), None)
    their_deletes: int | None
    if count is not None:
        kept_deletes, their_deletes = count.deletes - len(count.reaped), len(count.reaped)
    else:
        kept_deletes = _deleted_kept(diff, owner, name, sides.before, sides.after)
        their_deletes = None if theirs is None else (0 if stays else len(theirs))
    market = sides.markets.get(name, Market.ON_DEMAND)
    return PoolChange(
        pool=name,
        before=before,
        after=after,
        autoscaler=count.autoscaled if count is not None else _len(theirs),
        deletes_kept=kept_deletes,
        deletes_autoscaler=their_deletes,
        cost_before=_cost(prices, before, theirs, keep=True),
        cost_after=_cost(prices, after, theirs, keep=stays),
        market=market,
        on_demand_after=None
        if market == Market.ON_DEMAND
        else _cost(prices, after, theirs, keep=stays, market=Market.ON_DEMAND),
    )


def price_notes(after: Mapping[str, PoolSide], prices: PriceList) -> list[str]:
    """What the prices leave out (options unpriced) and what no primary IPv4 saves."""
    notes = []
    for name, side in sorted(after.items()):
        unknown = unpriced(name, prices, side.settings, side.location)
        if unknown:
            notes.append(unknown)
        saving = (
            Decimal(0) if side.settings is None else prices.saving(side.settings, side.location)
        )
        if saving and side.kept:
            notes.append(
                f"pool {name}: no primary IPv4 saves {money(saving, prices.currency)} a month "
                f"per machine ({money(saving * side.kept, prices.currency)} for its "
                f"{_kept(side.kept)})"
            )
    if prices.unknown:
        notes.append(prices.unknown)
    return notes


def stack_changes(
    diff: Diff, owner: str, pools: set[str], touched: Sequence[PoolChange]
) -> StackChanges:
    """``diff`` counted in machines (``<owner>-<pool>-<n>``, and the pool lines' deletes)
    and in the other resources it changes, reapers left out."""
    machines = [c for c in diff.changes if any(is_machine_key(c.name, owner, p) for p in pools)]
    others = [c for c in diff.changes if c not in machines and c.type != REAPER_TYPE]
    theirs = [p.deletes_autoscaler for p in touched]
    kept_deletes = sum(p.deletes_kept for p in touched)
    return StackChanges(
        create=_counted(machines, "create"),
        update=_counted(machines, "update"),
        replace=_counted(machines, "replace"),
        delete_kept=max(kept_deletes, _counted(machines, "delete")),
        delete_autoscaler=_sum_known(theirs),
        others={op: _counted(others, op) for op in OPS},
    )


def _counted(changes: Sequence[Change], op: str) -> int:
    return sum(1 for c in changes if c.op == op)


def _sum_known(counts: Sequence[int | None]) -> int | None:
    """The sum, or None when one count is unknown."""
    return None if None in counts else sum(c or 0 for c in counts)


def _deleted_kept(
    diff: Diff, owner: str, pool: str, before: Mapping[str, PoolSide], after: Mapping[str, PoolSide]
) -> int:
    deleted = sum(
        1 for c in diff.changes if c.op == "delete" and is_machine_key(c.name, owner, pool)
    )
    if deleted:
        return deleted
    was, now = before.get(pool), after.get(pool)
    if was is None:
        return 0
    return was.kept if now is None else max(was.kept - now.kept, 0)


def _cost(
    prices: PriceList,
    side: PoolSide | None,
    autoscaler: Sequence[Machine] | None,
    *,
    keep: bool,
    market: Market | None = None,
) -> Decimal | None:
    """Kept machines at the side's type, location and market, plus the autoscaler's at
    theirs when they stay; every one at ``market`` when given."""
    total = Decimal(0)
    settings = side.settings if side is not None else None
    if side is not None and side.kept:
        one = prices.monthly(side.machine_type, side.location, market or side.market)
        if one is None:
            return None
        total += (one + _options(prices, settings, side.location)) * side.kept
    if keep:
        if autoscaler is None:
            return None
        theirs = prices.total((m.machine_type, m.location, market or m.market) for m in autoscaler)
        if theirs is None:
            return None
        theirs += sum((_options(prices, settings, m.location) for m in autoscaler), Decimal(0))
        total += theirs
    return total


def _options(prices: PriceList, settings: Pool | None, location: str) -> Decimal:
    """What a pool's options cost on one machine; an unknown price is left out (the pool's
    notes say so, ``unpriced``)."""
    if settings is None:
        return Decimal(0)
    return prices.options(settings, location) or Decimal(0)


def unpriced(name: str, prices: PriceList, settings: Pool | None, location: str) -> str:
    """The note of a pool whose options' price is unknown: left out of its figures."""
    if settings is None or prices.options(settings, location) is not None:
        return ""
    return f"pool {name}: what its options cost is unknown and left out of its price"


def _total(
    prices: PriceList,
    sides: Mapping[str, PoolSide],
    listed: Mapping[str, list[Machine] | None],
    *,
    side: str,
    spanning: Mapping[str, tuple[Decimal | None, Decimal | None]],
) -> Decimal | None:
    """The stack's monthly cost on one side: every pool's, those that name their places
    at their places' sums (``spanning``: before and after)."""
    total = Decimal(0)
    names: Iterable[str] = sorted(set(sides) | (set(listed) if side == "before" else set()))
    for name in names:
        machines = listed.get(name)
        theirs = None if machines is None else autoscaled(machines)
        if name in spanning:
            cost = spanning[name][0 if side == "before" else 1]
        else:
            cost = _cost(prices, sides.get(name), theirs, keep=name in sides)
        if cost is None:
            return None
        total += cost
    return total


def _len(machines: Sequence[Machine] | None) -> int | None:
    return None if machines is None else len(machines)


def _kept(n: int) -> str:
    return f"{n} kept machine{'' if n == 1 else 's'}"


def _autoscaler(n: int | None) -> str:
    if n is None:
        return "an unknown number of autoscaler machines"
    return f"{n} autoscaler machine{'' if n == 1 else 's'}"
