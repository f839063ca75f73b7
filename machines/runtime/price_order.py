"""A spanning pool's places ranked by what the next hour of work costs at each, in one
currency: the pool's ``placeOrder: price`` (``Pool.place_order``).

Each place's price is its cloud's own: the price list's hourly price of the type there in
the place's market (EC2's spot price for a spot place), and each item the pool's options add
at its own listed figures (Hetzner's primary IPv4 at its hourly price, EC2's root volume at
its share of the month's GB-month price), billed for one hour by the cloud's billing rule
(Hetzner: the started hour; EC2: by the second), then turned into one currency by the rates
``ORCA_EXCHANGE_RATES`` names. A place whose price cannot be read keeps its written place in
the order, and the order says why.

Each cloud's price list is the one its provider keeps (``Provider.current_prices``): read
at most once per ``ORCA_OFFERS_TTL`` however many creates rank places by it, so a create
after the first within that window asks no cloud for a price. The spanning provider passes
each place its cloud's list and billing rule: this module, below the providers, imports none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from machines.runtime.billing import Billing
from machines.runtime.clouds import cloud
from machines.runtime.errors import MachinesError
from machines.runtime.pool import Place, Pool
from machines.runtime.prices import PriceList, brief
from machines.runtime.settings import ORCA_EXCHANGE_RATES

NEXT_HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Priced:
    """One place and its next hour's price in the common unit of the rates, or why none."""

    place: Place
    price: Decimal | None
    why: str = ""


def missing_rates(pool: Pool, rates: Mapping[str, Decimal]) -> list[str]:
    """The currencies of ``pool``'s places' clouds that ``rates`` has no rate for, in the
    places' order, when the pool ranks its places by price; none when it need not."""
    if pool.place_order != "price":
        return []
    wanted = dict.fromkeys(cloud(p.cloud).currency for p in pool.places)
    return [c for c in wanted if c not in rates]


def next_hour(
    billing: Billing | None,
    settings: Pool,
    place: Place,
    rates: Mapping[str, Decimal],
    now: datetime,
    *,
    prices: PriceList,
) -> Priced:
    """What the next hour of a machine at ``place`` costs (``billing``: its cloud's billing
    rule, the provider's ``billing``; ``settings``: the pool there; ``prices``: its cloud's
    price list, the provider's ``current_prices()``)."""
    facts = cloud(place.cloud)
    if facts.currency not in rates:
        return Priced(place, None, f"{ORCA_EXCHANGE_RATES} has no rate for {facts.currency}")
    try:
        billed = prices.rates(place.machine_type, place.location, place.market, settings)
    except MachinesError as error:
        return Priced(place, None, f"prices unknown: {brief(error)}")
    if billed is None:
        return Priced(place, None, prices.unknown or "its price is unknown")
    if billing is None:
        return Priced(place, None, f"{facts.name} states no billing rule")
    charged = billing.charged(now, now + NEXT_HOUR, billed)
    return Priced(place, charged * rates[facts.currency])


def ranked(priced: Sequence[Priced]) -> list[Priced]:
    """The places with a price in the order of their prices (the written order between
    equal ones), in the positions priced places hold; the others where they were written."""
    known = iter(sorted((p for p in priced if p.price is not None), key=lambda p: p.price or 0))
    return [next(known) if p.price is not None else p for p in priced]


def said(priced: Sequence[Priced]) -> str:
    """The order in words: each place's price, or why it kept its written place."""
    parts = [
        f"{p.place} {p.price:.4f}" if p.price is not None else f"{p.place} as written ({p.why})"
        for p in priced
    ]
    return "places by the next hour's price (in the rates' unit): " + "; ".join(parts)
