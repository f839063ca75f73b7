"""Hetzner's paid time through the runtime, creation times placed with the emulator's clock:
the started hour, the monthly cap of ``/pricing`` (the server's and its primary IPv4's, each
at its own two figures), a server made at a month's end, and the money already committed."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from emulator.process import Emulator
from machines.runtime.billing import Rate
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.models import Machine, Market
from testkit.hetzner import RawApi
from testkit.specs import spec

MARCH = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
FEBRUARY = datetime(2026, 2, 1, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def billed(provider: HetznerProvider, machine: Machine) -> tuple[Rate, ...]:
    """What the price list bills for ``machine``: the server, then its primary IPv4."""
    found = provider.prices().rates(
        machine.machine_type, machine.location, Market.ON_DEMAND, provider.pool(machine.pool)
    )
    assert found is not None
    return found


def cap_hours(rates: tuple[Rate, ...]) -> int:
    """The started hours after which every item has reached its monthly price."""
    return max(math.ceil(r.monthly / r.per_hour(MARCH)) for r in rates)


@pytest.fixture
def placed(emulator: Emulator, hetzner_provider: HetznerProvider):
    """Make a server as if at ``when``: ``placed(name, when)``; the clock is real again after."""

    def make(name: str, when: datetime) -> Machine:
        emulator.control.set_clock(when.timestamp())
        created = hetzner_provider.create(spec(name))
        assert created.machine is not None, created.reason
        return created.machine

    yield make
    emulator.control.set_clock(None)


def test_the_api_writes_created_as_iso_8601_with_its_offset(
    emulator: Emulator, emulator_api: RawApi, placed
) -> None:
    machine = placed("ci-1", datetime(2016, 1, 30, 23, 50, tzinfo=UTC))

    answer = emulator_api.get(f"/servers/{machine.id}").json()

    assert answer["server"]["created"] == "2016-01-30T23:50:00+00:00"
    assert machine.created == datetime(2016, 1, 30, 23, 50, tzinfo=UTC)


def test_the_emulator_clock_answers_where_it_was_placed(emulator: Emulator) -> None:
    moved = emulator.control.set_clock(MARCH.timestamp())

    assert MARCH.timestamp() <= moved <= emulator.control.clock() < MARCH.timestamp() + 60
    emulator.control.set_clock(None)
    assert abs(emulator.control.clock() - datetime.now(UTC).timestamp()) < 60


def test_pricing_states_the_hourly_and_monthly_price(emulator_api: RawApi) -> None:
    prices = emulator_api.get("/pricing").json()["pricing"]["server_types"]
    cx23 = next(p for p in prices if p["name"] == "cx23")["prices"]

    assert {"price_hourly", "price_monthly"} <= set(cx23[0])


def test_paid_until_a_minute_before_and_after_the_hour(
    hetzner_provider: HetznerProvider, placed
) -> None:
    machine = placed("ci-1", MARCH)

    before = hetzner_provider.paid_until(machine, MARCH + 59 * timedelta(minutes=1))
    after = hetzner_provider.paid_until(machine, MARCH + 61 * timedelta(minutes=1))

    assert before == MARCH + HOUR
    assert after == MARCH + 2 * HOUR


def test_the_monthly_cap_of_the_price_list_pays_until_the_months_end(
    hetzner_provider: HetznerProvider, placed
) -> None:
    machine = placed("ci-1", MARCH)
    rates = billed(hetzner_provider, machine)
    hours = cap_hours(rates)  # the started hours that reach every item's monthly price

    below = hetzner_provider.paid_until(machine, MARCH + (hours - 1) * HOUR - HOUR / 2)
    capped = hetzner_provider.paid_until(machine, MARCH + hours * HOUR - HOUR / 2)

    assert below == MARCH + (hours - 1) * HOUR
    assert capped == datetime(2026, 4, 1, tzinfo=UTC)
    end = datetime(2026, 3, 31, 23, 0, tzinfo=UTC)
    assert hetzner_provider.committed([machine], end) == sum(r.monthly for r in rates)


def test_the_cap_is_reached_within_february_at_hetzners_own_hourly_price(
    hetzner_provider: HetznerProvider, placed
) -> None:
    """Hetzner's hourly price is its own figure, above the monthly one over 730 hours: a
    server's month is capped after about 625 started hours, within February's 672."""
    machine = placed("ci-1", FEBRUARY)
    rates = billed(hetzner_provider, machine)
    assert all(r.hourly is not None and r.hourly * 730 > r.monthly for r in rates)

    capped = hetzner_provider.paid_until(machine, FEBRUARY + 650 * HOUR)

    assert cap_hours(rates) < 650
    assert capped == MARCH
    assert hetzner_provider.committed([machine], FEBRUARY + 650 * HOUR) == sum(
        r.monthly for r in rates
    )


def test_a_server_made_at_a_months_end_is_paid_its_hour_into_the_next(
    hetzner_provider: HetznerProvider, placed
) -> None:
    made = datetime(2026, 1, 31, 23, 50, tzinfo=UTC)
    machine = placed("ci-1", made)

    (advice,) = hetzner_provider.keep_advice([machine], datetime(2026, 2, 1, 0, 10, tzinfo=UTC))

    assert advice.paid_until == datetime(2026, 2, 1, 0, 50, tzinfo=UTC)
    assert advice.release_at == datetime(2026, 2, 1, 0, 48, tzinfo=UTC)
    assert advice.keep_for == 38 * 60


def test_committed_money_counts_every_started_hour(
    hetzner_provider: HetznerProvider, placed
) -> None:
    early = placed("ci-1", MARCH)
    late = placed("ci-2", MARCH + 90 * timedelta(minutes=1))
    hourly = sum(r.per_hour(MARCH) for r in billed(hetzner_provider, early))

    committed = hetzner_provider.committed([early, late], MARCH + 2 * HOUR - timedelta(minutes=1))

    assert committed == 3 * hourly  # two started hours of the first, one of the second
    assert committed > Decimal(0)


def test_committed_money_counts_the_primary_ipv4_at_its_hourly_price(
    hetzner_provider: HetznerProvider, placed
) -> None:
    """A server with a primary IPv4 (the pool's default) is billed the address too, by the
    started hour at its own listed price (``primary_ips[].prices[].price_hourly``)."""
    machine = placed("ci-1", MARCH)
    prices = hetzner_provider.prices()
    server = prices.hourly(machine.machine_type, machine.location)
    (ipv4,) = prices.option_rates(hetzner_provider.pool("ci"), machine.location) or ()
    assert server is not None
    assert ipv4.hourly is not None

    committed = hetzner_provider.committed([machine], MARCH + HOUR / 2)

    assert committed == server + ipv4.hourly
    assert ipv4.hourly != ipv4.monthly / 730


def test_the_advice_lets_go_first_the_server_whose_hour_ends_first(
    hetzner_provider: HetznerProvider, placed
) -> None:
    older = placed("ci-1", MARCH)
    newer = placed("ci-2", MARCH + 30 * timedelta(minutes=1))
    oldest_hour_ends_last = placed("ci-3", MARCH - 20 * timedelta(minutes=1))

    advice = hetzner_provider.keep_advice(
        [older, newer, oldest_hour_ends_last], MARCH + 45 * timedelta(minutes=1)
    )

    assert [a.machine.name for a in advice] == ["ci-1", "ci-2", "ci-3"]
    assert [a.keep_for for a in advice] == [13 * 60, 43 * 60, 53 * 60]


def test_now_may_be_the_clocks_seconds_or_a_naive_utc_time(
    hetzner_provider: HetznerProvider, placed
) -> None:
    machine = placed("ci-1", MARCH)
    at = MARCH + timedelta(minutes=10)

    by_datetime = hetzner_provider.keep_advice([machine], at)
    by_seconds = hetzner_provider.keep_advice([machine], at.timestamp())
    naive = hetzner_provider.keep_advice([machine], at.replace(tzinfo=None))

    assert by_datetime == by_seconds == naive
    with pytest.raises(TypeError, match="now is a datetime or seconds"):
        hetzner_provider.keep_advice([machine], "10:00")  # type: ignore[arg-type]
