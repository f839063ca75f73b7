"""The provider interface: the few calls the autoscaler makes, the same on every cloud.

Like the cluster-autoscaler's cloud provider, it is small on purpose, with one module per
cloud behind it. ``Provider.of`` imports a cloud's module only when that cloud is asked
for, so ``import machines`` never loads boto3 or Pulumi.
"""

from __future__ import annotations

import importlib
import os
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping
from typing import ClassVar

from machines.budget import Budget
from machines.clouds import PROVIDERS
from machines.errors import SettingsError, UnknownProviderError
from machines.labels import check_owner
from machines.models import Created, Machine, MachineSpec, Market, Status
from machines.prices import NoPrices, PriceList
from machines.settings import ORCA_POOL_MARKET, ORCA_POOL_MAX, pool_market, pool_max, unsold_market


def kinds() -> tuple[str, ...]:
    """The provider kinds ``Provider.of`` knows."""
    return tuple(PROVIDERS)


class Provider(ABC):
    """One cloud account's machines for one owner (a deployment, i.e. a Pulumi stack).

    Subclasses set ``kind`` and build themselves from settings in ``from_env``.
    """

    kind: ClassVar[str]
    cloud: ClassVar[str]
    markets: ClassVar[frozenset[Market]] = frozenset({Market.ON_DEMAND})
    """The markets the cloud sells (``clouds.<kind>.settings.MARKETS``)."""
    offers_stock: ClassVar[bool] = True
    """Whether ``offers`` knows the cloud's stock now (Hetzner's ``available``), or only
    where a type is offered at all (EC2 publishes no stock)."""

    def __init__(self, owner: str, image: str) -> None:
        self.owner = check_owner(owner)
        self.image = image
        self.pool_max: Mapping[str, int] = {}
        self.pool_market: Mapping[str, Market] = {}
        self._creating: dict[str, Counter[str]] = {}
        self._creating_lock = threading.Lock()

    @staticmethod
    def of(kind: str, owner: str = "", environ: Mapping[str, str] | None = None) -> Provider:
        """The provider ``kind`` configured from ``environ`` (default: this process's)."""
        target = PROVIDERS.get(kind)
        if target is None:
            raise UnknownProviderError(
                f"unknown provider kind {kind!r}: use one of {', '.join(sorted(PROVIDERS))}"
            )
        env = os.environ if environ is None else environ
        limits = pool_max(env)
        markets = pool_market(env)
        module_name, _, class_name = target.partition(":")
        cls: type[Provider] = getattr(importlib.import_module(module_name), class_name)
        for pool, market in markets.items():
            refused = unsold_market(cls.cloud, cls.markets, pool, market)
            if refused:
                raise SettingsError(f"{ORCA_POOL_MARKET}: {refused}")
        provider = cls.from_env(owner, environ)
        provider.pool_max = limits
        provider.pool_market = markets
        return provider

    @classmethod
    @abstractmethod
    def from_env(cls, owner: str, environ: Mapping[str, str] | None = None) -> Provider:
        """Build the provider from environment variables; raise ``SettingsError`` if short."""

    @abstractmethod
    def arch(self, machine_type: str) -> str:
        """Docker's architecture name of a machine type (``amd64``, ``arm64``), cached."""

    @abstractmethod
    def create(self, spec: MachineSpec) -> Created:
        """Ask for one machine; return at once, without waiting for it to boot."""

    @abstractmethod
    def machines(self, pool: str) -> list[Machine]:
        """Every machine of ``pool`` that belongs to this owner, and no other.

        Answered from one listing of the owner's machines for every pool while it is fresh
        (``ORCA_LIST_TTL``, stretched when the budget is low); this provider's own creates
        and deletes show at once, other processes' changes once the listing is renewed.
        """

    @abstractmethod
    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        """Locations where ``machine_type`` can be created now, as the cloud says (cached
        briefly), less those a recent ``no_stock`` answer is remembered for in the market
        of ``pool`` (default: on-demand); for ``spot-then-on-demand``, in both markets."""

    @abstractmethod
    def sells(self, machine_type: str, location: str) -> str | None:
        """Why the cloud never makes ``machine_type`` in ``location`` whatever its stock (a
        type it lacks, a location it does not sell or offer it in), or None when it can:
        what a stack's pools are checked against before the engine runs."""

    @abstractmethod
    def budget(self) -> Budget:
        """The cloud's request budget as its last answer stated it, and the listing's
        freshness window it leads to now."""

    @abstractmethod
    def delete(self, machine_id: str) -> bool:
        """Delete this owner's pool machine; True once it is gone, now or before."""

    def prices(self) -> PriceList:
        """The cloud's own price list, read through this provider's client and retries
        when first asked. A cloud without one keeps this default: every price unknown,
        saying so."""
        return NoPrices(f"prices unknown: no price list for provider {self.kind}")

    def listing_age(self) -> float | None:
        """Seconds since the listing ``machines`` answers from began, None before the first
        (the metrics report it; it asks nothing of the cloud)."""
        return None

    def out_of_stock(self) -> list[tuple[str, str, Market, float]]:
        """(type, location, market, seconds left) of each ``no_stock`` answer remembered
        now."""
        return []

    def market(self, pool: str) -> Market:
        """The market ``pool``'s machines are bought in (``ORCA_POOL_MARKET``)."""
        return self.pool_market.get(pool, Market.ON_DEMAND)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, owner={self.owner!r})"

    def refusal(self, spec: MachineSpec) -> Created | None:
        """Why ``create`` refuses ``spec`` before asking the cloud (a pool at its max), or None.

        The count is ``machines(pool)``, the shared listing with this provider's own writes
        laid over it (the deleting do not count), plus this provider's creates of the pool
        still in flight and not listed yet: threads of one provider never pass ``max``
        together. A name already listed or in flight makes no new machine, so is let through
        (a create retried after a lost answer returns its machine). A passed check holds its
        place until ``release``, which ``create`` calls once it has ended (a machine it made
        is in the listing by then).
        """
        limit = self.pool_max.get(spec.pool)
        if limit is None:
            return None
        with self._creating_lock:
            listed = [m for m in self.machines(spec.pool) if m.status != Status.DELETING]
            names = {m.name for m in listed}
            in_flight = self._creating.setdefault(spec.pool, Counter())
            count = len(listed) + sum(1 for name in in_flight if name not in names)
            if count >= limit and spec.name not in names | set(in_flight):
                return Created.failure(
                    f"pool {spec.pool} has {count} machines, the max stack {self.owner or '-'} "
                    f"sets for it ({limit}, {ORCA_POOL_MAX}): wait for some to be deleted, or "
                    "raise the pool's max in the stack"
                )
            in_flight[spec.name] += 1
        return None

    def release(self, spec: MachineSpec) -> None:
        """End the place ``refusal`` held for a create."""
        if spec.pool not in self.pool_max:
            return
        with self._creating_lock:
            in_flight = self._creating.get(spec.pool, Counter())
            in_flight[spec.name] -= 1
            if in_flight[spec.name] <= 0:
                del in_flight[spec.name]
