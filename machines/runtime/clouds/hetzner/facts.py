"""Hetzner Cloud's facts for the runtime registry (``machines.runtime.clouds``)."""

from __future__ import annotations

from machines.runtime.cloud import Cloud
from machines.runtime.clouds.hetzner.options import KIND, HetznerOptions
from machines.runtime.clouds.hetzner.settings import (
    ACCOUNT_LIMIT_CODES,
    ACCOUNT_LIMIT_HELP,
    CLOUD,
    HCLOUD_TOKEN,
    MARKETS,
    NO_STOCK_CODES,
    SETTINGS,
)

FACTS = Cloud(
    kind=KIND,
    name=CLOUD,
    provider="machines.runtime.clouds.hetzner.provider:HetznerProvider",
    options=HetznerOptions,
    markets=MARKETS,
    no_stock_codes=NO_STOCK_CODES,
    account_limit_codes=ACCOUNT_LIMIT_CODES,
    account_limit_help=ACCOUNT_LIMIT_HELP,
    currency="EUR",
    credentials=(HCLOUD_TOKEN,),
    settings=SETTINGS,
)
