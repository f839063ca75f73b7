"""What a cloud declares of itself to the runtime: one ``Cloud`` per cloud, in its package.

The registry (``machines.runtime.clouds``) names each cloud's facts module; shared code asks
these facts instead of branching on a cloud's name, so a cloud is added by its package and a
registry line. The facts import nothing heavy: a cloud's client library is loaded only with
its provider (``provider``, imported by ``Provider.of``).
"""

from __future__ import annotations

from dataclasses import dataclass

from machines.runtime.models import Market
from machines.runtime.options import Options


@dataclass(frozen=True)
class Cloud:
    """One cloud's facts.

    ``kind`` is the provider kind (``Provider.of(kind)``, a stack's ``provider``, the pool key
    of its options); ``name`` how messages call it; ``provider`` where its ``Provider`` class
    is (``module:Class``); ``options`` its pool options model; ``markets`` what it sells;
    ``no_stock_codes`` the error codes its API answers when it has no capacity now, as an
    engine run relays them; ``credentials`` the variables that carry its secrets (masked
    wherever a message could quote them); ``currency`` the one its prices are in (a pool
    ranking its places by price turns each into one by ``ORCA_EXCHANGE_RATES``);
    ``account_limit_codes`` the error codes its API answers when the account is at one of its
    limits (every create of that market on the cloud fails so until room is made), and
    ``account_limit_help`` how to make room, for the answer that says so;
    ``settings`` the variables of its settings a stack sets (its ``env`` output), which a
    provider of a stack takes from the stack alone (``machines.runtime.clouds.stack_environ``).
    """

    kind: str
    name: str
    provider: str
    options: type[Options]
    markets: frozenset[Market]
    no_stock_codes: frozenset[str]
    credentials: tuple[str, ...] = ()
    currency: str = ""
    account_limit_codes: frozenset[str] = frozenset()
    account_limit_help: str = ""
    settings: tuple[str, ...] = ()
