"""What machines cost per month, for automation: the provider's own price list.

Each cloud's provider reads its prices through its own client, retries and deadline
(``Provider.prices``, ``machines.runtime.clouds.<kind>.prices``); here a provider that cannot be
made leaves every price unknown, saying why. Prices are net (without VAT), in the
currency the cloud states.
"""

from __future__ import annotations

from collections.abc import Mapping

from machines.runtime.errors import MachinesError
from machines.runtime.prices import NoPrices, PriceList, brief, money
from machines.runtime.provider import Provider

__all__ = ["PriceList", "PriceLists", "money", "price_list"]


def price_list(
    kind: str, environ: Mapping[str, str] | None = None, provider: Provider | None = None
) -> PriceList:
    """The price list of ``provider``, else of the provider ``kind`` configured from
    ``environ`` as the runtime would be; prices unknown, saying why, when it cannot be."""
    try:
        return (provider or Provider.of(kind, "", environ)).prices()
    except MachinesError as error:
        return NoPrices(f"prices unknown: {brief(error)}")


class PriceLists:
    """Price lists read once per cloud account (``Provider.account``), for a report over
    several stacks: CI's comment prices stacks of one account from one list."""

    def __init__(self) -> None:
        self._lists: dict[tuple[str, ...], PriceList] = {}

    def of(self, provider: Provider | None) -> PriceList | None:
        """``provider``'s account's list, read when first asked; None without a provider
        (the report then makes its own, saying why a price is unknown)."""
        if provider is None:
            return None
        account = provider.account()
        if account not in self._lists:
            self._lists[account] = price_list(provider.kind, provider=provider)
        return self._lists[account]
