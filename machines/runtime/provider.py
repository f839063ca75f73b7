"""The provider interface: the few calls the autoscaler makes, the same on every cloud.

Like the cluster-autoscaler's cloud provider, it is small on purpose, with one module per
cloud behind it. ``Provider.of`` imports a cloud's module only when that cloud is asked
for, so ``import machines`` never loads boto3, Pulumi or OpenTelemetry.

``Provider`` owns the shape of ``create``, ``machines`` and ``delete`` (a pool's ``max``,
one create per name at a time, the shared listing and this provider's writes laid over it,
whose machine a delete may touch, telemetry); a cloud implements the steps only it knows:
``_create`` (the request), ``_list`` (its pool machines, all pages), ``_look_up`` and
``_remove`` (one machine by id), ``_machine_id`` (its form of id).

When the settings name pools that span places (``Pool.places``: more than one, or on
another cloud), ``Provider.of`` returns a ``machines.runtime.span`` provider instead, which
holds one provider of this kind per cloud the pools name and makes each machine at the
first of its pool's places with stock. That choice is ``machines.runtime.factory``'s: it
builds this class's subclasses, so it stands above this module, which never imports it
(``install`` puts it behind ``Provider.of``); telemetry, below, is imported by name at the
first call.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import math
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar, TypeVar

from machines.runtime.backoff import backoff
from machines.runtime.billing import Billing, Rate, Rates, as_utc, utc
from machines.runtime.budget import Budget, BudgetMeter
from machines.runtime.clock import Clock
from machines.runtime.clouds import cloud
from machines.runtime.errors import (
    AccountFullError,
    CloudError,
    FenceError,
    ForeignMachineError,
    LostCreateError,
    MachinesError,
    StackMachineError,
    UnknownProviderError,
)
from machines.runtime.fence.fence import Admitted, Fence
from machines.runtime.fence.fence import Full as FenceFull
from machines.runtime.fence.held import Entry
from machines.runtime.labels import (
    MANAGED_BY_LABEL,
    MANAGED_BY_PULUMI,
    POOL_LABEL,
    belongs_to,
    check_owner,
    check_pool,
    keeping_stack,
    managed_by,
    not_ours,
    whose,
)
from machines.runtime.listing import Listing
from machines.runtime.models import Created, Machine, MachineSpec, Market, Status, mismatch
from machines.runtime.paid import DEFAULT_MARGIN, Advice, advise, committed
from machines.runtime.pool import Pool
from machines.runtime.prices import NoPrices, PriceList
from machines.runtime.settings import ORCA_NO_STOCK_TTL, Freshness
from machines.runtime.shortages import Full, FullAccount, StockMemory

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


def _traced(call: str) -> Callable[[F], F]:
    """``machines.runtime.telemetry.traced_<call>`` around the method, built at its first call:
    OpenTelemetry loads with the first provider's call, never with ``import machines``
    (imported by name, as the factory imports a cloud's provider)."""

    def decorate(method: F) -> F:
        traced: list[Callable[..., Any]] = []
        signature = inspect.signature(method)

        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not traced:
                telemetry = importlib.import_module("machines.runtime.telemetry")
                traced.append(getattr(telemetry, f"traced_{call}")(method))
            # The document's parameter names work as keywords (``delete(id=...)``).
            return traced[0](*signature.bind(*args, **kwargs).args)

        return wrapper  # type: ignore[return-value]

    return decorate


@dataclass(frozen=True)
class Found:
    """One machine as the cloud answers it by id: the machine and all its labels (tags)."""

    machine: Machine
    labels: Mapping[str, str]


@dataclass
class Slot:
    """A create's place under its pool's max: ``refused`` when there is none, else held,
    and ``ended`` with the create's answer (a fence entry of a create that made nothing is
    released at once; one that may have made its machine holds until its hold ends)."""

    refused: Created | None = None
    release: Callable[[], None] | None = None

    def ended(self, created: Created) -> None:
        if self.release is not None and not created.ok and not created.may_exist:
            try:
                self.release()
            except FenceError as error:
                log.warning("%s: its slot ends at the fence's hold", error)


Factory = Callable[[str, str, "Mapping[str, str] | None"], "Provider"]
"""What ``Provider.of`` calls: (kind, owner, environ) to the provider."""

_factory: Factory | None = None


def install(factory: Factory) -> None:
    """Make ``factory`` what ``Provider.of`` calls. The ``machines.runtime`` package installs
    ``machines.runtime.factory.of`` as it loads, before any of its modules can be used: the
    factory builds this module's subclasses (each cloud's provider, the spanning one), so it
    stands above this module, which never imports it."""
    global _factory  # noqa: PLW0603 (set once, by the package that composes the runtime)
    _factory = factory


class Provider(ABC):
    """One cloud account's machines for one owner (a deployment, i.e. a Pulumi stack).

    Subclasses set ``kind``, ``cloud`` and ``noun``, build themselves from settings in
    ``from_env``, and implement the cloud's steps (the abstract ``_`` methods); ``create``,
    ``machines`` and ``delete`` are written once, here.
    """

    kind: ClassVar[str]
    cloud: ClassVar[str]
    markets: ClassVar[frozenset[Market]] = frozenset({Market.ON_DEMAND})
    """The markets the cloud sells (``clouds.<kind>.settings.MARKETS``)."""
    offers_stock: ClassVar[bool] = True
    """Whether ``offers`` knows the cloud's stock now (Hetzner's ``available``), or only
    where a type is offered at all (EC2 publishes no stock)."""
    noun: ClassVar[str] = "machine"
    """What the cloud calls a machine, in messages (``server``, ``instance``)."""
    label_word: ClassVar[str] = "label"
    """What the cloud calls a label, in messages (``tag`` on EC2)."""
    budget_note: ClassVar[str] = ""
    """Why the cloud states no request budget, if it states none (``Budget.note``)."""
    billing: ClassVar[Billing | None] = None
    """How the cloud bills a machine's time (``clouds.<kind>.billing``); None: unknown."""
    watched: ClassVar[bool] = True
    """Whether the gauges report this provider's budget, listing and stock memory (a
    spanning provider's are its clouds' providers', each reported by itself)."""

    def __init__(
        self, owner: str, image: str, freshness: Freshness, clock: Clock = time.time
    ) -> None:
        """``freshness`` and ``clock`` time the listing and the budget (tests pass a clock)."""
        self.owner = check_owner(owner)
        self.stack = ""
        """The name of the stack that made the deployment (``ORCA_STACK``, which
        ``Provider.of`` reads), for messages about what it keeps; empty when unknown."""
        self.image = image
        self.ssh_keys: tuple[str, ...] = ()
        """The SSH keys every machine gets, by name (the design document's ``ssh_keys``)."""
        self.firewall = ""
        """The firewall every machine is put behind, by name or id; empty for none."""
        self._pools: Mapping[str, Pool] = {}
        self._freshness = freshness
        self._clock = clock
        self._meter = BudgetMeter(freshness, clock, note=self.budget_note)
        self._stock = StockMemory(freshness.no_stock_ttl, clock)
        """The cloud's ``no_stock`` answers, remembered per type, location and market."""
        self._account = FullAccount(freshness.no_stock_ttl, clock)
        """The cloud's answers that the account is at its limit, remembered per market."""
        self._pages = 1
        """Requests one listing of the owner took last (``_list`` sets it)."""
        self._prices: tuple[PriceList, float] | None = None
        """The cloud's price list as this provider keeps it, and when it was read on its
        clock (``kept_prices``): the one list its billing rule and a price order ask."""
        self._prices_lock = threading.Lock()
        self._listing = Listing(
            lambda: self._list(None),
            lambda: self._meter.window(self._pages),
            clock,
        )
        self._creates_lock = threading.Lock()
        self._creates: weakref.WeakValueDictionary[str, threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._fence: Fence | None = None
        self._placed = threading.local()
        """The pool's settings at one place, while this thread's create makes it there."""
        if self.watched:
            importlib.import_module("machines.runtime.telemetry").watch(self)

    @staticmethod
    def of(kind: str, owner: str = "", environ: Mapping[str, str] | None = None) -> Provider:
        """The provider ``kind`` configured from ``environ`` (default: this process's): cloud
        ``kind``'s own, or a spanning one when the settings' pools span places
        (``machines.runtime.factory.of``, which ``install`` put here)."""
        if _factory is None:
            raise RuntimeError("no provider factory: import machines.runtime, which installs it")
        return _factory(kind, owner, environ)

    def set_pools(self, pools: Iterable[Pool]) -> None:
        """The pools' settings this provider's ``create`` keeps (``Provider.of`` sets those of
        ``ORCA_POOLS``)."""
        self._pools = {pool.name: pool for pool in pools}

    def pool(self, name: str) -> Pool:
        """Pool ``name``'s settings (type, location, market, max, the cloud's options), as the
        stack exported them; a pool the deployment does not name has the defaults."""
        placed: Pool | None = getattr(self._placed, "pool", None)
        if placed is not None and placed.name == name:
            return placed
        return self._pools.get(name) or Pool(name=check_pool(name))

    @contextmanager
    def placed(self, pool: Pool) -> Iterator[None]:
        """While this thread's calls run, ``pool(pool.name)`` and ``market`` answer ``pool``:
        a spanning provider's create at one of the pool's places (its type, location and
        market there, no max of its own) on this cloud's provider."""
        before = getattr(self._placed, "pool", None)
        self._placed.pool = pool
        try:
            yield
        finally:
            self._placed.pool = before

    def pools(self) -> list[Pool]:
        """Every pool the deployment names, by name: what an autoscaler scales."""
        return [self._pools[name] for name in sorted(self._pools)]

    @property
    def pool_max(self) -> dict[str, int]:
        """Each pool's max, for pools that have one."""
        return {p.name: p.max for p in self._pools.values() if p.max is not None}

    @property
    def pool_market(self) -> dict[str, Market]:
        """Each pool's market."""
        return {p.name: p.market for p in self._pools.values()}

    @classmethod
    @abstractmethod
    def from_env(cls, owner: str, environ: Mapping[str, str] | None = None) -> Provider:
        """Build the provider from environment variables; raise ``SettingsError`` if short."""

    @abstractmethod
    def arch(self, machine_type: str) -> str:
        """Docker's architecture name of a machine type (``amd64``, ``arm64``), cached."""

    @_traced("create")
    def create(self, spec: MachineSpec) -> Created:
        """Ask for one machine; return at once, without waiting for it to boot.

        Never raises for the cloud's trouble: a refusal is ``no_stock`` or ``failed`` with
        the reason. A pool at its ``max`` is refused before the cloud is asked; creates of
        one name wait for each other, so a create retried after a lost answer makes one
        machine; the machine made is listed by ``machines`` at once.
        """
        remembered = self._account_remembered(self.market(spec.pool).tries)
        if remembered is not None:
            return remembered
        with self._within_max(spec, self.pool(spec.pool).max) as slot:
            if slot.refused is not None:
                return slot.refused
            with self._name_lock(spec.name):
                created = self._attempt(spec)
                if created.machine is not None:
                    made = created.machine.model_copy(update={"cloud": self.kind})
                    self._listing.created(made)
                    paid = self.paid_until(made)
                    machine = made.model_copy(update={"paid_until": paid})
                    created = created.model_copy(update={"machine": machine})
            slot.ended(created)
            return created

    def _attempt(self, spec: MachineSpec) -> Created:
        """The cloud's create (``_create``), its errors as the answer: a full account
        remembered (``_account_full``), a lost answer ``may_exist``, the code kept."""
        try:
            return self._create(spec)
        except AccountFullError as error:
            return self._account_full(error)
        except LostCreateError as error:
            return Created.failure(str(error), error.code, transient=True, may_exist=True)
        except CloudError as error:
            return Created.failure(str(error), error.code, transient=error.transient)
        except MachinesError as error:
            return Created.failure(str(error))

    @_traced("machines")
    def machines(self, pool: str) -> list[Machine]:
        """Every machine of ``pool`` that belongs to this owner, and no other, by name.

        Answered from one listing of the owner's machines for every pool while it is fresh
        (``ORCA_LIST_TTL``, stretched to spend at most ``ORCA_LIST_SHARE`` of the budget and
        indefinitely while it is low, never past ``ORCA_LIST_MAX_AGE`` otherwise); this
        provider's own creates and deletes show at once, other processes' changes once the
        listing is renewed. ``ORCA_LIST_TTL=0`` lists the pool at every call.
        """
        check_pool(pool)
        each = self._freshness.list_ttl <= 0
        return self._paid(self._list(pool) if each else self._listing.machines(pool))

    def listed_with(self, peers: Sequence[Provider]) -> dict[str, list[Machine]]:
        """Every pool machine of this provider's owner and of each of ``peers``' owners, by
        owner, from one listing (the cloud's label filter takes a set of owners): a report
        over several deployments of one account, CI's comment over its stacks, asks the
        cloud once instead of once per deployment.

        Each owner's machines apart, as that owner's ``machines`` would find them in a new
        listing, and no machine of an owner not asked; it reads only, and no provider's
        writes are laid over it. ``ValueError`` for a peer of another cloud or account
        (``account``), or an empty owner (selected by the label's absence, which no set of
        owners can say).
        """
        group = [self, *peers]
        for peer in peers:
            if type(peer) is not type(self) or peer.account() != self.account():
                raise ValueError(
                    f"{whose(peer.owner)}'s provider reaches another account than "
                    f"{whose(self.owner)}'s: list each apart (machines)"
                )
        owners = sorted({provider.owner for provider in group})
        if "" in owners:
            raise ValueError(
                "a deployment without an owner cannot be listed with others: list it apart"
            )
        found: dict[str, list[Machine]] = {owner: [] for owner in owners}
        for owner, listed in self._list_owners(owners, group):
            found[owner].append(listed)
        return {owner: self._paid(machines) for owner, machines in found.items()}

    def _paid(self, found: Iterable[Machine]) -> list[Machine]:
        """``found`` as ``machines`` answers: each with its ``paid_until``, by name."""
        now = utc(self._clock())
        paid = [
            m.model_copy(update={"paid_until": self.paid_until(m, now), "cloud": self.kind})
            for m in found
        ]
        return sorted(paid, key=lambda m: (m.name, m.id))

    def paid_until(self, machine: Machine, now: datetime | float | None = None) -> datetime | None:
        """Until when the cloud bills ``machine`` whatever happens at ``now`` (default: this
        provider's clock), by the cloud's billing rule; None when the cloud did not say when
        it was made. Asks the cloud nothing, except the price list once where the rule needs
        a price (Hetzner's monthly cap, for a server billed a day or more this month)."""
        if machine.created is None or self.billing is None:
            return None
        return self.billing.paid_until(
            machine.created, self._moment(now), lambda: self._rate(machine)
        )

    def keep_advice(
        self,
        idle: Iterable[Machine],
        now: datetime | float | None = None,
        margin: float = DEFAULT_MARGIN,
        tick: float = 0.0,
    ) -> list[Advice]:
        """For the machines the autoscaler has no work for: which to let go first and how
        long each can still be kept at no extra cost (``machines.runtime.paid``), the first to
        release first. ``now`` defaults to this provider's clock; ``margin`` seconds before
        the paid time ends a kept machine is due for release, at the last of the autoscaler's
        looks before then when it says it looks every ``tick`` seconds. Asks the cloud
        nothing."""
        moment = self._moment(now)
        advice = advise(idle, moment, self.paid_until, margin, tick)
        clock = self._clock  # not self: the gauges' memory must not keep the provider alive
        importlib.import_module("machines.runtime.telemetry").advised(
            self, advice, lambda: utc(clock())
        )
        return advice

    def committed(
        self,
        machines: Iterable[Machine],
        now: datetime | float | None = None,
        prices: PriceList | None = None,
    ) -> Decimal | None:
        """The money the cloud bills for ``machines`` whatever happens now (each one's time
        until its ``paid_until``), in the price list's currency; None when a creation time
        or a price is unknown. ``prices``: a list already read (default: ``prices()``,
        read once)."""
        billing = self.billing
        if billing is None:
            return None
        moment = self._moment(now)

        def rate_of(machine: Machine) -> Rates | None:
            return self._rate(machine, prices)

        def paid_until(machine: Machine, at: datetime) -> datetime | None:
            if machine.created is None:
                return None
            return billing.paid_until(machine.created, at, lambda: rate_of(machine))

        return committed(machines, moment, billing, rate_of, paid_until)

    def _moment(self, now: datetime | float | None) -> datetime:
        """``now`` as an aware UTC datetime: the clock's when None, seconds as the clock
        counts them, a naive datetime taken as UTC."""
        if now is None:
            return utc(self._clock())
        if isinstance(now, datetime):
            return as_utc(now)
        if isinstance(now, int | float) and not isinstance(now, bool):
            return utc(now)
        raise TypeError(f"now is a datetime or seconds since the epoch, not {now!r}")

    def _rate(self, machine: Machine, prices: PriceList | None = None) -> Rates | None:
        """What ``machine`` bills, item by item (itself, then what its pool's options add),
        at the hourly and monthly prices of ``prices`` or of the list this provider keeps
        (``kept_prices``: read once, and again when a price order asks past its window or
        the list could not be read); None when the machine's own price is unknown. What
        its options add is left out where its price is unknown (moto's root volumes), as
        the reports leave it out of a pool's price, saying so."""
        if prices is None:
            prices = self.kept_prices(None)
        where = (machine.machine_type, machine.location, machine.market)
        hourly, monthly = prices.hourly(*where), prices.monthly(*where)
        if hourly is None or monthly is None:
            return None
        settings = self._pools.get(machine.pool) or Pool(name=machine.pool)
        return (Rate(hourly, monthly), *(prices.option_rates(settings, machine.location) or ()))

    @_traced("delete")
    def delete(self, id: str) -> bool:
        """Delete this owner's pool machine; True once it is gone, now or before.

        A machine this provider made, or the fresh listing shows as this owner's and not
        kept by the stack, is deleted with one request (ids are never reused); any other is
        looked up first: another owner's or no pool machine raises ``ForeignMachineError``,
        one the stack keeps ``StackMachineError``, both without a delete request.
        """
        machine_id = self._machine_id(id)  # ``id``: the design document's parameter name
        known = self._listing.known(machine_id)
        if known is not None and not known.managed_by:
            if known.status == Status.DELETING:
                self._listing.deleted(machine_id)
                log.debug("%s %s (%s) is already going", self.noun, machine_id, known.name)
                return True
            return self._delete(known)
        found = self._look_up(machine_id)
        if found is None:
            return True
        labels, name = found.labels, found.machine.name
        if not belongs_to(labels, self.owner):
            raise ForeignMachineError(self._foreign(found))
        if found.machine.status == Status.DELETING:
            self._listing.deleted(machine_id)
            log.debug("%s %s (%s) is already going", self.noun, machine_id, name)
            return True
        if managed_by(labels) == MANAGED_BY_PULUMI:
            pool = labels.get(POOL_LABEL, "")
            raise StackMachineError(
                f"{self.noun} {machine_id} ({name}) is kept by "
                f"{keeping_stack(self.stack, self.owner)} ({MANAGED_BY_LABEL}="
                f"{MANAGED_BY_PULUMI} {self.label_word}): it was left alone; to remove it, "
                f"lower the size of pool {pool} in {self._that_stack()} (orca-machines resize "
                f"{self.stack or '<stack>'} {pool} <size>)"
            )
        return self._delete(found.machine)

    @contextmanager
    def _within_max(self, spec: MachineSpec, limit: int | None) -> Iterator[Slot]:
        """Around a create of ``spec``: its ``Slot``, refused when its pool is at ``limit``
        (its max) in this provider or, with a fence (``set_fence``), over every process;
        else held for the create until the block ends (the fence's entry until the create
        has ended: ``Slot.ended``). Nothing is held for a pool without a max."""
        full = None if limit is None else self._max_check(spec, limit)
        if limit is None or full is not None:
            yield Slot(full)
            return
        try:
            yield self._fenced(spec, limit)
        finally:
            self._listing.release(spec.pool, spec.name)

    def set_fence(self, fence: Fence | None) -> None:
        """Count each pool's ``max`` over every process that makes its machines, through
        ``fence`` (``machines.runtime.fence``); None: within this provider only."""
        self._fence = fence

    @property
    def fence(self) -> Fence | None:
        """The fence this provider's creates of a pool with a max ask, if any."""
        return self._fence

    def _fenced(self, spec: MachineSpec, limit: int) -> Slot:
        """The fence's answer for a create of ``spec`` (see ``Fence.reserve``): its slot, or
        the refusal; a name another process is making returns that machine once a cloud
        shows it, else waits for that create to end, within the call's time."""
        fence = self._fence
        if fence is None:
            return Slot()
        start = time.monotonic()
        while True:
            listed = self.machines(spec.pool)  # the count's listing: fresh, no request
            cloud_kind, place = self._asked_at(spec)
            try:
                answer = fence.reserve(
                    spec.pool, [spec.name], cloud=cloud_kind, place=place, limit=limit,
                    listed=listed,
                )  # fmt: skip
            except FenceError as error:
                return Slot(
                    Created.failure(
                        f"pool {spec.pool}'s max ({limit}) could not be counted over the "
                        f"processes that make its machines, so nothing was made: {error}"
                    )
                )
            if isinstance(answer, Admitted):
                release = functools.partial(fence.release, spec.pool, [spec.name])
                return Slot(release=release if answer.wrote else None)
            if isinstance(answer, FenceFull):
                return Slot(self._full(spec, limit, answer.count, answer.flying))
            waited = self._wait_for(spec, answer.entry, fence, start)
            if waited is not None:
                return Slot(waited)

    def _wait_for(
        self, spec: MachineSpec, entry: Entry, fence: Fence, start: float
    ) -> Created | None:
        """While another process is making ``spec``'s name (its ``entry``): that machine once
        a cloud shows it, or None once the entry has ended without it (the create goes on);
        ``failed`` when neither happens within the call's time."""
        attempt = 0
        while True:
            found = self._made_elsewhere(spec)
            if found is not None:
                return found
            try:
                if not fence.holds(spec.pool, entry):
                    return None
            except FenceError as error:
                return Created.failure(f"{self._being_made(spec, entry).reason} ({error})")
            left = fence.deadline - (time.monotonic() - start)
            if left <= 0:
                return self._being_made(spec, entry)
            time.sleep(min(backoff(attempt, 0.1, 2.0), left))
            attempt += 1

    def _asked_at(self, spec: MachineSpec) -> tuple[str, str]:
        """Where ``spec`` asks for its machine, as a fence entry says it (cloud, place)."""
        return self.kind, f"{self.kind} {spec.machine_type} in {spec.location}"

    def _made_elsewhere(self, spec: MachineSpec) -> Created | None:
        """The machine of ``spec``'s name another process made, when a cloud shows it now
        (one request by name); None when none does yet."""
        try:
            found = self.named(spec.name, spec.pool)
        except CloudError:
            return None
        if found is None:
            return None
        different = mismatch(spec, found)
        return Created.failure(different) if different else Created.success(found)

    def _being_made(self, spec: MachineSpec, entry: Entry) -> Created:
        return Created.failure(
            f"{spec.name} is being made by another process ({entry.holder}, since "
            f"{utc(entry.since):%H:%M:%S} UTC) and no cloud shows it yet: nothing was made "
            "twice; create it again in a moment, which returns that machine",
            transient=True,
        )

    def _full(self, spec: MachineSpec, limit: int, count: int, flying: int) -> Created:
        """The refusal of a create at its pool's max, counted over every process."""
        elsewhere = f", {flying} of them being made now" if flying else ""
        return Created.failure(
            f"pool {spec.pool} has {count} machines{elsewhere}, counted over every process "
            f"that makes them: its max is {limit}: wait for some to be deleted, or raise "
            "the pool's max in the stack"
        )

    def _max_check(self, spec: MachineSpec, limit: int) -> Created | None:
        """The pool's max check: ``failed`` naming the pool and its max when it is full, or
        when the pool's machines cannot be counted (a cloud that cannot be listed: nothing
        is made past a max nobody counted), else None with a place held for the create
        (the listing's ``reserve``; ``_within_max`` releases it). The count is
        ``machines(pool)``, the shared listing with this provider's writes laid over it,
        plus its creates in flight."""
        try:
            count = self._listing.reserve(
                spec.pool, spec.name, limit, lambda: self.machines(spec.pool)
            )
        except CloudError as error:
            return Created.failure(
                f"pool {spec.pool}'s machines could not be counted against its max ({limit}), "
                f"so nothing was made: {error}",
                error.code,
                transient=error.transient,
            )
        if count is None:
            return None
        return Created.failure(
            f"pool {spec.pool} has {count} machines, the max "
            f"{keeping_stack(self.stack, self.owner)} sets for it ({limit}, the pool's max): "
            f"wait for some to be deleted, or raise the pool's max in {self._that_stack()}"
        )

    def _that_stack(self) -> str:
        """The stack a message named with ``keeping_stack``, named again."""
        return f"stack {self.stack}" if self.stack else "that stack"

    def account_full(self, markets: Iterable[Market]) -> str:
        """Why no create in any of ``markets`` is sent to this cloud now: its account was at
        its limit at its last answer, remembered ``ORCA_NO_STOCK_TTL`` unless this provider
        deleted a machine since; empty when a create may be sent. Asks the cloud nothing."""
        full = self._account.full(markets)
        return "" if full is None else self._said_full(full)

    def _said_full(self, full: Full) -> str:
        return (
            f"the {cloud(self.kind).name} account was at its limit at its last answer "
            f"({full.code}), remembered for {math.ceil(full.seconds_left)} s more "
            f"({ORCA_NO_STOCK_TTL}) or until this provider deletes one of its {self.noun}s"
        )

    def _account_remembered(self, markets: Iterable[Market]) -> Created | None:
        """A create's answer, without a request, while the account is remembered at its
        limit in every market it would buy in; None when it may be sent."""
        full = self._account.full(markets)
        if full is None:
            return None
        said = self._said_full(full)
        return Created.failure(f"{said}, so no create was sent: {full.why}", full.code)

    def _account_full(self, error: AccountFullError) -> Created:
        """A create the cloud refused because the account is at its limit: remembered for
        every create of that market on this cloud (see ``FullAccount``), and answered with
        how to make room."""
        facts = cloud(self.kind)
        why = f"{error}: the {facts.name} account is at its limit; {facts.account_limit_help}"
        self._account.remember(Market(error.market), error.code, why)
        window = self._account.ttl
        held = (
            f"; no create is sent to {facts.name} for {math.ceil(window)} s "
            f"({ORCA_NO_STOCK_TTL}), or until this provider deletes one of its {self.noun}s"
            if window > 0
            else ""
        )
        return Created.failure(f"{why}{held}", error.code)

    def _foreign(self, found: Found) -> str:
        """Why ``delete`` leaves ``found`` alone: not a pool machine of this owner."""
        why = not_ours(found.labels, self.owner, self.label_word)
        return (
            f"{self.noun} {found.machine.id} ({found.machine.name}) {why}: it is not a pool "
            f"machine of {whose(self.owner)}, so it was left alone"
        )

    def _delete(self, machine: Machine) -> bool:
        now = utc(self._clock())
        paid = self.paid_until(machine, now)
        self._remove(machine.id)
        self._listing.deleted(machine.id)
        self._account.forget()  # a machine gone: room again where the account was full
        self._forget_fenced(machine)
        if paid is not None:
            unused = max(0.0, (paid - now).total_seconds())
            importlib.import_module("machines.runtime.telemetry").paid_unused(self, machine, unused)
        log.info("deleted %s %s (%s)", self.noun, machine.id, machine.name)
        return True

    def _forget_fenced(self, machine: Machine) -> None:
        """A deleted machine frees its slot in the fence at once (its entry, if one may still
        hold it); a store that cannot be written leaves the entry to end at its hold."""
        if self._fence is None:
            return
        created = None if machine.created is None else machine.created.timestamp()
        try:
            self._fence.forget(machine.pool, machine.name, created)
        except FenceError as error:
            log.warning("deleted %s %s, but %s", self.noun, machine.name, error)

    def _name_lock(self, name: str) -> threading.Lock:
        """One lock per machine name, while a create of it holds it."""
        with self._creates_lock:
            lock = self._creates.get(name)
            if lock is None:
                lock = threading.Lock()
                self._creates[name] = lock
            return lock

    # The cloud's steps

    @abstractmethod
    def _create(self, spec: MachineSpec) -> Created:
        """Make the machine: the cloud's checks and its create request(s); a name this owner's
        pool machine already has returns that machine. A ``MachinesError`` raised is the
        create's ``failed`` reason; the machine returned is listed by ``machines`` at once."""

    @abstractmethod
    def _list(self, pool: str | None) -> list[Machine]:
        """Every pool machine of this owner (of ``pool`` when given) the cloud lists, over all
        its pages; when ``pool`` is None, what the shared listing keeps (a cloud whose listing
        takes several requests sets ``self._pages``, which paces the listing)."""

    @abstractmethod
    def _list_owners(
        self, owners: Sequence[str], group: Sequence[Provider]
    ) -> list[tuple[str, Machine]]:
        """Every pool machine of any of ``owners`` (each named) the cloud lists, with its
        owner, from one listing over all its pages; ``group`` are the providers of those
        owners (their pools say what else a listing must ask for, such as EC2's interrupted
        spot instances)."""

    @abstractmethod
    def _machine_id(self, machine_id: object) -> str:
        """``machine_id`` in the cloud's form, else ``InvalidMachineIdError`` naming it."""

    @abstractmethod
    def _look_up(self, machine_id: str) -> Found | None:
        """The machine of that id with its labels, None when the cloud does not know it."""

    @abstractmethod
    def _remove(self, machine_id: str) -> None:
        """Ask the cloud to delete the machine; one already gone is no error."""

    @abstractmethod
    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        """Locations where ``machine_type`` can be created now, as the cloud says (cached
        briefly), less those a recent ``no_stock`` answer is remembered for in the market
        of ``pool`` (default: on-demand); for ``spot-then-on-demand``, in both markets."""

    @abstractmethod
    def sells(self, machine_type: str, location: str) -> str | None:
        """Why the cloud never makes ``machine_type`` in ``location`` whatever its stock (a
        type it lacks, a location it does not sell or offer it in), or None when it can:
        what a stack's pools are checked against before the engine runs."""

    def location_refusal(self, location: str) -> str:
        """Why this provider's settings can never make a machine in ``location``, known
        without a request (EC2: a zone ``ORCA_EC2_SUBNETS`` has no subnet for); empty when
        the cloud's catalogue decides. ``Provider.of`` refuses a pool's such place."""
        return ""

    def boots(self, pool: Pool) -> str:
        """What a new machine of ``pool`` boots when its settings do not name one image (a
        cloud's image found anew, say a Hetzner label selector's newest snapshot), one phrase
        for a preview; empty when they name it. ``MachinesError`` when there is none."""
        return ""

    def check_options(
        self, pool: Pool, created: Collection[str] = (), keys: Mapping[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """What a create of ``pool`` would refuse in its options, looked up read-only as the
        create does (images, networks, placement groups): (key, why) each, none when all is
        well; names in ``created`` are the stack's to make and not looked for. What a stack
        is checked against before the engine runs. A cloud without options has none.

        ``key`` is the option's key under the pool (``hetzner.network``), or, for one of
        the provider's own settings (its image), the variable that carries it
        (``ORCA_EC2_IMAGE``); ``keys`` names such variables in ``why`` as the caller knows
        them (a stack's ``ec2.image``), else ``why`` names the variable."""
        return []

    def on(self, kind: str) -> Provider:
        """Cloud ``kind``'s provider: this one for its own kind (a spanning provider holds
        one per cloud)."""
        if kind != self.kind:
            raise UnknownProviderError(
                f"provider {self.kind} of owner {self.owner or '-'} is on {self.cloud} only, "
                f"not {kind!r}"
            )
        return self

    def network_zone(self, location: str) -> str:
        """The network zone ``location`` belongs to, as the cloud answers it (Hetzner's
        ``network_zone``: a private network joins servers only in its subnets' zones); empty
        for a cloud without zones or a location it does not know."""
        return ""

    def budget(self) -> Budget:
        """The cloud's request budget as its last answer stated it, and the listing's
        freshness window it leads to now."""
        return self._meter.budget(self._pages)

    def account(self) -> tuple[str, ...]:
        """Whom this provider is to its cloud: its kind, where it reaches the cloud and a
        digest of its credentials (never the credentials). Providers of one account read
        one price list whatever their owners, so a report over several stacks asks once per
        account. A cloud that cannot say keeps this default: every provider its own."""
        return (self.kind, f"provider {id(self)}")

    def prices(self) -> PriceList:
        """The cloud's own price list, read through this provider's client and retries
        when first asked. A cloud without one keeps this default: every price unknown,
        saying so."""
        return NoPrices(f"prices unknown: no price list for provider {self.kind}")

    def kept_prices(self, fresh_for: float | None) -> PriceList:
        """The cloud's price list (``prices()``) as this provider keeps it, one list for all
        that ask: read when first asked, and again when asked once ``fresh_for`` seconds
        have passed on this provider's clock since it was read (None: whatever its age, as
        the billing rule takes it). A list that could not be read answers every price
        unknown, saying why, until it is read again, at most ``ORCA_OFFERS_TTL`` later."""
        with self._prices_lock:
            now = self._clock()
            kept = self._prices
            if kept is None or now - kept[1] >= self._kept_for(kept[0], fresh_for):
                kept = self._prices = (self.prices(), now)
            return kept[0]

    def _kept_for(self, prices: PriceList, fresh_for: float | None) -> float:
        """How long a kept list answers: ``fresh_for`` (None: for good), and a list that
        could not be read no longer than the price window (``ORCA_OFFERS_TTL``), so the
        billing rule's list is read again as a price order's is."""
        window = math.inf if fresh_for is None else fresh_for
        if prices.read_failed:
            window = min(window, self._freshness.offers_ttl)
        return window

    def current_prices(self) -> PriceList:
        """The price list as read at most ``ORCA_OFFERS_TTL`` ago (``kept_prices``): what a
        pool ranking its places by price (``placeOrder: price``) ranks them by, so creates
        read each cloud's list once per window, not once per create."""
        return self.kept_prices(self._freshness.offers_ttl)

    def launched(self, name: str, pool: str) -> Machine | None:
        """The machine this provider made as ``name`` in ``pool`` and has not deleted, while
        its listing may not show it yet; None otherwise. Asks the cloud nothing."""
        made = self._listing.launched(name, pool)
        return None if made is None else made.model_copy(update={"cloud": self.kind})

    def named(self, name: str, pool: str) -> Machine | None:
        """This owner's live machine of ``pool`` named ``name``, as the cloud answers now
        (``_by_name``: one request on Hetzner and EC2, never more than a listing); None when
        the cloud has none. Where a pool that spans clouds looks for a machine whose create
        lost its answer before it makes one elsewhere."""
        for found in self._by_name(name, pool):
            if found.name == name and found.status != Status.DELETING:
                return found.model_copy(update={"cloud": self.kind})
        return None

    def _by_name(self, name: str, pool: str) -> list[Machine]:
        """The cloud's step of ``named``: this owner's pool machines that may be named
        ``name``; by default the pool's listing (a cloud that finds a name in one request
        says so)."""
        return self._list(pool)

    def listing_age(self) -> float | None:
        """Seconds since the listing ``machines`` answers from began, None before the first
        (the metrics report it; it asks nothing of the cloud)."""
        return self._listing.age()

    def out_of_stock(self) -> list[tuple[str, str, Market, float]]:
        """(type, location, market, seconds left) of each ``no_stock`` answer remembered
        now."""
        return self._stock.remembered()

    def market(self, pool: str) -> Market:
        """The market ``pool``'s machines are bought in (``ORCA_POOLS``)."""
        placed: Pool | None = getattr(self._placed, "pool", None)
        if placed is not None and placed.name == pool:
            return placed.market
        return self._pools[pool].market if pool in self._pools else Market.ON_DEMAND

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, owner={self.owner!r})"
