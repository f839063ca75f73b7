"""A Hetzner deployment's settings: servers with an image, SSH keys and a firewall."""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import IPv4Network, ip_network
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, Tag, field_validator, model_validator

from machines.program.config.models import (
    BaseDeployment,
    ExistingName,
    Model,
    Name,
    PoolConfig,
    either,
    owned_name,
)
from machines.program.config.ports import check_rule_port, port_as_text
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.clouds.hetzner.settings import (
    DEFAULT_HCLOUD_ENDPOINT,
    DEFAULT_HETZNER_IMAGE,
    HCLOUD_ENDPOINT,
    HCLOUD_TOKEN,
    ORCA_HCLOUD_FIREWALL,
    ORCA_HCLOUD_IMAGE,
    ORCA_HCLOUD_SSH_KEYS,
    hetzner_env,
)
from machines.runtime.pool import Pool
from machines.runtime.settings import check_url

HCLOUD_ENDPOINT_KEY = "hcloud:endpoint"


class FirewallRule(Model):
    """A Hetzner firewall rule; ``port`` only for tcp and udp."""

    direction: Literal["in", "out"] = "in"
    protocol: Literal["tcp", "udp", "icmp", "gre", "esp"]
    port: str = ""
    source_ips: tuple[Name, ...] = ()
    destination_ips: tuple[Name, ...] = ()
    description: str = ""

    _port = field_validator("port", mode="before")(port_as_text)

    @model_validator(mode="after")
    def _consistent(self) -> FirewallRule:
        check_rule_port(self.protocol, self.port, allow_any=True, example="'22', '80-443' or 'any'")
        inbound = self.direction == "in"
        needed, unused = (
            ("sourceIps", "destinationIps") if inbound else ("destinationIps", "sourceIps")
        )
        if not (self.source_ips if inbound else self.destination_ips):
            raise ValueError(f"an {self.direction}bound rule needs {needed}")
        if self.destination_ips if inbound else self.source_ips:
            raise ValueError(f"an {self.direction}bound rule has no {unused}: remove it")
        return self


class Firewall(Model):
    """A Hetzner firewall the stack creates, named ``<owner>-<name>``."""

    name: str
    rules: tuple[FirewallRule, ...] = ()

    _name = field_validator("name")(owned_name)


class SshKey(Model):
    """An SSH key the stack creates, named ``<owner>-<name>``."""

    name: str
    public_key: Name

    _name = field_validator("name")(owned_name)

    @field_validator("public_key")
    @classmethod
    def _one_line(cls, key: str) -> str:
        if len(key.strip().splitlines()) != 1:
            raise ValueError("must be one line: 'ssh-ed25519 AAAA... comment'")
        return key.strip()


PRIVATE_RANGES = tuple(IPv4Network(r) for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
"""The private IPv4 ranges of RFC 1918, the only ones Hetzner takes for a network's
``ip_range`` (docs.hetzner.cloud, "Create a Network": "must be one of the private IPv4
ranges of RFC1918"; a network at least a /24, a subnet at least a /30)."""

NETWORK_ZONES = ("eu-central", "us-east", "us-west", "ap-southeast")
"""Hetzner's network zones: eu-central holds fsn1, nbg1 and hel1; us-east ash; us-west hil;
ap-southeast sin."""


class Network(Model):
    """A private network the stack creates, named ``<owner>-<name>``, with one cloud
    subnet in ``zone``: pools join it by ``hetzner.network: <name>``."""

    name: str
    ip_range: Name = "10.0.0.0/16"
    subnet: Name = "10.0.1.0/24"
    zone: Literal["eu-central", "us-east", "us-west", "ap-southeast"] = "eu-central"

    _name = field_validator("name")(owned_name)

    @model_validator(mode="after")
    def _inside(self) -> Network:
        try:
            outer, inner = ip_network(self.ip_range), ip_network(self.subnet)
        except ValueError as error:
            raise ValueError(f"{error}: write ipRange and subnet like 10.0.0.0/16") from None
        if not isinstance(outer, IPv4Network) or not any(
            outer.subnet_of(private) for private in PRIVATE_RANGES
        ):
            raise ValueError(
                f"ipRange {self.ip_range} is not a private IPv4 range: Hetzner takes only "
                "RFC 1918 ranges (inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16), "
                "e.g. 10.0.0.0/16"
            )
        if outer.prefixlen > 24:
            raise ValueError(
                f"ipRange {self.ip_range} is smaller than a /24, Hetzner's smallest network: "
                "use a /24 or larger, e.g. 10.0.0.0/16"
            )
        if not (inner.version == outer.version and inner.subnet_of(outer)):
            raise ValueError(f"subnet {self.subnet} is not inside ipRange {self.ip_range}")
        if inner.prefixlen > 30:
            raise ValueError(
                f"subnet {self.subnet} is smaller than a /30, Hetzner's smallest subnet: "
                "use a /30 or larger, e.g. 10.0.1.0/24"
            )
        return self


class PlacementGroup(Model):
    """A spread placement group the stack creates, named ``<owner>-<name>``: pools join it
    by ``hetzner.placementGroup: <name>`` (at most 10 servers in all)."""

    name: str

    _name = field_validator("name")(owned_name)


FirewallItem = Annotated[ExistingName | Annotated[Firewall, Tag("<new>")], either("firewall")]
SshKeyItem = Annotated[ExistingName | Annotated[SshKey, Tag("<new>")], either("SSH key")]


class HetznerDeployment(BaseDeployment):
    """A deployment on Hetzner Cloud: servers with an image, SSH keys and a firewall."""

    provider_keys: ClassVar[tuple[str, ...]] = (HCLOUD_ENDPOINT_KEY,)
    missing_hints: ClassVar[dict[str, str]] = {}
    provider_namespace: ClassVar[str] = "hcloud"
    provider_config: ClassVar[frozenset[str]] = frozenset(
        {"token", "endpoint", "pollInterval", "pollFunction", "endpointHetzner"}
    )
    models: ClassVar[tuple[type[BaseModel], ...]] = (
        Firewall,
        FirewallRule,
        SshKey,
        Network,
        PlacementGroup,
        HetznerOptions,
    )
    credentials: ClassVar[dict[str, str]] = {"hcloud:token": HCLOUD_TOKEN}
    setting_keys: ClassVar[dict[str, str]] = {
        HCLOUD_ENDPOINT: HCLOUD_ENDPOINT_KEY,
        ORCA_HCLOUD_IMAGE: "image",
        ORCA_HCLOUD_SSH_KEYS: "sshKeys",
        ORCA_HCLOUD_FIREWALL: "firewall",
    }
    plugin: ClassVar[str] = "hcloud"
    machine_resource: ClassVar[str] = "hcloud:index/server:Server"
    machine_labels: ClassVar[str] = "labels"
    machine_type_key: ClassVar[str] = "serverType"

    provider: Literal["hetzner"]
    endpoint: str = Field(default=DEFAULT_HCLOUD_ENDPOINT, alias=HCLOUD_ENDPOINT_KEY)
    image: Name = DEFAULT_HETZNER_IMAGE
    ssh_keys: tuple[SshKeyItem, ...] = ()
    firewall: FirewallItem | None = None
    networks: tuple[Network, ...] = ()
    placement_groups: tuple[PlacementGroup, ...] = ()

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, endpoint: str) -> str:
        return check_url(endpoint, DEFAULT_HCLOUD_ENDPOINT)

    def ssh_key_names(self) -> tuple[str, ...]:
        """Every SSH key's cloud name, existing ones as given, created ones owner-prefixed."""
        return tuple(k if isinstance(k, str) else self.owned(k.name) for k in self.ssh_keys)

    def firewall_name(self) -> str:
        """The firewall's cloud name, or empty for none."""
        if self.firewall is None or isinstance(self.firewall, str):
            return self.firewall or ""
        return self.owned(self.firewall.name)

    def network_name(self, name: str) -> str:
        """A pool's network's cloud name: ``<owner>-<name>`` for one the stack creates."""
        return self.owned(name) if name in {n.name for n in self.networks} else name

    def placement_group_name(self, name: str) -> str:
        """A pool's placement group's cloud name, ``<owner>-<name>`` for one it creates."""
        return self.owned(name) if name in {g.name for g in self.placement_groups} else name

    def own_created_names(self) -> frozenset[str]:
        made = [n.name for n in self.networks] + [g.name for g in self.placement_groups]
        return frozenset(self.owned(name) for name in made)

    def created_problems(
        self, index: int, pool: PoolConfig, network_zone: Callable[[str], str]
    ) -> list[tuple[str, str]]:
        """A pool joining a network the stack creates in another zone than the pool's
        location's: Hetzner attaches a server only to a subnet of its location's zone, so
        the engine would make the network and the server and then fail."""
        given = pool.given(HetznerOptions)
        position = next(
            (i for i, n in enumerate(self.networks) if given and n.name == given.network), None
        )
        if position is None:
            return []
        network = self.networks[position]
        zone = network_zone(pool.location)
        if not zone or zone == network.zone:
            return []
        return [
            (
                f"pools[{index}].hetzner.network",
                f"pool {pool.name}: network {network.name} (networks[{position}]) has its subnet "
                f"in network zone {network.zone}, but location {pool.location} is in {zone}: "
                f"set networks[{position}].zone to {zone}, or give the pool a location in "
                f"{network.zone}",
            )
        ]

    def named(self, pool: Pool) -> Pool:
        """The pool with the cloud names of the network and placement group it joins."""
        given = pool.given(HetznerOptions)
        if given is None:
            return pool
        options = given.model_copy(
            update={
                "network": self.network_name(given.network),
                "placement_group": self.placement_group_name(given.placement_group),
            }
        )
        return pool.with_options(options)

    def env(self) -> dict[str, str]:
        """The runtime's settings for this deployment (``settings.hetzner_env``)."""
        return hetzner_env(self.endpoint, self.image, self.ssh_key_names(), self.firewall_name())

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        names = self.ssh_key_names()
        for i, name in enumerate(names):
            if name in names[:i]:
                found.append((f"sshKeys[{i}]", f"SSH key {name!r} is already in the list"))
        for what, items in (
            ("networks", self.networks),
            ("placementGroups", self.placement_groups),
        ):
            seen = [item.name for item in items]
            for i, item_name in enumerate(seen):
                if item_name in seen[:i]:
                    found.append((f"{what}[{i}].name", f"{item_name!r} is already in the list"))
        return found


DEPLOYMENT = HetznerDeployment
