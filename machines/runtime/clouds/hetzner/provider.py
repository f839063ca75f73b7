"""Hetzner Cloud behind the provider interface, on the official client (hcloud-python).

Names are resolved to ids once per provider (image per architecture, SSH keys, firewall,
network, placement group: one cache, ``lookups.py``), so a ``create`` is one request after
the first. Retries are ``machines.runtime.retry``'s, not hcloud's: it knows which requests
are safe to repeat (a create is made safe by its unique name and labels) and reads
``RateLimit-Reset``, which hcloud-python does not.

``machines(pool)`` answers every pool from one listing of the owner while it is fresh
(``machines.runtime.listing``), stretched by the budget each answer states
(``machines.runtime.budget``);
``no_stock`` answers are remembered per type and location (``machines.runtime.shortages``).

The server types are one ``Catalogue`` (``catalogue.py``): one request lists every type with
its architecture and, per location, its deprecation and stock; ``arch``, ``sells``,
``offers`` and ``create`` all ask it, and ``offers`` has it read again once
``ORCA_OFFERS_TTL`` has passed. A create of a type no longer sold in a location fails at
once, saying since when, and one still sold but deprecated there is logged with the date it
stops. ``prices`` reads ``GET /pricing`` through the same client and retries
(``prices.py``). A create whose create action has already failed is deleted and reported
failed; one whose action fails later is listed by ``machines`` as ``failed`` (an ``off``
pool server whose ``create_server`` action ended in error), for the autoscaler to delete.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Protocol, TypeVar

import requests
from hcloud import APIException, Client
from hcloud.actions import ActionError
from hcloud.firewalls import Firewall
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.networks import Network
from hcloud.placement_groups import PlacementGroup
from hcloud.server_types import BoundServerType, ServerType
from hcloud.servers import BoundServer, Server, ServerCreatePublicNetwork
from hcloud.ssh_keys import SSHKey

from machines.runtime import retry, telemetry
from machines.runtime.arch import docker_arch
from machines.runtime.clock import Clock
from machines.runtime.clouds.hetzner.answers import (
    ANSWER_ERRORS,
    NotTheApi,
    cloud_error,
    machine,
    maybe_carried_out,
    outcome,
    retry_after,
    server_id_of,
)
from machines.runtime.clouds.hetzner.billing import BILLING
from machines.runtime.clouds.hetzner.catalogue import Catalogue
from machines.runtime.clouds.hetzner.client import Clients
from machines.runtime.clouds.hetzner.lookups import Lookups, Named
from machines.runtime.clouds.hetzner.machine import (
    AVAILABLE,
    NEWEST_FIRST,
    SNAPSHOT,
    SNAPSHOTS_PER_PAGE,
    ImageChoice,
)
from machines.runtime.clouds.hetzner.machine import shape as shape_of
from machines.runtime.clouds.hetzner.options import SPREAD_LIMIT, HetznerOptions
from machines.runtime.clouds.hetzner.prices import PRICING, HetznerPrices, Pricing, read_pricing
from machines.runtime.clouds.hetzner.settings import (
    ACCOUNT_LIMIT_CODES,
    CLOUD,
    MARKETS,
    NO_STOCK_CODES,
    ORCA_HCLOUD_FIREWALL,
    ORCA_HCLOUD_IMAGE,
    ORCA_HCLOUD_SSH_KEYS,
    HetznerSettings,
    hetzner_arch,
)
from machines.runtime.errors import (
    AccountFullError,
    CloudError,
    LostCreateError,
    MachinesError,
    UnknownMachineTypeError,
)
from machines.runtime.labels import (
    belongs_to,
    owner_among,
    owner_selector,
    owners_selector,
    pool_labels,
    pool_selector,
)
from machines.runtime.models import Created, Machine, MachineSpec, Market, Status, mismatch
from machines.runtime.pool import Pool
from machines.runtime.prices import PriceList
from machines.runtime.provider import Found, Provider
from machines.runtime.secrets import digest

T = TypeVar("T")

log = logging.getLogger(__name__)

PAGE_SIZE = 50
"""The API's largest page: ``machines(pool)`` costs one request per 50 machines."""

SERVERS = "GET /servers"
"""The operation of requests made in more than one place (``machines.runtime.telemetry``)."""


class _Found(Protocol):
    """What a ``get_by_name`` answers: a resource with its id."""

    @property
    def id(self) -> int | None: ...


class _ByName(Protocol):
    """A resource client of hcloud-python that finds one resource by its name."""

    def get_by_name(self, name: str) -> _Found | None: ...


_BY_NAME: Mapping[str, tuple[Callable[[Client], _ByName], str]] = {
    "network": (lambda client: client.networks, "GET /networks"),
    "placement group": (lambda client: client.placement_groups, "GET /placement_groups"),
    "SSH key": (lambda client: client.ssh_keys, "GET /ssh_keys"),
    "firewall": (lambda client: client.firewalls, "GET /firewalls"),
}
"""Each kind looked up by name: its resource client, and the operation its request counts
under (``machines.runtime.telemetry``)."""


class HetznerProvider(Provider):
    """Servers in one Hetzner Cloud project, labelled for one owner."""

    kind = "hetzner"
    cloud = CLOUD
    markets = MARKETS
    noun = "server"
    billing = BILLING

    def __init__(
        self, settings: HetznerSettings, owner: str = "", *, clock: Clock = time.time
    ) -> None:
        """``clock`` times the listing, the stock memory and the budget (tests pass theirs)."""
        super().__init__(owner, settings.image, settings.freshness, clock)
        self.ssh_keys = settings.ssh_keys
        self.firewall = settings.firewall
        self.endpoint = settings.endpoint
        self._settings = settings
        self._clients = Clients(settings, self._meter.observe)
        self._catalogue = Catalogue(
            self._read_catalogue, settings.freshness.offers_ttl, clock, self._stock.available
        )
        self._lookups = Lookups()

    @classmethod
    def from_env(cls, owner: str = "", environ: Mapping[str, str] | None = None) -> HetznerProvider:
        return cls(HetznerSettings.from_env(environ), owner)

    def __repr__(self) -> str:
        return (
            f"HetznerProvider(owner={self.owner!r}, endpoint={self.endpoint!r}, "
            f"image={self.image!r}, ssh_keys={self.ssh_keys!r}, firewall={self.firewall!r})"
        )

    def arch(self, machine_type: str) -> str:
        """By the catalogue: one request for every type, whose architectures are kept."""
        return docker_arch(self._catalogue.type(machine_type).architecture)

    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        """Locations where Hetzner sells ``machine_type`` and has it in stock now, by the
        catalogue's per-location ``available`` (one request per ``ORCA_OFFERS_TTL`` for every
        type), less those a recent ``no_stock`` answer is remembered for; none while the
        project is remembered at its limit. Every Hetzner pool is on-demand, so ``pool``
        changes nothing."""
        usable = self._catalogue.in_stock(machine_type)
        if self.account_full(self.market(pool).tries):
            return []
        short = self._stock.short(machine_type, usable)
        return [loc for loc in usable if loc not in short]

    def sells(self, machine_type: str, location: str) -> str | None:
        """By the catalogue: the type, then its locations and their deprecations."""
        try:
            info = self._catalogue.type(machine_type)
        except UnknownMachineTypeError as error:
            return str(error)
        return info.not_sold(location, self._catalogue.now())

    def account(self) -> tuple[str, ...]:
        """The API endpoint and the token's digest: a token belongs to one project."""
        return (self.kind, self.endpoint, digest(self._settings.token.get_secret_value()))

    def prices(self) -> PriceList:
        """Hetzner's price list (``GET /pricing``), read once when first asked."""
        return HetznerPrices(lambda: self._call(PRICING, self._read_pricing, "GET /pricing"))

    def _read_pricing(self) -> Pricing:
        """One ``GET /pricing``. An answer without a Hetzner API error (a web page, a
        proxy's) is final: asking again within the price list's window gets the same, and
        the list is optional (its prices are then unknown, saying why)."""
        try:
            return read_pricing(self._client())
        except APIException as error:
            if isinstance(error.code, int):
                raise cloud_error(PRICING, error, 1, self.endpoint) from None
            raise

    def _machine_id(self, machine_id: object) -> str:
        return str(server_id_of(machine_id))

    def _look_up(self, machine_id: str) -> Found | None:
        server_id = int(machine_id)
        try:
            server = self._call(
                f"get server {server_id}", partial(self._server, server_id), "GET /servers/{id}"
            )
        except CloudError as error:
            if error.code == "not_found":
                return None
            raise
        found = self._call(f"read server {server_id}", partial(machine, server), None)
        return Found(found, server.labels or {})

    def _remove(self, machine_id: str) -> None:
        try:
            self._call(
                f"delete server {machine_id}",
                lambda: self._client().servers.delete(Server(id=int(machine_id))),
                "DELETE /servers/{id}",
            )
        except CloudError as error:
            if error.code != "not_found":
                raise

    def _listed(self, server: BoundServer) -> Machine:
        """A pool server as ``machines`` lists it: ``failed`` when it never got made."""
        found = machine(server)
        if server.status == "off" and self._create_failed(server):
            return found.model_copy(update={"status": Status.FAILED})
        return found

    def _create_failed(self, server: BoundServer) -> bool:
        """Whether the server's create action ended in error (one request, for off servers)."""
        result = self._call(
            f"list failed actions of server {server.id}",
            lambda: self._client().servers.get_actions_list(server, status=["error"]),
            "GET /servers/{id}/actions",
        )
        return any(action.command == "create_server" for action in result.actions)

    def _create(self, spec: MachineSpec) -> Created:
        if self._stock.seconds_left(spec.machine_type, spec.location) > 0:
            return Created.out_of_stock(
                self._stock.reason("Hetzner", spec.machine_type, spec.location)
            )
        info = self._catalogue.type(spec.machine_type)
        not_sold = info.not_sold(spec.location, self._catalogue.now())
        if not_sold is not None:
            return Created.failure(not_sold)
        deprecated = info.deprecation_notice(spec.location)
        if deprecated is not None:
            log.warning("%s (creating %s)", deprecated, spec.name)
        architecture = docker_arch(info.architecture)
        shape = shape_of(
            self.pool(spec.pool).options_of(HetznerOptions),
            self.image,
            ORCA_HCLOUD_IMAGE,
            pool_labels(spec.pool, self.owner),
        )
        image_id = self._image_id(shape.image, architecture, spec.pool, spec.machine_type)
        ssh_key_ids = self._resolve_ssh_keys()
        firewall_id = self._resolve_firewall()
        network_id = self._named_id("network", shape.network, spec.pool)
        if network_id is not None:
            self._check_zone(shape.network, spec.location, spec.pool)
        group_id = self._named_id("placement group", shape.placement_group, spec.pool)
        public_net = (
            None
            if shape.default_public_net
            else ServerCreatePublicNetwork(enable_ipv4=shape.ipv4, enable_ipv6=shape.ipv6)
        )
        lost: list[Exception] = []
        try:
            response = self._call(
                "create server",
                lambda: self._client().servers.create(
                    name=spec.name,
                    server_type=ServerType(name=spec.machine_type),
                    image=Image(id=image_id),
                    location=Location(name=spec.location),
                    ssh_keys=[SSHKey(id=i) for i in ssh_key_ids] or None,
                    firewalls=[Firewall(id=firewall_id)] if firewall_id is not None else None,
                    user_data=spec.user_data or None,
                    labels=shape.labels,
                    public_net=public_net,
                    networks=[Network(id=network_id)] if network_id is not None else None,
                    placement_group=PlacementGroup(id=group_id) if group_id is not None else None,
                ),
                "POST /servers",
                lost=lost,
            )
            made = self._call(
                "read the created server", partial(machine, response.server, spec.pool), None
            )
        except CloudError as error:
            return self._refused(spec, error, deprecated, lost=bool(lost))
        action = response.action
        if action is not None and action.status == "error":
            return self._undo_failed_create(response.server, spec, action.error)
        log.info("created server %s (%s)", made.id, spec.name)
        return Created.success(made)

    def _refused(
        self, spec: MachineSpec, error: CloudError, deprecated: str | None, *, lost: bool
    ) -> Created:
        """A create the API refused: no stock, made before (a lost answer), or failed;
        ``lost``: some try of it may have been carried out though its answer was lost."""
        if error.code in NO_STOCK_CODES:
            self._stock.remember(spec.machine_type, spec.location)
            return Created.out_of_stock(
                self._stock.reason("Hetzner", spec.machine_type, spec.location, error.code)
                + (f"; {deprecated}" if deprecated else "")
            )
        if error.code == "uniqueness_error":
            return self._created_before(spec)
        if error.code in ACCOUNT_LIMIT_CODES:
            raise AccountFullError(str(error), error.code, Market.ON_DEMAND)
        if lost:
            raise LostCreateError(
                f"{error}: server {spec.name} may have been created all the same; "
                f"machines({spec.pool!r}) will show it, and creating {spec.name} again "
                "returns it",
                error.code,
            )
        return Created.failure(f"{error} ({spec.machine_type} in {spec.location})", error.code)

    def _undo_failed_create(
        self, server: BoundServer, spec: MachineSpec, error: ActionError | None
    ) -> Created:
        """A server whose create action failed: delete it, so nothing is left half-made."""
        why = f"{error['code']}: {error['message']}" if error else "no error given"
        failed = (
            f"Hetzner could not create server {spec.name} ({spec.machine_type} in "
            f"{spec.location}): its create action failed ({why})"
        )
        try:
            self._remove(str(server.id))
        except CloudError as not_deleted:
            return Created.failure(
                f"{failed}; server {server.id} is left and machines({spec.pool!r}) lists "
                f"it as failed: delete it ({not_deleted})"
            )
        return Created.failure(f"{failed}; server {server.id} was deleted")

    def _by_name(self, name: str, pool: str) -> list[Machine]:
        """The server named ``name`` when it is this owner's of ``pool``: one request
        (names are unique in a project)."""
        server = self._call(
            f"find server {name}", lambda: self._client().servers.get_by_name(name), SERVERS
        )
        if server is None or not belongs_to(server.labels or {}, self.owner, pool):
            return []
        return [self._call(f"read server {server.id}", partial(machine, server, pool), None)]

    def _created_before(self, spec: MachineSpec) -> Created:
        """Answer a create whose name is taken: ours (an earlier, lost answer) or not."""
        server = self._call(
            f"find server {spec.name}",
            lambda: self._client().servers.get_by_name(spec.name),
            SERVERS,
        )
        if server is None:
            return Created.failure(
                f"server name {spec.name} was taken but is free again: create it once more"
            )
        if server.status == "deleting":
            return Created.failure(
                f"server name {spec.name} is still held by server {server.id}, which is being "
                "deleted: try again in a moment or choose another name"
            )
        if belongs_to(server.labels or {}, self.owner, spec.pool):
            found = self._call(
                f"read server {server.id}", partial(machine, server, spec.pool), None
            )
            different = mismatch(spec, found)
            return Created.failure(different) if different else Created.success(found)
        return Created.failure(
            f"server name {spec.name} is taken by server {server.id}, which is not a machine of "
            f"pool {spec.pool} of owner {self.owner or '(none)'}: choose another name"
        )

    def _read_catalogue(self) -> list[BoundServerType]:
        """Every server type in one request: what the ``Catalogue`` keeps."""
        return self._call(
            "list server types", self._client().server_types.get_all, "GET /server_types"
        )

    def _image_id(
        self, choice: ImageChoice, architecture: str, pool: str, machine_type: str
    ) -> int:
        """The id of the image ``choice`` names for ``architecture``, looked up once: by name
        for the architecture, by id (checked to be of it), or the newest available snapshot
        of the label selector for it, read again once ``ORCA_OFFERS_TTL`` has passed, so a
        new worker image is taken without a restart. ``MachinesError`` naming the setting
        when there is none."""
        hetzner = hetzner_arch(architecture)
        return self._lookups.once(
            "image",
            (choice.name, str(choice.id), choice.selector, hetzner),
            partial(self._find_image, choice, hetzner, architecture, pool, machine_type),
            fresh_for=self._settings.freshness.offers_ttl if choice.selector else None,
            now=self._clock(),
        )

    def _find_image(
        self, choice: ImageChoice, hetzner: str, architecture: str, pool: str, machine_type: str
    ) -> int:
        where = f"pool {pool}: {choice.key}" if choice.own else choice.key
        images = self._client().images
        if choice.selector:
            found = self._call(
                f"find the newest snapshot of {choice.selector}",
                lambda: (
                    images.get_list(
                        type=[SNAPSHOT],
                        label_selector=choice.selector,
                        architecture=[hetzner],
                        sort=[NEWEST_FIRST],
                        per_page=SNAPSHOTS_PER_PAGE,
                    ).images
                ),
                "GET /images",
            )
            # Only an available snapshot boots a server; a newer one still being made is
            # passed over, as the cluster-autoscaler does (it asks for status=available).
            usable = [i for i in found if i.status == AVAILABLE and i.id is not None]
            if usable and usable[0].id is not None:
                self._lookups.put("snapshot description", usable[0].id, usable[0].description)
                return usable[0].id
            if found:
                newest = found[0]
                being = " (still being made)" if newest.status == "creating" else ""
                raise MachinesError(
                    f"{where} {choice.selector!r} matches no available snapshot for "
                    f"{architecture}: snapshot {newest.id} is {newest.status}{being}: wait "
                    "until it is available, or change the selector"
                )
            other = self._call(
                f"find snapshots of {choice.selector}",
                lambda: (
                    images.get_list(
                        type=[SNAPSHOT], label_selector=choice.selector, per_page=1
                    ).images
                ),
                "GET /images",
            )
            also = (
                f" (there is one for {docker_arch(other[0].architecture or '')} only)"
                if other
                else ""
            )
            raise MachinesError(
                f"{where} {choice.selector!r} matches no snapshot for {architecture}{also}: "
                f"make a snapshot of a {architecture} server with those labels, or change "
                "the selector or the pool's machine type"
            )
        if choice.id is not None:
            image_id = choice.id
            try:
                image = self._call(
                    f"get image {image_id}", lambda: images.get_by_id(image_id), "GET /images/{id}"
                )
            except CloudError as error:
                if error.code != "not_found":
                    raise
                raise MachinesError(
                    f"{where} {image_id} is no image of the project: name an image that exists"
                ) from None
            if image.architecture and image.architecture != hetzner:
                raise MachinesError(
                    f"{where} {image_id} is an image for {docker_arch(image.architecture)}, "
                    f"but {machine_type} is {architecture}: choose an image of "
                    f"{architecture} or another type"
                )
            return image_id
        named = self._call(
            f"find image {choice.name}",
            lambda: images.get_by_name_and_architecture(choice.name, hetzner),
            "GET /images",
        )
        if named is None or named.id is None:
            raise MachinesError(
                f"Hetzner has no image {choice.name!r} for {architecture} ({where}): "
                "name an image that exists for this architecture"
            )
        return named.id

    def check_options(
        self, pool: Pool, created: Collection[str] = (), keys: Mapping[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """The pool's image, network and placement group looked up as a create would (read
        only): each one missing, or an image of the other architecture, as (key, why).
        ``created``: names the stack makes itself, not looked for."""
        options = pool.options_of(HetznerOptions)
        setting = (keys or {}).get(ORCA_HCLOUD_IMAGE, ORCA_HCLOUD_IMAGE)
        chosen = shape_of(options, self.image, setting, {})
        found: list[tuple[str, str]] = []
        try:
            architecture = self.arch(pool.machine_type)
            self._image_id(chosen.image, architecture, pool.name, pool.machine_type)
        except MachinesError as error:
            key = chosen.image.key if chosen.image.own else ORCA_HCLOUD_IMAGE
            found.append((key, str(error)))
        for what, key, name in (
            ("network", "hetzner.network", chosen.network),
            ("placement group", "hetzner.placementGroup", chosen.placement_group),
        ):
            if name in created:
                continue
            try:
                if self._named_id(what, name, pool.name) is None:
                    continue
                if what == "network":
                    self._check_zone(name, pool.location, pool.name)
                else:
                    self._check_room(name, pool)
            except MachinesError as error:
                found.append((key, str(error)))
        return found

    def _check_room(self, group: str, pool: Pool) -> None:
        """``MachinesError`` when the spread group ``group`` already holds servers other
        than this owner's, too many for the pool's ``max`` besides: Hetzner refuses the
        server past ``SPREAD_LIMIT`` (``placement_group_member_limit_reached``). One listing
        of the owner's machines, asked only when the group holds any server."""
        named = self._named("placement group", group, pool.name)
        members = named.members if named else frozenset()
        if not members:
            return
        mine = {int(m.id) for m in self._list(None) if m.id.isdigit()}
        others = len(members - mine)
        wanted = pool.max or SPREAD_LIMIT
        if others + wanted > SPREAD_LIMIT:
            room = max(SPREAD_LIMIT - others, 0)
            raise MachinesError(
                f"pool {pool.name}: hetzner.placementGroup {group!r} already holds {others} "
                f"server{'' if others == 1 else 's'} not of this owner, and Hetzner puts at most "
                f"{SPREAD_LIMIT} in a spread group: "
                + (
                    f"lower the pool's max from {wanted} to {room}, or "
                    if room
                    else "it is full, so "
                )
                + "use another placement group"
            )

    def network_zone(self, location: str) -> str:
        """``GET /locations?name=``'s ``network_zone``, read once per location."""
        if not location:
            return ""
        return self._lookups.once("location", location, partial(self._find_zone, location))

    def _find_zone(self, location: str) -> str:
        found = self._call(
            f"find location {location}",
            lambda: self._client().locations.get_by_name(location),
            "GET /locations",
        )
        return (found.network_zone or "") if found else ""

    def _check_zone(self, network: str, location: str, pool: str) -> None:
        """``MachinesError`` naming the pool's key when ``network`` has no subnet in the
        network zone of ``location`` (Hetzner attaches a server only to a subnet of its
        location's zone, and refuses the create otherwise)."""
        zone = self.network_zone(location)
        named = self._named("network", network, pool)
        zones = named.zones if named else frozenset()
        if zone and zone not in zones:
            self._lookups.forget("network", network)  # read again next time: a subnet may come
            has = ", ".join(sorted(zones)) or "none"
            raise MachinesError(
                f"pool {pool}: hetzner.network {network!r} has no subnet in network zone "
                f"{zone}, which holds location {location} (its subnets' zones: {has}): add a "
                f"subnet in {zone} to the network, or use a network or location of one zone"
            )

    def boots(self, pool: Pool) -> str:
        """The snapshot a new server of a pool whose image is a label selector boots:
        ``snapshot 4711 (worker v2), the newest available matching 'role=ci'``, looked up as
        a create would (once); empty for an image by name or id."""
        choice = shape_of(pool.options_of(HetznerOptions), self.image, ORCA_HCLOUD_IMAGE, {}).image
        if not choice.selector:
            return ""
        architecture = self.arch(pool.machine_type)
        image_id = self._image_id(choice, architecture, pool.name, pool.machine_type)
        description = self._lookups.get("snapshot description", image_id) or ""
        return (
            f"snapshot {image_id}"
            + (f" ({description})" if description else "")
            + f", the newest available matching {choice.selector!r}"
        )

    def _named_id(self, what: str, name: str, pool: str) -> int | None:
        """The id of the network or placement group named ``name`` (None for no name),
        looked up once; ``MachinesError`` naming the pool's key when the project has none."""
        if not name:
            return None
        named = self._named(what, name, pool)
        return None if named is None else named.id

    def _named(self, what: str, name: str, pool: str) -> Named | None:
        """The network or placement group named ``name`` (None for no name), looked up once;
        ``MachinesError`` naming the pool's key when the project has none."""
        if not name:
            return None
        key = "network" if what == "network" else "placementGroup"
        missing = (
            f"pool {pool}: hetzner.{key} {name!r} is no {what} of the project: "
            f"create it (the stack does, when it declares it) or fix the name"
        )
        return self._lookups.once(what, name, partial(self._find_named, what, name, missing))

    def _find_named(self, what: str, name: str, missing: str) -> Named:
        """The ``what`` named ``name`` (one request), with a network's subnet zones and a
        placement group's servers; ``MachinesError(missing)`` when the project has none."""
        finder, operation = _BY_NAME[what]
        found = self._call(
            f"find {what} {name}", lambda: finder(self._client()).get_by_name(name), operation
        )
        if found is None or found.id is None:
            raise MachinesError(missing)
        if isinstance(found, Network):
            zones = (s.network_zone for s in found.subnets or [])
            return Named(found.id, zones=frozenset(z for z in zones if z))
        if isinstance(found, PlacementGroup):
            return Named(found.id, members=frozenset(found.servers or []))
        return Named(found.id)

    def _resolve_ssh_keys(self) -> list[int]:
        """The ids of ``ORCA_HCLOUD_SSH_KEYS``' keys, looked up once (all, or none kept)."""
        return self._lookups.once("SSH keys", tuple(self.ssh_keys), self._find_ssh_keys)

    def _find_ssh_keys(self) -> list[int]:
        return [
            self._id_by_name(
                "SSH key",
                name,
                f"Hetzner has no SSH key named {name!r} ({ORCA_HCLOUD_SSH_KEYS}): "
                "add it to the project or remove it from the setting",
            )
            for name in self.ssh_keys
        ]

    def _resolve_firewall(self) -> int | None:
        """The id of ``ORCA_HCLOUD_FIREWALL``'s firewall (None for none), looked up once."""
        if not self.firewall:
            return None
        missing = (
            f"Hetzner has no firewall named {self.firewall!r} "
            f"({ORCA_HCLOUD_FIREWALL}): create it or change the setting"
        )
        return self._lookups.once(
            "firewall", self.firewall, partial(self._id_by_name, "firewall", self.firewall, missing)
        )

    def _id_by_name(self, what: str, name: str, missing: str) -> int:
        """The id of the ``what`` named ``name`` (one request); ``MachinesError(missing)``
        when the project has none."""
        finder, operation = _BY_NAME[what]
        found = self._call(
            f"find {what} {name}", lambda: finder(self._client()).get_by_name(name), operation
        )
        if found is None or found.id is None:
            raise MachinesError(missing)
        return found.id

    def _list(self, pool: str | None) -> list[Machine]:
        def mine(labels: Mapping[str, str]) -> str | None:
            return self.owner if belongs_to(labels, self.owner, pool) else None

        if pool is None:
            selector, what = owner_selector(self.owner), "list machines"
        else:
            selector, what = pool_selector(pool, self.owner), f"list pool {pool}"
        found, pages = self._list_selected(selector, what, mine)
        if pool is None:
            self._pages = max(pages, math.ceil(len(found) / PAGE_SIZE), 1)
        return [one for _, one in found]

    def _list_owners(
        self, owners: Sequence[str], group: Sequence[Provider]
    ) -> list[tuple[str, Machine]]:
        found, _ = self._list_selected(
            owners_selector(owners),
            f"list machines of {len(owners)} owners",
            lambda labels: owner_among(labels, owners),
        )
        return found

    def _list_selected(
        self, selector: str, what: str, whose: Callable[[Mapping[str, str]], str | None]
    ) -> tuple[list[tuple[str, Machine]], int]:
        """Every server ``selector`` selects over all pages, as (owner, machine), less
        those ``whose`` names no owner of; and the requests it took."""
        found: list[tuple[str, Machine]] = []
        page: int | None = 1
        pages = 0
        while page is not None:
            listed, page = self._call(
                what, partial(self._servers_page, selector, whose, page), SERVERS
            )
            pages += 1
            found += listed
        return found, pages

    def _servers_page(
        self, selector: str, whose: Callable[[Mapping[str, str]], str | None], page: int
    ) -> tuple[list[tuple[str, Machine]], int | None]:
        """One page of the selected servers whose owner ``whose`` names, and the next
        page's number; read inside the call, so an answer of the wrong shape is a
        ``CloudError``."""
        result = self._client().servers.get_list(
            label_selector=selector, page=page, per_page=PAGE_SIZE
        )
        if result.meta is None or result.meta.pagination is None:
            raise NotTheApi("a list of servers without meta.pagination")
        listed = []
        for server in result.servers:
            owner = whose(server.labels or {})
            if owner is not None:
                listed.append((owner, self._listed(server)))
        return listed, result.meta.pagination.next_page

    def _server(self, server_id: int) -> BoundServer:
        server = self._client().servers.get_by_id(server_id)
        if server.id != server_id:
            raise NotTheApi(f"server {server_id} answered as server {server.id}")
        return server

    def _client(self) -> Client:
        return self._clients.get()

    def _call(
        self,
        what: str,
        fn: Callable[[], T],
        operation: str | None,
        *,
        lost: list[Exception] | None = None,
    ) -> T:
        """One API call with retries, its failures turned into ``CloudError``; each try is
        counted under ``operation`` (None: ``fn`` reads an answer, it sends no request).
        ``lost`` collects the errors of tries that may have been carried out though their
        answer was lost (``maybe_carried_out``): a create looks for what they made."""

        def observe(error: Exception | None, retried: bool) -> None:
            if lost is not None and maybe_carried_out(error):
                assert error is not None
                lost.append(error)
            if operation is not None:
                self._tried(operation, error, retried)

        try:
            return retry.call(
                fn,
                lambda error: retry_after(
                    error, self._clients.rate_limit_reset(), self._clients.last_status()
                ),
                deadline=self._settings.timeouts.call,
                what=what,
                observe=observe,
            )
        except retry.GaveUp as gave_up:
            error = cloud_error(what, gave_up.last, gave_up.attempts, self.endpoint)
            raise error.exhausted() from None
        except (*ANSWER_ERRORS, APIException, requests.RequestException) as error:
            raise cloud_error(what, error, 1, self.endpoint) from None

    def _tried(self, operation: str, error: Exception | None, retried: bool) -> None:
        telemetry.tried(self.kind, operation, outcome(error, self._clients.last_status()), retried)
