"""Networks: private IPv4 ranges with `cloud` subnets per network zone, and the servers in them.

A network's `ip_range` is an RFC 1918 block of /8 to /24; each subnet is a part of it, of
type `cloud` in one network zone (eu-central for fsn1/nbg1/hel1, us-east for ash, us-west
for hil, ap-southeast for sin), and subnets never overlap. Its `gateway` is the network's
first address, as the real API reports it. A server attached at create gets the next free
address of the first subnet in its location's zone (never the subnet's network address, the
gateway, or the last address); a network without such a subnet is refused with
`invalid_input`. Deleting a network detaches its servers, as the real API does.
"""

from __future__ import annotations

import ipaddress
import itertools
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from emulator.errors import ApiError, invalid_field, invalid_input
from emulator.resources.collection import NamedCollection

if TYPE_CHECKING:
    from emulator.project import Project

FIRST_ID = 3_000_001
NETWORK_ZONES = ("eu-central", "us-east", "us-west", "ap-southeast")
SUBNET_TYPES = ("cloud", "server", "vswitch")
PRIVATE_RANGES = tuple(
    ipaddress.IPv4Network(block) for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)


@dataclass
class Subnet:
    """A part of a network's range in one network zone."""

    type: str
    ip_range: ipaddress.IPv4Network
    network_zone: str


@dataclass
class Attachment:
    """A server's place in a network: its private address and its interface's MAC address."""

    server_id: int
    ip: str
    mac_address: str
    alias_ips: list[str] = field(default_factory=list)


@dataclass
class Network:
    """A private network and what is attached to it."""

    id: int
    name: str
    ip_range: ipaddress.IPv4Network
    labels: dict[str, str]
    created: float
    subnets: list[Subnet] = field(default_factory=list)
    attachments: dict[int, Attachment] = field(default_factory=dict)  # by server id
    delete_protected: bool = False
    expose_routes_to_vswitch: bool = False

    @property
    def gateway(self) -> str:
        """The network's first address: the gateway of every `cloud` subnet."""
        return str(self.ip_range.network_address + 1)


def parse_range(raw: object, key: str, smallest: int = 24) -> ipaddress.IPv4Network:
    """A private IPv4 CIDR block of /8 to /`smallest` (a network /24, a subnet /30) with no
    host bits set; invalid_input otherwise."""
    if not isinstance(raw, str) or not raw:
        raise invalid_field(key, "is required")
    try:
        block = ipaddress.IPv4Network(raw, strict=True)
    except ValueError:
        raise invalid_field(key, f"invalid IP range '{raw}'") from None
    if not any(block.subnet_of(private) for private in PRIVATE_RANGES):
        raise invalid_field(key, "must be a private IP range (RFC 1918)")
    if not 8 <= block.prefixlen <= smallest:
        raise invalid_field(key, f"must be between /8 and /{smallest}")
    return block


def parse_subnet(raw: object, network_range: ipaddress.IPv4Network | None) -> Subnet:
    """A subnet of a create or add_subnet body (`type`, `network_zone`, `ip_range`)."""
    if not isinstance(raw, dict):
        raise invalid_field("subnets", "must be a list of objects")
    kind = raw.get("type")
    if kind not in SUBNET_TYPES:
        raise invalid_field("type", "must be one of cloud, server, vswitch")
    if kind == "vswitch":
        raise ApiError("unsupported_error", "vSwitch subnets are not supported by the emulator")
    zone = raw.get("network_zone")
    if zone not in NETWORK_ZONES:
        raise invalid_field("network_zone", f"invalid network zone '{zone}'")
    block = parse_range(raw.get("ip_range"), "ip_range", smallest=30)
    if network_range is not None and not block.subnet_of(network_range):
        raise invalid_input("subnet ip_range is not part of the network's ip_range")
    return Subnet(str(kind), block, str(zone))


class Networks(NamedCollection[Network]):
    """The project's networks, unique by name."""

    kind = "network"
    first_id = FIRST_ID
    name_taken = "network name is already used"

    def __init__(self, project: Project) -> None:
        super().__init__(project)
        self._macs = random.Random(0)  # noqa: S311 - emulated MAC addresses, not secrets

    def create(
        self,
        name: str,
        ip_range: ipaddress.IPv4Network,
        subnets: list[Subnet],
        labels: dict[str, str],
        *,
        expose_routes_to_vswitch: bool = False,
    ) -> Network:
        """A new network with its subnets; names are unique."""
        self.check_name(name)
        network = Network(
            next(self._ids),
            name,
            ip_range,
            labels,
            self.project.now,
            expose_routes_to_vswitch=expose_routes_to_vswitch,
        )
        for subnet in subnets:
            self._add_subnet(network, subnet)
        return self._added(network)

    def check_deletable(self, item: Network) -> None:
        """A protected network stays; deleting detaches its servers (their `private_net`)."""
        if item.delete_protected:
            raise ApiError("protected", "network deletion is protected")

    def add_subnet(self, network_id: int, subnet: Subnet) -> Network:
        """Add a subnet to a network (the add_subnet action)."""
        network = self.get(network_id)
        self._add_subnet(network, subnet)
        return network

    def delete_subnet(self, network_id: int, ip_range: ipaddress.IPv4Network) -> Network:
        """Remove a subnet that no server uses (the delete_subnet action)."""
        network = self.get(network_id)
        subnet = next((s for s in network.subnets if s.ip_range == ip_range), None)
        if subnet is None:
            raise invalid_input(f"subnet {ip_range} not found in network {network.id}")
        if any(ipaddress.IPv4Address(a.ip) in ip_range for a in network.attachments.values()):
            # the words terraform-provider-hcloud's subnet delete waits out (resource_subnet.go)
            raise ApiError("service_error", "network has attached resources")
        network.subnets.remove(subnet)
        return network

    def _add_subnet(self, network: Network, subnet: Subnet) -> None:
        if not subnet.ip_range.subnet_of(network.ip_range):
            raise invalid_input("subnet ip_range is not part of the network's ip_range")
        if any(subnet.ip_range.overlaps(other.ip_range) for other in network.subnets):
            raise invalid_input("subnet ip_range overlaps with another subnet")
        network.subnets.append(subnet)

    def check_attachable(self, network_id: int, network_zone: str) -> Network:
        """The network a create names, if it has a subnet in the zone; invalid_input otherwise."""
        network = self.by_id.get(network_id)
        if network is None:
            raise invalid_input(f"network {network_id} not found")
        if not any(s.network_zone == network_zone for s in network.subnets):
            raise invalid_input(
                f"network {network_id} has no subnet in network zone {network_zone}"
            )
        if self._free_address(network, network_zone) is None:
            raise invalid_input(f"network {network_id} has no free IP in {network_zone}")
        return network

    def attach(
        self,
        network_id: int,
        server_id: int,
        network_zone: str,
        *,
        ip: ipaddress.IPv4Address | None = None,
        ip_range: ipaddress.IPv4Network | None = None,
        alias_ips: tuple[str, ...] = (),
    ) -> Attachment:
        """Attach a server: the address asked for, or the next free one of the network's
        subnet in the server's zone (of `ip_range` when given).

        `server_already_attached` if it is in the network already; `no_subnet_available`
        (the code hcloud-go names for it) when no subnet of the zone has room.
        """
        network = self.get(network_id)
        if server_id in network.attachments:
            raise ApiError("server_already_attached", "server is already attached to the network")
        subnets = [
            s
            for s in network.subnets
            if s.network_zone == network_zone and (ip_range is None or s.ip_range == ip_range)
        ]
        if ip is not None:
            address: str | None = str(ip)
            if not any(ip in s.ip_range for s in subnets):
                raise invalid_input(f"IP {ip} is not in a subnet of the server's network zone")
            if address in self._used(network):
                raise ApiError("ip_not_available", f"IP {ip} is already used")
        else:
            address = self._free_address(network, network_zone, subnets)
        if address is None:
            raise ApiError(
                "no_subnet_available",
                f"network {network.id} has no subnet with free IPs in network zone {network_zone}",
            )
        mac = "86:00:00:" + ":".join(f"{self._macs.randrange(256):02x}" for _ in range(3))
        attachment = Attachment(server_id, address, mac, list(alias_ips))
        network.attachments[server_id] = attachment
        return attachment

    def detach_one(self, network_id: int, server_id: int) -> None:
        """Detach a server from one network (the detach_from_network action)."""
        network = self.get(network_id)
        if network.attachments.pop(server_id, None) is None:
            raise invalid_input(f"server is not attached to network {network.id}")

    def set_alias_ips(self, network_id: int, server_id: int, alias_ips: tuple[str, ...]) -> None:
        """Replace a server's alias IPs in a network (the change_alias_ips action)."""
        network = self.get(network_id)
        attachment = network.attachments.get(server_id)
        if attachment is None:
            raise invalid_input(f"server is not attached to network {network.id}")
        attachment.alias_ips = list(alias_ips)

    def _used(self, network: Network) -> set[str]:
        used = {network.gateway}
        for attachment in network.attachments.values():
            used.add(attachment.ip)
            used.update(attachment.alias_ips)
        return used

    def _free_address(
        self, network: Network, network_zone: str, subnets: list[Subnet] | None = None
    ) -> str | None:
        used = self._used(network)
        for subnet in network.subnets if subnets is None else subnets:
            if subnet.network_zone != network_zone:
                continue
            for host in itertools.islice(subnet.ip_range.hosts(), 1, None):
                if str(host) not in used:
                    return str(host)
        return None

    def of_server(self, server_id: int) -> list[tuple[Network, Attachment]]:
        """The networks a server is attached to, with its attachment, by network id."""
        return [
            (net, net.attachments[server_id])
            for net in self.by_id.values()
            if server_id in net.attachments
        ]

    def detach(self, server_id: int) -> None:
        """Detach a server from every network (it is gone)."""
        for network in self.by_id.values():
            network.attachments.pop(server_id, None)
