"""A pool that names its places, place by place: what the preview, the CI comment and
``status`` show of each.

Every report of such a pool says per place what the stack keeps there (and after a change),
what the autoscaler made there, what a change deletes there, and its money in its cloud's
own currency; the pool's total is in the stack's currency (its home cloud's), through the
stack's ``exchangeRates``, or unknown, saying so, where a rate is missing. A machine is at the
place of its cloud, location and type (``machines.program.placement.kept_at``, as the program
places it); one at a place the pool names no more has a row of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from machines.automation.cost import price_list
from machines.automation.notices import notices, notices_text
from machines.program.placement import Placement, kept_at
from machines.runtime.errors import MachinesError
from machines.runtime.models import Machine, Status
from machines.runtime.pool import Place, Pool
from machines.runtime.prices import PriceList, money
from machines.runtime.provider import Provider


class PlaceReport(BaseModel):
    """One place of a pool in a report. Counts are None where the clouds could not be
    listed; ``kept_after`` is the stack's machines there once a change is applied (None in
    ``status``); ``monthly`` is what runs there a month (after the change, in a preview), in
    ``currency``, the place's cloud's."""

    model_config = ConfigDict(frozen=True)

    place: Place
    named: bool = True
    """False for a place the pool names no more, where machines of it still are."""
    kept: int | None
    autoscaler: int | None
    kept_after: int | None = None
    deletes: int = 0
    in_stock: bool | None = None
    currency: str = ""
    monthly: Decimal | None = None
    committed: Decimal | None = None
    notices: dict[str, int] = {}
    """The place's machines under the cloud's notice, by kind (``automation.notices``)."""

    def counts(self) -> str:
        """``0 → 1 kept by the stack, 2 made by the autoscaler, 0 to delete``."""
        if self.kept is None:
            return "machines unknown"
        kept = str(self.kept)
        if self.kept_after is not None and self.kept_after != self.kept:
            kept += f" → {self.kept_after}"
        text = f"{kept} kept by the stack, {self.autoscaler} made by the autoscaler"
        if self.kept_after is not None:
            text += f", {self.deletes} to delete"
        if self.notices:
            text += f"; under the cloud's notice: {notices_text(self.notices)}"
        return text

    def text(self) -> str:
        """The place and its counts (and its money, once priced): a line under its pool's."""
        where = str(self.place) + ("" if self.named else " (a place the pool names no more)")
        cost = f", {money(self.monthly, self.currency)} a month" if self.currency else ""
        return f"at {where}: {self.counts()}{cost}"


def by_place(places: Sequence[Place], machines: Iterable[Machine]) -> dict[Place, list[Machine]]:
    """``machines`` at their places: the pool's places in its order (each, even empty), then
    the places it names no more that machines are still at."""
    found: dict[Place, list[Machine]] = {p: [] for p in places}
    for machine in machines:
        found.setdefault(kept_at(tuple(places), machine), []).append(machine)
    return found


def place_counts(
    pool: Pool,
    machines: Sequence[Machine] | None,
    *,
    after: Placement | None = None,
    reaped: bool = False,
) -> tuple[PlaceReport, ...]:
    """Each place's machines now (those being deleted left out) and, given ``after`` (where
    the stack's machines are once the change is applied), what the change keeps and
    deletes there; ``reaped``: the change deletes the autoscaler's machines (the pool's
    reaper goes)."""
    if machines is None:
        return tuple(PlaceReport(place=p, kept=None, autoscaler=None) for p in pool.places)
    live = [m for m in machines if m.status != Status.DELETING]
    kept_after = None if after is None else Counter(after.places)
    reports = []
    for place, there in by_place(pool.places, live).items():
        kept = sum(1 for m in there if m.managed_by)
        theirs = len(there) - kept
        stays = None if kept_after is None else kept_after.get(place, 0)
        deletes = (0 if stays is None else max(kept - stays, 0)) + (theirs if reaped else 0)
        reports.append(
            PlaceReport(
                place=place,
                named=place in pool.places,
                kept=kept,
                autoscaler=theirs,
                kept_after=stays,
                deletes=deletes,
                notices=notices(there),
            )
        )
    return tuple(reports)


def monthly_after(
    report: PlaceReport, prices: PriceList, pool: Pool, theirs: Sequence[Machine]
) -> Decimal | None:
    """What runs at the place a month once the change is applied: the stack's machines
    there at the place's price, the autoscaler's ``theirs`` (those that stay) at their own,
    each with what the pool's options cost there; None when a price is unknown."""
    place = report.place
    kept = report.kept_after if report.kept_after is not None else report.kept or 0
    at = pool.at(place)
    options = prices.options(at, place.location) or Decimal(0)
    one = prices.monthly(place.machine_type, place.location, place.market.kept) if kept else 0
    listed = prices.total((m.machine_type, m.location, m.market) for m in theirs)
    if one is None or listed is None:
        return None
    return (Decimal(one) + options) * kept + listed + options * len(theirs)


def monthly_now(prices: PriceList, pool: Pool, billed: Sequence[Machine]) -> Decimal | None:
    """What the machines ``billed`` at one place cost a month now, options included."""
    listed = prices.total((m.machine_type, m.location, m.market) for m in billed)
    if listed is None:
        return None
    return listed + sum(
        (prices.options(pool, m.location) or Decimal(0) for m in billed), Decimal(0)
    )


def in_currency(
    amounts: Iterable[tuple[Decimal | None, str]], currency: str, rates: Mapping[str, Decimal]
) -> tuple[Decimal | None, str]:
    """The sum of ``amounts`` (each in its currency) in ``currency``, through ``rates``
    (what one unit of each is worth in a common unit); None and why when an amount is
    unknown or a currency has no rate."""
    total = Decimal(0)
    for amount, of in amounts:
        if amount is None:
            return None, ""
        if of == currency or not amount:
            total += amount
            continue
        if of not in rates or currency not in rates:
            missing = ", ".join(c for c in (of, currency) if c not in rates)
            return None, (
                f"its places bill in {of} and {currency}, and exchangeRates has no rate for "
                f"{missing}: name them in the stack file to total it in {currency}"
            )
        total += amount * rates[of] / rates[currency]
    return total, ""


class PlacePrices:
    """Each cloud's price list for one report, read once per cloud when first asked: the
    home cloud's is the report's own (``home``)."""

    def __init__(
        self,
        kind: str,
        home: PriceList,
        settings: Mapping[str, str],
        provider: Provider | None,
    ) -> None:
        self.home = home
        self._settings = settings
        self._provider = provider
        self._lists = {kind: home}

    def of(self, kind: str) -> PriceList:
        """Cloud ``kind``'s price list (its provider's, as the report's provider holds it)."""
        if kind not in self._lists:
            self._lists[kind] = price_list(kind, self._settings, on(self._provider, kind))
        return self._lists[kind]


def on(provider: Provider | None, kind: str) -> Provider | None:
    """Cloud ``kind``'s provider of a report's ``provider``, None without one."""
    if provider is None:
        return None
    try:
        return provider.on(kind)
    except MachinesError:
        return None


def in_stock(provider: Provider | None, place: Place, pool: str) -> bool | None:
    """Whether ``place``'s cloud offers its type there now (``offers``: Hetzner's catalogue
    stock, EC2's offerings less its no-stock memory); None when it cannot say."""
    if provider is None:
        return None
    try:
        return place.location in provider.offers(place.machine_type, pool)
    except MachinesError:
        return None
