"""What machines cost, from the cloud's own price list; never a table kept here.

Each provider answers ``Provider.prices()`` with a ``PriceList`` read through its own
client, retries and deadline (``machines.runtime.clouds.<kind>.prices``); where a price cannot be
read it is unknown and the list says why, rather than a number that goes stale. Prices are
net (without VAT), in the currency the cloud states, each figure as the cloud lists it: an
hourly price is the list's own (Hetzner's ``price_hourly``, AWS's price per hour), never a
monthly one over some count of hours, and a monthly one the list's (Hetzner's cap) or the
cloud's own convention from the hourly (AWS's 730 hours).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from machines.runtime.billing import Rate
from machines.runtime.models import Market
from machines.runtime.pool import Pool
from machines.runtime.secrets import mask

Priced = tuple[str, str, Market]
"""A machine as priced: its type, location and market."""


class PriceList:
    """Prices per (machine type, location, market), each read once, or why unknown.

    A cloud's list implements ``monthly``, ``hourly``, ``option_rates`` where its pools'
    options are billed apart and, when it can fail, ``unknown``; ``currency`` is the one its
    prices are in (known once a price was read). One list is shared by every
    thread that asks its provider (``Provider.kept_prices``), so a list that reads lazily
    reads each price once under a lock: a thread asking while another reads waits for that
    read's answer instead of reading again or taking a half-read list.
    """

    currency: str = ""

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """The net monthly price of one machine, or None when unknown (see ``unknown``)."""
        raise NotImplementedError

    def hourly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        """The net hourly price of one machine as the cloud lists it (what an hour, or each
        started hour, costs), or None when unknown (see ``unknown``)."""
        raise NotImplementedError

    @property
    def unknown(self) -> str:
        """Why prices are unknown (empty when every price asked for was read)."""
        return ""

    @property
    def read_failed(self) -> bool:
        """Whether the cloud's list itself could not be read (not one price it lacks): a
        list kept so is read again once the price window has passed
        (``Provider.kept_prices``). Asks nothing."""
        return False

    def option_rates(self, pool: Pool, location: str) -> tuple[Rate, ...] | None:
        """What the pool's options add to one machine where the cloud bills them apart
        (Hetzner's primary IPv4, EC2's root volume), one ``Rate`` per item as the cloud
        lists it; None when unknown (see ``unknown``). A cloud that bills none keeps this:
        nothing."""
        return ()

    def options(self, pool: Pool, location: str) -> Decimal | None:
        """What the pool's options add to one machine's monthly price (``option_rates``'
        monthly figures); None when unknown (see ``unknown``)."""
        rates = self.option_rates(pool, location)
        return None if rates is None else sum((r.monthly for r in rates), Decimal(0))

    def rates(
        self, machine_type: str, location: str, market: Market, pool: Pool
    ) -> tuple[Rate, ...] | None:
        """What one machine of ``pool`` bills, item by item: the machine at its type's
        hourly and monthly price there, then what its options add; None when a price is
        unknown (see ``unknown``)."""
        hourly = self.hourly(machine_type, location, market)
        monthly = self.monthly(machine_type, location, market)
        extra = self.option_rates(pool, location)
        if hourly is None or monthly is None or extra is None:
            return None
        return (Rate(hourly, monthly), *extra)

    def saving(self, pool: Pool, location: str) -> Decimal:
        """What the pool's options save on one machine a month against the cloud's default
        (an IPv6-only Hetzner server has no primary IPv4 to pay): 0 when nothing, or unknown."""
        return Decimal(0)

    def total(self, machines: Iterable[Priced]) -> Decimal | None:
        """The monthly price of these machines; None if any price is unknown."""
        total = Decimal(0)
        for machine_type, location, market in machines:
            price = self.monthly(machine_type, location, market)
            if price is None:
                return None
            total += price
        return total


class NoPrices(PriceList):
    """A price list there is none of (no settings, a cloud without one): every price
    unknown, for the reason given."""

    def __init__(self, why: str) -> None:
        self._why = why

    def monthly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        return None

    def hourly(
        self, machine_type: str, location: str, market: Market = Market.ON_DEMAND
    ) -> Decimal | None:
        return None

    @property
    def unknown(self) -> str:
        return self._why


def money(amount: Decimal | None, currency: str) -> str:
    """``12.34 EUR``, or ``price unknown``."""
    if amount is None:
        return "price unknown"
    return f"{amount.quantize(Decimal('0.01'))} {currency}".strip()


def brief(error: Exception, limit: int = 200) -> str:
    """An error as one short line for a note (at most ``limit`` characters), secrets
    masked."""
    text = " ".join(str(error).split()) or type(error).__name__
    return mask(text)[:limit]
