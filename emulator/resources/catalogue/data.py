"""The fixed catalogue: real Hetzner locations, server types and system images, as of late 2026.

Names, sizes, architectures and which locations each type supports follow the real API after
the CX Gen 2 / CPX Gen 1 types (cx22...cx52, cpx11...cpx51) were removed at the end of 2025
(successors cx23...cx53, cpx12...cpx62). Availability lives per location
(`server_types[].locations[]`: `available`, `recommended`, `deprecation`), as since 2026-04;
datacenters are gone from the API (2026-07-01 from servers, 410 Gone since 2026-10-01), so
there are none here. Prices are Hetzner's two figures per type and location (``PRICES_SOURCE``):
a monthly price, the most a server is billed in a calendar month, and an hourly price of its
own, higher than the monthly one over the month's hours; image ids are plausible, one per
architecture for the same name.

Deprecations are dated relative to `epoch` (when the emulator started), so that their paths
run the same on any day: cpx12 is deprecated in sin and can still be ordered there for 60
days; ccx13 became unavailable in hil 30 days ago; fedora-41 is a deprecated image.
Rendering takes the set of (server type, location) pairs that are out of stock, so
`available` flags reflect it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

from emulator.render import timestamp

VAT = Decimal("0.19")
TB = 1024**4
CATALOGUE_CREATED = "2024-01-01T00:00:00+00:00"
DAY = 86_400.0

Unavailable = frozenset[tuple[str, str]]  # (server type name, location name) out of stock


PRICES_SOURCE = (
    "Hetzner's cloud price list as published on 2025-10-21, per type and location, both "
    "figures (a copy: tonoid/hcloud-multiregion-mongodb-replicaset, HETZNER_SERVERS.md), "
    "except cx33, whose figures are a GET /pricing read of May 2026 "
    "(../shared/hetzner-api-facts.md); the primary IPv4's are Hetzner's published Primary IP "
    "price for 2025-2026"
)
"""Where the catalogue's prices come from. Hetzner raised its prices on 2026-04-01 (cx33
from EUR 5.49 / 0.0088 to 6.49 / 0.0104) and again on 2026-06-15 for new orders and rescales
only: the other types' figures here are the list before those changes, which the project has
no read of; what the runtime computes from them follows each figure as listed."""


@dataclass(frozen=True)
class Price:
    """One server's net price in EUR as Hetzner lists it: ``monthly`` (``price_monthly``,
    the most a server is billed in a calendar month) and ``hourly`` (``price_hourly``, each
    started hour's price: a figure of its own, not the monthly one over 730 hours)."""

    monthly: Decimal
    hourly: Decimal


def eur(monthly: str, hourly: str) -> Price:
    """A ``Price`` from the list's two figures."""
    return Price(Decimal(monthly), Decimal(hourly))


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
    price_factor: Decimal  # traffic price relative to the EU's; a server's where unlisted
    included_traffic: int  # bytes per month that a server includes here
    ipv4_prefix: str  # first two octets of emulated addresses
    ipv6_prefix: str  # first three groups of emulated /64 networks


@dataclass(frozen=True)
class Deprecation:
    """A deprecation dated in days relative to the emulator's start (negative: before it)."""

    announced_days: float
    unavailable_after_days: float

    def announced(self, epoch: float) -> float:
        """When it was announced, in seconds since 1970."""
        return epoch + self.announced_days * DAY

    def unavailable_after(self, epoch: float) -> float:
        """After when it can no longer be ordered, in seconds since 1970."""
        return epoch + self.unavailable_after_days * DAY

    def unavailable(self, epoch: float, now: float) -> bool:
        """Whether it can no longer be ordered at `now`."""
        return now > self.unavailable_after(epoch)

    def to_json(self, epoch: float) -> dict[str, str]:
        """The API's `deprecation` object."""
        return {
            "announced": timestamp(self.announced(epoch)),
            "unavailable_after": timestamp(self.unavailable_after(epoch)),
        }


@dataclass(frozen=True)
class ServerType:
    """A server type with its size, architecture, supported locations and their deprecations."""

    id: int
    name: str
    cores: int
    memory: float
    disk: int
    cpu_type: str  # shared | dedicated
    architecture: str  # x86 | arm
    price: Price  # in the EU locations (cpx12: wherever the list does not price it)
    locations: tuple[str, ...]
    category: str
    deprecations: dict[str, Deprecation] = field(default_factory=dict, hash=False)
    storage_type: str = "local"
    abroad: dict[str, Price] = field(default_factory=dict, hash=False)
    """The list's own price in a location outside the EU (US, Singapore)."""

    def deprecation_in(self, location: str) -> Deprecation | None:
        """The type's deprecation in one location, if it has one there."""
        return self.deprecations.get(location)

    def price_in(self, location: str) -> Price:
        """The type's price in ``location``: the list's own there; where the list does not
        sell the type there (cpx22...cpx62 in the US, cpx12 outside Singapore: this
        emulator's choice to sell it), the type's ``price``."""
        return self.abroad.get(location, self.price)


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
    deprecation: Deprecation | None = None

    @property
    def labels(self) -> dict[str, str]:
        """None: system images have no labels."""
        return {}


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

EU = ("fsn1", "nbg1", "hel1")
ALL = (*EU, "ash", "hil", "sin")
SHARED, DEDICATED = "shared", "dedicated"
COST_OPTIMIZED = "Cost-Optimized"
REGULAR = "Regular Performance"
GENERAL = "General Purpose"
HIL_GONE = {"hil": Deprecation(-120, -30)}  # announced 120 days ago, unavailable for 30
SIN_ENDS = {"sin": Deprecation(-30, 60)}  # announced 30 days ago, orderable for 60 more


US = ("ash", "hil")


def ccx_abroad(us: Price, sin: Price) -> dict[str, Price]:
    """A dedicated type's listed prices in the US locations and Singapore."""
    return {**dict.fromkeys(US, us), "sin": sin}


# fmt: off
SERVER_TYPES: tuple[ServerType, ...] = (
    ServerType(45, "cax11", 2, 4.0, 40, SHARED, "arm", eur("3.79", "0.0061"), EU, COST_OPTIMIZED),
    ServerType(93, "cax21", 4, 8.0, 80, SHARED, "arm", eur("6.49", "0.0104"), EU, COST_OPTIMIZED),
    ServerType(94, "cax31", 8, 16.0, 160, SHARED, "arm", eur("12.49", "0.0200"), EU,
               COST_OPTIMIZED),
    ServerType(95, "cax41", 16, 32.0, 320, SHARED, "arm", eur("24.49", "0.0392"), EU,
               COST_OPTIMIZED),
    ServerType(96, "ccx13", 2, 8.0, 80, DEDICATED, "x86", eur("12.49", "0.0200"), ALL, GENERAL,
               HIL_GONE, abroad=ccx_abroad(eur("13.49", "0.0217"), eur("21.50", "0.0345"))),
    ServerType(97, "ccx23", 4, 16.0, 160, DEDICATED, "x86", eur("24.49", "0.0392"), ALL, GENERAL,
               abroad=ccx_abroad(eur("26.49", "0.0425"), eur("39.90", "0.0639"))),
    ServerType(98, "ccx33", 8, 32.0, 240, DEDICATED, "x86", eur("48.49", "0.0777"), ALL, GENERAL,
               abroad=ccx_abroad(eur("50.49", "0.0810"), eur("74.90", "0.1200"))),
    ServerType(99, "ccx43", 16, 64.0, 360, DEDICATED, "x86", eur("96.49", "0.1546"), ALL,
               GENERAL, abroad=ccx_abroad(eur("100.49", "0.1611"), eur("137.50", "0.2204"))),
    ServerType(100, "ccx53", 32, 128.0, 600, DEDICATED, "x86", eur("192.49", "0.3085"), ALL,
               GENERAL, abroad=ccx_abroad(eur("200.49", "0.3213"), eur("294.50", "0.4720"))),
    ServerType(101, "ccx63", 48, 192.0, 960, DEDICATED, "x86", eur("288.49", "0.4623"), ALL,
               GENERAL, abroad=ccx_abroad(eur("300.49", "0.4816"), eur("482.50", "0.7732"))),
    ServerType(108, "cpx12", 1, 2.0, 40, SHARED, "x86", eur("6.49", "0.0104"), ALL, REGULAR,
               SIN_ENDS),
    ServerType(109, "cpx22", 2, 4.0, 80, SHARED, "x86", eur("6.49", "0.0104"), ALL, REGULAR,
               abroad={"sin": eur("12.49", "0.0200")}),
    ServerType(110, "cpx32", 4, 8.0, 160, SHARED, "x86", eur("10.99", "0.0176"), ALL, REGULAR,
               abroad={"sin": eur("25.49", "0.0408")}),
    ServerType(111, "cpx42", 8, 16.0, 320, SHARED, "x86", eur("19.99", "0.0320"), ALL, REGULAR,
               abroad={"sin": eur("43.49", "0.0697")}),
    ServerType(112, "cpx52", 12, 24.0, 480, SHARED, "x86", eur("28.49", "0.0457"), ALL, REGULAR,
               abroad={"sin": eur("60.49", "0.0969")}),
    ServerType(113, "cpx62", 16, 32.0, 640, SHARED, "x86", eur("38.99", "0.0625"), ALL, REGULAR,
               abroad={"sin": eur("77.49", "0.1242")}),
    ServerType(114, "cx23", 2, 4.0, 40, SHARED, "x86", eur("3.49", "0.0056"), EU, COST_OPTIMIZED),
    ServerType(115, "cx33", 4, 8.0, 80, SHARED, "x86", eur("6.49", "0.0104"), EU, COST_OPTIMIZED),
    ServerType(116, "cx43", 8, 16.0, 160, SHARED, "x86", eur("9.49", "0.0152"), EU,
               COST_OPTIMIZED),
    ServerType(117, "cx53", 16, 32.0, 320, SHARED, "x86", eur("17.49", "0.0280"), EU,
               COST_OPTIMIZED),
)
# fmt: on

PRIMARY_IPV4 = eur("0.50", "0.0008")
"""A primary IPv4's net price, the same in every location."""

# Taken out of the API at the end of 2025: a create naming one fails as for any unknown type.
REMOVED_SERVER_TYPES = (
    "cx22",
    "cx32",
    "cx42",
    "cx52",
    "cpx11",
    "cpx21",
    "cpx31",
    "cpx41",
    "cpx51",
)

# An image's deprecation: orderable for three months after the announcement, as hcloud-go's
# deprecation notice for images (exp/deprecationutil) assumes.
IMAGE_DEPRECATION = Deprecation(-30, 60)

IMAGES: tuple[Image, ...] = (
    Image(67794396, "ubuntu-22.04", "Ubuntu 22.04", "ubuntu", "22.04", "x86", 5),
    Image(103908070, "ubuntu-22.04", "Ubuntu 22.04", "ubuntu", "22.04", "arm", 5),
    Image(114690387, "debian-12", "Debian 12", "debian", "12", "x86", 5),
    Image(114690389, "debian-12", "Debian 12", "debian", "12", "arm", 5),
    Image(161547269, "ubuntu-24.04", "Ubuntu 24.04", "ubuntu", "24.04", "x86", 5),
    Image(161547270, "ubuntu-24.04", "Ubuntu 24.04", "ubuntu", "24.04", "arm", 5),
    Image(205999543, "fedora-41", "Fedora 41", "fedora", "41", "x86", 5, IMAGE_DEPRECATION),
    Image(205999544, "fedora-41", "Fedora 41", "fedora", "41", "arm", 5, IMAGE_DEPRECATION),
    Image(226715393, "fedora-42", "Fedora 42", "fedora", "42", "x86", 5),
    Image(226715394, "fedora-42", "Fedora 42", "fedora", "42", "arm", 5),
    Image(243140451, "debian-13", "Debian 13", "debian", "13", "x86", 5),
    Image(243140452, "debian-13", "Debian 13", "debian", "13", "arm", 5),
)


_Item = TypeVar("_Item", Location, ServerType, Image)


def _lookup(items: Iterable[_Item], ref: int | str) -> _Item | None:
    """Find by id (an int or a string of digits) or else by name."""
    if isinstance(ref, int) or ref.isdigit():
        wanted = int(ref)
        return next((item for item in items if item.id == wanted), None)
    return next((item for item in items if item.name == ref), None)


def location(ref: int | str) -> Location | None:
    """A location by id or name."""
    return _lookup(LOCATIONS, ref)


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
    return {"net": format(net, "f"), "gross": format(gross, "f")}  # never "0E-10"


def _prices(st: ServerType) -> list[dict[str, Any]]:
    prices = []
    for name in st.locations:
        loc = _LOC[name]
        price = st.price_in(name)
        prices.append(
            {
                "location": name,
                "price_hourly": _money(price.hourly),
                "price_monthly": _money(price.monthly),
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


def available_in(
    st: ServerType, location_name: str, unavailable: Unavailable, epoch: float, now: float
) -> bool:
    """Whether the type can be created in the location now: in stock and still orderable."""
    deprecation = st.deprecation_in(location_name)
    return (st.name, location_name) not in unavailable and not (
        deprecation is not None and deprecation.unavailable(epoch, now)
    )


def server_type_json(
    st: ServerType, unavailable: Unavailable, epoch: float, now: float
) -> dict[str, Any]:
    """A server type as the API shows it, with its per-location availability and deprecation.

    The top-level `deprecated`/`deprecation` (being phased out in favour of the per-location
    ones) are set only when the type is deprecated in every location it has.
    """
    per_location = [st.deprecation_in(name) for name in st.locations]
    everywhere = all(per_location)
    latest = max(
        (d for d in per_location if d is not None),
        key=lambda d: d.unavailable_after_days,
        default=None,
    )
    return {
        "id": st.id,
        "name": st.name,
        "description": st.name.upper(),
        "category": st.category,
        "cores": st.cores,
        "memory": st.memory,
        "disk": st.disk,
        "deprecated": everywhere,
        "deprecation": latest.to_json(epoch) if everywhere and latest else None,
        "prices": _prices(st),
        "storage_type": st.storage_type,
        "cpu_type": st.cpu_type,
        "architecture": st.architecture,
        "included_traffic": 0,
        "locations": [
            {
                "id": _LOC[name].id,
                "name": name,
                "deprecation": None if dep is None else dep.to_json(epoch),
                "available": available_in(st, name, unavailable, epoch, now),
                "recommended": dep is None and available_in(st, name, unavailable, epoch, now),
            }
            for name, dep in zip(st.locations, per_location, strict=True)
        ],
    }


def image_json(img: Image, epoch: float) -> dict[str, Any]:
    """A system image as the API shows it; a deprecated one has `deprecated` (the
    announcement, the older field) and `deprecation`."""
    dep = img.deprecation
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
        "deprecated": None if dep is None else timestamp(dep.announced(epoch)),
        "deprecation": None if dep is None else dep.to_json(epoch),
        "deleted": None,
        "labels": {},
        "architecture": img.architecture,
    }


def pricing_json() -> dict[str, Any]:
    """GET /pricing: the prices of server types and the few other items the API lists."""
    ip_prices = [
        {
            "location": loc.name,
            "price_hourly": _money(PRIMARY_IPV4.hourly),
            "price_monthly": _money(PRIMARY_IPV4.monthly),
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
