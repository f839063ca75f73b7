"""A stack checked before the engine starts: its file, its cloud's credentials, its pools.

``preview``, ``up`` and ``resize`` run the program, and before that the engine refreshes
the stack from the cloud: a mistake found only there costs seconds, a language host's
traceback on stderr and Pulumi's own wording. So the stack file is validated here first
(the program's own rules, secrets not decrypted), the runtime's settings for the stack are
read from this environment and the stack's ``env``, and each pool's type and location are
asked of the cloud (``Provider.sells``, one catalogue request), and its options' images,
networks and placement groups looked up as a create would (``Provider.check_options``, read
only): every problem is one line that names the stack, the key and the fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from machines.automation.project import project_root, read_yaml, stack_file
from machines.program.config.loader import CREDENTIALS, load
from machines.program.config.models import BaseDeployment
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT, StackConfig
from machines.runtime.errors import (
    CloudError,
    MachinesError,
    SettingsError,
    UnknownMachineTypeError,
)
from machines.runtime.provider import Provider


def stack_config(stack: str, project: str | Path | None = None) -> StackConfig:
    """The ``config:`` of the stack's file, as the program gets it (secrets not decrypted)."""
    config = read_yaml(stack_file(stack, project_root(project))).get("config") or {}
    if not isinstance(config, Mapping):
        raise MachinesError(f"stack {stack}: its stack file's config is not a mapping")
    return StackConfig.from_stack_file(config)


def deployment_of(stack: str, project: str | Path | None = None) -> BaseDeployment:
    """The stack's configuration from its stack file, validated (secrets not decrypted)."""
    return load(stack_config(stack, project), stack)


def check_resize(stack: str, index: int, size: int, project: str | Path | None = None) -> None:
    """Refuse a resize the program would refuse, before anything runs or is written: the
    stack file's configuration with ``pools[index].size`` at ``size``, held to the
    program's own rules (a pool's ``max``, its machines' names), one line per problem."""
    config = read_yaml(stack_file(stack, project_root(project))).get("config") or {}
    if not isinstance(config, Mapping):
        raise MachinesError(f"stack {stack}: its stack file's config is not a mapping")
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
    project: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> BaseDeployment | None:
    """The stack's deployment, checked as the module says; None for a stack without a file
    (the backend's stack is the engine's to find). Raises ``SettingsError`` (for the stack
    file, ``StackConfigError``), one line per problem."""
    root = project_root(project)
    if not stack_file(stack, root).is_file():
        return None
    config = stack_config(stack, root)
    deployment = load(config, stack)
    env = os.environ if environ is None else environ
    if any(key in config.secret_keys and not env.get(var) for key, var in CREDENTIALS.items()):
        return deployment  # credentials only the engine can decrypt: the cloud is its to ask
    try:
        provider = Provider.of(
            deployment.provider, deployment.owner, {**env, **deployment.catalogue_env()}
        )
    except SettingsError as error:
        raise SettingsError(
            f"stack {stack}: {error} (its provider, {deployment.provider}, reads it from the "
            "environment)"
        ) from None
    problems = []
    try:
        for i, pool in enumerate(deployment.pools):
            try:
                provider.arch(pool.machine_type)
            except UnknownMachineTypeError as error:
                problems.append((f"pools[{i}].machineType", f"pool {pool.name}: {error}"))
                continue
            refusal = provider.sells(pool.machine_type, pool.location)
            if refusal is not None:
                problems.append((f"pools[{i}].location", f"pool {pool.name}: {refusal}"))
            for key, why in provider.check_options(
                deployment.runtime_pool(pool), deployment.created_names()
            ):
                problems.append((key if key == "image" else f"pools[{i}].{key}", why))
    except CloudError as error:
        raise SettingsError(
            f"stack {stack}: its pools could not be checked with {deployment.provider}: {error}"
        ) from None
    if problems:
        raise StackConfigError(stack, problems)
    return deployment
