"""Firewalls: their rules (checked like the real API checks them) and what they are applied to.

A firewall applies to servers directly and to label selectors (every server whose labels
match, now or later). Applying, removing and setting rules are actions that run for the
action time: a server shows the firewall `pending` until its apply or remove finishes, and a
removed server stays attached (so deleting the firewall is `resource_in_use`) until then,
as on the real API. A failed apply (control API) leaves the server without the firewall.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from emulator import label_selector
from emulator.errors import ApiError, invalid_field
from emulator.resources.actions.state import Action
from emulator.resources.collection import NamedCollection

if TYPE_CHECKING:
    from emulator.resources.servers.state import Server

FIRST_ID = 40_001
FIREWALL_PROTOCOLS = ("tcp", "udp", "icmp", "esp", "gre")
MAX_PORT = 65535


@dataclass(frozen=True)
class FirewallRule:
    """One firewall rule, checked like the real API checks it."""

    direction: Literal["in", "out"]
    protocol: str
    port: str | None
    source_ips: tuple[str, ...]
    destination_ips: tuple[str, ...]
    description: str | None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FirewallRule:
        """Read and check a rule from a request."""
        direction = raw.get("direction")
        protocol = raw.get("protocol")
        if direction not in ("in", "out"):
            raise invalid_field("rules", "direction must be 'in' or 'out'")
        if protocol not in FIREWALL_PROTOCOLS:
            raise invalid_field("rules", f"protocol must be one of {', '.join(FIREWALL_PROTOCOLS)}")
        port = _rule_port(protocol, raw.get("port"))
        sources = _networks(raw.get("source_ips"), "source_ips")
        destinations = _networks(raw.get("destination_ips"), "destination_ips")
        if direction == "in" and (not sources or destinations):
            raise invalid_field("rules", "an 'in' rule needs source_ips and no destination_ips")
        if direction == "out" and (not destinations or sources):
            raise invalid_field("rules", "an 'out' rule needs destination_ips and no source_ips")
        description = raw.get("description")
        if description is not None and not isinstance(description, str):
            raise invalid_field("rules", "description must be a string")
        return cls(direction, protocol, port, sources, destinations, description)


def _rule_port(protocol: str, port: object) -> str | None:
    if protocol not in ("tcp", "udp"):
        if port is not None:
            raise invalid_field("rules", f"port is not allowed for protocol {protocol}")
        return None
    if not isinstance(port, str):
        raise invalid_field("rules", "port is required for tcp and udp")
    if port == "any":
        return port
    bounds = port.split("-")
    if len(bounds) > 2 or not all(b.isdigit() and 1 <= int(b) <= MAX_PORT for b in bounds):
        raise invalid_field("rules", f"invalid port '{port}'")
    if len(bounds) == 2 and int(bounds[0]) > int(bounds[1]):
        raise invalid_field("rules", f"invalid port range '{port}'")
    return port


def _networks(raw: object, name: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise invalid_field("rules", f"{name} must be a list of CIDR networks")
    for item in raw:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise invalid_field("rules", f"invalid network '{item}' in {name}") from None
    return tuple(raw)


@dataclass(frozen=True)
class AppliedSelector:
    """A label selector a firewall is applied to, kept with its parsed form."""

    text: str
    selector: label_selector.Selector


@dataclass
class Firewall:
    """A firewall, its rules and what it is applied to (servers and label selectors)."""

    id: int
    name: str
    labels: dict[str, str]
    created: float
    rules: list[FirewallRule]
    server_ids: list[int] = field(default_factory=list)
    selectors: list[AppliedSelector] = field(default_factory=list)


class Firewalls(NamedCollection[Firewall]):
    """The project's firewalls and their attachments."""

    kind = "firewall"
    first_id = FIRST_ID
    name_taken = "firewall name is already used"

    def create(
        self,
        name: str,
        labels: dict[str, str],
        rules: list[FirewallRule],
        apply_to: list[dict[str, Any]],
    ) -> tuple[Firewall, list[Action]]:
        """Create a firewall, optionally applied to servers or label selectors at once."""
        self.check_name(name)
        targets = [self._target(raw, "apply_to") for raw in apply_to]
        firewall = self._added(
            Firewall(next(self._ids), name, labels, self.project.now, list(rules))
        )
        actions = [
            self.project.actions.start(
                "set_firewall_rules", [(firewall.id, "firewall")], self.project.timing.action
            )
        ]
        actions.extend(self._apply(firewall, target) for target in targets)
        return firewall, actions

    def check_deletable(self, item: Firewall) -> None:
        """A firewall still applied to anything is in use."""
        if item.server_ids or item.selectors:
            raise ApiError("resource_in_use", "firewall is still applied to resources")

    def set_rules(self, firewall_id: int, rules: list[FirewallRule]) -> list[Action]:
        """Replace a firewall's rules."""
        firewall = self.get(firewall_id)
        firewall.rules = list(rules)
        ref = [(firewall.id, "firewall")]
        return [self.project.actions.start("set_firewall_rules", ref, self.project.timing.action)]

    def apply(self, firewall_id: int, resources: list[dict[str, Any]]) -> list[Action]:
        """Apply a firewall to servers and/or label selectors."""
        firewall = self.get(firewall_id)
        targets = [self._target(raw, "apply_to") for raw in resources]
        return [self._apply(firewall, target) for target in targets]

    def remove(self, firewall_id: int, resources: list[dict[str, Any]]) -> list[Action]:
        """Remove a firewall from servers and/or label selectors."""
        firewall = self.get(firewall_id)
        targets = [self._target(raw, "remove_from") for raw in resources]
        for target in targets:
            if isinstance(target, int):
                removing = self.project.actions.running(target, "server", ("remove_firewall",))
                if target not in firewall.server_ids or any(
                    a.touches(firewall.id, "firewall") for a in removing
                ):
                    raise ApiError("firewall_already_removed", "firewall already removed")
            elif target.text not in [applied.text for applied in firewall.selectors]:
                raise ApiError("firewall_already_removed", "firewall already removed")
        return [self._remove(firewall, target) for target in targets]

    def _remove(self, firewall: Firewall, target: int | AppliedSelector) -> Action:
        """Start removing a firewall from a server (detached when the action ends) or a
        label selector (at once)."""
        ref = [(firewall.id, "firewall")]
        if isinstance(target, int):
            ref.append((target, "server"))

            def detached() -> None:
                if target in firewall.server_ids:
                    firewall.server_ids.remove(target)

            return self.project.actions.start(
                "remove_firewall", ref, self.project.timing.action, detached
            )
        texts = [applied.text for applied in firewall.selectors]
        del firewall.selectors[texts.index(target.text)]
        return self.project.actions.start("remove_firewall", ref, 0)

    def _apply(self, firewall: Firewall, target: int | AppliedSelector) -> Action:
        ref = [(firewall.id, "firewall")]
        if isinstance(target, int):
            if target in firewall.server_ids:
                raise ApiError("firewall_already_applied", "firewall already applied")
            firewall.server_ids.append(target)
            ref.append((target, "server"))

            def undo() -> None:
                if target in firewall.server_ids:
                    firewall.server_ids.remove(target)

            return self.project.actions.start(
                "apply_firewall", ref, self.project.timing.action, on_error=undo
            )
        if any(applied.text == target.text for applied in firewall.selectors):
            raise ApiError("firewall_already_applied", "firewall already applied")
        firewall.selectors.append(target)
        return self.project.actions.start("apply_firewall", ref, 0)

    def _target(self, raw: dict[str, Any], field: str) -> int | AppliedSelector:
        """A server id or a label selector from an `apply_to`/`remove_from` entry."""
        kind = raw.get("type")
        if kind == "server":
            server_id = (raw.get("server") or {}).get("id")
            if not isinstance(server_id, int) or server_id not in self.project.servers.by_id:
                raise ApiError("firewall_resource_not_found", "server not found")
            return server_id
        if kind == "label_selector":
            text = (raw.get("label_selector") or {}).get("selector")
            if not isinstance(text, str):
                raise invalid_field(field, "label_selector.selector is required")
            try:
                return AppliedSelector(text, label_selector.parse(text))
            except label_selector.SelectorError as exc:
                raise invalid_field(field, str(exc)) from None
        raise invalid_field(field, "type must be 'server' or 'label_selector'")

    def attach(self, firewall_id: int, server_id: int) -> None:
        """Apply an existing firewall to a server being created (its action is the server's)."""
        self.by_id[firewall_id].server_ids.append(server_id)

    def detach(self, server_id: int) -> None:
        """Forget a deleted server in every firewall applied to it directly."""
        for firewall in self.by_id.values():
            if server_id in firewall.server_ids:
                firewall.server_ids.remove(server_id)

    def of_server(self, server: Server) -> list[Firewall]:
        """The firewalls applied to a server, directly or through a label selector."""
        return [
            fw
            for fw in self.by_id.values()
            if server.id in fw.server_ids
            or any(applied.selector.matches(server.labels) for applied in fw.selectors)
        ]

    def selected_servers(self, applied: AppliedSelector) -> list[Server]:
        """The servers a label selector currently selects."""
        servers = self.project.servers.by_id.values()
        return [s for s in servers if applied.selector.matches(s.labels)]
