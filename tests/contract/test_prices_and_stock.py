"""Prices and stock for automation come through the cloud's provider: its retries, its
deadline and its answer checks, on every cloud (``status``, the CI comment)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from machines.automation.availability import stock
from machines.automation.cost import PriceLists, price_list
from machines.runtime.provider import Provider
from testkit.clouds import Cloud, Read
from testkit.telemetry import Recorded


def monthly(cloud: Cloud) -> tuple[object, str]:
    """The monthly price of ``cloud.priced`` from a new price list, and why it is unknown."""
    prices = price_list(cloud.kind)
    return prices.monthly(*cloud.priced), prices.unknown


def offered(cloud: Cloud) -> tuple[tuple[str, ...], str]:
    """Where ``cloud.priced``'s type is offered now, and why that is unknown."""
    found = stock(cloud.kind, cloud.priced[0], None, None)
    return found.locations, found.unknown


def test_a_price_is_read_through_the_provider(cloud: Cloud) -> None:
    price, unknown = monthly(cloud)

    assert price is not None
    assert price > 0
    assert unknown == ""


def test_stock_is_the_providers_offers(cloud: Cloud) -> None:
    locations, unknown = offered(cloud)

    assert unknown == ""
    assert cloud.priced[1] in locations
    assert list(locations) == sorted(cloud.provider().offers(cloud.priced[0]))


@pytest.mark.parametrize("how", ["busy", "throttled"])
def test_a_price_is_read_after_the_cloud_was_busy(cloud: Cloud, how: str) -> None:
    cloud.trouble("prices", how)  # type: ignore[arg-type]

    price, unknown = monthly(cloud)

    assert (price is not None, unknown) == (True, "")
    assert cloud.reads("prices") == 3


@pytest.mark.parametrize("how", ["busy", "throttled"])
def test_stock_is_read_after_the_cloud_was_busy(cloud: Cloud, how: str) -> None:
    cloud.trouble("offers", how)  # type: ignore[arg-type]

    locations, unknown = offered(cloud)

    assert (cloud.priced[1] in locations, unknown) == (True, "")
    assert cloud.reads("offers") == 3


def read_now(cloud: Cloud, read: Read) -> tuple[bool, str]:
    """Whether the read came back known, and why not."""
    if read == "prices":
        price, unknown = monthly(cloud)
        return price is not None, unknown
    locations, unknown = offered(cloud)
    return bool(locations), unknown


@pytest.mark.parametrize("read", ["prices", "offers"])
def test_a_cloud_that_never_answers_in_time_leaves_it_unknown_saying_so(
    cloud: Cloud, read: Read, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "2")  # the answer is held 10 s: always too late
    cloud.trouble(read, "slow")

    known, unknown = read_now(cloud, read)

    assert not known
    assert "did not answer in time" in unknown
    assert cloud.secret not in unknown


@pytest.mark.parametrize("read", ["prices", "offers"])
def test_an_answer_of_another_shape_leaves_it_unknown_saying_so(cloud: Cloud, read: Read) -> None:
    cloud.trouble(read, "garbled")

    known, unknown = read_now(cloud, read)

    assert not known
    assert "answered something that is not" in unknown
    assert cloud.reads(read) == 1


def test_stacks_of_one_account_share_one_price_list(cloud: Cloud) -> None:
    """CI's comment prices every stack: those whose providers reach one account (owners
    apart) read the cloud's price list once, another account its own."""
    lists = PriceLists()
    first, second = lists.of(cloud.provider("stack-a")), lists.of(cloud.provider("stack-b"))
    assert first is not None
    assert first is second
    assert first.monthly(*cloud.priced) is not None
    assert cloud.reads("prices") == 1

    other = {k: "y" * len(v) if v == cloud.secret else v for k, v in os.environ.items()}
    theirs = lists.of(Provider.of(cloud.kind, "stack-c", other))
    assert theirs is not None
    assert theirs is not first
    theirs.monthly(*cloud.priced)  # asked of the cloud (which may not know that credential)
    assert cloud.reads("prices") == 2


def test_threads_asking_one_kept_price_list_at_once_read_it_once(
    cloud: Cloud, recorded: Recorded
) -> None:
    """An autoscaler's threads share the provider's kept list (billing, a price order):
    those that ask while the first read is on its way wait for its answer, neither reading
    again nor taking a list still being read as one without prices."""
    cloud.trouble("prices", "late")  # the first read is held; the others ask meanwhile
    prices = cloud.provider().kept_prices(None)

    with ThreadPoolExecutor(4) as threads:
        answers = list(threads.map(lambda _: prices.monthly(*cloud.priced), range(4)))

    assert answers[0] is not None
    assert answers == [answers[0]] * 4
    assert prices.unknown == ""
    # one read (a try a loaded machine answered after its timeout is asked again, and counted)
    assert cloud.reads("prices") == 1 + recorded.total("orca.machines.retries")
