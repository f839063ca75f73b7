"""The shape every cloud's deployment shares: its provider, owner and pools, and the name rules.

Each cloud's deployment (``machines.program.<cloud>.config``) subclasses ``BaseDeployment``
and builds its nested models on ``Model``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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

from machines.runtime.clouds import cloud as facts_of
from machines.runtime.labels import check_host_name, check_owner, check_pool, machine_name
from machines.runtime.pool import Pool, pools_env, shared_refusal
from machines.runtime.settings import unsold_market


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
    autoscaler's together.
    """

    model_config = ConfigDict(populate_by_name=False)

    machine_type: Name
    location: Name
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
            facts = facts_of(self.provider)
            refused = unsold_market(facts.name, facts.markets, pool.name, pool.market)
            if refused:
                found.append((f"pools[{i}].market", refused))
            for other in sorted(kind for kind in pool.options if kind != self.provider):
                found.append(
                    (
                        f"pools[{i}].{other}",
                        f"is {other}'s options, but this stack is on {self.cloud}, which has "
                        f"none of them: remove it (this cloud's options go under "
                        f"{self.provider}:)",
                    )
                )
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
        shared = shared_refusal(self.runtime_pool(pool) for pool in self.pools)
        if shared:
            found.append(("pools", shared))
        return found

    def env(self) -> dict[str, str]:
        """The runtime's settings for this deployment, as variables."""
        raise NotImplementedError

    def created_names(self) -> frozenset[str]:
        """Cloud names of what the stack itself creates and pools may join (networks,
        placement groups): not looked for in the cloud before the stack is up."""
        return frozenset()

    def created_problems(
        self, index: int, pool: PoolConfig, network_zone: Callable[[str], str]
    ) -> list[tuple[str, str]]:
        """What the cloud would refuse of ``pool`` with what the stack itself creates (a
        network of another zone than the pool's location, say), as (key, why);
        ``network_zone`` answers a location's zone as the cloud does (read only)."""
        return []

    def runtime_pool(self, pool: PoolConfig) -> Pool:
        """The runtime's settings of ``pool`` (``ORCA_POOLS``); a cloud maps the names of
        what the stack creates to their cloud names here."""
        return pool.runtime()

    def catalogue_env(self) -> dict[str, str]:
        """The runtime's settings before the stack has made what it creates: enough for a
        provider that only reads the cloud's catalogue (``arch``, ``sells``)."""
        return self.env()

    def runtime_env(self, settings: Mapping[str, str]) -> dict[str, str]:
        """The cloud's ``settings`` with the pools' (``ORCA_POOLS``)."""
        return {**settings, **pools_env(self.runtime_pool(pool) for pool in self.pools)}
