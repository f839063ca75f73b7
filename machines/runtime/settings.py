"""The process's settings: every shared variable's name, and the readers each cloud's
settings use. A cloud's own variables are named in its ``settings`` module.

Each reader names the variable that is missing or malformed and never echoes a secret. Each
cloud's settings model (``machines.runtime.clouds.<kind>.settings``) has an ``env()`` that turns it
back into variables: the Pulumi stack exports exactly these, so an autoscaler is configured
by the stack that made its infrastructure. Each cloud's settings read this module, so it
asks no cloud anything: what the clouds declare is the registry's (``machines.runtime.clouds``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field

from machines.runtime.errors import SettingsError
from machines.runtime.models import Market

ORCA_PROVIDER = "ORCA_PROVIDER"
ORCA_OWNER = "ORCA_OWNER"
"""The provider kind and owner of a deployment: ``orca-machines env`` prints them with the
stack's settings, and the CLI's pool commands read them."""

ORCA_STACK = "ORCA_STACK"
"""The name of the stack that made the deployment (its ``env`` output exports it, and
``orca-machines env`` prints it): the runtime's messages about what the stack keeps (a
delete it refuses, a pool at the max the stack sets) name that stack; without it they name
the owner, as the owner (a stack's owner is not its name: ``owner: prod`` in stack
``heron``)."""

PULUMI_BACKEND_URL = "PULUMI_BACKEND_URL"
PULUMI_CONFIG_PASSPHRASE = "PULUMI_CONFIG_PASSPHRASE"  # noqa: S105 (the variable's name)
PULUMI_CONFIG_PASSPHRASE_FILE = "PULUMI_CONFIG_PASSPHRASE_FILE"  # noqa: S105
PULUMI_ACCESS_TOKEN = "PULUMI_ACCESS_TOKEN"  # noqa: S105 (the variable's name)
PULUMI_HOME = "PULUMI_HOME"
PULUMI_AUTOMATION_API = "PULUMI_AUTOMATION_API"
"""Set to ``true`` by the engine's Automation API callers (``automation.cancel`` too)."""
PULUMI_SKIP_UPDATE_CHECK = "PULUMI_SKIP_UPDATE_CHECK"
"""Set for every engine run: the engine never asks the network for a newer version."""
PATH = "PATH"
"""The search path every engine run gets, the engine's own directory first."""
ORCA_PULUMI_PROJECT = "ORCA_PULUMI_PROJECT"
"""The Pulumi project directory automation works on; default: this checkout."""
ORCA_CI_STACKS = "ORCA_CI_STACKS"
"""The stacks CI previews and checks for drift, ``prod,staging``; default: every stack file
but ``local`` and the examples (``*-example``)."""

ORCA_POOLS = "ORCA_POOLS"
"""Every pool's settings as one JSON list (``machines.runtime.pool.Pool``: name, machine type,
location, market, max and the cloud's options): the stack exports it with its settings, and
``Provider.pool`` / ``Provider.pools`` answer from it."""

ORCA_POOL_MAX = "ORCA_POOL_MAX"
"""Each pool's bound on its machines (both kinds), ``lab=20,ci=50``: what stacks exported
before ``ORCA_POOLS``, read when that is not set."""

ORCA_POOL_MARKET = "ORCA_POOL_MARKET"
"""Each pool's market (``machines.runtime.models.Market``), ``ci=spot,lab=spot-then-on-demand``;
pools it leaves out are on-demand. What stacks exported before ``ORCA_POOLS``, read when
that is not set."""

ORCA_EXCHANGE_RATES = "ORCA_EXCHANGE_RATES"
"""What one unit of each currency is worth in one unit of your choosing, ``EUR=1,USD=0.86``:
a pool that ranks its places by price (``placeOrder: price``) compares them so."""

STACK_VARIABLES = (ORCA_STACK, ORCA_POOLS, ORCA_POOL_MAX, ORCA_POOL_MARKET, ORCA_EXCHANGE_RATES)
"""The shared variables a stack's settings own (its ``env`` output), besides each cloud's
(``Cloud.settings``): see ``machines.runtime.clouds.stack_environ``."""

ORCA_PLACES_OUT = "ORCA_PLACES_OUT"
"""The places an ``orca-machines up`` found out of stock in an earlier attempt of the same
run (JSON, as ``ORCA_POOLS`` writes places): the stack's program puts no new machine there."""

ORCA_FENCE_URL = "ORCA_FENCE_URL"
"""Where the fence keeps a pool's creates in flight, so its ``max`` holds across processes
(``machines.runtime.fence``): ``s3://bucket/prefix?region=...&endpoint=...`` or
``file:///path``; a provider from a stack defaults it to the stack's backend."""

ORCA_REQUEST_TIMEOUT = "ORCA_REQUEST_TIMEOUT"
ORCA_CALL_TIMEOUT = "ORCA_CALL_TIMEOUT"

ORCA_LIST_TTL = "ORCA_LIST_TTL"
ORCA_LIST_SHARE = "ORCA_LIST_SHARE"
ORCA_LIST_MAX_AGE = "ORCA_LIST_MAX_AGE"
ORCA_BUDGET_RESERVE = "ORCA_BUDGET_RESERVE"
ORCA_OFFERS_TTL = "ORCA_OFFERS_TTL"
ORCA_NO_STOCK_TTL = "ORCA_NO_STOCK_TTL"


class Timeouts(BaseModel):
    """How long one HTTP request may take, and one API call with all its retries."""

    model_config = ConfigDict(frozen=True)

    request: float = Field(default=10.0, gt=0)
    call: float = Field(default=60.0, gt=0)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Timeouts:
        return cls(
            request=seconds(environ, ORCA_REQUEST_TIMEOUT, 10.0),
            call=seconds(environ, ORCA_CALL_TIMEOUT, 60.0),
        )


class Freshness(BaseModel):
    """How long what the provider read may be reused, and how much of the budget it may spend.

    ``list_ttl``: seconds one listing of the owner's machines answers ``machines(pool)`` for
    every pool (0: every call lists its pool). ``list_share``: the share of the cloud's stated
    request budget listing may spend; a listing of many pages stays fresh longer so it spends
    no more, up to ``list_max_age`` seconds (others' changes show within that while the
    budget is not low; a large owner's listing may then spend more). ``budget_reserve``: the
    share of the budget kept for creates and deletes; below it the listing stays fresh until
    the budget has refilled. ``offers_ttl``: seconds the
    catalogue's stock answers ``offers``. ``no_stock_ttl``: seconds a ``no_stock`` answer is
    remembered for its type and location.
    """

    model_config = ConfigDict(frozen=True)

    list_ttl: float = Field(default=5.0, ge=0)
    list_share: float = Field(default=0.03, gt=0, lt=1)
    list_max_age: float = Field(default=180.0, gt=0)
    budget_reserve: float = Field(default=0.1, ge=0, lt=1)
    offers_ttl: float = Field(default=60.0, ge=0)
    no_stock_ttl: float = Field(default=180.0, ge=0)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Freshness:
        return cls(
            list_ttl=seconds(environ, ORCA_LIST_TTL, 5.0, zero=True),
            list_share=share(environ, ORCA_LIST_SHARE, 0.03),
            list_max_age=seconds(environ, ORCA_LIST_MAX_AGE, 180.0),
            budget_reserve=share(environ, ORCA_BUDGET_RESERVE, 0.1, zero=True),
            offers_ttl=seconds(environ, ORCA_OFFERS_TTL, 60.0, zero=True),
            no_stock_ttl=seconds(environ, ORCA_NO_STOCK_TTL, 180.0, zero=True),
        )


def single(env: Mapping[str, str], name: str, *, secret: bool = False) -> str:
    """The variable's value, refused when it has spaces or line breaks around it, or a line
    break or other control character anywhere (it would break the header or URL it goes in)."""
    value = env.get(name, "")
    shown = "its value" if secret else repr(value)
    if value != value.strip():
        raise SettingsError(f"{name} has spaces or a line break around {shown}: remove them")
    if any(not character.isprintable() for character in value):
        raise SettingsError(
            f"{name} has a line break or another control character inside {shown}: "
            "set it to the value alone, on one line"
        )
    return value


def required(env: Mapping[str, str], name: str, *, secret: bool = False) -> str:
    value = single(env, name, secret=secret)
    if not value:
        raise SettingsError(f"{name} is not set: this provider needs it")
    return value


def check_url(value: str, example: str) -> str:
    """``value`` without a trailing slash when it is an http(s) URL, else ``ValueError``."""
    value = value.rstrip("/")
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(
            f"{value!r} is not an http(s) URL: give the API's base URL, e.g. {example}"
        )
    try:
        parsed.port  # noqa: B018 (urllib checks the port's range when it is read)
    except ValueError:
        raise ValueError(
            f"{value!r} has no valid port (1 to 65535): give the API's base URL, e.g. {example}"
        ) from None
    if parsed.port == 0:
        raise ValueError(
            f"{value!r} has no valid port (1 to 65535): give the API's base URL, e.g. {example}"
        )
    return value


def url(env: Mapping[str, str], name: str, example: str) -> str:
    """An http(s) URL without its trailing slash, or empty when unset; ``example`` is what
    the message shows when it is none."""
    value = single(env, name)
    if not value:
        return ""
    try:
        return check_url(value, example)
    except ValueError as error:
        raise SettingsError(f"{name}={error}") from None


def _items(env: Mapping[str, str], name: str, example: str) -> list[str]:
    value = env.get(name, "")
    if not value:
        return []
    items = value.split(",")
    for position, item in enumerate(items, start=1):
        if not item.strip():
            raise SettingsError(
                f"{name} has an empty item (number {position}) in {value!r}: "
                f"separate items with single commas, e.g. {example}"
            )
        if item != item.strip():
            raise SettingsError(
                f"{name} item {position} ({item!r}) has spaces around it: "
                f"separate items with commas only, e.g. {example}"
            )
    return items


def names(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    items = _items(env, name, "ops,ci")
    duplicates = sorted({item for item in items if items.count(item) > 1})
    if duplicates:
        raise SettingsError(f"{name} names {', '.join(duplicates)} more than once")
    return tuple(items)


def mapping(env: Mapping[str, str], name: str, example: str) -> dict[str, str]:
    items = _items(env, name, example)
    if not items:
        raise SettingsError(f"{name} is not set: map locations to subnets, e.g. {example}")
    mapping: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if (
            not sep
            or not key.strip()
            or not value.strip()
            or key != key.strip()
            or (value != value.strip())
        ):
            raise SettingsError(f"{name} item {item!r} is not LOCATION=ID: write it like {example}")
        if key in mapping:
            raise SettingsError(f"{name} names location {key!r} more than once")
        mapping[key] = value
    return mapping


def _per_pool(
    env: Mapping[str, str],
    name: str,
    example: str,
    form: str,
    *,
    shaped: Callable[[str], bool] = bool,
    wrong: Callable[[str], str] = lambda _: "",
) -> dict[str, str]:
    """A ``POOL=VALUE,...`` variable as pool to value: an item is refused when it is not of
    ``form`` (``shaped`` checks the value's form), or with what ``wrong`` says of its value."""
    values: dict[str, str] = {}
    for item in _items(env, name, example):
        pool, sep, value = item.partition("=")
        if not (sep and pool and shaped(value)):
            raise SettingsError(f"{name} item {item!r} is not {form}: write it like {example}")
        why = wrong(value)
        if why:
            raise SettingsError(f"{name} item {item!r}: {why}")
        if pool in values:
            raise SettingsError(f"{name} names pool {pool!r} more than once")
        values[pool] = value
    return values


def pool_max(env: Mapping[str, str]) -> dict[str, int]:
    """``ORCA_POOL_MAX`` as pool to max; empty when unset (no pool has a max)."""

    def number(value: str) -> bool:
        return value.isascii() and value.isdigit()

    limits = _per_pool(env, ORCA_POOL_MAX, "lab=20,ci=50", "POOL=NUMBER", shaped=number)
    return {pool: int(value) for pool, value in limits.items()}


def pool_max_env(limits: Mapping[str, int]) -> dict[str, str]:
    """The ``ORCA_POOL_MAX`` variable of ``limits``, or nothing when no pool has a max."""
    if not limits:
        return {}
    return {ORCA_POOL_MAX: ",".join(f"{pool}={n}" for pool, n in limits.items())}


def pool_market(env: Mapping[str, str]) -> dict[str, Market]:
    """``ORCA_POOL_MARKET`` as pool to market; pools it leaves out are on-demand."""
    known = [m.value for m in Market]

    def market(value: str) -> str:
        return "" if value in known else f"{value!r} is not a market: use {', '.join(known)}"

    example = "ci=spot,lab=spot-then-on-demand"
    markets = _per_pool(env, ORCA_POOL_MARKET, example, "POOL=MARKET", wrong=market)
    return {pool: Market(value) for pool, value in markets.items()}


def pool_market_env(markets: Mapping[str, Market]) -> dict[str, str]:
    """The ``ORCA_POOL_MARKET`` variable of the pools not on-demand, or nothing."""
    chosen = {pool: m for pool, m in markets.items() if m != Market.ON_DEMAND}
    if not chosen:
        return {}
    return {ORCA_POOL_MARKET: ",".join(f"{pool}={m.value}" for pool, m in chosen.items())}


def seconds(env: Mapping[str, str], name: str, default: float, *, zero: bool = False) -> float:
    """A number of seconds above zero (or zero itself, when ``zero`` allows it)."""
    value = single(env, name)
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (seconds > 0 or (zero and seconds == 0)) or seconds == float("inf"):
        least = "zero or more" if zero else "above zero"
        raise SettingsError(f"{name}={value!r} is not a number of seconds {least}")
    return seconds


def share(env: Mapping[str, str], name: str, default: float, *, zero: bool = False) -> float:
    """A share of a whole, written as a number below 1 (0.05 for five per cent)."""
    value = single(env, name)
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not (0 < number < 1 or (zero and number == 0)):
        least = "0" if zero else "above 0"
        raise SettingsError(
            f"{name}={value!r} is not a share: give a number from {least} to below 1, e.g. 0.05"
        )
    return number


_CURRENCY = re.compile(r"[A-Z]{3}")


def exchange_rates_env(rates: Mapping[str, Decimal]) -> dict[str, str]:
    """The ``ORCA_EXCHANGE_RATES`` variable of ``rates`` (none when empty)."""
    if not rates:
        return {}
    return {ORCA_EXCHANGE_RATES: ",".join(f"{c}={r}" for c, r in sorted(rates.items()))}


def exchange_rates(env: Mapping[str, str]) -> dict[str, Decimal]:
    """``ORCA_EXCHANGE_RATES`` as currency to rate; empty when unset."""
    example = "EUR=1,USD=0.86"
    rates: dict[str, Decimal] = {}
    for item in _items(env, ORCA_EXCHANGE_RATES, example):
        currency, _, value = item.partition("=")
        try:
            rate = Decimal(value)
        except ArithmeticError:
            rate = Decimal(0)
        if not _CURRENCY.fullmatch(currency) or not rate.is_finite() or rate <= 0:
            raise SettingsError(
                f"{ORCA_EXCHANGE_RATES} item {item!r} is not CURRENCY=RATE (a code of three "
                f"capitals and a number above 0): write it like {example}"
            )
        if currency in rates:
            raise SettingsError(f"{ORCA_EXCHANGE_RATES} names {currency} more than once")
        rates[currency] = rate
    return rates
