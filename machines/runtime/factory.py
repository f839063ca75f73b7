"""Which provider ``Provider.of`` makes from the settings: one cloud's, or one that spans.

Settings whose pools stay on cloud ``kind`` (one place each, there) give that cloud's own
provider, whose class its facts name (``provider_class``: imported then, so a cloud's
library loads with its provider, never with ``import machines``). Settings naming a pool
that spans (more than its one place on ``kind``, or a place on another cloud) give a
``machines.runtime.span`` provider over one provider per cloud the pools name, each built
by its own ``from_env``. Either way the settings are checked here, before anything is made
(a market the cloud does not sell, a price order without its rates, a cloud whose settings
are short, a place a cloud's settings can never use), and the provider is given the fence
they name (``machines.runtime.fence``: ``ORCA_FENCE_URL``).

This module stands above ``provider``, ``span`` and each cloud's provider, which it builds,
and none of them imports it: the ``machines.runtime`` package installs ``of`` as what
``Provider.of`` calls (``machines.runtime.provider.install``) as it loads, so
``from machines import Provider`` and ``from machines.runtime.provider import Provider``
both find it in place.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from machines.runtime.clouds import CLOUDS, cloud, unsold_market
from machines.runtime.errors import SettingsError, UnknownProviderError
from machines.runtime.fence.fence import fence_from
from machines.runtime.pool import Pool, pools_of
from machines.runtime.provider import Provider
from machines.runtime.settings import (
    ORCA_EXCHANGE_RATES,
    ORCA_POOL_MARKET,
    ORCA_POOLS,
    ORCA_STACK,
    exchange_rates,
    single,
)

if TYPE_CHECKING:
    from machines.runtime.span import SpanningProvider


def of(kind: str, owner: str = "", environ: Mapping[str, str] | None = None) -> Provider:
    """``Provider.of``: the provider ``kind`` configured from ``environ`` (default: this
    process's)."""
    if kind not in CLOUDS:
        raise UnknownProviderError(
            f"unknown provider kind {kind!r}: use one of {', '.join(sorted(CLOUDS))}"
        )
    env = os.environ if environ is None else environ
    pools = pools_of(env, kind)
    if any(pool.spans(kind) for pool in pools.values()):
        return spanning(kind, owner, env, pools)
    cls = provider_class(kind)
    refuse_unsold(kind, pools.values(), ORCA_POOLS if env.get(ORCA_POOLS) else ORCA_POOL_MARKET)
    provider = cls.from_env(owner, environ)
    refuse_unusable(provider, pools.values(), kind)
    provider.set_pools(pools.values())
    provider.stack = single(env, ORCA_STACK)
    provider.set_fence(fence_from(owner, env))
    return provider


def provider_class(kind: str) -> type[Provider]:
    """The ``Provider`` class of cloud ``kind`` (imported now: its cloud library loads)."""
    module_name, _, class_name = cloud(kind).provider.partition(":")
    cls: type[Provider] = getattr(importlib.import_module(module_name), class_name)
    return cls


def refuse_unsold(kind: str, pools: Iterable[Pool], source: str) -> None:
    """``SettingsError``, one line starting with the variable ``source`` the pools came
    from, for the first of ``pools`` whose market cloud ``kind`` does not sell."""
    facts = cloud(kind)
    for pool in pools:
        refused = unsold_market(facts.name, facts.markets, pool.name, pool.market)
        if refused:
            raise SettingsError(f"{source}: {refused}")


def refuse_unusable(provider: Provider, pools: Iterable[Pool], home: str) -> None:
    """``SettingsError``, one line naming the pool and its place, for the first place of
    ``pools`` on ``provider``'s cloud (a pool without places: its location, on ``home``)
    that the provider's settings can never make a machine in (``location_refusal``): what a
    stack file refuses, ``Provider.of`` refuses too, not the create that first needs it."""
    for pool in pools:
        places = [(f"place {p}", p.location) for p in pool.places if p.cloud == provider.kind]
        if not pool.places and home == provider.kind and pool.location:
            places = [("location", pool.location)]
        for where, location in places:
            refused = provider.location_refusal(location)
            if refused:
                raise SettingsError(f"{ORCA_POOLS} pool {pool.name}'s {where}: {refused}")


def spanning(
    home: str, owner: str, environ: Mapping[str, str], pools: Mapping[str, Pool]
) -> SpanningProvider:
    """The spanning provider of ``pools``: one provider per cloud they name (``home`` first),
    each built from ``environ`` by its own ``from_env``. A cloud whose settings are short is
    one ``SettingsError`` naming its variable and the place that needs it."""
    # Below this module, loaded with the first pool that spans, not with ``import machines``.
    from machines.runtime.price_order import missing_rates  # noqa: PLC0415
    from machines.runtime.span import over  # noqa: PLC0415

    refuse_unsold(home, [p for p in pools.values() if not p.places], ORCA_POOLS)
    rates = exchange_rates(environ)
    for pool in pools.values():
        refused = _unrated(pool, missing_rates(pool, rates))
        if refused:
            raise SettingsError(refused)
    kinds = dict.fromkeys([home, *(k for p in pools.values() for k in p.clouds(home))])
    stack = single(environ, ORCA_STACK)
    providers: dict[str, Provider] = {}
    for kind in kinds:
        try:
            made = provider_class(kind).from_env(owner, environ)
        except SettingsError as error:
            needs = _needing(pools.values(), kind)
            short = f"{needs} is on {cloud(kind).name}, whose settings are short: {error}"
            raise SettingsError(short) from None
        refuse_unusable(made, pools.values(), home)
        made.stack = stack
        providers[kind] = made
    provider = over(home, owner, providers, pools, rates)
    provider.stack = stack
    provider.set_fence(fence_from(owner, environ))
    return provider


def _unrated(pool: Pool, missing: list[str]) -> str:
    """Why a pool ranking its places by price cannot be: the currencies of its places'
    clouds ``ORCA_EXCHANGE_RATES`` names no rate for (``missing``); empty when none."""
    if not missing:
        return ""
    wanted = dict.fromkeys(cloud(p.cloud).currency for p in pool.places)
    example = ",".join(f"{c}={'1' if i == 0 else '...'}" for i, c in enumerate(wanted))
    return (
        f"{ORCA_POOLS} pool {pool.name} ranks its places by price (placeOrder), but "
        f"{ORCA_EXCHANGE_RATES} has no rate for {', '.join(missing)}: name what one unit of "
        f"each of its clouds' currencies is worth, e.g. {ORCA_EXCHANGE_RATES}={example}"
    )


def _needing(pools: Iterable[Pool], kind: str) -> str:
    """Which place needs cloud ``kind``'s settings, for the message that they are short."""
    for pool in pools:
        for place in pool.places:
            if place.cloud == kind:
                return f"{ORCA_POOLS} pool {pool.name}'s place {place}"
    return f"{ORCA_POOLS}'s pools without places"
