"""One package per cloud, each built the same way, registered here by its kind.

Each has ``facts.py`` (what the cloud declares of itself: ``machines.runtime.cloud.Cloud``),
``options.py`` (a pool's options on it, with their rules), ``settings.py`` (its settings from
environment variables and back), ``client.py`` (the official client, set up once),
``answers.py`` (the cloud's answers and errors in the package's terms), ``provider.py`` (the
``Provider``: only the cloud's own steps, the shape is ``machines.runtime.provider``'s),
``prices.py`` (its price list, read through the provider's calls), ``billing.py`` (how it
bills a machine's time, with its source), ``catalogue.py`` (what it sells: types, where,
images; asked once and kept) and ``machine.py`` (a machine's create arguments, shared with
the program). Only the facts are read here, with what shared code asks of them (codes,
credentials, ``unsold_market``: the refusal of a pool whose cloud does not sell its
market); ``Provider.of`` imports a cloud's provider only when that cloud is
asked for, so ``import machines`` loads no cloud client.

This module and each cloud's package are the only ones that import a cloud's package (the
``cloud-registry`` import contract in ``pyproject.toml``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from machines.runtime.models import Market
from machines.runtime.settings import STACK_VARIABLES

if TYPE_CHECKING:
    from machines.runtime.cloud import Cloud
    from machines.runtime.options import Options

CLOUDS: dict[str, str] = {
    "hetzner": "machines.runtime.clouds.hetzner.facts",
    "ec2": "machines.runtime.clouds.ec2.facts",
}
"""Each provider kind and the module of its facts (``FACTS``): adding a cloud adds a line."""


def kinds() -> tuple[str, ...]:
    """The provider kinds the runtime knows, in the registry's order."""
    return tuple(CLOUDS)


def cloud(kind: str) -> Cloud:
    """The facts of cloud ``kind``; ``KeyError`` for a kind not registered."""
    facts: Cloud = importlib.import_module(CLOUDS[kind]).FACTS
    return facts


def clouds() -> dict[str, Cloud]:
    """Every registered cloud's facts, by kind."""
    return {kind: cloud(kind) for kind in CLOUDS}


def options_models() -> dict[str, type[Options]]:
    """Each cloud's pool options model, by the pool key it goes under (its kind)."""
    return {kind: facts.options for kind, facts in clouds().items()}


def no_stock_codes() -> frozenset[str]:
    """Every cloud's codes for "no capacity now", as an engine run relays them."""
    return frozenset().union(*(facts.no_stock_codes for facts in clouds().values()))


def account_limit_codes() -> frozenset[str]:
    """Every cloud's codes for "the account is at its limit", as an engine run relays them."""
    return frozenset().union(*(facts.account_limit_codes for facts in clouds().values()))


def account_limit_help(code: str) -> str:
    """How to make room in the account of the cloud whose "at its limit" code ``code`` is;
    empty for a code no cloud gives so."""
    return next(
        (f.account_limit_help for f in clouds().values() if code in f.account_limit_codes), ""
    )


def credentials() -> tuple[str, ...]:
    """Every cloud's variables that carry secrets."""
    return tuple(v for facts in clouds().values() for v in facts.credentials)


def unsold_market(cloud: str, markets: frozenset[Market], pool: str, market: Market) -> str:
    """What a pool asking for a market its cloud does not sell is told; empty when it sells it."""
    if market in markets:
        return ""
    sold = " or ".join(sorted(m.value for m in markets))
    sellers = " or ".join(c.name for c in clouds().values() if market in c.markets)
    elsewhere = f" or move the pool to a stack of {sellers}" if sellers else ""
    return (
        f"pool {pool} asks for market {market.value}, but {cloud} has no spot market (it "
        f"sells {sold} only): set the pool's market to {Market.ON_DEMAND.value}{elsewhere}"
    )


def stack_environ(environ: Mapping[str, str], settings: Mapping[str, str]) -> dict[str, str]:
    """What a provider of a stack is made of: the stack's own ``settings`` (its ``env``
    output, or what its file makes) over ``environ`` less every variable a stack's settings
    own (each cloud's ``Cloud.settings`` and ``STACK_VARIABLES``). A setting the stack leaves
    unset (no ``ORCA_EC2_IMAGE``: Canonical's Ubuntu) stays unset, however an operator's
    shell has it (exported by ``eval "$(orca-machines env other)"``), since the stack's
    machines never see it; credentials, timeouts and freshness still come from ``environ``."""
    owned = {*STACK_VARIABLES, *(v for facts in clouds().values() for v in facts.settings)}
    return {**{k: v for k, v in environ.items() if k not in owned}, **settings}
