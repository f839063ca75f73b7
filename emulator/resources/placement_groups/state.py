"""Placement groups: `spread` groups whose servers run on distinct hosts, at most 10 each.

A server joins at create (`placement_group` on POST /servers) and leaves when it is deleted.
An 11th server is refused with `placement_group_member_limit_reached` and the real API's
words ("placement group with ID 369587 contains already 10 servers", quoted in
terraform-provider-hcloud issue #1170, 2025-08; in 2023 the same words came as
`service_error`, kube-hetzner issue #800). A group that still holds servers cannot be
deleted (`resource_in_use`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.errors import ApiError, invalid_input
from emulator.resources.collection import NamedCollection

FIRST_ID = 4_000_001
PLACEMENT_GROUP_TYPES = ("spread",)
MAX_SPREAD_SERVERS = 10  # docs.hetzner.com/cloud/placement-groups/overview#limits
LIMIT_REACHED = "placement_group_member_limit_reached"


@dataclass
class PlacementGroup:
    """A placement group and its servers, in the order they joined."""

    id: int
    name: str
    type: str
    labels: dict[str, str]
    created: float
    server_ids: list[int] = field(default_factory=list)


class PlacementGroups(NamedCollection[PlacementGroup]):
    """The project's placement groups, unique by name."""

    kind = "placement_group"
    first_id = FIRST_ID
    name_taken = "placement group name is already used"

    def create(self, name: str, kind: str, labels: dict[str, str]) -> PlacementGroup:
        """A new, empty placement group."""
        self.check_name(name)
        return self._added(PlacementGroup(next(self._ids), name, kind, labels, self.project.now))

    def check_deletable(self, item: PlacementGroup) -> None:
        """A group that servers are in is in use."""
        if item.server_ids:
            raise ApiError("resource_in_use", "placement group still has servers")

    def check_joinable(self, group_id: int) -> PlacementGroup:
        """The group a create names, if it has room; the real API's error otherwise."""
        group = self.by_id.get(group_id)
        if group is None:
            raise invalid_input(f"placement group {group_id} not found")
        if len(group.server_ids) >= MAX_SPREAD_SERVERS:
            raise ApiError(
                LIMIT_REACHED,
                f"placement group with ID {group.id} contains already {MAX_SPREAD_SERVERS} servers",
            )
        return group

    def join(self, group_id: int, server_id: int) -> PlacementGroup:
        """Put a server in a group with room."""
        group = self.check_joinable(group_id)
        group.server_ids.append(server_id)
        return group

    def of_server(self, server_id: int) -> PlacementGroup | None:
        """The group a server is in, if any."""
        return next((g for g in self.by_id.values() if server_id in g.server_ids), None)

    def leave(self, server_id: int) -> None:
        """Take a server out of its group (it is gone)."""
        for group in self.by_id.values():
            if server_id in group.server_ids:
                group.server_ids.remove(server_id)
