"""A spanning pool's money in the stack's currency: each place's in its cloud's, summed
through the stack's exchange rates, or unknown saying which rate is missing."""

from __future__ import annotations

from decimal import Decimal

from machines.automation.places import in_currency

RATES = {"EUR": Decimal(1), "USD": Decimal("0.86")}


def test_amounts_in_the_stack_s_currency_are_summed_as_they_are() -> None:
    assert in_currency([(Decimal("6.49"), "EUR"), (Decimal("1"), "EUR")], "EUR", {}) == (
        Decimal("7.49"),
        "",
    )


def test_amounts_in_another_currency_go_through_the_rates() -> None:
    total, why = in_currency([(Decimal("6.49"), "EUR"), (Decimal("10"), "USD")], "EUR", RATES)
    assert (total, why) == (Decimal("15.09"), "")


def test_a_currency_without_a_rate_leaves_the_sum_unknown_and_says_which() -> None:
    total, why = in_currency([(Decimal("10"), "USD")], "EUR", {"EUR": Decimal(1)})
    assert total is None
    assert "exchangeRates has no rate for USD" in why


def test_nothing_at_a_place_needs_no_rate() -> None:
    assert in_currency([(Decimal(0), "USD"), (Decimal(2), "EUR")], "EUR", {}) == (Decimal(2), "")


def test_an_unknown_amount_leaves_the_sum_unknown() -> None:
    assert in_currency([(None, "EUR"), (Decimal(2), "EUR")], "EUR", RATES) == (None, "")
