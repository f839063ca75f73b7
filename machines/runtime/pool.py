"""A pool's settings, one object: what the stack exports (``ORCA_POOLS``) and the runtime reads.

Like the cluster-autoscaler's node group, a pool owns its settings: its machine type and
location (so an autoscaler need not hard-code what the stack knows), its market, its max and
each cloud's options (the model each cloud declares, ``clouds.<kind>.options``). The stack
file's pools are this model with what only a stack has (``machines.program.config``), the
runtime's ``create`` and the stack's
program turn them into one cloud's create arguments by one function per cloud
(``machines.runtime.clouds.<kind>.machine``), so both make the same machine for the same pool.

A pool may name its places (``places``), in order of preference: each a cloud (a provider
kind), a machine type, a location and a market. When its first place has no stock, its
machines come from the next (``machines.runtime.span``). A pool without places has one: its
own type, location and market, on the provider's cloud.

Old deployments exported ``ORCA_POOL_MAX`` and ``ORCA_POOL_MARKET`` instead: ``pools_of``
reads those when ``ORCA_POOLS`` is not set (their pools then have no type, location or
options: the cloud's defaults).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails

from machines.runtime.clouds import CLOUDS, cloud, options_models, unsold_market
from machines.runtime.errors import SettingsError
from machines.runtime.labels import check_pool
from machines.runtime.models import Market
from machines.runtime.options import Model, Options, OptionsT
from machines.runtime.settings import (
    ORCA_POOL_MARKET,
    ORCA_POOL_MAX,
    ORCA_POOLS,
    pool_market,
    pool_max,
    single,
)


def _details(error: ValidationError, *prefix: str | int) -> list[InitErrorDetails]:
    """``error``'s problems, each at its place under ``prefix``, to be raised again as one."""
    return [
        {
            "type": e["type"],
            "loc": (*prefix, *e["loc"]),
            "input": e["input"],
            "ctx": e.get("ctx", {}),
        }
        for e in error.errors(include_url=False)
    ]


class Place(Model):
    """One place a pool's machines can be made: a cloud (its provider kind), a machine type,
    a location (Hetzner's location, EC2's zone) and a market, as ``ORCA_POOLS`` writes it
    (``{"cloud": "ec2", "machineType": "t4g.small", "location": "eu-central-1a"}``)."""

    cloud: str
    machine_type: str = Field(min_length=1)
    location: str = Field(min_length=1)
    market: Market = Market.ON_DEMAND

    @field_validator("cloud")
    @classmethod
    def _registered(cls, kind: str) -> str:
        if kind not in CLOUDS:
            raise ValueError(
                f"unknown cloud {kind!r}: use one of {', '.join(sorted(CLOUDS))} (a provider kind)"
            )
        return kind

    @property
    def key(self) -> tuple[str, str, str, Market]:
        """What tells two places apart: all four fields."""
        return (self.cloud, self.machine_type, self.location, self.market)

    def __str__(self) -> str:
        market = "" if self.market == Market.ON_DEMAND else f" ({self.market.value})"
        return f"{self.cloud} {self.machine_type} in {self.location}{market}"


def _place_refusals(places: tuple[Place, ...], pool: str) -> list[InitErrorDetails]:
    """A place named twice, or in a market its cloud does not sell, each at its key."""
    errors: list[InitErrorDetails] = []
    seen: set[tuple[str, str, str, Market]] = set()
    for position, place in enumerate(places):
        if place.key in seen:
            errors.append(
                _error(("places", position), f"names place {place} twice: name each place once")
            )
        seen.add(place.key)
        facts = cloud(place.cloud)
        unsold = unsold_market(facts.name, facts.markets, pool, place.market)
        if unsold:
            errors.append(_error(("places", position, "market"), unsold))
    return errors


def _error(loc: tuple[str | int, ...], message: str) -> InitErrorDetails:
    return {"type": "value_error", "loc": loc, "input": None, "ctx": {"error": ValueError(message)}}


class Pool(Model):
    """One pool's settings. ``machine_type`` and ``location`` are the stack's (empty when
    the deployment predates ``ORCA_POOLS``); ``max`` bounds the pool's machines, the
    stack's and the autoscaler's together.

    ``options`` holds each cloud's options object by kind, read from and written to the key
    of the cloud's kind (``hetzner:``, ``ec2:``), each validated by the model the cloud
    declares (``machines.runtime.clouds``); a cloud's own rules over the pool
    (``Options.pool_refusal``) are kept here, so every layer that makes a pool keeps them.

    ``places``, when given, are where its machines are made, in order of preference (see
    ``Place``); the pool's own ``machine_type``, ``location`` and ``market`` are then its
    first place's (left out, they are taken from it).
    """

    name: str
    machine_type: str = ""
    location: str = ""
    market: Market = Market.ON_DEMAND
    max: int | None = Field(default=None, ge=1)
    options: Mapping[str, Options] = Field(default_factory=dict, exclude=True)
    places: tuple[Place, ...] = ()
    place_order: Literal["written", "price"] = "written"
    """How a create ranks the places: as written, or by the next hour's price at each
    (``machines.runtime.price_order``, with ``ORCA_EXCHANGE_RATES``)."""

    @model_validator(mode="wrap")
    @classmethod
    def _cloud_options(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        """Each cloud's options validated by its own model, at its own key; then the clouds'
        rules over the whole pool, each refusal at the pool's key it names."""
        errors: list[InitErrorDetails] = []
        if isinstance(data, Mapping) and "options" not in data:
            rest, options = dict(data), {}
            for kind, model in options_models().items():
                raw = rest.pop(kind, None)
                if raw is None:
                    continue
                try:
                    options[kind] = raw if isinstance(raw, model) else model.model_validate(raw)
                except ValidationError as error:
                    errors += _details(error, kind)
            data = {**rest, "options": options}
        try:
            pool = handler(data)
        except ValidationError as error:
            errors = _details(error) + errors
        else:
            pool, placed = pool._placed()
            errors += placed
            for chosen in pool.options.values():
                refused = chosen.pool_refusal(pool)
                if refused:
                    key, message = refused
                    errors.append(
                        {
                            "type": "value_error",
                            "loc": (key,),
                            "input": None,
                            "ctx": {"error": ValueError(message)},
                        }
                    )
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return pool

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        return check_pool(name)

    def _placed(self) -> tuple[Self, list[InitErrorDetails]]:
        """This pool with its first place's type, location and market where it leaves them
        out, and what is wrong with its places, each at its key."""
        if not self.places:
            return self, []
        errors = _place_refusals(self.places, self.name)
        first = self.places[0]
        update: dict[str, object] = {}
        for field, key in (("machine_type", "machineType"), ("location", "location"),
                           ("market", "market")):  # fmt: skip
            own, theirs = getattr(self, field), getattr(first, field)
            if field not in self.model_fields_set:
                update[field] = theirs
            elif own != theirs:
                errors.append(
                    _error(
                        (key,),
                        f"is {own}, but the pool's first place is {first}: a pool with places "
                        f"is made at them; leave {key} out, or write its first place's",
                    )
                )
        return self.model_copy(update=update), errors

    def at(self, place: Place) -> Self:
        """This pool's settings at one of its places: that place's type, location and
        market, its options and max, no places (what one cloud makes there)."""
        update = {
            "machine_type": place.machine_type,
            "location": place.location,
            "market": place.market,
            "places": (),
            "place_order": "written",
        }
        return self.model_copy(update=update)

    def on_each_cloud(self, home: str) -> dict[str, Self]:
        """The pool as each cloud of its places makes it, at its first place there (in the
        market of its places there, ``market_on``), its first place's cloud first; a pool
        without places: itself, on ``home``."""
        if not self.places:
            return {home: self}
        views: dict[str, Self] = {}
        for place in self.places:
            if place.cloud not in views:
                market = self.market_on(place.cloud)
                views[place.cloud] = self.at(place).model_copy(update={"market": market})
        return views

    def market_on(self, kind: str) -> Market:
        """The market of the pool's places on cloud ``kind`` as one: theirs when they share
        one, else ``spot-then-on-demand`` (they buy both: a listing there asks for interrupted
        spot machines, and the cloud's notices are read). The pool's own without places."""
        markets = {p.market for p in self.places if p.cloud == kind}
        if not markets:
            return self.market
        return markets.pop() if len(markets) == 1 else Market.SPOT_THEN_ON_DEMAND

    def clouds(self, home: str) -> tuple[str, ...]:
        """The clouds the pool's machines come from, in order of preference: its places'
        clouds, or ``home`` (the provider's kind) for a pool without places."""
        return tuple(dict.fromkeys(p.cloud for p in self.places)) or (home,)

    def spans(self, home: str) -> bool:
        """Whether the pool names more than its one place on ``home``: more places, or a
        place on another cloud (its machines then come through a spanning provider)."""
        return len(self.places) > 1 or self.clouds(home) != (home,)

    @model_serializer(mode="wrap")
    def _with_options(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        for kind, options in self.options.items():
            dumped[kind] = options.model_dump(
                mode=info.mode,
                by_alias=bool(info.by_alias),
                exclude_defaults=info.exclude_defaults,
            )
        return dumped

    def given(self, model: type[OptionsT]) -> OptionsT | None:
        """The pool's options of ``model``'s cloud as written, None when it has none."""
        options = self.options.get(model.kind)
        return options if isinstance(options, model) else None

    def options_of(self, model: type[OptionsT]) -> OptionsT:
        """The pool's options of ``model``'s cloud, its defaults when it has none."""
        return self.given(model) or model()

    def with_options(self, options: Options) -> Self:
        """This pool with ``options`` in place of its cloud's."""
        return self.model_copy(update={"options": {**self.options, options.kind: options}})

    def runtime(self) -> Pool:
        """The runtime's own ``Pool`` of these settings (what a stack's pool exports)."""
        return Pool.model_construct(**{name: getattr(self, name) for name in Pool.model_fields})


def shared_refusal(pools: Iterable[Pool]) -> str:
    """Why pools could not stand together by some cloud's rule; empty when they can."""
    listed = list(pools)
    for model in options_models().values():
        refused = model.pools_refusal(listed)
        if refused:
            return refused
    return ""


def pools_env(pools: Iterable[Pool]) -> dict[str, str]:
    """The ``ORCA_POOLS`` variable of ``pools`` (JSON, camelCase keys, defaults left out)."""
    listed = [p.model_dump(mode="json", by_alias=True, exclude_defaults=True) for p in pools]
    if not listed:
        return {}
    return {ORCA_POOLS: json.dumps(listed, separators=(",", ":"), sort_keys=True)}


def pools_of(env: Mapping[str, str], kind: str = "") -> dict[str, Pool]:
    """The pools a deployment's variables give, by name: ``ORCA_POOLS``, else the old
    ``ORCA_POOL_MAX`` and ``ORCA_POOL_MARKET``. ``kind``, when given, refuses another
    cloud's options. ``SettingsError`` names the variable and what to change."""
    text = single(env, ORCA_POOLS)
    if not text:
        limits, markets = pool_max(env), pool_market(env)
        return {
            name: Pool(name=name, max=limits.get(name), market=markets.get(name, Market.ON_DEMAND))
            for name in [*limits, *(m for m in markets if m not in limits)]
        }
    old = [name for name in (ORCA_POOL_MAX, ORCA_POOL_MARKET) if env.get(name)]
    if old:
        raise SettingsError(
            f"{ORCA_POOLS} and {' and '.join(old)} are both set: {ORCA_POOLS} holds each pool's "
            f"max and market, so unset {' and '.join(old)}"
        )
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    if not isinstance(items, list):
        raise SettingsError(
            f"{ORCA_POOLS} is not a JSON list of pools: write it like "
            '[{"name": "ci", "machineType": "cx23", "location": "fsn1", "max": 20}] '
            "(the stack's env output has it)"
        )
    pools: dict[str, Pool] = {}
    for position, item in enumerate(items, start=1):
        try:
            pool = Pool.model_validate(item)
        except ValidationError as error:
            raise SettingsError(f"{ORCA_POOLS} item {position}: {_first(error)}") from None
        if pool.name in pools:
            raise SettingsError(f"{ORCA_POOLS} names pool {pool.name!r} more than once")
        allowed = {kind, *pool.clouds(kind)}
        other = next((k for k in pool.options if kind and k not in allowed), "")
        if other:
            raise SettingsError(
                f"{ORCA_POOLS} pool {pool.name} has {other} options, but this provider is "
                f"{kind}: remove them, or move the pool to a {other} deployment"
            )
        pools[pool.name] = pool
    shared = shared_refusal(pools.values())
    if shared:
        raise SettingsError(f"{ORCA_POOLS}: {shared}")
    return pools


def _first(error: ValidationError) -> str:
    """A validation error's first problem as one line: where, and what."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


class OptionChange(BaseModel):
    """One option of a pool changed by a stack change: its key (``<kind>.<key>``), old and
    new value, and whether the change replaces the stack's machines (its cloud's
    ``Options.replacing``)."""

    model_config = ConfigDict(frozen=True)

    key: str
    before: str
    after: str
    replaces: bool = False


def _flat(prefix: str, value: object) -> dict[str, str]:
    if isinstance(value, dict):
        flat: dict[str, str] = {}
        for key, inner in value.items():
            flat.update(_flat(f"{prefix}.{key}" if prefix else key, inner))
        return flat
    return {prefix: json.dumps(value) if not isinstance(value, str) else value or '""'}


def _replaces(model: type[Options], key: str) -> bool:
    """Whether a change of ``key`` (or of the object it is inside) replaces a machine."""
    parts = key.split(".")
    return any(".".join(parts[:n]) in model.replacing for n in range(1, len(parts) + 1))


def option_changes(before: Pool | None, after: Pool | None) -> list[OptionChange]:
    """The cloud options that differ between two of a pool's settings, by key (defaults
    written out, so a default set explicitly is no change)."""
    if before is None or after is None:
        return []
    found = []
    models = options_models()
    for kind in sorted(set(before.options) | set(after.options)):
        model = models[kind]
        old = _flat("", before.options_of(model).model_dump(mode="json", by_alias=True))
        new = _flat("", after.options_of(model).model_dump(mode="json", by_alias=True))
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                found.append(
                    OptionChange(
                        key=f"{kind}.{key}",
                        before=old.get(key, "-"),
                        after=new.get(key, "-"),
                        replaces=_replaces(model, key),
                    )
                )
    return found
