"""A pool's Hetzner options and their rules (the spread placement group's limit among them).

Light on purpose: the pool model, the stack file's check and the Hetzner provider all read
it, so it imports neither hcloud nor anything of the provider.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field, model_validator

from machines.runtime.options import Options, extra_keys

if TYPE_CHECKING:
    from machines.runtime.pool import Pool

KIND = "hetzner"

SPREAD_LIMIT = 10
"""The most servers one Hetzner spread placement group holds: a pool in one has a ``max`` of
at most this many (with the pools sharing its group), or it is refused when loaded."""


class HetznerOptions(Options):
    """A pool's Hetzner options.

    ``ipv4``/``ipv6``: a public address of each kind (a primary IPv4 is billed; with both off
    the server is reachable through ``network`` only, so that needs one). ``network``: the
    name of a private network the server joins at create (it needs a subnet in the
    location's network zone). ``placement_group``: the name of a spread placement group
    (at most ``SPREAD_LIMIT`` servers). ``image``: a name or id, over the deployment's
    image; ``image_selector``: a label selector, the newest snapshot matching it for the
    type's architecture. ``labels`` are added to the orca labels, never over them.
    """

    kind: ClassVar[str] = KIND
    replacing: ClassVar[frozenset[str]] = frozenset({"image", "imageSelector"})
    """Hetzner boots an image at create only; public addresses, networks, placement group
    (the plugin powers the server off for the first and last) and labels change in place.
    A snapshot found anew by its selector only applies to new machines."""

    ipv4: bool = True
    ipv6: bool = True
    network: str = ""
    placement_group: str = ""
    image: str = ""
    image_selector: str = ""
    labels: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _reachable(self) -> HetznerOptions:
        extra_keys(self.labels, "label")
        if not (self.ipv4 or self.ipv6 or self.network):
            raise ValueError(
                "ipv4 and ipv6 are both false and no network is set: the server would have "
                "no address at all; set network (a private network) or turn ipv4 or ipv6 on"
            )
        if self.image and self.image_selector:
            raise ValueError("image and imageSelector both name the image: keep one of them")
        return self

    def pool_refusal(self, pool: Pool) -> tuple[str, str] | None:
        """A pool in a spread group needs a ``max`` within the group's limit."""
        if self.placement_group and (pool.max is None or pool.max > SPREAD_LIMIT):
            return "max", spread_refusal(pool.name, pool.max)
        return None

    @classmethod
    def pools_refusal(cls, pools: Iterable[Pool]) -> str:
        """Pools sharing a spread group whose maxes could pass its limit together (a pool
        whose own max is refused is left to its own refusal)."""
        groups: dict[str, list[Pool]] = {}
        for pool in pools:
            options = pool.given(cls)
            alone = options is not None and options.pool_refusal(pool) is None
            if options is not None and options.placement_group and alone:
                groups.setdefault(options.placement_group, []).append(pool)
        for group, members in groups.items():
            total = sum(p.max or 0 for p in members)
            if len(members) > 1 and total > SPREAD_LIMIT:
                names = ", ".join(p.name for p in members)
                return (
                    f"pools {names} share placement group {group} with maxes adding up to "
                    f"{total}: a spread group holds at most {SPREAD_LIMIT} servers; lower their "
                    "maxes or give each pool its own group"
                )
        return ""


def spread_refusal(pool: str, limit: int | None) -> str:
    """Why a pool in a spread placement group is refused with this max."""
    has = "no max" if limit is None else f"max {limit}"
    return (
        f"pool {pool} is in a spread placement group but has {has}: Hetzner puts at most "
        f"{SPREAD_LIMIT} servers in one, so set the pool's max to {SPREAD_LIMIT} or less "
        "(split a larger pool into pools of their own groups)"
    )
