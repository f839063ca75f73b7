"""The shape every cloud's deployment shares: its provider, owner and pools, and the name rules.

Each cloud's deployment (``machines.program.<cloud>.config``) subclasses ``BaseDeployment``
and builds its nested models on ``Model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    StrictInt,
    Tag,
    field_validator,
)
from pydantic.alias_generators import to_camel

from machines.labels import check_host_name, check_owner, check_pool, machine_name
from machines.models import Market
from machines.settings import pool_market_env, pool_max_env, unsold_market


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


class PoolConfig(Model):
    """One pool as the stack file configures it, for the ``Pool`` component to make:
    ``size`` machines of a type in a location.

    ``max`` (optional) bounds the pool's machines, the stack's and the autoscaler's
    together: the runtime's ``create`` refuses to pass it (``ORCA_POOL_MAX``). ``market``
    is where the pool's machines, kept and autoscaled, are bought (``ORCA_POOL_MARKET``).
    """

    name: str
    machine_type: Name
    location: Name
    size: StrictInt = Field(ge=0, le=MAX_POOL_SIZE)
    max: StrictInt | None = Field(default=None, ge=1)
    market: Market = Market.ON_DEMAND
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
    cloud: ClassVar[str] = ""
    markets: ClassVar[frozenset[Market]] = frozenset({Market.ON_DEMAND})
    """The cloud's name and the markets it sells (``clouds.<kind>.settings``)."""

    provider: str
    owner: str
    pools: tuple[PoolConfig, ...]

    @field_validator("owner")
    @classmethod
    def _owner(cls, owner: str) -> str:
        if not owner:
            raise ValueError("is empty: a stack's machines always carry an owner label")
        return check_owner(owner)

    def owned(self, name: str) -> str:
        """The cloud name of shared infrastructure the stack creates: ``<owner>-<name>``."""
        return f"{self.owner}-{name}"

    def problems(self) -> list[tuple[str, str]]:
        """What the field rules cannot see: names that clash or make no host names."""
        found: list[tuple[str, str]] = []
        first: dict[str, int] = {}
        for i, pool in enumerate(self.pools):
            if pool.name in first:
                found.append(
                    (f"pools[{i}].name", f"pool {pool.name!r} is already pools[{first[pool.name]}]")
                )
                continue
            first[pool.name] = i
            refused = unsold_market(self.cloud, self.markets, pool.name, pool.market)
            if refused:
                found.append((f"pools[{i}].market", refused))
            if pool.max is not None and pool.max < pool.size:
                found.append(
                    (
                        f"pools[{i}].max",
                        f"is {pool.max}, below the pool's size {pool.size}: raise max or "
                        "lower size (max counts the stack's machines too)",
                    )
                )
            try:
                for index in (1, pool.size):
                    machine_name(self.owner, pool.name, max(index, 1))
            except ValueError as error:
                found.append(
                    (
                        f"pools[{i}].name",
                        f"{error}; machines are named <owner>-<pool>-<n>.stack, so choose an "
                        "owner (default: the stack's name) and a pool name that make host names",
                    )
                )
        return found

    def env(self) -> dict[str, str]:
        """The runtime's settings for this deployment, as variables."""
        raise NotImplementedError

    def catalogue_env(self) -> dict[str, str]:
        """The runtime's settings before the stack has made what it creates: enough for a
        provider that only reads the cloud's catalogue (``arch``, ``sells``)."""
        return self.env()

    def pool_max(self) -> dict[str, int]:
        """Each pool's max, for pools that have one (the ``ORCA_POOL_MAX`` variable)."""
        return {pool.name: pool.max for pool in self.pools if pool.max is not None}

    def pool_market(self) -> dict[str, Market]:
        """Each pool's market (the ``ORCA_POOL_MARKET`` variable leaves on-demand out)."""
        return {pool.name: pool.market for pool in self.pools}

    def runtime_env(self, settings: Mapping[str, str]) -> dict[str, str]:
        """The cloud's ``settings`` with what the pools add: their max and their market."""
        return {
            **settings,
            **pool_max_env(self.pool_max()),
            **pool_market_env(self.pool_market()),
        }
