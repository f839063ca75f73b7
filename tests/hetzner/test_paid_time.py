"""Hetzner's paid time through the runtime, creation times placed with the emulator's clock:
the started hour, the monthly cap of ``/pricing``, a server made at a month's end, and the
money already committed."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from emulator.process import Emulator
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.models import Machine
from testkit.hetzner import RawApi
from testkit.specs import spec

MARCH = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


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
    prices = hetzner_provider.prices()
    hourly = prices.hourly(machine.machine_type, machine.location)
    monthly = prices.monthly(machine.machine_type, machine.location)
    assert hourly is not None
    assert monthly is not None
    cap_hours = math.ceil(monthly / hourly)  # the started hours that reach the monthly price

    below = hetzner_provider.paid_until(machine, MARCH + (cap_hours - 1) * HOUR - HOUR / 2)
    capped = hetzner_provider.paid_until(machine, MARCH + cap_hours * HOUR - HOUR / 2)

    assert below == MARCH + (cap_hours - 1) * HOUR
    assert capped == datetime(2026, 4, 1, tzinfo=UTC)
    end = datetime(2026, 3, 31, 23, 0, tzinfo=UTC)
    assert hetzner_provider.committed([machine], end) == monthly


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
    hourly = hetzner_provider.prices().hourly(early.machine_type, early.location)
    assert hourly is not None

    committed = hetzner_provider.committed([early, late], MARCH + 2 * HOUR - timedelta(minutes=1))

    assert committed == 3 * hourly  # two started hours of the first, one of the second
    assert committed > Decimal(0)


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
