"""The fixed catalogue: real Hetzner locations, datacenters, server types and system images.

Names, ids, sizes and which types each location supports follow the real API (mid 2025);
prices are close to the real list prices but not guaranteed; image ids are plausible, one
per architecture for the same name, as the real API has. Rendering takes the set of
(server type, location) pairs that are out of stock, so `available` flags reflect it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

VAT = Decimal("0.19")
TB = 1024**4
CATALOGUE_CREATED = "2024-01-01T00:00:00+00:00"

Unavailable = frozenset[tuple[str, str]]  # (server type name, location name) out of stock


@dataclass(frozen=True)
class Location:
    """A Hetzner location (a city), e.g. fsn1."""

    id: int
    name: str
    description: str
    country: str
    city: str
    latitude: float
    longitude: float
    network_zone: str
    price_factor: Decimal  # list price relative to the EU price
    included_traffic: int  # bytes per month that a server includes here
    ipv4_prefix: str  # first two octets of emulated addresses
    ipv6_prefix: str  # first three groups of emulated /64 networks


@dataclass(frozen=True)
class Datacenter:
    """A datacenter: one per location in this catalogue, as today."""

    id: int
    name: str
    description: str
    location: Location


@dataclass(frozen=True)
class ServerType:
    """A server type with its size, architecture and supported locations."""

    id: int
    name: str
    cores: int
    memory: float
    disk: int
    cpu_type: str  # shared | dedicated
    architecture: str  # x86 | arm
    monthly_eur: Decimal
    locations: tuple[str, ...]


@dataclass(frozen=True)
class Image:
    """A system image; the same name exists once per architecture with distinct ids."""

    id: int
    name: str
    description: str
    os_flavor: str
    os_version: str
    architecture: str
    disk_size: int


EU = ("fsn1", "nbg1", "hel1")
ALL = ("fsn1", "nbg1", "hel1", "ash", "hil", "sin")

LOCATIONS: tuple[Location, ...] = (
    Location(
        1,
        "fsn1",
        "Falkenstein DC Park 1",
        "DE",
        "Falkenstein",
        50.47612,
        12.370071,
        "eu-central",
        Decimal(1),
        20 * TB,
        "49.12",
        "2a01:4f8:c012",
    ),
    Location(
        2,
        "nbg1",
        "Nuremberg DC Park 1",
        "DE",
        "Nuremberg",
        49.452102,
        11.076665,
        "eu-central",
        Decimal(1),
        20 * TB,
        "5.75",
        "2a01:4f8:1c1c",
    ),
    Location(
        3,
        "hel1",
        "Helsinki DC Park 1",
        "FI",
        "Helsinki",
        60.169855,
        24.938379,
        "eu-central",
        Decimal(1),
        20 * TB,
        "65.21",
        "2a01:4f9:c012",
    ),
    Location(
        4,
        "ash",
        "Ashburn, VA",
        "US",
        "Ashburn, VA",
        39.045821,
        -77.487073,
        "us-east",
        Decimal("1.2"),
        1 * TB,
        "5.161",
        "2a01:4ff:f0",
    ),
    Location(
        5,
        "hil",
        "Hillsboro, OR",
        "US",
        "Hillsboro, OR",
        45.54222,
        -122.95194,
        "us-west",
        Decimal("1.2"),
        1 * TB,
        "5.78",
        "2a01:4ff:1f0",
    ),
    Location(
        6,
        "sin",
        "Singapore",
        "SG",
        "Singapore",
        1.283333,
        103.833333,
        "ap-southeast",
        Decimal("1.4"),
        TB // 2,
        "5.223",
        "2a01:4ff:2f0",
    ),
)
_LOC = {location.name: location for location in LOCATIONS}

DATACENTERS: tuple[Datacenter, ...] = (
    Datacenter(4, "fsn1-dc14", "Falkenstein 1 virtual DC 14", _LOC["fsn1"]),
    Datacenter(2, "nbg1-dc3", "Nuremberg 1 virtual DC 3", _LOC["nbg1"]),
    Datacenter(3, "hel1-dc2", "Helsinki 1 virtual DC 2", _LOC["hel1"]),
    Datacenter(5, "ash-dc1", "Ashburn virtual DC 1", _LOC["ash"]),
    Datacenter(6, "hil-dc1", "Hillsboro virtual DC 1", _LOC["hil"]),
    Datacenter(7, "sin-dc1", "Singapore virtual DC 1", _LOC["sin"]),
)

SERVER_TYPES: tuple[ServerType, ...] = (
    ServerType(22, "cpx11", 2, 2.0, 40, "shared", "x86", Decimal("4.35"), ALL),
    ServerType(23, "cpx21", 3, 4.0, 80, "shared", "x86", Decimal("7.55"), ALL),
    ServerType(24, "cpx31", 4, 8.0, 160, "shared", "x86", Decimal("13.60"), ALL),
    ServerType(25, "cpx41", 8, 16.0, 240, "shared", "x86", Decimal("25.20"), ALL),
    ServerType(26, "cpx51", 16, 32.0, 360, "shared", "x86", Decimal("54.90"), ALL),
    ServerType(45, "cax11", 2, 4.0, 40, "shared", "arm", Decimal("3.79"), EU),
    ServerType(93, "cax21", 4, 8.0, 80, "shared", "arm", Decimal("6.49"), EU),
    ServerType(94, "cax31", 8, 16.0, 160, "shared", "arm", Decimal("12.49"), EU),
    ServerType(95, "cax41", 16, 32.0, 320, "shared", "arm", Decimal("24.49"), EU),
    ServerType(96, "ccx13", 2, 8.0, 80, "dedicated", "x86", Decimal("12.49"), ALL),
    ServerType(97, "ccx23", 4, 16.0, 160, "dedicated", "x86", Decimal("24.49"), ALL),
    ServerType(98, "ccx33", 8, 32.0, 240, "dedicated", "x86", Decimal("48.49"), ALL),
    ServerType(99, "ccx43", 16, 64.0, 360, "dedicated", "x86", Decimal("96.49"), ALL),
    ServerType(100, "ccx53", 32, 128.0, 600, "dedicated", "x86", Decimal("192.49"), ALL),
    ServerType(101, "ccx63", 48, 192.0, 960, "dedicated", "x86", Decimal("288.49"), ALL),
    ServerType(104, "cx22", 2, 4.0, 40, "shared", "x86", Decimal("3.79"), EU),
    ServerType(105, "cx32", 4, 8.0, 80, "shared", "x86", Decimal("6.80"), EU),
    ServerType(106, "cx42", 8, 16.0, 160, "shared", "x86", Decimal("16.40"), EU),
    ServerType(107, "cx52", 16, 32.0, 320, "shared", "x86", Decimal("32.40"), EU),
)

IMAGES: tuple[Image, ...] = (
    Image(67794396, "ubuntu-22.04", "Ubuntu 22.04", "ubuntu", "22.04", "x86", 5),
    Image(103908070, "ubuntu-22.04", "Ubuntu 22.04", "ubuntu", "22.04", "arm", 5),
    Image(114690387, "debian-12", "Debian 12", "debian", "12", "x86", 5),
    Image(114690389, "debian-12", "Debian 12", "debian", "12", "arm", 5),
    Image(161547269, "ubuntu-24.04", "Ubuntu 24.04", "ubuntu", "24.04", "x86", 5),
    Image(161547270, "ubuntu-24.04", "Ubuntu 24.04", "ubuntu", "24.04", "arm", 5),
    Image(205999543, "fedora-41", "Fedora 41", "fedora", "41", "x86", 5),
    Image(205999544, "fedora-41", "Fedora 41", "fedora", "41", "arm", 5),
)


_Item = TypeVar("_Item", Location, Datacenter, ServerType, Image)


def _lookup(items: Iterable[_Item], ref: int | str) -> _Item | None:
    """Find by id (an int or a string of digits) or else by name."""
    if isinstance(ref, int) or ref.isdigit():
        wanted = int(ref)
        return next((item for item in items if item.id == wanted), None)
    return next((item for item in items if item.name == ref), None)


def location(ref: int | str) -> Location | None:
    """A location by id or name."""
    return _lookup(LOCATIONS, ref)


def datacenter(ref: int | str) -> Datacenter | None:
    """A datacenter by id or name."""
    return _lookup(DATACENTERS, ref)


def datacenter_of(loc: Location) -> Datacenter:
    """The (single) datacenter of a location."""
    return next(dc for dc in DATACENTERS if dc.location.id == loc.id)


def server_type(ref: int | str) -> ServerType | None:
    """A server type by id or name."""
    return _lookup(SERVER_TYPES, ref)


def image(ref: int | str) -> Image | None:
    """An image by id, or by name (the x86 one, as a name alone does not say the architecture)."""
    if isinstance(ref, int) or ref.isdigit():
        return _lookup(IMAGES, ref)
    named = [img for img in IMAGES if img.name == ref]
    return next((img for img in named if img.architecture == "x86"), named[0] if named else None)


def _money(value: Decimal, places: str = "0.0000000000") -> dict[str, str]:
    net = value.quantize(Decimal(places), ROUND_HALF_UP)
    gross = (value * (1 + VAT)).quantize(Decimal(places), ROUND_HALF_UP)
    return {"net": str(net), "gross": str(gross)}


def _prices(st: ServerType) -> list[dict[str, Any]]:
    prices = []
    for name in st.locations:
        loc = _LOC[name]
        monthly = st.monthly_eur * loc.price_factor
        prices.append(
            {
                "location": name,
                "price_hourly": _money(monthly / Decimal(730)),
                "price_monthly": _money(monthly),
                "included_traffic": loc.included_traffic,
                "price_per_tb_traffic": _money(Decimal(1) * loc.price_factor),
            }
        )
    return prices


def location_json(loc: Location) -> dict[str, Any]:
    """A location as the API shows it."""
    return {
        "id": loc.id,
        "name": loc.name,
        "description": loc.description,
        "country": loc.country,
        "city": loc.city,
        "latitude": loc.latitude,
        "longitude": loc.longitude,
        "network_zone": loc.network_zone,
    }


def server_type_json(st: ServerType, unavailable: Unavailable) -> dict[str, Any]:
    """A server type as the API shows it, with per-location availability."""
    return {
        "id": st.id,
        "name": st.name,
        "description": st.name.upper(),
        "category": "Dedicated vCPU" if st.cpu_type == "dedicated" else "Shared vCPU",
        "cores": st.cores,
        "memory": st.memory,
        "disk": st.disk,
        "deprecated": False,
        "deprecation": None,
        "prices": _prices(st),
        "storage_type": "local",
        "cpu_type": st.cpu_type,
        "architecture": st.architecture,
        "included_traffic": 0,
        "locations": [
            {
                "id": _LOC[name].id,
                "name": name,
                "deprecation": None,
                "available": (st.name, name) not in unavailable,
                "recommended": True,
            }
            for name in st.locations
        ],
    }


def datacenter_json(dc: Datacenter, unavailable: Unavailable) -> dict[str, Any]:
    """A datacenter with the server types it supports and has in stock."""
    supported = [st for st in SERVER_TYPES if dc.location.name in st.locations]
    available = [st.id for st in supported if (st.name, dc.location.name) not in unavailable]
    return {
        "id": dc.id,
        "name": dc.name,
        "description": dc.description,
        "location": location_json(dc.location),
        "server_types": {
            "supported": [st.id for st in supported],
            "available": available,
            "available_for_migration": list(available),
        },
    }


def image_json(img: Image) -> dict[str, Any]:
    """A system image as the API shows it."""
    return {
        "id": img.id,
        "type": "system",
        "status": "available",
        "name": img.name,
        "description": img.description,
        "image_size": None,
        "disk_size": img.disk_size,
        "created": CATALOGUE_CREATED,
        "created_from": None,
        "bound_to": None,
        "os_flavor": img.os_flavor,
        "os_version": img.os_version,
        "rapid_deploy": True,
        "protection": {"delete": False},
        "deprecated": None,
        "deleted": None,
        "labels": {},
        "architecture": img.architecture,
    }


def pricing_json() -> dict[str, Any]:
    """GET /pricing: the prices of server types and the few other items the API lists."""
    ip_prices = [
        {
            "location": loc.name,
            "price_hourly": _money(Decimal("0.0008")),
            "price_monthly": _money(Decimal("0.50")),
        }
        for loc in LOCATIONS
    ]
    return {
        "currency": "EUR",
        "vat_rate": "19.00",
        "image": {"price_per_gb_month": _money(Decimal("0.0110"))},
        "floating_ip": {"price_monthly": _money(Decimal("3.00"))},
        "floating_ips": [
            {
                "type": kind,
                "prices": [
                    {"location": loc.name, "price_monthly": _money(price)} for loc in LOCATIONS
                ],
            }
            for kind, price in (("ipv4", Decimal("3.00")), ("ipv6", Decimal("3.00")))
        ],
        "primary_ips": [
            {"type": "ipv4", "prices": ip_prices},
            {
                "type": "ipv6",
                "prices": [
                    {**p, "price_hourly": _money(Decimal(0)), "price_monthly": _money(Decimal(0))}
                    for p in ip_prices
                ],
            },
        ],
        "traffic": {"price_per_tb": _money(Decimal(1))},
        "server_backup": {"percentage": "20.00"},
        "server_types": [
            {"id": st.id, "name": st.name, "prices": _prices(st)} for st in SERVER_TYPES
        ],
        "load_balancer_types": [],
        "volume": {"price_per_gb_month": _money(Decimal("0.0440"))},
    }
