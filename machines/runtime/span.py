"""A provider whose pools span places on several clouds: "elsewhere" is the runtime's work.

The design document's ``create`` answers no stock with "try again later, or elsewhere". A
pool that names its places (``Pool.places``, in order of preference: a cloud, a type, a
location and a market each) makes "elsewhere" this module's: ``create`` makes the machine
at the place the spec names when it has stock, else at the pool's next place with stock,
on whichever cloud that is, and the autoscaler's code does not change.

``Provider.of(kind, owner)`` returns a ``SpanningProvider`` when the settings name a pool
that spans (more than its one place on ``kind``, the home cloud). It holds one provider per
cloud the pools name, each built by its own ``from_env`` from the same environment (by
``machines.runtime.factory``, which checks the settings, above this module) and
answering by its own rules (its listing, budget, stock memory, retries, billing); this one
only chooses the place, counts a pool's ``max`` over every cloud, and routes ids.

Ids: a machine on the home cloud keeps its cloud's id (``4711``, ``i-0abc...``), so a pool
on one cloud has the ids it always had; a machine on another cloud is ``<kind>:<id>``
(``ec2:i-0abc...``), so ids of two clouds never collide and ``delete`` knows where to go.
``Machine.cloud`` says the cloud of every machine.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
import math
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import cast

from machines.runtime.billing import utc
from machines.runtime.budget import Budget
from machines.runtime.clouds import account_limit_codes, cloud
from machines.runtime.errors import (
    CloudError,
    InvalidMachineIdError,
    MachinesError,
    UnknownMachineTypeError,
    UnknownProviderError,
)
from machines.runtime.fence.fence import Fence
from machines.runtime.models import Created, Machine, MachineSpec, Market, Status, mismatch
from machines.runtime.paid import DEFAULT_MARGIN, Advice, in_order
from machines.runtime.pool import Place, Pool
from machines.runtime.price_order import Priced, next_hour, ranked, said
from machines.runtime.prices import NoPrices, PriceList, brief
from machines.runtime.provider import Found, Provider
from machines.runtime.settings import ORCA_NO_STOCK_TTL, ORCA_POOLS

log = logging.getLogger(__name__)

SEPARATOR = ":"
"""Between a cloud's kind and its id, in the ids of machines not on the home cloud."""


def spanned_id(home: str, kind: str, machine_id: str) -> str:
    """The id a spanning provider of home cloud ``home`` gives a machine of cloud ``kind``
    whose own id is ``machine_id`` (see the module)."""
    return machine_id if kind == home else f"{kind}{SEPARATOR}{machine_id}"


def over(
    home: str,
    owner: str,
    providers: Mapping[str, Provider],
    pools: Mapping[str, Pool],
    rates: Mapping[str, Decimal],
) -> SpanningProvider:
    """The spanning provider of ``pools`` over ``providers``, one per cloud they name (home
    cloud ``home``'s among them), each built and checked from settings by
    ``machines.runtime.factory``: each holds the pools as its cloud makes them (``_on``),
    this one all of them."""
    for kind, made in providers.items():
        made.set_pools(_on(kind, home, pools.values()))
    provider = _class_of(type(providers[home]))(owner, providers, rates)
    provider.set_pools(pools.values())
    return provider


def _on(kind: str, home: str, pools: Iterable[Pool]) -> list[Pool]:
    """The pools as cloud ``kind``'s provider holds them: a pool without places on the home
    cloud as it is (its max is that provider's to keep); a pool with places on ``kind`` at
    its first place there, without max or places (the spanning provider counts the max),
    in spot-then-on-demand where its places there buy both (so a listing asks for its
    interrupted spot machines, and ``offers`` leaves out zones short in both)."""
    held = []
    for pool in pools:
        if not pool.places:
            if kind == home:
                held.append(pool)
            continue
        here = [p for p in pool.places if p.cloud == kind]
        if here:
            held.append(_at(pool, here[0]).model_copy(update={"market": pool.market_on(kind)}))
    return held


def _at(pool: Pool, place: Place) -> Pool:
    """``pool``'s settings at ``place`` as its cloud's provider holds them: no max (the
    spanning provider counts it over every cloud)."""
    return pool.at(place).model_copy(update={"max": None})


def _prices_of(provider: Provider) -> PriceList:
    """``provider``'s kept price list for a price order, or, when it cannot give one, a list
    that prices nothing (each place keeps its written place, saying why)."""
    try:
        return provider.current_prices()
    except MachinesError as error:
        return NoPrices(f"prices unknown: {brief(error)}")


UNREACHED = "unreached"
"""``_passing``'s word for a place whose cloud could not be reached."""


def _passing(created: Created) -> str:
    """Why a place's ``failed`` create is passed over for the pool's next place: its cloud's
    account at its limit ("account": not here, not now, as no stock), or its cloud unable
    to answer now, nothing made (``UNREACHED``); empty when the failure ends the create (a
    mistake to fix, or a machine that may exist though its answer was lost)."""
    if not created.failed or created.may_exist:
        return ""
    if created.code in account_limit_codes():
        return "account"
    return UNREACHED if created.transient else ""


def _none(pool: Pool, passed: list[str], ordered: str, unreached: str) -> Created:
    """No place made the machine: ``no_stock`` when each was out of stock or its account at
    its limit (not here, not now), ``failed`` with the code when some cloud could not be
    reached (``unreached``)."""
    said = "; ".join(passed)
    if unreached:
        return Created(
            outcome="failed",
            reason=f"no place of pool {pool.name} could make it now: {said}",
            passed_over=tuple(passed),
            ordered=ordered,
            code=unreached,
            transient=True,
        )
    return Created(
        outcome="no_stock",
        reason=f"no place of pool {pool.name} has stock now: {said}",
        passed_over=tuple(passed),
        ordered=ordered,
    )


def _named_answer(spec: MachineSpec, pool: Pool, machines: Iterable[Machine]) -> Created | None:
    """The answer for ``spec`` when one of ``machines`` (as the spanning provider answers
    them) already has its name: that machine when it is at one of the pool's places and the
    autoscaler's, else why the name is taken; None when none of them has it."""
    for machine in machines:
        if machine.name != spec.name or machine.status == Status.DELETING:
            continue
        at = any(
            (p.cloud, p.machine_type, p.location)
            == (machine.cloud, machine.machine_type, machine.location)
            for p in pool.places
        )
        if machine.managed_by or not at:
            return Created.failure(mismatch(spec, machine))
        return Created.success(machine)
    return None


@functools.cache
def _class_of(base: type[Provider]) -> type[SpanningProvider]:
    """The spanning provider's class for a home cloud whose provider is a ``base``: its kind
    and cloud's words."""
    made = type(
        f"Spanning{base.__name__}",
        (SpanningProvider,),
        {
            "kind": base.kind,
            "cloud": base.cloud,
            "markets": base.markets,
            "label_word": base.label_word,
            "budget_note": base.budget_note,
            "__module__": __name__,
        },
    )
    return cast(type[SpanningProvider], made)


class SpanningProvider(Provider):
    """Pools whose machines come from several places, on one or several clouds.

    ``kind`` is the home cloud's (``Provider.of``'s); ``on(kind)`` is each cloud's own
    provider. Every call the autoscaler makes answers as one provider's would.
    """

    kind = ""
    cloud = "several clouds"
    watched = False

    def __init__(
        self,
        owner: str,
        providers: Mapping[str, Provider],
        rates: Mapping[str, Decimal] | None = None,
    ) -> None:
        home = providers[self.kind]
        super().__init__(owner, home.image, home._freshness, home._clock)
        self.ssh_keys = home.ssh_keys
        self.firewall = home.firewall
        self._providers = dict(providers)
        self._home = home
        self._lock = threading.Lock()
        self._arches: dict[str, str] = {}
        """Each spanning pool's refusal of its architectures ("" when it has one), once
        it has been checked."""
        self._exchange = dict(rates or {})
        """``ORCA_EXCHANGE_RATES``, for pools that rank their places by price."""
        self._tried: dict[tuple[str, str], Place] = {}
        """Where a create of (pool, name) last failed: its retry goes there first, so a
        machine made though its answer was lost is found rather than made again elsewhere."""

    @classmethod
    def from_env(cls, owner: str = "", environ: Mapping[str, str] | None = None) -> Provider:
        """``Provider.of`` of the home cloud: a spanning provider when the pools span."""
        return Provider.of(cls.kind, owner, environ)

    @property
    def providers(self) -> dict[str, Provider]:
        """Each cloud's provider, by kind, the home cloud's first."""
        return dict(self._providers)

    def on(self, kind: str) -> Provider:
        """Cloud ``kind``'s provider (its budget, prices, listing apart)."""
        if kind not in self._providers:
            raise UnknownProviderError(
                f"provider {self.kind} of owner {self.owner or '-'} spans "
                f"{', '.join(self._providers)}, not {kind!r}"
            )
        return self._providers[kind]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(kind={self.kind!r}, owner={self.owner!r}, "
            f"clouds={list(self._providers)!r})"
        )

    # Ids

    def spanned(self, machine: Machine) -> Machine:
        """``machine`` (listed or made by its cloud's provider) as this provider answers it:
        off the home cloud, its id is ``<kind>:<id>``."""
        kind = machine.cloud or self.kind
        if kind != self.kind and machine.id.startswith(f"{kind}{SEPARATOR}"):
            return machine  # already in this provider's form: an id says its cloud once
        spanned = spanned_id(self.kind, kind, machine.id)
        return machine if spanned == machine.id else machine.model_copy(update={"id": spanned})

    def where(self, machine_id: object) -> tuple[Provider, str]:
        """The provider of the cloud that holds ``machine_id``, and the id in its form: a
        ``<kind>:`` prefix names the cloud, no prefix is the home cloud's (or, in a form the
        home cloud refuses, the first cloud whose form it is)."""
        text = str(machine_id)
        kind, separator, rest = text.partition(SEPARATOR)
        if separator and kind in self._providers:
            provider = self._providers[kind]
            try:
                return provider, provider._machine_id(rest)
            except InvalidMachineIdError as error:
                raise InvalidMachineIdError(
                    f"{text!r} is not a machine id of provider {self.kind}: after its "
                    f"{kind}{SEPARATOR} prefix, {error}"
                ) from None
        try:
            return self._home, self._home._machine_id(machine_id)
        except InvalidMachineIdError:
            for other in self._providers.values():
                try:
                    return other, other._machine_id(machine_id)
                except InvalidMachineIdError:
                    continue
            raise

    def _machine(self, machine: Machine) -> tuple[Provider, Machine]:
        """``machine`` as its own cloud's provider knows it (its id in that cloud's form)."""
        provider = self._providers.get(machine.cloud or self.kind, self._home)
        if provider is self._home:
            return provider, machine
        bare = machine.id.removeprefix(f"{machine.cloud}{SEPARATOR}")
        return provider, machine.model_copy(update={"id": bare})

    # The calls

    def arch(self, machine_type: str) -> str:
        """Docker's architecture of ``machine_type`` on the first cloud (home first) that
        knows the type."""
        unknown: UnknownMachineTypeError | None = None
        for provider in self._providers.values():
            try:
                return provider.arch(machine_type)
            except UnknownMachineTypeError as error:
                unknown = unknown or error
        assert unknown is not None
        raise unknown

    def create(self, spec: MachineSpec) -> Created:
        """Make the machine at the place ``spec`` names when it has stock, else at the
        pool's next place with stock (on whichever cloud), with the same name, pool labels
        and owner; ``no_stock`` only when no place has stock.

        A place the cloud's memory of ``no_stock`` or its ``offers`` already knows is out is
        passed over without a request; ``passed_over`` says each place passed over and why.
        The pool's ``max`` counts its machines on every cloud, before any request that makes
        something; a name the pool already has on some cloud returns that machine; a place
        whose create failed ends the create (its reason may be a machine made all the same,
        which a retry, sent there first, finds). A pool without places is the home cloud's.

        Each create at a place is traced and counted by that cloud's provider; a create
        answered here without any cloud's create (refused before any cloud is asked, at the
        pool's max, a name already made, every place passed over) is traced and counted
        here, under the home cloud's kind, as a one-cloud provider's create is.
        """
        pool = self.pool(spec.pool)
        if not pool.places:
            return self._home.create(spec)
        refused = self._refusal(pool, spec)
        if refused:
            return self._answered(spec, Created.failure(refused))
        with self._within_max(spec, pool.max) as slot:
            if slot.refused is not None:
                return self._answered(spec, slot.refused)
            with self._name_lock(spec.name):
                try:
                    before = self._made_before(spec, pool)
                except CloudError as error:  # a listing renewed since the count, unreadable
                    before = Created.failure(str(error), error.code, transient=error.transient)
                created = (
                    self._first_with_stock(spec, pool)
                    if before is None
                    else self._answered(spec, before)
                )
            slot.ended(created)
            return created

    def _answered(self, spec: MachineSpec, created: Created) -> Created:
        """``created``, a create of ``spec`` no cloud's provider was asked to make, in its
        span and counted (``telemetry.answered_create``)."""
        telemetry = importlib.import_module("machines.runtime.telemetry")
        answered: Created = telemetry.answered_create(self, spec, created)
        return answered

    def _refusal(self, pool: Pool, spec: MachineSpec) -> str:
        """Why a create of ``spec`` is refused before any request: a place the pool does not
        name, or places of two architectures; empty when it goes ahead."""
        if not self._asked(pool, spec):
            places = "; ".join(str(p) for p in pool.places)
            return (
                f"pool {pool.name} makes its machines at its places ({places}), and "
                f"{spec.machine_type} in {spec.location} is none of them: ask for one of "
                f"provider.pool({pool.name!r}).places"
            )
        refused = self.arch_refusal(pool)
        return f"{ORCA_POOLS} {refused}" if refused else ""

    def arch_refusal(self, pool: Pool) -> str:
        """Why ``pool``'s places cannot stand together: a place whose cloud never makes its
        type there (``sells``: not sold in that location, or not at all), or places not all
        of one architecture (its machines run one image), naming the first such place;
        empty when they can. Asked of each cloud's catalogue once per pool (``arch`` and
        ``sells`` are cached), before any request that makes something."""
        with self._lock:
            known = self._arches.get(pool.name)
        if known is not None:
            return known
        arches: list[tuple[Place, str]] = []
        for place in pool.places:
            provider = self._providers[place.cloud]
            try:
                arches.append((place, provider.arch(place.machine_type)))
                unsold = provider.sells(place.machine_type, place.location)
            except UnknownMachineTypeError as error:
                return f"pool {pool.name}'s place {place}: {error}"
            except MachinesError:
                return ""  # the catalogue is out of reach: the create says so, asked again
            if unsold is not None:
                return self._kept(pool, f"pool {pool.name}'s place {place}: {unsold}")
        (first, arch), *rest = arches
        differ = next(((p, a) for p, a in rest if a != arch), None)
        refused = ""
        if differ is not None:
            place, other = differ
            refused = (
                f"pool {pool.name}'s place {place} is {other}, but its first "
                f"place {first} is {arch}: a pool's machines run one image, so name places "
                "of one architecture (or make a pool per architecture)"
            )
        return self._kept(pool, refused)

    def _kept(self, pool: Pool, refused: str) -> str:
        """``refused``, kept as ``pool``'s places' refusal (``arch_refusal``)."""
        with self._lock:
            self._arches[pool.name] = refused
        return refused

    @staticmethod
    def _asked(pool: Pool, spec: MachineSpec) -> list[Place]:
        """The pool's places at the type and location ``spec`` names, in the pool's order."""
        asked = (spec.machine_type, spec.location)
        return [p for p in pool.places if (p.machine_type, p.location) == asked]

    def _order(self, pool: Pool, spec: MachineSpec) -> tuple[list[Place], str]:
        """The places a create tries, in turn: where its last attempt failed (a lost answer),
        then the places ``spec`` names and the pool's others in its order, or, for a pool
        ranking them by price, all of them by the next hour's price; and that ranking in
        words (empty for the written order)."""
        with self._lock:
            tried = self._tried.get((pool.name, spec.name))
        first = [tried] if tried in pool.places else []
        if pool.place_order != "price":
            return list(dict.fromkeys([*first, *self._asked(pool, spec), *pool.places])), ""
        priced = self._priced(pool)
        return list(dict.fromkeys([*first, *(p.place for p in priced)])), said(priced)

    def _priced(self, pool: Pool) -> list[Priced]:
        """``pool``'s places ranked by the next hour's price, each at its cloud's price list
        as that cloud's provider keeps it (``current_prices``: asked once a create, read at
        most once per ``ORCA_OFFERS_TTL`` over all creates)."""
        now = utc(self._clock())
        lists = {kind: _prices_of(self._providers[kind]) for kind in pool.clouds(self.kind)}
        return ranked(
            [
                next_hour(
                    self._providers[p.cloud].billing,
                    _at(pool, p),
                    p,
                    self._exchange,
                    now,
                    prices=lists[p.cloud],
                )
                for p in pool.places
            ]
        )

    def _made_before(self, spec: MachineSpec, pool: Pool) -> Created | None:
        """The machine of ``spec``'s name the pool already has on some cloud (an earlier
        attempt's), or why the name is taken; None when no live machine has it. Asked of
        what each cloud's provider made itself, and of the pool's listing when it has a max
        (the max check has just read it): no request of its own."""
        machines = [
            self.spanned(made)
            for provider in self._providers.values()
            if (made := provider.launched(spec.name, spec.pool)) is not None
        ]
        if pool.max is not None:
            machines += self.machines(spec.pool)
        return _named_answer(spec, pool, machines)

    def _looked_for(self, spec: MachineSpec, pool: Pool, tried: Place) -> Created | None:
        """Before a create of ``spec`` at another place than ``tried``, whose create of it
        may have made it (its answer was lost): the machine of that name on any cloud of the
        pool, each cloud asked now (one request each, no more than a listing costs); None
        when no cloud has it. A cloud that cannot be asked makes the answer ``failed``:
        nothing is made elsewhere while the first machine may exist."""
        found: list[Machine] = []
        for kind in pool.clouds(self.kind):
            try:
                named = self._providers[kind].named(spec.name, spec.pool)
            except CloudError as error:
                return Created.failure(
                    f"{spec.name}'s earlier create at {tried} may have made it (its answer "
                    f"was lost), and {cloud(kind).name} cannot be asked for it now, so "
                    f"nothing was made elsewhere: create {spec.name} again later ({error})",
                    error.code,
                    transient=error.transient,
                    may_exist=True,
                )
            if named is not None:
                found.append(self.spanned(named))
        return _named_answer(spec, pool, found)

    def _first_with_stock(self, spec: MachineSpec, pool: Pool) -> Created:
        """Try each place in turn until one makes the machine or fails.

        A place whose cloud is known to be out (its stock, its account at its limit) is
        passed over without a request; one whose create answers no stock, or that its cloud
        refuses for the account being at its limit, or whose cloud cannot be reached before
        anything could be made, is passed over after it. Before a create at another place
        than one whose create of this name may have made it, the name is looked for on every
        cloud of the pool.
        """
        passed: list[str] = []
        unreached = ""
        order, ordered = self._order(pool, spec)
        with self._lock:
            tried = self._tried.get((pool.name, spec.name))
        looked = tried is None
        called = False
        for place in order:
            provider = self._providers[place.cloud]
            settings = _at(pool, place)
            out = self._known_out(provider, settings, place)
            if out:
                passed.append(f"{place}: {out}")
                continue
            if tried is not None and not looked and place != tried:
                looked = True
                found = self._looked_for(spec, pool, tried)
                if found is not None:
                    return self._answered(spec, found.model_copy(update={"ordered": ordered}))
            asked = spec.model_copy(
                update={"machine_type": place.machine_type, "location": place.location}
            )
            called = True
            with provider.placed(settings):
                created = provider.create(asked)
            passing = "no stock" if created.no_stock else _passing(created)
            if passing:
                passed.append(f"{place}: {created.reason}")
                unreached = unreached or (created.code if passing == UNREACHED else "")
                continue
            return self._made(spec, pool, place, created, passed=passed, ordered=ordered)
        none = _none(pool, passed, ordered, unreached)
        return none if called else self._answered(spec, none)  # every place passed over

    def _made(
        self,
        spec: MachineSpec,
        pool: Pool,
        place: Place,
        created: Created,
        *,
        passed: list[str],
        ordered: str,
    ) -> Created:
        """The answer of the place that made the machine, or failed: where a create whose
        machine may exist failed is remembered, so its retry goes there first (and looks
        for the name on every cloud before it makes anything elsewhere)."""
        with self._lock:
            if created.may_exist:
                self._tried[pool.name, spec.name] = place
            elif created.ok:
                self._tried.pop((pool.name, spec.name), None)
        if passed and created.ok:
            log.info("%s made at %s, passing over %s", spec.name, place, "; ".join(passed))
        machine = None if created.machine is None else self.spanned(created.machine)
        reason = f"{place}: {created.reason}" if created.reason else ""
        update = {"machine": machine, "reason": reason, "passed_over": tuple(passed)}
        return created.model_copy(update={**update, "ordered": ordered})

    def named(self, name: str, pool: str) -> Machine | None:
        """The machine ``name`` of ``pool`` on the first of the pool's clouds that has it,
        each asked by name (one request each), in this provider's form."""
        for kind in self.pool(pool).clouds(self.kind):
            found = self._providers[kind].named(name, pool)
            if found is not None:
                return self.spanned(found)
        return None

    def set_fence(self, fence: Fence | None) -> None:
        """The fence counts each spanning pool's max over its clouds and every process; each
        cloud's provider holds it too, so a delete there frees its slot at once."""
        super().set_fence(fence)
        for provider in self._providers.values():
            provider.set_fence(fence)

    def _asked_at(self, spec: MachineSpec) -> tuple[str, str]:
        """The first of the pool's places ``spec`` names."""
        pool = self.pool(spec.pool)
        asked = self._asked(pool, spec)
        place = asked[0] if asked else pool.places[0]
        return place.cloud, str(place)

    def passed_over(self, pool: Pool, place: Place) -> str:
        """Why a new machine of ``pool`` would not be made at ``place`` now, as far as its
        cloud knows without making one (see ``_known_out``); empty when it is worth a try:
        where a stack puts the new machines of a pool that spans."""
        return self._known_out(self._providers[place.cloud], _at(pool, place), place)

    @staticmethod
    def _known_out(provider: Provider, settings: Pool, place: Place) -> str:
        """Why ``place`` is passed over without a request: in every market the place buys,
        its cloud remembers ``no_stock`` there or its account at its limit
        (``ORCA_NO_STOCK_TTL``, as a create there would answer at once), or a cloud whose
        ``offers`` knows its stock (Hetzner's catalogue, read at most once per
        ``ORCA_OFFERS_TTL``) does not offer the type there now; empty when it is worth a
        request."""
        where = (place.machine_type, place.location)
        left = {m: s for t, loc, m, s in provider.out_of_stock() if (t, loc) == where}
        markets = place.market.tries
        full = {m: why for m in markets if (why := provider.account_full([m]))}
        if all(m in left or m in full for m in markets):
            if full:
                return f"{'; '.join(dict.fromkeys(full.values()))}; passed over without a request"
            seconds = min(left[m] for m in markets)
            return (
                f"no stock there at its last answer, remembered for {math.ceil(seconds)} s more "
                f"({ORCA_NO_STOCK_TTL}); passed over without a request"
            )
        if not provider.offers_stock:
            return ""
        try:
            with provider.placed(settings):
                offered = provider.offers(place.machine_type, settings.name)
        except MachinesError:
            return ""  # the create asks, and says what is wrong
        if place.location in offered:
            return ""
        return (
            f"{cloud(place.cloud).name} offers no {place.machine_type} in {place.location} "
            "now (its catalogue's stock); passed over without a request"
        )

    def machines(self, pool: str) -> list[Machine]:
        """The owner's machines of ``pool`` on every cloud this provider spans, by name:
        each cloud's own listing, shared and fresh by its own rules and budget."""
        found = [self.spanned(m) for p in self._providers.values() for m in p.machines(pool)]
        return sorted(found, key=lambda m: (m.name, m.id))

    def delete(self, id: str) -> bool:
        """Delete the machine ``id`` names, on the cloud its id says (see the module)."""
        provider, machine_id = self.where(id)
        return provider.delete(machine_id)

    def paid_until(self, machine: Machine, now: datetime | float | None = None) -> datetime | None:
        """By the billing rule of the machine's own cloud."""
        provider, own = self._machine(machine)
        return provider.paid_until(own, self._moment(now))

    def keep_advice(
        self,
        idle: Iterable[Machine],
        now: datetime | float | None = None,
        margin: float = DEFAULT_MARGIN,
        tick: float = 0.0,
    ) -> list[Advice]:
        """Each cloud's advice for its machines (its own billing), the first to release
        first, at one moment for all."""
        if isinstance(idle, str | Machine):
            return self._home.keep_advice(idle, now, margin, tick)  # refused as it says
        listed = list(idle)
        if not all(isinstance(m, Machine) for m in listed):
            return self._home.keep_advice(listed, now, margin, tick)  # refused as it says
        moment = self._moment(now)
        groups: dict[str, list[Machine]] = {}
        theirs: dict[tuple[str, str], Machine] = {}
        for machine in listed:
            provider, own = self._machine(machine)
            groups.setdefault(provider.kind, []).append(own)
            theirs[provider.kind, own.id] = machine
        advice = [
            dataclasses.replace(a, machine=theirs[kind, a.machine.id])
            for kind, own in groups.items()
            for a in self._providers[kind].keep_advice(own, moment, margin, tick)
        ]
        return in_order(advice)

    def committed(
        self,
        machines: Iterable[Machine],
        now: datetime | float | None = None,
        prices: PriceList | None = None,
    ) -> Decimal | None:
        """The money the machines' clouds bill for them whatever happens now, each cloud's
        by its own billing rule and price list. On one cloud, in its currency (``prices``: a
        list of that cloud already read). On several, in the common unit of
        ``ORCA_EXCHANGE_RATES`` (each cloud's sum times its currency's rate) when the rates
        name every currency involved; None when they do not (the sums are in currencies
        that cannot be added: ask each cloud's provider, ``on(kind)``), or when any cloud's
        sum is unknown."""
        groups: dict[str, list[Machine]] = {}
        for machine in machines:
            provider, own = self._machine(machine)
            groups.setdefault(provider.kind, []).append(own)
        moment = self._moment(now)
        if len(groups) > 1:
            return self._exchanged(groups, moment)
        kind, held = next(iter(groups.items()), (self.kind, []))
        return self._providers[kind].committed(held, moment, prices)

    def _exchanged(self, groups: Mapping[str, list[Machine]], now: datetime) -> Decimal | None:
        """The machines of several clouds' committed money in the rates' unit; None when a
        rate or a cloud's sum is missing (no price list is read without a rate for it)."""
        rates = [self._exchange.get(cloud(kind).currency) for kind in groups]
        if None in rates:
            return None
        total = Decimal(0)
        for (kind, held), rate in zip(groups.items(), rates, strict=True):
            money = self._providers[kind].committed(held, now)
            if money is None or rate is None:
                return None
            total += money * rate
        return total

    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        """Where ``machine_type`` can be created now on the clouds of ``pool`` (every cloud
        this provider spans when none), each cloud's answer in turn."""
        kinds = self.pool(pool).clouds(self.kind) if pool else tuple(self._providers)
        found: list[str] = []
        unknown: UnknownMachineTypeError | None = None
        for kind in kinds:
            try:
                found += self._providers[kind].offers(machine_type, pool)
            except UnknownMachineTypeError as error:
                unknown = unknown or error
        if not found and unknown is not None and len(kinds) == 1:
            raise unknown
        return list(dict.fromkeys(found))

    def sells(self, machine_type: str, location: str) -> str | None:
        """None when some cloud this provider spans makes the type there, else why the home
        cloud does not."""
        reasons = [p.sells(machine_type, location) for p in self._providers.values()]
        return None if None in reasons else reasons[0]

    def check_options(
        self, pool: Pool, created: Collection[str] = (), keys: Mapping[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """Each place's options on its own cloud, and the places' architectures."""
        if not pool.places:
            return self._home.check_options(pool, created, keys)
        found: list[tuple[str, str]] = []
        for place in dict.fromkeys(p.cloud for p in pool.places):
            first = next(p for p in pool.places if p.cloud == place)
            found += self._providers[place].check_options(_at(pool, first), created, keys)
        refused = self.arch_refusal(pool)
        return [*found, ("places", refused)] if refused else found

    def listed_with(self, peers: Sequence[Provider]) -> dict[str, list[Machine]]:
        """Each cloud's ``listed_with`` over the peers' providers of that cloud, together."""
        found: dict[str, list[Machine]] = {}
        for kind, provider in self._providers.items():
            theirs = []
            for peer in peers:
                if not isinstance(peer, SpanningProvider) or kind not in peer.providers:
                    raise ValueError(
                        f"{peer!r} spans other clouds than {self!r}: list each apart (machines)"
                    )
                theirs.append(peer.on(kind))
            for owner, listed in provider.listed_with(theirs).items():
                found.setdefault(owner, []).extend(self.spanned(m) for m in listed)
        return {o: sorted(ms, key=lambda m: (m.name, m.id)) for o, ms in found.items()}

    def budget(self) -> Budget:
        """The home cloud's budget (each cloud's: ``on(kind).budget()``)."""
        return self._home.budget()

    def account(self) -> tuple[str, ...]:
        """Every cloud's account, home first."""
        return tuple(part for p in self._providers.values() for part in p.account())

    def prices(self) -> PriceList:
        """The home cloud's price list (each cloud's: ``on(kind).prices()``)."""
        return self._home.prices()

    def kept_prices(self, fresh_for: float | None) -> PriceList:
        """The home cloud's kept price list, the one its billing asks (each cloud's:
        ``on(kind).kept_prices``): a spanning provider keeps no second copy to read."""
        return self._home.kept_prices(fresh_for)

    def listing_age(self) -> float | None:
        """The oldest of the clouds' listings."""
        ages = [a for p in self._providers.values() if (a := p.listing_age()) is not None]
        return max(ages, default=None)

    def out_of_stock(self) -> list[tuple[str, str, Market, float]]:
        """Every cloud's remembered ``no_stock`` answers."""
        return sorted(r for p in self._providers.values() for r in p.out_of_stock())

    # The cloud's steps: each cloud's provider takes them; these route there.

    def _create(self, spec: MachineSpec) -> Created:
        return self.create(spec)

    def _list(self, pool: str | None) -> list[Machine]:
        return [self.spanned(m) for p in self._providers.values() for m in p._list(pool)]

    def _list_owners(
        self, owners: Sequence[str], group: Sequence[Provider]
    ) -> list[tuple[str, Machine]]:
        raise NotImplementedError("a spanning provider lists with peers by listed_with")

    def _machine_id(self, machine_id: object) -> str:
        self.where(machine_id)
        return str(machine_id)

    def _look_up(self, machine_id: str) -> Found | None:
        provider, own = self.where(machine_id)
        found = provider._look_up(own)
        if found is None:
            return None
        listed = found.machine.model_copy(update={"cloud": provider.kind})
        return Found(self.spanned(listed), found.labels)

    def _remove(self, machine_id: str) -> None:
        provider, own = self.where(machine_id)
        provider._remove(own)
