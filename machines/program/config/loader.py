"""``load``: a stack's configuration made into the deployment its ``provider`` names.

Every problem is found before anything is declared, and said at once, one line per key
(``StackConfigError``): the stack file's keys, the cloud provider plugin's keys, and
credentials kept in plain text.
"""

from __future__ import annotations

import difflib

from pydantic import ValidationError

from machines.program.clouds import credentials, deployments
from machines.program.config.models import BaseDeployment
from machines.program.config.problems import StackConfigError, problem
from machines.program.config.stack_config import PROJECT, StackConfig, decode


def load(config: StackConfig, stack: str) -> BaseDeployment:
    """The validated deployment of ``stack``; raise ``StackConfigError`` listing every problem."""
    problems = _plain_credentials(config)
    prefix = f"{PROJECT}:"
    raw: dict[str, object] = {}
    for key, value in config.values.items():
        if key.startswith(prefix):
            name = key.removeprefix(prefix)
            if ":" in name:
                problems.append((name, "unknown key: remove it or fix its spelling"))
            else:
                raw[name] = decode(value)
    kind = raw.get("provider")
    kinds = deployments()
    cls = kinds.get(kind) if isinstance(kind, str) else None
    if cls is None:
        shown = "is not set" if kind is None else f"{kind!r} is not a provider"
        problems.append(("provider", f"{shown}: use {' or '.join(kinds)}"))
        raise StackConfigError(stack, problems)
    raw.setdefault("owner", stack)
    sections = {k: raw.pop(k) for k in kinds if k in raw}
    if kind in sections:
        sections.pop(kind)
        problems.append(
            (
                str(kind),
                f"is this stack's own provider: its settings go at the top level "
                f"(orca-machines:<key>); {kind}: is for another cloud's settings",
            )
        )
    problems.extend(_provider_config_problems(config, cls, {str(kind), *sections}))
    for key in cls.provider_keys:
        if key in config.values:
            raw[key] = config.values[key]
    others = _other_clouds(config, sections, str(raw["owner"]), problems)
    try:
        deployment = cls.model_validate(raw)
    except ValidationError as error:
        problems.extend(problem(e, cls) for e in error.errors(include_url=False))
    else:
        refused = frozenset(sections) - set(others)
        deployment = deployment.with_others(others, refused, stack=stack)
        problems.extend(deployment.problems())
    if problems:
        raise StackConfigError(stack, problems)
    return deployment


STACK_KEYS = ("provider", "owner", "pools", "exchangeRates")
"""The stack's own keys, one for all its clouds: never under another cloud's (``ec2:``)."""


def _other_clouds(
    config: StackConfig,
    sections: dict[str, object],
    owner: str,
    problems: list[tuple[str, str]],
) -> dict[str, BaseDeployment]:
    """The settings of the other clouds the stack's pools make machines on (``orca-machines:
    <kind>``), each validated by its own deployment; their problems join ``problems``, each
    at its cloud's key."""
    kinds = deployments()
    others: dict[str, BaseDeployment] = {}
    for kind, section in sections.items():
        cls = kinds[kind]
        if not isinstance(section, dict):
            problems.append((kind, "must be an object: that cloud's settings, as its own stack's"))
            continue
        stacks = [key for key in STACK_KEYS if key in section]
        problems += [
            (
                f"{kind}.{key}",
                f"is the stack's, not a cloud's: set it once at the top level "
                f"(orca-machines:{key}), for every cloud",
            )
            for key in stacks
        ]
        given = {"provider": kind, "owner": owner, "pools": []}
        raw: dict[str, object] = {k: v for k, v in section.items() if k not in STACK_KEYS}
        raw.update(given)
        raw.update({key: config.values[key] for key in cls.provider_keys if key in config.values})
        try:
            others[kind] = cls.model_validate(raw)
        except ValidationError as error:
            for e in error.errors(include_url=False):
                if e["loc"] and e["loc"][0] in given:
                    continue  # the stack's own (its owner), said once at its own key
                key, why = problem(e, cls)
                problems.append((key if ":" in key else f"{kind}.{key}", why))
            continue
        problems.extend((f"{kind}.{key}", why) for key, why in others[kind].problems())
    return others


def plain_user_data(config: StackConfig, deployment: BaseDeployment) -> list[str]:
    """Warnings for pools whose user data is plain in the stack's configuration: Pulumi's
    update history keeps the configuration, so plain user data stays there for good."""
    key = f"{PROJECT}:pools"
    if key in config.secret_keys:
        return []
    return [
        f"pools[{i}].userData of pool {pool.name} is in plain text in the stack's "
        "configuration, and so in every update's history: set it with `pulumi config set "
        f"--path --secret 'pools[{i}].userData' ...`"
        for i, pool in enumerate(deployment.pools)
        if pool.user_data.get_secret_value()
    ]


def _provider_config_problems(
    config: StackConfig, cls: type[BaseDeployment], kinds: set[str]
) -> list[tuple[str, str]]:
    """Keys of a cloud provider's namespace the provider does not read (``hcloud:endpont``),
    and keys of a cloud's provider the stack names no settings of (``kinds``): either would
    be silently ignored."""
    found: list[tuple[str, str]] = []
    clouds = deployments()
    used = {clouds[k].provider_namespace: clouds[k] for k in kinds}
    others = {d.provider_namespace: k for k, d in clouds.items() if k not in kinds}
    for key in sorted(config.values):
        namespace, _, name = key.partition(":")
        known = used.get(namespace)
        if known is not None and name not in known.provider_config:
            close = difflib.get_close_matches(name, sorted(known.provider_config), n=1)
            hint = f" (did you mean {namespace}:{close[0]}?)" if close else ""
            found.append(
                (
                    key,
                    f"unknown key of the {namespace} provider{hint}: the provider would ignore "
                    "it and use its default, so fix its spelling or remove it",
                )
            )
        elif namespace in others:
            found.append(
                (
                    key,
                    f"is a setting of provider {others[namespace]}, and this stack has no "
                    f"{others[namespace]} settings: remove it, or name them under "
                    f"orca-machines:{others[namespace]} for pools with places there",
                )
            )
    return found


def _plain_credentials(config: StackConfig) -> list[tuple[str, str]]:
    return [
        (
            key,
            "is in plain text in the stack's configuration: remove it (pulumi config rm "
            f"{key}) and set it with `pulumi config set --secret {key}`, or set {variable} "
            "in the environment",
        )
        for key, variable in credentials().items()
        if config.values.get(key) and key not in config.secret_keys
    ]
