"""The program's composition: each cloud's components built, the pools declared on them, the
stack's outputs exported (``deploy``, what ``__main__.py`` runs).

Each cloud's components (``machines.program.clouds.<kind>.components``, imported by name from
the program's registry) are built on ``machines.program.components``, so what puts them
together stands above both, in a module of its own.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path

import pulumi

from machines.program.backend import program_fence_url
from machines.program.clouds import CLOUDS
from machines.program.components import Built, Pool, PoolArgs
from machines.program.config.models import BaseDeployment, PoolConfig
from machines.program.fencing import bounded_pools, fence_plain_up, plain_up
from machines.program.placement import placements, spanning_pools
from machines.program.reading import read_pools
from machines.program.reaper import reapers_provider
from machines.runtime.pool import pools_env
from machines.runtime.settings import ORCA_FENCE_URL, exchange_rates_env


def deploy(deployment: BaseDeployment, environ: Mapping[str, str] | None = None) -> list[Pool]:
    """Declare the deployment's shared infrastructure on each of its clouds and its pools;
    export the stack outputs.

    Outputs: ``provider`` (the home cloud), ``owner``, ``env`` (the runtime's settings of
    every cloud, ``settings.*_env``, with every pool's settings as ``ORCA_POOLS``)
    and ``pools`` (per pool: type, location, size, arch and machines with id, name,
    address and arch; for a pool that names places, those and each machine's cloud, type
    and location).
    """
    # Asked before anything is declared: a data source call the program had started (an
    # image, a type's architecture) would fail too when the clouds cannot be read, and the
    # engine reports that and drops the program's own line.
    ran_with = {**os.environ, **(environ or {})}
    asked = spanning_pools(deployment)
    fenced = plain_up(ran_with, pulumi.runtime.is_dry_run())
    if fenced:
        asked = {**bounded_pools(deployment), **asked}
        url = program_fence_url(Path.cwd(), ran_with)
        ran_with = {**ran_with, ORCA_FENCE_URL: url} if url else ran_with
    read = read_pools(deployment, ran_with, asked)
    if fenced:
        fence_plain_up(pulumi.get_stack(), deployment, read)
    placed = placements(deployment, read, ran_with)
    built: dict[str, Built] = {}
    for kind in deployment.clouds:
        components = importlib.import_module(f"{CLOUDS[kind]}.components")
        built[kind] = components.build(deployment.on(kind))
    extra = exchange_rates_env(deployment.exchange_rates)
    settings = pulumi.Output.all(*(b.env for b in built.values())).apply(
        lambda envs: {k: v for env in envs for k, v in env.items()} | extra
    )
    env = settings.apply(deployment.runtime_env)
    for placement in placed.values():
        for note in placement.notes:
            pulumi.log.info(note)
    reapers = reapers_provider()
    clouds = {kind: b.cloud for kind, b in built.items()}
    home = built[deployment.provider].env
    pools = [
        Pool(
            pool.name,
            PoolArgs(
                pool,
                deployment.owner,
                clouds,
                deployment.provider,
                _reaper_env(deployment, pool, settings) if pool.places else home,
                reapers,
                placed.get(pool.name),
            ),
        )
        for pool in deployment.pools
    ]
    pulumi.export("provider", deployment.provider)
    pulumi.export("owner", deployment.owner)
    pulumi.export("env", env)
    pulumi.export(
        "pools", {p.name: c.output(p) for p, c in zip(deployment.pools, pools, strict=True)}
    )
    return pools


def _reaper_env(
    deployment: BaseDeployment, pool: PoolConfig, settings: pulumi.Output[dict[str, str]]
) -> pulumi.Output[dict[str, str]]:
    """The settings a reaper of a pool that names its places reaps with: every cloud's, and
    the pool's own (``ORCA_POOLS``), so its provider spans the pool's clouds."""
    own = pools_env([deployment.runtime_pool(pool)])
    return settings.apply(lambda env: {**env, **own})
