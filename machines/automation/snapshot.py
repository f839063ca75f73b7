"""What one run knows of a stack now, each fact read once: its outputs, its runtime provider
and each pool's machines.

A preview counts its pools against the snapshot taken before it, and the CI comment and
``status`` cost them from the same one: the outputs are read once, one provider is built
from one source of settings (``runtime_of``: what the stack exported when it was last
brought up, else what its file gives, enough for reading), and it lists each pool once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, ValidationError

from machines.automation.checks import Catalogue, catalogue_env
from machines.automation.engine import EngineError
from machines.automation.project import short_name
from machines.program.config.models import BaseDeployment, PoolConfig
from machines.program.placement import Placement, placement_of
from machines.runtime.clouds import stack_environ
from machines.runtime.errors import MachinesError, SettingsError
from machines.runtime.models import Machine
from machines.runtime.pool import Place, Pool, pools_of
from machines.runtime.provider import Provider
from machines.runtime.settings import ORCA_STACK
from machines.runtime.span import SpanningProvider


class StackRuntime(BaseModel):
    """What a stack's outputs tell the runtime: provider kind, owner and settings variables."""

    model_config = ConfigDict(frozen=True)

    provider: str
    owner: str
    env: dict[str, str]

    @classmethod
    def of(cls, stack: str, outputs: Mapping[str, object]) -> StackRuntime:
        """From the stack's ``provider``, ``owner`` and ``env`` outputs, ``env`` naming the
        stack (``ORCA_STACK``) where an older ``up`` left it out; ``EngineError`` naming the
        outputs missing."""
        try:
            made = cls.model_validate(
                {key: outputs.get(key) for key in ("provider", "owner", "env")}
            )
        except ValidationError as error:
            missing = sorted({str(e["loc"][0]) for e in error.errors(include_url=False)})
            raise EngineError(
                f"stack {stack} has no usable output {', '.join(missing)}: "
                f"bring it up first (orca-machines up {stack})"
            ) from None
        return made.model_copy(update={"env": {ORCA_STACK: short_name(stack), **made.env}})


@dataclass(frozen=True)
class StackSnapshot:
    """A stack now: its file's deployment (None without a file), its outputs (empty for a
    stack never brought up), its runtime provider (None, with ``refused``, when it could not
    be built) and each pool's machines (None, with ``failures[pool]``, when not listed)."""

    stack: str
    deployment: BaseDeployment | None
    outputs: Mapping[str, object]
    owner: str = ""
    provider: Provider | None = None
    refused: MachinesError | None = None
    listed: Mapping[str, list[Machine] | None] = field(default_factory=dict)
    failures: Mapping[str, MachinesError] = field(default_factory=dict)
    _placements: dict[tuple[str, tuple[Place, ...]], Placement] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def kept(self) -> dict[str, dict[str, object]]:
        """The stack's ``pools`` output: what it keeps now; empty for a stack not brought up."""
        pools = self.outputs.get("pools")
        if not isinstance(pools, dict):
            return {}
        return {str(k): v for k, v in pools.items() if isinstance(v, dict)}

    @property
    def exported(self) -> dict[str, str]:
        """The runtime's settings the stack exported (its ``env`` output); empty when none."""
        env = self.outputs.get("env")
        return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}

    @functools.cached_property
    def exported_pools(self) -> dict[str, Pool]:
        """Every pool's settings as the stack last exported them (``ORCA_POOLS``), read
        once; empty when it exported none (or none readable)."""
        try:
            return pools_of(self.exported) if self.exported else {}
        except SettingsError:
            return {}

    def placement(self, pool: PoolConfig, out: tuple[Place, ...] = ()) -> Placement | None:
        """Where the stack's machines of ``pool``, a pool that names its places, are once
        an ``up`` is applied, as the program places them from this snapshot's listing (the
        places ``out`` passed over), found once; None when the snapshot cannot say (no
        spanning provider or file, a catalogue out of reach)."""
        provider, deployment = self.provider, self.deployment
        if not pool.places or not isinstance(provider, SpanningProvider) or deployment is None:
            return None
        key = (pool.name, out)
        if key not in self._placements:
            listed = self.listed.get(pool.name) or []
            try:
                self._placements[key] = placement_of(provider, deployment, pool, listed, out)
            except MachinesError:
                return None  # not kept: the next question asks again
        return self._placements[key]

    def machines(self) -> dict[str, list[Machine]] | None:
        """Every pool's machines, or None when a pool (or the provider) could not be listed."""
        if self.refused is not None or any(m is None for m in self.listed.values()):
            return None
        return {pool: machines for pool, machines in self.listed.items() if machines is not None}

    def error(self) -> MachinesError | None:
        """Why the pools are not all listed: the provider's refusal, else the first pool's."""
        return self.refused or next(iter(self.failures.values()), None)


def runtime_of(
    stack: str,
    deployment: BaseDeployment | None,
    outputs: Mapping[str, object],
    catalogue: Catalogue = catalogue_env,
) -> StackRuntime | None:
    """The runtime's kind, owner and settings for the stack: those it exported when it was
    last brought up (ids of what it created, such as a security group, are known only
    there), else those its file gives, enough for reading (``catalogue``, with the
    pools' max and market); None for neither."""
    if isinstance(outputs.get("pools"), dict) and outputs.get("pools"):
        return StackRuntime.of(stack, outputs)
    if deployment is None:
        return None
    return StackRuntime(
        provider=deployment.provider,
        owner=deployment.owner,
        env=deployment.runtime_env(catalogue(deployment)),
    )


def take(
    stack: str,
    deployment: BaseDeployment | None,
    outputs: Mapping[str, object],
    environ: Mapping[str, str],
    *,
    provider: Provider | None = None,
    shared: SharedListing | None = None,
) -> StackSnapshot:
    """The stack's snapshot from its ``outputs``, read by the caller once: each pool of its
    state and of ``deployment`` listed by one provider (``provider``, the operation's, else
    one made of its settings over ``environ``), from ``shared`` when given.

    No pool: nothing is listed.
    """
    try:
        runtime = runtime_of(stack, deployment, outputs)
        if runtime is None:
            return StackSnapshot(stack, deployment, outputs)
        if provider is None:
            provider = Provider.of(
                runtime.provider, runtime.owner, stack_environ(environ, runtime.env)
            )
    except MachinesError as error:
        return StackSnapshot(stack, deployment, outputs, refused=error)
    return listed_snapshot(stack, deployment, outputs, provider, owner=runtime.owner, shared=shared)


def listed_snapshot(
    stack: str,
    deployment: BaseDeployment | None,
    outputs: Mapping[str, object],
    provider: Provider,
    *,
    owner: str,
    shared: SharedListing | None = None,
) -> StackSnapshot:
    """The snapshot of each pool of the stack's state and of ``deployment`` listed by
    ``provider`` (of ``owner``), from ``shared`` when given."""
    found, failures = listing(provider, pool_names(deployment, outputs), shared)
    return StackSnapshot(stack, deployment, outputs, owner, provider, None, found, failures)


def pool_names(deployment: BaseDeployment | None, outputs: Mapping[str, object]) -> list[str]:
    """The pools of the stack's state, then those only its file has."""
    state = outputs.get("pools")
    names = [str(pool) for pool in state] if isinstance(state, dict) else []
    if deployment is not None:
        names += [p.name for p in deployment.pools if p.name not in names]
    return names


def listing(
    provider: Provider, names: list[str], shared: SharedListing | None = None
) -> tuple[dict[str, list[Machine] | None], dict[str, MachinesError]]:
    """Each pool's machines (None, with its failure, when not listed): from ``shared``
    when it holds the provider's owner, else from the provider's own listing."""
    listed: dict[str, list[Machine] | None] = {}
    failures: dict[str, MachinesError] = {}
    if shared is not None:
        try:
            owned = shared.machines(provider)
        except MachinesError as error:
            return dict.fromkeys(names), dict.fromkeys(names, error)
        if owned is not None:
            return {name: [m for m in owned if m.pool == name] for name in names}, {}
    for name in names:
        try:
            listed[name] = provider.machines(name)
        except MachinesError as error:
            listed[name] = None
            failures[name] = error
    return listed, failures


class SharedListing:
    """The machines of several stacks' owners, from one listing per cloud account
    (``Provider.listed_with``), for a report over those stacks: CI's comment counts every
    stack of one account from one request, not one per stack.

    ``peers`` gives the other stacks' providers, made when the first stack is counted; a
    stack whose provider cannot be made then, or that has no owner, lists on its own. A
    listing that fails is not kept: the next stack of that account lists again.
    """

    def __init__(self, peers: Callable[[], Sequence[Provider]]) -> None:
        self._peers = peers
        self._listed: dict[tuple[str, ...], dict[str, list[Machine]]] = {}

    def machines(self, provider: Provider) -> list[Machine] | None:
        """Every pool machine of ``provider``'s owner from its account's listing, made when
        first asked; None for a provider without an owner (it lists on its own)."""
        if not provider.owner:
            return None
        account = provider.account()
        listed = self._listed.get(account, {})
        if provider.owner not in listed:
            peers = [
                peer
                for peer in self._peers()
                if peer is not provider
                and peer.owner
                and peer.owner not in listed
                and type(peer) is type(provider)
                and peer.account() == account
            ]
            listed = {**listed, **provider.listed_with(peers)}
            self._listed[account] = listed
        return listed[provider.owner]
