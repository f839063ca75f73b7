"""The project's resources as the emulator stores them: servers, actions, keys, firewalls, IPs.

Plain dataclasses plus the parsing that belongs to one resource (an SSH public key's
fingerprint, a firewall rule's checks); the business rules live in `state.py` and the
real API's JSON shapes in `render.py`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from emulator import catalogue, label_selector
from emulator.errors import invalid_field

ServerStatus = Literal[
    "initializing",
    "starting",
    "running",
    "stopping",
    "off",
    "deleting",
    "migrating",
    "rebuilding",
    "unknown",
]
SERVER_STATUSES: tuple[str, ...] = get_args(ServerStatus)
ACTION_STATUSES: tuple[str, ...] = ("running", "success", "error")
SSH_KEY_TYPES = frozenset(
    {
        "ssh-rsa",
        "ssh-dss",
        "ssh-ed25519",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
    }
)
FIREWALL_PROTOCOLS = ("tcp", "udp", "icmp", "esp", "gre")
MAX_PORT = 65535


@dataclass
class Action:
    """An asynchronous task; `running` until `finishes`, then `success` (or `error`)."""

    id: int
    command: str
    resources: list[tuple[int, str]]  # (id, type)
    started: float
    finishes: float
    status: str = "running"
    finished: float | None = None
    error: dict[str, str] | None = None
    on_finish: Callable[[], None] | None = field(default=None, repr=False)

    def touches(self, resource_id: int, resource_type: str) -> bool:
        """Whether this action concerns the given resource."""
        return (resource_id, resource_type) in self.resources


@dataclass
class PrimaryIP:
    """A public IPv4 address or IPv6 /64 network, created with and deleted with its server."""

    id: int
    kind: Literal["ipv4", "ipv6"]
    ip: str
    location: catalogue.Location
    created: float
    server_id: int | None


@dataclass
class Server:
    """A server and the facts the API reports about it."""

    id: int
    name: str
    status: ServerStatus
    created: float
    server_type: catalogue.ServerType
    location: catalogue.Location
    image: catalogue.Image
    labels: dict[str, str]
    ipv4: PrimaryIP | None
    ipv6: PrimaryIP | None
    ssh_key_ids: list[int] = field(default_factory=list)
    user_data: str = field(default="", repr=False)
    delete_protected: bool = False
    rebuild_protected: bool = False
    backup_window: str | None = None


@dataclass(frozen=True)
class ServerSpec:
    """A checked `POST /servers` request; references to other resources not yet resolved."""

    name: str
    server_type: catalogue.ServerType
    location: catalogue.Location | None
    image: catalogue.Image
    labels: dict[str, str]
    ssh_keys: list[int | str]
    firewall_ids: list[int]
    start_after_create: bool
    enable_ipv4: bool
    enable_ipv6: bool
    user_data: str = field(default="", repr=False)


@dataclass
class SSHKey:
    """An SSH public key stored in the project."""

    id: int
    name: str
    fingerprint: str
    public_key: str
    labels: dict[str, str]
    created: float


def ssh_fingerprint(public_key: str) -> str:
    """The MD5 fingerprint (aa:bb:...) of an OpenSSH public key; invalid_input if malformed."""
    parts = public_key.split()
    if len(parts) < 2 or parts[0] not in SSH_KEY_TYPES:
        raise invalid_field("public_key", "invalid public key")
    try:
        blob = base64.b64decode(parts[1], validate=True)
        (length,) = struct.unpack(">I", blob[:4])
    except (binascii.Error, struct.error):
        raise invalid_field("public_key", "invalid public key") from None
    if blob[4 : 4 + length].decode("ascii", "replace") != parts[0]:
        raise invalid_field("public_key", "invalid public key")
    digest = hashlib.md5(blob, usedforsecurity=False).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


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
