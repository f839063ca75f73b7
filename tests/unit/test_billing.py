"""Each cloud's billing rule at its edges: an hour's boundary, the monthly cap, a month's end,
EC2's first minute; each billed item of a machine (a primary IPv4, a root volume) at its own
figures."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from machines.runtime.billing import Rate
from machines.runtime.clouds.ec2.billing import BILLING as EC2
from machines.runtime.clouds.hetzner.billing import BILLING as HETZNER
from machines.runtime.clouds.hetzner.billing import CAP_FLOOR

MADE = datetime(2026, 3, 10, 9, 20, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
CX23 = (Rate(hourly=Decimal("0.0060"), monthly=Decimal("3.49")),)
"""A cap reached after 582 started hours (3.49 / 0.006 = 581.7)."""
IPV4 = Rate(hourly=Decimal("0.0008"), monthly=Decimal("0.50"))
"""Hetzner's primary IPv4: its cap reached after 625 started hours."""
GP3_30 = Rate(hourly=None, monthly=Decimal("0.0952") * 30)
"""A 30 GiB gp3 root volume in eu-central-1: per GB-month, no hourly figure."""


def no_rate() -> tuple[Rate, ...] | None:
    raise AssertionError("the price list was asked although the rule needs no price")


def rate() -> tuple[Rate, ...] | None:
    return CX23


@pytest.mark.parametrize(
    ("after", "paid_for"),
    [
        (timedelta(0), 1),
        (59 * MINUTE, 1),
        (61 * MINUTE, 2),
        (HOUR - timedelta(seconds=1), 1),
        (HOUR, 2),
        (2 * HOUR - MINUTE, 2),
        (2 * HOUR + MINUTE, 3),
    ],
)
def test_hetzner_pays_to_the_end_of_the_started_hour(after, paid_for):
    assert HETZNER.paid_until(MADE, MADE + after, no_rate) == MADE + paid_for * HOUR


def test_hetzner_a_minute_before_and_after_an_hour_costs_one_and_two_hours():
    assert HETZNER.charged(MADE, MADE + 59 * MINUTE, CX23) == Decimal("0.0060")
    assert HETZNER.charged(MADE, MADE + 61 * MINUTE, CX23) == Decimal("0.0120")


def test_hetzner_the_monthly_cap_pays_until_the_months_end():
    start = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
    below = start + 580 * HOUR + MINUTE  # the 581st hour started: 3.486 < 3.49
    reached = start + 581 * HOUR + MINUTE  # the 582nd: 3.492 >= 3.49
    assert HETZNER.paid_until(start, below, rate) == start + 581 * HOUR
    assert HETZNER.paid_until(start, reached, rate) == datetime(2026, 4, 1, tzinfo=UTC)
    assert HETZNER.charged(start, reached, CX23) == CX23[0].monthly
    whole_month = datetime(2026, 4, 1, tzinfo=UTC)
    assert HETZNER.charged(start, whole_month, CX23) == CX23[0].monthly


def test_hetzner_an_unknown_price_never_claims_the_cap():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    late = start + 700 * HOUR + MINUTE
    assert HETZNER.paid_until(start, late, lambda: None) == start + 701 * HOUR


def test_hetzner_asks_no_price_below_a_day_of_hours():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    assert HETZNER.paid_until(start, start + (CAP_FLOOR - 1) * HOUR - MINUTE, no_rate)


def test_hetzner_a_server_made_at_a_months_end_starts_the_next_month_uncapped():
    made = datetime(2026, 1, 31, 23, 50, tzinfo=UTC)
    assert HETZNER.paid_until(made, made + 5 * MINUTE, no_rate) == made + HOUR
    after = datetime(2026, 2, 1, 0, 10, tzinfo=UTC)
    assert HETZNER.paid_until(made, after, no_rate) == datetime(2026, 2, 1, 0, 50, tzinfo=UTC)
    assert HETZNER.charged(made, after, CX23) == Decimal("0.0060")
    # the hour it started in January and the one in February, each month's on its own
    assert HETZNER.charged(made, made + HOUR + MINUTE, CX23) == Decimal("0.0120")


def test_hetzner_a_capped_month_then_the_next_month_counts_afresh():
    made = datetime(2026, 1, 1, 0, 30, tzinfo=UTC)
    end_of_january = datetime(2026, 1, 31, 23, 40, tzinfo=UTC)
    assert HETZNER.paid_until(made, end_of_january, rate) == datetime(2026, 2, 1, 0, 30, tzinfo=UTC)
    february = datetime(2026, 2, 1, 2, 45, tzinfo=UTC)
    assert HETZNER.paid_until(made, february, rate) == datetime(2026, 2, 1, 3, 30, tzinfo=UTC)
    assert HETZNER.charged(made, february, CX23) == CX23[0].monthly + 3 * Decimal("0.0060")


@pytest.mark.parametrize(
    ("after", "paid"),
    [
        (timedelta(seconds=0), timedelta(seconds=60)),
        (timedelta(seconds=59), timedelta(seconds=60)),
        (timedelta(seconds=61), timedelta(seconds=61)),
        (HOUR + MINUTE, HOUR + MINUTE),
    ],
)
def test_ec2_pays_the_first_minute_then_until_now(after, paid):
    assert EC2.paid_until(MADE, MADE + after, no_rate) == MADE + paid


def test_ec2_bills_by_the_second_after_the_first_minute():
    hourly = (Rate(hourly=Decimal("0.0108"), monthly=Decimal("7.884")),)
    assert EC2.charged(MADE, MADE + timedelta(seconds=10), hourly) == Decimal("0.00018")
    assert EC2.charged(MADE, MADE + HOUR, hourly) == Decimal("0.0108")
    assert EC2.charged(MADE, MADE + 90 * MINUTE, hourly) == Decimal("0.0162")


def test_naive_times_are_taken_as_utc():
    naive = MADE.replace(tzinfo=None)
    assert HETZNER.paid_until(naive, MADE + MINUTE, no_rate) == MADE + HOUR


def test_hetzner_bills_the_primary_ipv4_apart_at_its_own_hourly_price_and_cap():
    """A server and its primary IPv4 are each billed by the started hour up to their own
    monthly prices: the IPv4's hour is its listed 0.0008, not 0.50 / 730."""
    server_and_ip = (*CX23, IPV4)
    assert HETZNER.charged(MADE, MADE + MINUTE, server_and_ip) == Decimal("0.0068")
    start = datetime(2026, 3, 1, tzinfo=UTC)
    # the server's cap is reached after 582 hours, the address's only after 625
    at_600 = start + 599 * HOUR + MINUTE
    assert HETZNER.charged(start, at_600, server_and_ip) == Decimal("3.49") + 600 * IPV4.hourly
    assert HETZNER.paid_until(start, at_600, lambda: server_and_ip) == start + 600 * HOUR
    at_625 = start + 624 * HOUR + MINUTE
    assert HETZNER.charged(start, at_625, server_and_ip) == Decimal("3.99")
    assert HETZNER.paid_until(start, at_625, lambda: server_and_ip) == datetime(
        2026, 4, 1, tzinfo=UTC
    )


def test_hetzner_a_cap_of_about_624_hours_is_reached_within_a_month():
    """Hetzner's hourly price is a figure of its own (cx33: 0.0104 an hour, 6.49 a month):
    the cap is reached after 625 started hours, within any month of 28 days or more. At
    the monthly price over 730 hours it never would be."""
    cx33 = (Rate(hourly=Decimal("0.0104"), monthly=Decimal("6.49")),)
    february = datetime(2026, 2, 1, tzinfo=UTC)
    capped = february + 624 * HOUR + MINUTE  # the 625th hour: 6.50 >= 6.49
    assert HETZNER.paid_until(february, capped, lambda: cx33) == datetime(2026, 3, 1, tzinfo=UTC)
    assert HETZNER.charged(february, datetime(2026, 3, 1, tzinfo=UTC), cx33) == Decimal("6.49")
    over_730 = (Rate(hourly=Decimal("6.49") / 730, monthly=Decimal("6.49")),)
    assert HETZNER.paid_until(february, capped, lambda: over_730) == february + 625 * HOUR


def test_ec2_bills_a_volume_by_the_second_as_a_share_of_its_month():
    """EBS: per GB-month, each second a share of the calendar month it falls in (AWS's
    example: 43,200 s of a 30-day month are 1/60 of the GB-month price)."""
    june = datetime(2026, 6, 1, tzinfo=UTC)
    assert EC2.charged(june, june + 12 * HOUR, (GP3_30,)) == GP3_30.monthly / 60
    february, march = datetime(2026, 2, 10, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC)
    assert EC2.charged(february, february + HOUR, (GP3_30,)) == GP3_30.monthly / (28 * 24)
    assert EC2.charged(march, march + HOUR, (GP3_30,)) == GP3_30.monthly / (31 * 24)
    across = datetime(2026, 2, 28, 23, 30, tzinfo=UTC)
    half_each = GP3_30.monthly / (28 * 24) / 2 + GP3_30.monthly / (31 * 24) / 2
    assert abs(EC2.charged(across, across + HOUR, (GP3_30,)) - half_each) < Decimal("1e-20")
