"""A pool's reaper: a resource whose delete removes the autoscaler's machines of the pool.

Each ``Pool`` component holds one (a Pulumi dynamic resource, so it runs from plain
``pulumi destroy`` and ``pulumi up`` as well as through automation). Creating it makes
nothing; deleting it (the stack destroyed, or the pool removed from the stack) runs
``machines.runtime.reaping.reap`` with the runtime provider of the stack's kind, owner and settings,
which deletes every machine of that owner and pool without ``orca-managed-by=pulumi`` and
waits until each is gone or deleting.

Its state holds the kind, owner, pool and the runtime's settings variables, never a
credential in plain: the token comes from the environment of whoever runs the engine, or
from the stack's secret configuration as a Pulumi secret (encrypted in state).

Reapers are served by one explicit provider (``reapers_provider``) with no inputs. The
engine's default provider of Python dynamic resources takes the stack's whole
configuration as its inputs (pulumi's ``Target.GetPackageConfig`` gives dynamic providers
every key), so a value set without ``--secret`` (user data in a stack file) would be plain
in the state; the explicit one keeps nothing of it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult

from machines.program.clouds import credentials

REAPER_SUFFIX = "-autoscaled"
"""A reaper is named ``<pool>-autoscaled``: it stands for the autoscaler's machines there."""

REAPER_TYPE = "pulumi-python:dynamic:Resource"
"""The engine's type of every Python dynamic resource, so of a reaper."""

SHARED = "shared"
"""The reaper's input naming the shared resources its pool's machines use (``kind:name``)."""

REAPERS_PROVIDER = "reapers"
"""The name of the provider resource that serves the stack's reapers."""

DYNAMIC_PACKAGE = "pulumi-python"
"""The package of Python dynamic resources: a provider of it serves them."""

_KEYS = ("provider", "owner", "pool", "env", "credentials", "shared")


def reaper_name(pool: str) -> str:
    return f"{pool}{REAPER_SUFFIX}"


class PoolReaper(ResourceProvider):
    """The dynamic provider of reapers: stateless, so nothing but its module reaches state."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=f"{props['owner']}/{props['pool']}", outs=_kept(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update, unless the pool's machines stop using a shared resource (a network,
        group, firewall, key, security group or profile the change may delete): then the
        reaper is replaced, the old one deleted first, so the autoscaler's machines there go
        before the resource does, as the stack's are moved or replaced. A reaper made before
        it kept ``shared`` takes it with its next update, never as a change of its own."""
        changed = [
            key
            for key in _KEYS
            if (key in olds or key != SHARED) and olds.get(key) != news.get(key)
        ]
        left = set(_names(olds.get(SHARED))) - set(_names(news.get(SHARED)))
        return DiffResult(
            changes=bool(changed),
            replaces=[SHARED] if left and SHARED in olds else [],
            delete_before_replace=bool(left) and SHARED in olds,
        )

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=_kept(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, props)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        from machines.runtime.clouds import stack_environ  # noqa: PLC0415
        from machines.runtime.provider import Provider  # noqa: PLC0415 (the plugin's process only)
        from machines.runtime.reaping import reap  # noqa: PLC0415

        environ = stack_environ(os.environ, dict(props.get("env") or {}))
        environ.update(dict(props.get("credentials") or {}))
        provider = Provider.of(str(props["provider"]), str(props["owner"]), environ)
        reap(provider, str(props["pool"]))


def unordered(resources: list[Mapping[str, object]]) -> list[str]:
    """The pools whose reaper a checkpoint recorded before reapers depended on the shared
    resources their machines use (no ``shared`` input): a destroy from that checkpoint may
    delete a network, subnet or group before the autoscaler's machines in it."""
    found = []
    for resource in resources:
        inputs = resource.get("inputs")
        urn = str(resource.get("urn", ""))
        name = urn.rsplit("::", 1)[-1]
        if (
            resource.get("type") == REAPER_TYPE
            and name.endswith(REAPER_SUFFIX)
            and isinstance(inputs, Mapping)
            and SHARED not in inputs
        ):
            found.append(name.removesuffix(REAPER_SUFFIX))
    return sorted(found)


def _names(value: object) -> list[str]:
    """The shared resources' names a reaper's ``shared`` lists."""
    return [str(v) for v in value] if isinstance(value, list) else []


def _kept(props: dict[str, Any]) -> dict[str, Any]:
    return {key: props[key] for key in _KEYS if key in props}


def reapers_provider() -> pulumi.ProviderResource:
    """The provider of the stack's reapers: explicit, with no inputs, so no configuration
    value reaches the state through it (see the module)."""
    return pulumi.ProviderResource(DYNAMIC_PACKAGE, REAPERS_PROVIDER, {})


class Reaper(pulumi.dynamic.Resource):
    """The reaper of one pool of one owner, on the stack's provider kind and settings."""

    def __init__(
        self,
        pool: str,
        *,
        provider: str,
        owner: str,
        env: pulumi.Input[dict[str, str]],
        shared: list[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "provider": provider,
            "owner": owner,
            "pool": pool,
            "env": env,
            "credentials": stack_credentials(),
            SHARED: sorted(shared or []),
        }
        super().__init__(PoolReaper(), reaper_name(pool), props, opts)


def stack_credentials() -> pulumi.Output[dict[str, str]]:
    """Credentials the stack's configuration holds (always as secrets), as variables.

    Plain credentials are refused by the configuration's checks, so what is here was set with
    ``pulumi config set --secret``; the result is a secret, encrypted in the state.
    """
    found: dict[str, pulumi.Input[str]] = {}
    for key, variable in credentials().items():
        namespace, _, name = key.partition(":")
        value = pulumi.Config(namespace).get_secret(name)
        if value is not None:
            found[variable] = value
    return pulumi.Output.secret(pulumi.Output.all(**found) if found else {})
