"""What the program reads of the clouds before it declares anything: one runtime provider
built from the stack's settings and credentials, and one listing of each pool that needs it.

A pool whose places span is read to place its new machines (``machines.program.placement``);
on a plain ``pulumi up``, a pool with a ``max`` is read to count its new machines in the
fence (``machines.program.fencing``). Each pool is listed once for both; a stack that needs
neither makes no request. When the clouds cannot be read, nothing is guessed: one
``ReadError`` naming the pools and why they were read, and nothing is declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from machines.program.config.models import BaseDeployment
from machines.runtime.clouds import stack_environ
from machines.runtime.errors import MachinesError
from machines.runtime.models import Machine
from machines.runtime.provider import Provider


class ReadError(MachinesError):
    """The clouds could not say what a pool's machines are: the program declares nothing."""


@dataclass(frozen=True)
class Read:
    """The provider the program asked through (read-only) and each pool's machines now."""

    provider: Provider
    listed: Mapping[str, list[Machine]]


def read_pools(
    deployment: BaseDeployment, environ: Mapping[str, str], asked: Mapping[str, str]
) -> Read | None:
    """Each pool of ``asked`` (its name, and why the program reads it) listed through one
    provider built from ``environ`` (the credentials and settings the program runs with)
    and the deployment's settings; None when none is asked."""
    if not asked:
        return None
    settings = deployment.runtime_env(deployment.catalogue_settings())
    try:
        provider = Provider.of(
            deployment.provider, deployment.owner, stack_environ(environ, settings)
        )
    except MachinesError as error:
        pools = ", ".join(f"{pool} ({why})" for pool, why in asked.items())
        raise ReadError(
            f"the clouds that say what the machines of pools {pools} are could not be asked "
            f"(nothing was changed): {error}"
        ) from None
    listed: dict[str, list[Machine]] = {}
    for pool, why in asked.items():
        try:
            listed[pool] = provider.machines(pool)
        except MachinesError as error:
            raise ReadError(
                f"pool {pool} {why}, and where its machines are now could not be read, so "
                f"nothing was declared (nothing was changed): {error}"
            ) from None
    return Read(provider, listed)
