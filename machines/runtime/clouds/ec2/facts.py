"""EC2's facts for the runtime registry (``machines.runtime.clouds``)."""

from __future__ import annotations

from machines.runtime.cloud import Cloud
from machines.runtime.clouds.ec2.options import KIND, Ec2Options
from machines.runtime.clouds.ec2.settings import (
    ACCOUNT_LIMIT_CODES,
    ACCOUNT_LIMIT_HELP,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    CLOUD,
    MARKETS,
    NO_STOCK_CODES,
    SETTINGS,
)

FACTS = Cloud(
    kind=KIND,
    name=CLOUD,
    provider="machines.runtime.clouds.ec2.provider:Ec2Provider",
    options=Ec2Options,
    markets=MARKETS,
    no_stock_codes=NO_STOCK_CODES,
    account_limit_codes=ACCOUNT_LIMIT_CODES,
    account_limit_help=ACCOUNT_LIMIT_HELP,
    currency="USD",
    credentials=(AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN),
    settings=SETTINGS,
)
