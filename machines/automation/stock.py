"""Where a machine type can be had now, as the provider of its cloud says (``offers``).

Hetzner states per server type and location whether it is in stock now; EC2 publishes no
stock, only the zones that offer a type (``DescribeInstanceTypeOfferings``), so its zones
are shown as offered (``Provider.offers_stock``). Either way it is the runtime's answer,
with its retries and deadline: the locations a create could go to now (on EC2, the zones
the settings have subnets for), less those a recent ``no_stock`` answer is remembered for.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from machines.errors import MachinesError
from machines.provider import Provider
from machines.secrets import mask


class Stock(BaseModel):
    """The locations where a type is in stock (or, on EC2, offered), or why that is unknown."""

    model_config = ConfigDict(frozen=True)

    locations: tuple[str, ...] = ()
    offered_only: bool = False
    unknown: str = ""

    def text(self) -> str:
        if self.unknown:
            return "unknown"
        shown = ",".join(self.locations) or "none"
        return f"{shown} (offered)" if self.offered_only else shown


def stock(
    kind: str, machine_type: str, provider: Provider | None, environ: Mapping[str, str] | None
) -> Stock:
    """Where ``machine_type`` can be created now, by ``provider``'s ``offers`` (None: the
    provider ``kind`` configured from ``environ``); unknown, saying why, when the settings
    or the cloud fail."""
    try:
        source = provider or Provider.of(kind, "", environ)
        offered = source.offers(machine_type)
    except MachinesError as error:
        return Stock(unknown=mask(" ".join(str(error).split())))
    return Stock(locations=tuple(sorted(offered)), offered_only=not source.offers_stock)
