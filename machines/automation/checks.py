"""A stack checked before the engine starts: its file, its cloud's credentials, its pools.

``preview``, ``up`` and ``resize`` run the program, and before that the engine refreshes
the stack from the cloud: a mistake found only there costs seconds, a language host's
traceback on stderr and Pulumi's own wording. So the stack file is validated here first
(the program's own rules, secrets not decrypted), the runtime's settings for the stack are
read from this environment and the stack's ``env``, and each pool's type and location are
asked of the cloud (``Provider.sells``, one catalogue request), and its options' images,
networks and placement groups looked up as a create would (``Provider.check_options``, read
only): every problem is one line that names the stack, the key and the fix.

A pool the stack's state already holds as its file has it (the same type, location, image
and options, and no more machines) is not asked about again: the cloud took it when the
stack was brought up, and the operation makes nothing new of it, so an unchanged stack's
preview sends the cloud nothing before the engine starts (``deployed_as_written``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from machines.automation.project import Project, read_yaml, stack_file
from machines.program.clouds import credentials
from machines.program.config.loader import load
from machines.program.config.models import PLACE_KEYS, BaseDeployment, PoolConfig
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT, StackConfig
from machines.runtime.clouds import cloud as facts_of
from machines.runtime.clouds import stack_environ
from machines.runtime.errors import (
    CloudError,
    MachinesError,
    SettingsError,
    UnknownMachineTypeError,
)
from machines.runtime.pool import pools_of
from machines.runtime.provider import Provider

Catalogue = Callable[[BaseDeployment], Mapping[str, str]]
"""Gives a deployment's ``catalogue_env``: an operation's makes it once and passes it on."""


def catalogue_env(deployment: BaseDeployment) -> Mapping[str, str]:
    """The runtime's settings for reading the catalogue (``BaseDeployment.catalogue_env``),
    made anew: the default ``Catalogue`` of a caller that holds no operation."""
    return deployment.catalogue_settings()


def stack_config(stack: str, project: str | Path | Project | None = None) -> StackConfig:
    """The ``config:`` of the stack's file, as the program gets it (secrets not decrypted)."""
    return config_of(stack, read_yaml(stack_file(stack, project)))


def config_of(stack: str, settings: Mapping[str, object]) -> StackConfig:
    """The ``config:`` of a stack file read (``settings``), as the program gets it."""
    return StackConfig.from_stack_file(raw_config(stack, settings))


def raw_config(stack: str, settings: Mapping[str, object]) -> Mapping[str, Any]:
    """The ``config:`` mapping of a stack file read (``settings``), as written."""
    config = settings.get("config") or {}
    if not isinstance(config, Mapping):
        raise MachinesError(f"stack {stack}: its stack file's config is not a mapping")
    return config


def deployment_of(stack: str, project: str | Path | Project | None = None) -> BaseDeployment:
    """The stack's configuration from its stack file, validated (secrets not decrypted)."""
    return load(stack_config(stack, project), stack)


def deployment_from(stack: str, settings: Mapping[str, object]) -> BaseDeployment:
    """The configuration of a stack file read (``settings``), validated."""
    return load(config_of(stack, settings), stack)


def check_resize(
    stack: str,
    index: int,
    size: int,
    project: str | Path | Project | None = None,
    settings: Mapping[str, object] | None = None,
) -> None:
    """Refuse a resize the program would refuse, before anything runs or is written: the
    stack file's configuration with ``pools[index].size`` at ``size``, held to the
    program's own rules (a pool's ``max``, its machines' names), one line per problem.
    ``settings``: the stack file as the operation read it (else it is read here)."""
    if settings is None:
        settings = read_yaml(stack_file(stack, project))
    config = raw_config(stack, settings)
    pools = [dict(p) if isinstance(p, Mapping) else p for p in config[f"{PROJECT}:pools"]]
    pools[index]["size"] = size
    resized = StackConfig.from_stack_file({**config, f"{PROJECT}:pools": pools})
    try:
        load(resized, stack)
    except StackConfigError as error:
        name = pools[index].get("name")
        raise SettingsError(
            f"stack {stack}: pool {name} cannot be resized to {size}, nothing was changed: "
            + "; ".join(f"{key} {why}" for key, why in error.problems)
        ) from None


def check(
    stack: str,
    project: str | Path | Project | None = None,
    environ: Mapping[str, str] | None = None,
) -> BaseDeployment | None:
    """The stack's deployment, checked as the module says; None for a stack without a file
    (the backend's stack is the engine's to find). Raises ``SettingsError`` (for the stack
    file, ``StackConfigError``), one line per problem."""
    path = stack_file(stack, project)
    if not path.is_file():
        return None
    config = config_of(stack, read_yaml(path))
    deployment = load(config, stack)
    env = os.environ if environ is None else environ
    check_deployment(stack, deployment, config, env)
    return deployment


def check_deployment(
    stack: str,
    deployment: BaseDeployment,
    config: StackConfig,
    environ: Mapping[str, str],
    shared: Callable[[BaseDeployment], Provider | None] | None = None,
    *,
    deployed: frozenset[str] = frozenset(),
    catalogue: Catalogue = catalogue_env,
) -> None:
    """Ask the cloud about the stack's pools, as the module says, but those ``deployed``
    names (``deployed_as_written``). ``config``: the stack file's, ``deployment`` loaded
    from it. ``shared``: the operation's provider, when it has one of these settings (else
    one is made here, of ``catalogue``'s settings)."""
    if any(
        key in config.secret_keys and not environ.get(var) for key, var in credentials().items()
    ):
        return  # credentials only the engine can decrypt: the cloud is its to ask
    provider = shared(deployment) if shared is not None else None
    if provider is None:
        provider = checking_provider(stack, deployment, environ, catalogue)
    try:
        problems = pool_problems(deployment, provider, deployed)
    except CloudUnread as unread:
        raise SettingsError(
            f"stack {stack}: its pools could not be checked with {unread.clouds}: {unread.error}"
        ) from None
    if problems:
        raise StackConfigError(stack, problems)


def checking_provider(
    stack: str,
    deployment: BaseDeployment,
    environ: Mapping[str, str],
    catalogue: Catalogue = catalogue_env,
) -> Provider:
    """A provider of the stack file's catalogue settings; a setting missing names the stack."""
    try:
        settings = catalogue(deployment)
        if deployment.spanning():  # one provider per cloud its places name
            settings = deployment.runtime_env(settings)
        return Provider.of(deployment.provider, deployment.owner, stack_environ(environ, settings))
    except SettingsError as error:
        raise SettingsError(
            f"stack {stack}: {error} (its provider, {deployment.provider}, reads it from the "
            "environment)"
        ) from None


def deployed_as_written(
    deployment: BaseDeployment, outputs: Mapping[str, object], catalogue: Catalogue = catalogue_env
) -> frozenset[str]:
    """The pools the stack's state (its ``outputs``) holds as ``deployment`` has them: the
    runtime's settings the check reads (``catalogue_env``) unchanged, the pool's own
    (``ORCA_POOLS``: type, location, market, max, options) the same, and its ``size`` no
    larger. Anything else, or outputs that do not say, is asked again."""
    env, pools = outputs.get("env"), outputs.get("pools")
    if not isinstance(env, dict) or not isinstance(pools, dict):
        return frozenset()
    if any(env.get(key) != value for key, value in catalogue(deployment).items()):
        return frozenset()
    try:
        before = pools_of({str(k): str(v) for k, v in env.items()}, deployment.provider)
    except SettingsError:
        return frozenset()
    same = set()
    for pool in deployment.pools:
        shown = pools.get(pool.name)
        size = shown.get("size") if isinstance(shown, dict) else None
        if (
            isinstance(size, int)
            and pool.size <= size
            and before.get(pool.name) == deployment.runtime_pool(pool)
        ):
            same.add(pool.name)
    return frozenset(same)


def pool_problems(
    deployment: BaseDeployment, provider: Provider, deployed: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """Each pool's type, location and options the cloud refuses, as (key, why), one per
    mistake at the key that holds it: a type its cloud does not have is said at its
    ``machineType`` alone (its place is left out of the options' and architectures'
    checks, which would only say it again), a setting of the stack's own (its image) once
    at its key however many pools it fails. The pools ``deployed`` names are not asked
    about."""
    problems: list[tuple[str, str]] = []
    keys = deployment.keys()
    for i, pool in enumerate(deployment.pools):
        if pool.name in deployed:
            continue
        runtime = deployment.runtime_pool(pool)
        if pool.places:
            known = []
            for j, place in enumerate(pool.places):
                with _reading(place.cloud):
                    found, typed = _sold(deployment, provider.on(place.cloud), i, pool.at(place))
                problems += [(_at_place(key, i, j), why) for key, why in found]
                known += [place] if typed else []
            if not known:
                continue
            runtime = runtime.model_copy(update={"places": tuple(known)})
        else:
            with _reading(deployment.provider):
                found, typed = _sold(deployment, provider, i, pool)
            problems += found
            if not typed:
                continue
        clouds = pool.clouds(deployment.provider) if pool.places else (deployment.provider,)
        with _reading(*clouds):
            found = provider.check_options(runtime, deployment.created_names(), keys)
        problems += [(keys.get(key, f"pools[{i}].{key}"), why) for key, why in found]
    return list(dict.fromkeys(_once_per_setting(problems, frozenset(keys.values()))))


class CloudUnread(MachinesError):
    """A cloud the stack's pools are checked against could not be read (``CloudError``),
    named for the stack's message."""

    def __init__(self, clouds: Sequence[str], error: CloudError) -> None:
        self.clouds = " and ".join(facts_of(kind).name for kind in clouds)
        self.error = error
        super().__init__(f"{self.clouds}: {error}")


@contextmanager
def _reading(*clouds: str) -> Iterator[None]:
    """A ``CloudError`` within as ``CloudUnread`` of ``clouds``."""
    try:
        yield
    except CloudError as error:
        raise CloudUnread(clouds, error) from None


def _once_per_setting(
    problems: list[tuple[str, str]], settings: frozenset[str]
) -> list[tuple[str, str]]:
    """``problems`` with one line for each of the stack's own settings (its image, which
    every pool booting it is checked against): the first."""
    said: set[str] = set()
    kept = []
    for key, why in problems:
        if key in settings:
            if key in said:
                continue
            said.add(key)
        kept.append((key, why))
    return kept


def _sold(
    deployment: BaseDeployment, provider: Provider, i: int, pool: PoolConfig
) -> tuple[list[tuple[str, str]], bool]:
    """Whether ``provider``'s cloud makes ``pool``'s type in its location (one place of a
    pool that names them), and what it would refuse of what the stack creates there; and
    whether the cloud has the type at all (False: nothing more is asked of it)."""
    try:
        provider.arch(pool.machine_type)
    except UnknownMachineTypeError as error:
        return [(f"pools[{i}].machineType", f"pool {pool.name}: {error}")], False
    refusal = provider.sells(pool.machine_type, pool.location)
    if refusal is not None:
        return [(f"pools[{i}].location", f"pool {pool.name}: {refusal}")], True
    return deployment.clouds[provider.kind].created_problems(i, pool, provider.network_zone), True


def _at_place(key: str, i: int, j: int) -> str:
    """A pool's key as its place ``j``'s, for the keys a place has."""
    head = f"pools[{i}]."
    rest = key.removeprefix(head)
    return f"{head}places[{j}].{rest}" if rest in PLACE_KEYS else key
