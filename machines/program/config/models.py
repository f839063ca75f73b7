"""The shape every cloud's deployment shares: its provider, owner and pools, and the name rules.

Each cloud's deployment (``machines.program.<cloud>.config``) subclasses ``BaseDeployment``
and builds its nested models on ``Model``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    SecretStr,
    StrictInt,
    Tag,
    field_validator,
)
from pydantic.alias_generators import to_camel

from machines.runtime.clouds import cloud as facts_of
from machines.runtime.clouds import unsold_market
from machines.runtime.labels import check_host_name, check_owner, check_pool, machine_name
from machines.runtime.pool import Place, Pool, pools_env, shared_refusal
from machines.runtime.price_order import missing_rates
from machines.runtime.settings import (
    ORCA_EXCHANGE_RATES,
    ORCA_POOLS,
    ORCA_STACK,
    exchange_rates_env,
)


class Model(BaseModel):
    """A stack file's object: frozen, camelCase keys, no unknown key, no input in errors."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, alias_generator=to_camel
    )


Name = Annotated[str, Field(min_length=1)]


MAX_POOL_SIZE = 1000
"""The most machines one pool of a stack keeps: the program declares one resource per
machine, and BENCHMARKS.md shows what a pool of this size costs to evaluate."""

NO_HYPHEN = (
    "has a '-': names made of it are <owner>-<name>, so with a '-' inside, owners 'a' and "
    "'a-b' could make the same name; use letters and digits only, e.g. {example}"
)


def _without_hyphen(name: str, example: str) -> str:
    """A stack's pool or shared name, refused with a '-' inside: the owner's name is what
    comes before the last '-' of what the stack makes, so two owners never share a name."""
    if "-" in name:
        raise ValueError(f"{name!r} " + NO_HYPHEN.format(example=example))
    return name


class PoolConfig(Pool):
    """One pool as the stack file configures it: the runtime's ``Pool`` (type, location,
    market, max, each cloud's options, with their rules) and what only a stack has, the
    ``size`` machines it keeps and their ``userData``. ``pool.runtime()`` is what reaches the
    runtime (``ORCA_POOLS``); ``max`` bounds the pool's machines, the stack's and the
    autoscaler's together. A pool with ``places`` leaves its type and location out (they
    are its first place's); one without names them.
    """

    model_config = ConfigDict(populate_by_name=False)

    machine_type: str = ""
    location: str = ""
    size: StrictInt = Field(ge=0, le=MAX_POOL_SIZE)
    max: StrictInt | None = Field(default=None, ge=1)
    user_data: SecretStr = Field(default=SecretStr(""), repr=False)

    @field_validator("name")
    @classmethod
    def _pool(cls, name: str) -> str:
        return _without_hyphen(check_pool(name), "x86 or arm64")


def owned_name(name: str) -> str:
    return _without_hyphen(check_host_name(name, "name"), "pools or workers")


def _name_or_object(value: Any) -> str | None:
    if isinstance(value, str):
        return "<name>"
    if isinstance(value, Mapping):
        return "<new>"
    return None


def either(what: str) -> Discriminator:
    return Discriminator(
        _name_or_object,
        custom_error_type="name_or_object",
        custom_error_message=f"must be the name of an existing {what} or an object to create one",
    )


ExistingName = Annotated[Name, Tag("<name>")]


class BaseDeployment(Model):
    """What every deployment has: its provider, owner and pools.

    Each cloud's deployment adds its settings, names the provider configuration keys it
    reads (``provider_keys``) and the models it nests (``models``, for spelling hints).
    """

    provider_keys: ClassVar[tuple[str, ...]] = ()
    provider_namespace: ClassVar[str] = ""
    provider_config: ClassVar[frozenset[str]] = frozenset()
    """The namespace of the cloud provider plugin's configuration (``hcloud``), and the keys
    of it the official provider reads: any other key there is a typo the plugin would
    ignore, sending the stack to the cloud's defaults (its real API)."""
    missing_hints: ClassVar[dict[str, str]] = {}
    models: ClassVar[tuple[type[BaseModel], ...]] = ()
    credentials: ClassVar[dict[str, str]] = {}
    """Provider configuration keys that hold credentials (``hcloud:token``), and the
    variable that can carry each instead: refused in plain text, handed to the reaper."""
    setting_keys: ClassVar[dict[str, str]] = {}
    """Each variable of the runtime's settings this deployment's ``env`` writes
    (``Cloud.settings``), and its key that sets it (``ORCA_EC2_IMAGE``: ``image``; empty for
    one the stack makes, with no key of its own): how a check of the stack names a setting
    the runtime names by its variable."""
    plugin: ClassVar[str] = ""
    """The name of the cloud's resource plugin (``pulumi plugin ls``)."""
    machine_resource: ClassVar[str] = ""
    machine_labels: ClassVar[str] = ""
    machine_type_key: ClassVar[str] = ""
    """The type token of the resource a pool's machine is, its input holding the machine's
    labels (tags) and its property that is the machine's type (changed in place, it powers
    the machine off until the change is done)."""
    machine_name_label: ClassVar[str] = ""
    """The label (tag) that holds a machine's cloud name, for a resource with no ``name``
    input (EC2's ``Name`` tag)."""

    provider: str
    owner: str
    pools: tuple[PoolConfig, ...]
    exchange_rates: dict[
        Annotated[str, Field(pattern="^[A-Z]{3}$")], Annotated[Decimal, Field(gt=0)]
    ] = {}
    """What one unit of each currency is worth (``EUR: 1, USD: 0.86``), for pools ranking
    their places by price: the runtime's ``ORCA_EXCHANGE_RATES``."""

    _others: dict[str, BaseDeployment] = PrivateAttr(default_factory=dict)
    """The other clouds' settings of a stack whose pools span clouds (``orca-machines:<kind>``),
    each its own cloud's deployment with no pools of its own, by kind."""

    @field_validator("owner")
    @classmethod
    def _owner(cls, owner: str) -> str:
        if not owner:
            raise ValueError("is empty: a stack's machines always carry an owner label")
        return check_owner(owner)

    @property
    def cloud(self) -> str:
        """How messages call the stack's cloud (its runtime facts' ``name``)."""
        return facts_of(self.provider).name

    _refused: frozenset[str] = PrivateAttr(default=frozenset())
    """Other clouds whose settings the stack gives but were refused (said at their keys):
    their places are not refused again for having none."""

    _stack: str = PrivateAttr(default="")
    """The name of the stack this is the configuration of (``load``'s), exported as
    ``ORCA_STACK``; empty when not known."""

    def with_others(
        self,
        others: Mapping[str, BaseDeployment],
        refused: frozenset[str] = frozenset(),
        *,
        stack: str = "",
    ) -> Self:
        """This deployment of stack ``stack`` with the settings of the other clouds its
        pools' places name (``refused``: those given but not valid)."""
        made = self.model_copy()
        made._others = dict(others)
        made._refused = refused
        made._stack = stack
        return made

    @property
    def clouds(self) -> dict[str, BaseDeployment]:
        """Each cloud's deployment of the stack by kind, this (the home cloud's) first."""
        return {self.provider: self, **self._others}

    def on(self, kind: str) -> BaseDeployment:
        """Cloud ``kind``'s deployment as its program builds it: its settings, and the
        stack's pools that make machines there, each at its first place there (its type,
        location and market; no places). On the home cloud of a stack whose pools name no
        places: itself."""
        if kind == self.provider and not any(pool.places for pool in self.pools):
            return self
        views = [pool.on_each_cloud(self.provider).get(kind) for pool in self.pools]
        placed = tuple(view for view in views if view is not None)
        return self.clouds[kind].model_copy(update={"pools": placed})

    def spanning(self) -> bool:
        """Whether some pool names its places (so the stack asks where to make machines)."""
        return any(pool.spans(self.provider) for pool in self.pools)

    def keys(self) -> dict[str, str]:
        """Every runtime settings variable the stack's settings make, and the stack file's
        key that sets it: the home cloud's keys as they are, another cloud's under its kind
        (``ec2.image``), its provider's own keys (``aws:region``) where they stand."""
        found = {ORCA_POOLS: "pools", ORCA_EXCHANGE_RATES: "exchangeRates"}
        for kind, deployment in self.clouds.items():
            for variable, key in deployment.setting_keys.items():
                if not key:
                    continue
                home = kind == self.provider or ":" in key
                found[variable] = key if home else f"{kind}.{key}"
        return found

    def owned(self, name: str) -> str:
        """The cloud name of shared infrastructure the stack creates: ``<owner>-<name>``."""
        return f"{self.owner}-{name}"

    def problems(self) -> list[tuple[str, str]]:
        """What the field rules cannot see: names that clash or make no host names, and
        each place on the cloud it names."""
        found: list[tuple[str, str]] = []
        first: dict[str, int] = {}
        for i, pool in enumerate(self.pools):
            if pool.name in first:
                found.append(
                    (f"pools[{i}].name", f"pool {pool.name!r} is already pools[{first[pool.name]}]")
                )
                continue
            first[pool.name] = i
            found += [(f"pools[{i}].{key}", why) for key, why in self._pool_problems(pool)]
        shared = shared_refusal(self.runtime_pool(pool) for pool in self.pools)
        if shared:
            found.append(("pools", shared))
        return found

    def _pool_problems(self, pool: PoolConfig) -> list[tuple[str, str]]:
        """One pool's problems, at keys under the pool's."""
        found = self._placed_problems(pool)
        kinds = pool.clouds(self.provider)
        for other in sorted(kind for kind in pool.options if kind not in kinds):
            found.append((other, self._foreign_options(other, pool)))
        if pool.max is not None and pool.max < pool.size:
            found.append(
                (
                    "max",
                    f"is {pool.max}, below the pool's size {pool.size}: raise max or "
                    "lower size (max counts the stack's machines too)",
                )
            )
        missing = missing_rates(pool, self.exchange_rates)
        if missing:
            example = ", ".join(f"{c}: ..." for c in missing)
            found.append(
                (
                    "placeOrder",
                    f"is price, but exchangeRates has no rate for {', '.join(missing)}: name "
                    f"what one unit of each is worth in one unit of your choosing "
                    f"(exchangeRates: {{{example}}}), or order the places as written",
                )
            )
        try:
            for index in (1, pool.size):
                machine_name(self.owner, pool.name, max(index, 1))
        except ValueError as error:
            found.append(
                (
                    "name",
                    f"{error}; machines are named <owner>-<pool>-<n>.stack, so choose an "
                    "owner (default: the stack's name) and a pool name that make host names",
                )
            )
        return found

    def _foreign_options(self, kind: str, pool: PoolConfig) -> str:
        """Why options of cloud ``kind`` are refused on ``pool``: none of its machines are
        made there."""
        if not pool.places:
            return (
                f"is {kind}'s options, but this stack is on {self.cloud}, which has none of "
                f"them: remove it (this cloud's options go under {self.provider}:)"
            )
        kinds = pool.clouds(self.provider)
        on = " and ".join(facts_of(k).name for k in kinds)
        return (
            f"is {kind}'s options, but this pool's places are on {on}, none on "
            f"{facts_of(kind).name}: remove it (its places' options go under "
            f"{' or '.join(f'{k}:' for k in kinds)})"
        )

    def _placed_problems(self, pool: PoolConfig) -> list[tuple[str, str]]:
        """What each of the pool's places is refused by its cloud's deployment (the pool
        itself, without places, by this one), at the place's keys."""
        if not pool.places:
            missing = [k for k, v in (("machineType", pool.machine_type),
                                      ("location", pool.location)) if not v]  # fmt: skip
            if missing:
                return [(key, "is missing (or name the pool's places)") for key in missing]
            return self.place_problems(pool)
        found: list[tuple[str, str]] = []
        for j, place in enumerate(pool.places):
            deployment = self.clouds.get(place.cloud)
            if deployment is None and place.cloud in self._refused:
                continue
            if deployment is None:
                found.append((f"places[{j}].cloud", self._unset_cloud(place)))
                continue
            for key, why in deployment.place_problems(pool.at(place)):
                found.append((f"places[{j}].{key}" if key in PLACE_KEYS else key, why))
        return found

    def _unset_cloud(self, place: Place) -> str:
        name = facts_of(place.cloud).name
        return (
            f"is {place.cloud}, but this stack has no {name} settings: add them under "
            f"orca-machines:{place.cloud} (see docs/operating.md), or remove the place"
        )

    def place_problems(self, pool: PoolConfig) -> list[tuple[str, str]]:
        """What this cloud refuses of ``pool`` (one place's settings: its type, location
        and market), as (key under the pool, why): a market it does not sell."""
        facts = facts_of(self.provider)
        refused = unsold_market(facts.name, facts.markets, pool.name, pool.market)
        return [("market", refused)] if refused else []

    def env(self) -> dict[str, str]:
        """The runtime's settings of this cloud, as variables."""
        raise NotImplementedError

    def settings(self) -> dict[str, str]:
        """The runtime's settings of every cloud of the stack, and its exchange rates."""
        merged = {k: v for d in self.clouds.values() for k, v in d.env().items()}
        return {**merged, **exchange_rates_env(self.exchange_rates)}

    def catalogue_settings(self) -> dict[str, str]:
        """``settings`` before the stack has made what it creates (``catalogue_env``)."""
        merged = {k: v for d in self.clouds.values() for k, v in d.catalogue_env().items()}
        return {**merged, **exchange_rates_env(self.exchange_rates)}

    def created_names(self) -> frozenset[str]:
        """Cloud names of what the stack itself creates and pools may join (networks,
        placement groups), on every cloud: not looked for before the stack is up."""
        return frozenset().union(*(d.own_created_names() for d in self.clouds.values()))

    def own_created_names(self) -> frozenset[str]:
        """``created_names`` of this cloud's settings alone."""
        return frozenset()

    def created_problems(
        self, index: int, pool: PoolConfig, network_zone: Callable[[str], str]
    ) -> list[tuple[str, str]]:
        """What the cloud would refuse of ``pool`` with what the stack itself creates (a
        network of another zone than the pool's location, say), as (key, why);
        ``network_zone`` answers a location's zone as the cloud does (read only)."""
        return []

    def runtime_pool(self, pool: PoolConfig) -> Pool:
        """The runtime's settings of ``pool`` (``ORCA_POOLS``), each cloud's options with
        the cloud names of what the stack creates (``named``)."""
        runtime = pool.runtime()
        for deployment in self.clouds.values():
            runtime = deployment.named(runtime)
        return runtime

    def named(self, pool: Pool) -> Pool:
        """``pool`` with this cloud's options naming what the stack creates by its cloud name."""
        return pool

    def catalogue_env(self) -> dict[str, str]:
        """The runtime's settings of this cloud before the stack has made what it creates:
        enough for a provider that only reads the cloud's catalogue (``arch``, ``sells``)."""
        return self.env()

    def runtime_env(self, settings: Mapping[str, str]) -> dict[str, str]:
        """The clouds' ``settings`` with the pools' (``ORCA_POOLS``) and the stack's name
        (``ORCA_STACK``, when known): the stack's ``env`` output."""
        named = {ORCA_STACK: self._stack} if self._stack else {}
        return {**settings, **pools_env(self.runtime_pool(pool) for pool in self.pools), **named}


PLACE_KEYS = frozenset({"machineType", "location", "market"})
"""A pool's keys that are its place's: a place's problem with one is at the place's key."""
