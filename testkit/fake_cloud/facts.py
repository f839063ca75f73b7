"""The fake cloud's facts for the runtime registry (``machines.runtime.clouds``)."""

from __future__ import annotations

from machines.runtime.cloud import Cloud
from machines.runtime.models import Market
from testkit.fake_cloud.options import KIND, FakeOptions
from testkit.fake_cloud.prices import CURRENCY
from testkit.fake_cloud.settings import CLOUD, FAKE_CLOUD_STORE, FAKE_CLOUD_TOKEN
from testkit.fake_cloud.store import NO_STOCK_CODE

FACTS = Cloud(
    kind=KIND,
    name=CLOUD,
    provider="testkit.fake_cloud.provider:FakeProvider",
    options=FakeOptions,
    markets=frozenset({Market.ON_DEMAND}),
    no_stock_codes=frozenset({NO_STOCK_CODE}),
    currency=CURRENCY,
    credentials=(FAKE_CLOUD_TOKEN,),
    settings=(FAKE_CLOUD_STORE,),
)
