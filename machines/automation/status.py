"""An operator's view of a stack's pools: what runs, where the type is in stock, the cost.

Per pool: type, location, architecture, the stack's kept machines and the autoscaler's
by status, ``max`` (when the stack sets one), its market, its machines under the cloud's
notice by kind (``automation.notices``: EC2's interruption warnings, rebalance
recommendations, scheduled changes), the locations with stock of its
type now, the money already committed to its machines (what the cloud bills for each
until its ``paid_until``, by the cloud's billing rule: ``Provider.committed``), and the
monthly cost of what runs now, machines being deleted left out (the cloud's prices,
``cost``): each machine at its own market's price (a spot machine at the
current spot price of its type and zone), and, for a pool that buys spot, beside it what
the same machines would cost on-demand. Kept machines are those labelled
``orca-managed-by=pulumi``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from machines.automation.availability import Stock, stock
from machines.automation.checks import Catalogue, catalogue_env
from machines.automation.cost import PriceList, money, price_list
from machines.automation.notices import notices, notices_text
from machines.automation.operation import Operation
from machines.automation.places import (
    PlacePrices,
    PlaceReport,
    by_place,
    in_currency,
    in_stock,
    monthly_now,
    on,
    place_counts,
)
from machines.automation.pool_report import is_kept, unpriced
from machines.automation.snapshot import StackSnapshot
from machines.automation.stacks import last_operation
from machines.program.config.models import BaseDeployment, PoolConfig
from machines.runtime.clouds import cloud, stack_environ
from machines.runtime.errors import MachinesError
from machines.runtime.models import Machine, Market, Status
from machines.runtime.pool import Pool
from machines.runtime.provider import Provider
from machines.runtime.secrets import mask


class PoolStatus(BaseModel):
    """One pool now; machine counts are per status, None when the cloud could not be listed."""

    model_config = ConfigDict(frozen=True)

    pool: str
    machine_type: str
    location: str
    arch: str
    size: int
    max: int | None
    kept: dict[str, int] | None
    autoscaler: dict[str, int] | None
    stock: Stock
    monthly: Decimal | None
    market: Market = Market.ON_DEMAND
    on_demand_monthly: Decimal | None = None
    """For a pool that buys spot: the same machines at on-demand prices."""
    committed: Decimal | None = None
    """The money the cloud bills for the pool's machines whatever happens now."""
    places: tuple[PlaceReport, ...] = ()
    """For a pool that names its places: each place's machines and money, in its cloud's
    currency (the pool's own figures are their sum in the stack's)."""
    notices: dict[str, int] = {}
    """The pool's machines under the cloud's notice, by kind (``automation.notices``)."""

    def money(self, currency: str) -> str:
        """The monthly cost, with the on-demand one beside it for a pool that buys spot."""
        text = money(self.monthly, currency)
        if self.market == Market.ON_DEMAND or self.places:  # a place's market is on its row
            return text
        return f"{text} (on-demand {money(self.on_demand_monthly, currency)})"


class StackStatus(BaseModel):
    """Every pool of a stack now, with the currency of its prices and what could not be read."""

    model_config = ConfigDict(frozen=True)

    stack: str
    provider: str
    owner: str
    currency: str
    pools: tuple[PoolStatus, ...]
    notes: tuple[str, ...] = ()
    destroyed: bool = False
    """The stack's last operation was a destroy: it keeps nothing, whatever its file's
    sizes say, until its next ``up``."""

    @property
    def unread(self) -> tuple[str, ...]:
        """What could not be read of the cloud (its machines), empty when everything was."""
        if all(p.kept is not None for p in self.pools):
            return ()
        marker = "machines unknown: "
        found = [n.split(marker, 1)[1] for n in self.notes if marker in n]
        return tuple(dict.fromkeys(found)) or ("the cloud did not say why",)

    @property
    def monthly(self) -> Decimal | None:
        total = Decimal(0)
        for pool in self.pools:
            if pool.monthly is None:
                return None
            total += pool.monthly
        return total

    def table(self) -> str:
        """The pools as an aligned text table, then the stack's total and any notes."""
        rows = [list(HEADER)]
        for p in self.pools:
            rows.append(_pool_row(p, self.currency))
            rows += [_place_row(place) for place in p.places]
        # no column that says nothing: markets of a stack of on-demand pools only, notices
        # while no machine is under one
        markets = any(p.market != Market.ON_DEMAND for p in self.pools)
        noticed = any(p.notices or any(pl.notices for pl in p.places) for p in self.pools)
        unsaid = {HEADER.index(c) for c, said in (("MARKET", markets), ("NOTICE", noticed))
                  if not said}  # fmt: skip
        rows = [[c for i, c in enumerate(r) if i not in unsaid] for r in rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        said = f"stack {self.stack} ({self.provider}, owner {self.owner}): "
        if self.destroyed:
            said += (
                "destroyed: it keeps no machines (SIZE is its file's, made again by "
                f"orca-machines up {self.stack}); "
            )
        lines.append(
            f"{said}{money(self.monthly, self.currency)} a month, autoscaler machines at their "
            "current number"
        )
        return "\n".join([*lines, *self.notes])

    def report(self) -> dict[str, object]:
        """JSON-ready: the pools, money as strings (exact), and the stack's total."""
        data = self.model_dump(mode="json")
        data["monthly"] = None if self.monthly is None else str(self.monthly)
        data["unread"] = list(self.unread)
        return data


HEADER = (
    "POOL", "TYPE", "LOCATION", "ARCH", "SIZE", "MAX", "MARKET",
    "KEPT", "AUTOSCALER", "NOTICE", "IN STOCK", "COMMITTED", "MONTHLY",
)  # fmt: skip
"""The status table's columns (MARKET and NOTICE shown only where they say something)."""


def _pool_row(p: PoolStatus, currency: str) -> list[str]:
    """A pool's row: a pool that names its places says so, its places' rows below it."""
    return [
        p.pool,
        "-" if p.places else p.machine_type,
        f"{len(p.places)} places" if p.places else p.location,
        p.arch,
        str(p.size),
        "-" if p.max is None else str(p.max),
        p.market.value,
        _counts(p.kept),
        _counts(p.autoscaler),
        notices_text(p.notices) or "-",
        "(by place)" if p.places else p.stock.text(),
        money(p.committed, currency),
        p.money(currency),
    ]


def _place_row(place: PlaceReport) -> list[str]:
    """A row under its pool's: one place, its machines, its stock and its money in its
    cloud's currency."""
    stock = {True: "yes", False: "no", None: "unknown"}[place.in_stock]
    where = place.place
    return [
        f"  {where.cloud}" + ("" if place.named else " (no more named)"),
        where.machine_type,
        where.location,
        "",
        "",
        "",
        where.market.value,
        "unknown" if place.kept is None else str(place.kept),
        "unknown" if place.autoscaler is None else str(place.autoscaler),
        notices_text(place.notices) or "-",
        stock,
        money(place.committed, place.currency),
        money(place.monthly, place.currency),
    ]


def status(
    stack: str,
    *,
    project: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    prices: PriceList | None = None,
) -> StackStatus:
    """Each pool of the stack (its file and what it keeps now) against the cloud now."""
    op = Operation(stack, project, environ=environ)
    deployment = op.deployment()
    snapshot = op.snapshot(deployment)
    destroyed = not snapshot.outputs and last_operation(op) == "destroy"
    return stack_status(
        snapshot, deployment, op.environ, prices, destroyed=destroyed, catalogue=op.catalogue
    )


def stack_status(
    snapshot: StackSnapshot,
    deployment: BaseDeployment,
    environ: Mapping[str, str],
    prices: PriceList | None = None,
    *,
    destroyed: bool = False,
    catalogue: Catalogue = catalogue_env,
) -> StackStatus:
    """The status of the stack as ``snapshot`` found it: nothing is read again but the
    price list and the stock of each pool's type (the snapshot's provider's);
    ``catalogue``: the operation's, when it has one."""
    settings = stack_environ(environ, {**catalogue(deployment), **snapshot.exported})
    notes: list[str] = []
    if snapshot.refused is not None:
        notes.append(f"machines unknown: {mask(str(snapshot.refused))}")
    prices = prices or price_list(deployment.provider, settings, snapshot.provider)
    lists = PlacePrices(deployment.provider, prices, settings, snapshot.provider)
    configured = {p.name: p for p in deployment.pools}
    names = [*configured, *sorted(set(snapshot.kept) - set(configured))]
    pools = []
    for name in names:
        pool = configured.get(name)
        if name in snapshot.failures:
            notes.append(f"pool {name}: machines unknown: {mask(str(snapshot.failures[name]))}")
        pools.append(
            pool_status(
                name,
                pool,
                snapshot=snapshot,
                deployment=deployment,
                settings=settings,
                prices=lists,
                notes=notes,
            )
        )
    if prices.unknown:
        notes.append(prices.unknown)
    return StackStatus(
        stack=snapshot.stack,
        provider=deployment.provider,
        owner=deployment.owner,
        currency=prices.currency,
        pools=tuple(pools),
        notes=tuple(notes),
        destroyed=destroyed,
    )


def pool_status(
    name: str,
    pool: PoolConfig | None,
    *,
    snapshot: StackSnapshot,
    deployment: BaseDeployment,
    settings: Mapping[str, str],
    prices: PlacePrices,
    notes: list[str],
) -> PoolStatus:
    """One pool now (its file's ``pool``, None for one only the state keeps); what could
    not be priced goes to ``notes``. A pool that names its places is shown place by place
    (``spanning_status``)."""
    own = deployment.runtime_pool(pool) if pool is not None else None
    placed = own if own is not None else snapshot.exported_pools.get(name)
    if placed is not None and placed.places:
        return spanning_status(
            placed,
            pool.size if pool else 0,
            snapshot=snapshot,
            deployment=deployment,
            prices=prices,
            notes=notes,
        )
    home = prices.home
    kept = snapshot.kept.get(name, {})
    machine_type = pool.machine_type if pool else str(kept.get("machineType", ""))
    location = pool.location if pool else str(kept.get("location", ""))
    machines = snapshot.listed.get(name)
    billed = [] if machines is None else [m for m in machines if m.status != Status.DELETING]
    market = pool.market if pool else Market.ON_DEMAND
    settings_of = own if own is not None else Pool(name=name)
    notes += pool_notes(name, home, settings_of, location, len(billed))
    extra = _options_cost(home, settings_of, billed)
    provider = snapshot.provider
    return PoolStatus(
        pool=name,
        machine_type=machine_type,
        location=location,
        arch=_arch(provider, machine_type, kept),
        size=pool.size if pool else 0,
        max=_max(pool),
        kept=_by_status(_kept_side(machines, mine=True)),
        autoscaler=_by_status(_kept_side(machines, mine=False)),
        stock=stock(deployment.provider, machine_type, provider, settings),
        monthly=_monthly(home, machines, billed, extra, None),
        market=market,
        on_demand_monthly=None
        if market == Market.ON_DEMAND
        else _monthly(home, machines, billed, extra, Market.ON_DEMAND),
        committed=_committed(provider, machines, home),
        notices=notices(machines),
    )


def spanning_status(
    pool: Pool,
    size: int,
    *,
    snapshot: StackSnapshot,
    deployment: BaseDeployment,
    prices: PlacePrices,
    notes: list[str],
) -> PoolStatus:
    """A pool that names its places now (its runtime settings: the file's, or for a pool
    only the state keeps, those it last exported), keeping ``size``: each place's machines,
    stock and money in its cloud's currency, and the pool's sums in the stack's
    (``machines.automation.places``)."""
    machines = snapshot.listed.get(pool.name)
    places = _places_now(pool, machines, snapshot.provider, prices, notes)
    rates, currency = deployment.exchange_rates, prices.home.currency
    monthly, why = in_currency(((p.monthly, p.currency) for p in places), currency, rates)
    committed, _ = in_currency(((p.committed, p.currency) for p in places), currency, rates)
    if why:
        notes.append(f"pool {pool.name}: {why}")
    return PoolStatus(
        pool=pool.name,
        machine_type=pool.machine_type,
        location=pool.location,
        arch=_arch(snapshot.provider, pool.machine_type, snapshot.kept.get(pool.name, {})),
        size=size,
        max=pool.max,
        kept=_by_status(_kept_side(machines, mine=True)),
        autoscaler=_by_status(_kept_side(machines, mine=False)),
        stock=Stock(locations=tuple(sorted({p.place.location for p in places if p.in_stock}))),
        monthly=monthly,
        market=pool.market,
        committed=committed,
        places=places,
        notices=notices(machines),
    )


def _places_now(
    pool: Pool,
    machines: list[Machine] | None,
    provider: Provider | None,
    prices: PlacePrices,
    notes: list[str],
) -> tuple[PlaceReport, ...]:
    """Each place of ``pool`` now, with its stock and money by its own cloud."""
    billed_by = by_place(pool.places, [m for m in machines or [] if m.status != Status.DELETING])
    found = []
    for report in place_counts(pool, machines):
        place, kind = report.place, report.place.cloud
        listed, cloud_provider = prices.of(kind), on(provider, kind)
        billed, at = billed_by.get(place, []), pool.at(place)
        if machines is not None and billed:
            notes += pool_notes(pool.name, listed, at, place.location, len(billed))
        found.append(
            report.model_copy(
                update={
                    "currency": cloud(kind).currency,
                    "in_stock": in_stock(cloud_provider, place, pool.name),
                    "monthly": None if machines is None else monthly_now(listed, at, billed),
                    "committed": None
                    if machines is None
                    else _committed(cloud_provider, billed, listed),
                }
            )
        )
    return tuple(found)


def pool_notes(name: str, prices: PriceList, pool: Pool, location: str, billed: int) -> list[str]:
    """What the pool's price leaves out, and what no primary IPv4 would save."""
    notes = []
    unknown = unpriced(name, prices, pool, location)
    if unknown:
        notes.append(unknown)
    saving = prices.saving(pool, location)
    if saving:
        notes.append(
            f"pool {name}: no primary IPv4 saves {money(saving, prices.currency)} a month "
            f"per machine ({money(saving * billed, prices.currency)} for the "
            f"{billed} billed now)"
        )
    return notes


def _kept_side(machines: list[Machine] | None, *, mine: bool) -> list[Machine] | None:
    """The stack's machines (``mine``) or the autoscaler's; None when not listed."""
    return None if machines is None else [m for m in machines if is_kept(m) == mine]


def _monthly(
    prices: PriceList,
    machines: list[Machine] | None,
    billed: list[Machine],
    extra: Decimal,
    market: Market | None,
) -> Decimal | None:
    """The billed machines' monthly cost, each at its own market's price (or ``market``'s)."""
    if machines is None:
        return None
    return _plus(
        prices.total((m.machine_type, m.location, market or m.market) for m in billed), extra
    )


def _committed(
    provider: Provider | None, machines: list[Machine] | None, prices: PriceList
) -> Decimal | None:
    if provider is None or machines is None:
        return None
    return provider.committed(machines, prices=prices)


def _options_cost(prices: PriceList, pool: Pool, billed: list[Machine]) -> Decimal:
    """What the pool's options cost a month on its billed machines; an unknown price is left
    out, and the pool's notes say so (``pool_report.unpriced``)."""
    return sum((prices.options(pool, m.location) or Decimal(0) for m in billed), Decimal(0))


def _plus(a: Decimal | None, b: Decimal | None) -> Decimal | None:
    return None if a is None or b is None else a + b


def _arch(provider: Provider | None, machine_type: str, kept: Mapping[str, object]) -> str:
    if provider is not None:
        try:
            return provider.arch(machine_type)
        except MachinesError:
            pass
    return str(kept.get("arch") or "unknown")


def _max(pool: object) -> int | None:
    value = getattr(pool, "max", None)
    return value if isinstance(value, int) else None


def _by_status(machines: list[Machine] | None) -> dict[str, int] | None:
    if machines is None:
        return None
    return dict(sorted(Counter(str(getattr(m, "status", "unknown")) for m in machines).items()))


def _counts(counts: Mapping[str, int] | None) -> str:
    if counts is None:
        return "unknown"
    return ",".join(f"{n} {s}" for s, n in counts.items()) or "0"
