"""Servers: their lifecycle (boot, power actions, type change, protection, delete).

A new server is `initializing` for the boot time, then `running` (or `off`); a deleted one
is `deleting`, keeping its name, until its `delete_server` action finishes. Creating checks
the references the way the real API does: unique name, SSH keys, firewalls, then whether
the type can be ordered in the location (its deprecation there) and stock. A create whose
action fails (control API) leaves the server `off`, never booted. `change_type` needs a
stopped server, keeps the architecture and storage type, never shrinks the disk, and starts
the server again when done (`migrating` meanwhile).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from emulator.errors import ApiError, invalid_input, uniqueness
from emulator.render import timestamp
from emulator.resources.actions.state import Action
from emulator.resources.catalogue import data as catalogue
from emulator.resources.collection import Collection
from emulator.resources.images.state import AnyImage
from emulator.resources.primary_ips.state import PrimaryIP

if TYPE_CHECKING:
    from emulator.project import Project

FIRST_ID = 10_000_001
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
# API action name -> (action command, status while running, status after)
POWER_ACTIONS: dict[str, tuple[str, ServerStatus | None, ServerStatus]] = {
    "poweron": ("start_server", "starting", "running"),
    "poweroff": ("stop_server", "stopping", "off"),
    "shutdown": ("shutdown_server", "stopping", "off"),
    "reboot": ("reboot_server", None, "running"),
    "reset": ("reset_server", None, "running"),
}
BACKUP_WINDOW = "22-02"


@dataclass
class Server:
    """A server and the facts the API reports about it."""

    id: int
    name: str
    status: ServerStatus
    created: float
    server_type: catalogue.ServerType
    location: catalogue.Location
    image: AnyImage
    labels: dict[str, str]
    ipv4: PrimaryIP | None
    ipv6: PrimaryIP | None
    disk: int = 0  # GB: the type's disk, or the older one after a change_type keeping it
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
    image: int | str  # an id (a system image or a snapshot) or a system image's name
    labels: dict[str, str]
    ssh_keys: list[int | str]
    firewall_ids: list[int]
    start_after_create: bool
    enable_ipv4: bool
    enable_ipv6: bool
    user_data: str = field(default="", repr=False)
    network_ids: tuple[int, ...] = ()
    placement_group_id: int | None = None


@dataclass(frozen=True)
class CreatedServer:
    """What `POST /servers` returns besides the server itself."""

    server: Server
    action: Action
    next_actions: list[Action]
    root_password: str | None


class Servers(Collection[Server]):
    """The project's servers, unique by name (kept in an index: benchmarks make many)."""

    kind = "server"
    first_id = FIRST_ID

    def __init__(self, project: Project, seed: int = 0) -> None:
        super().__init__(project)
        self._names: dict[str, int] = {}
        self._rng = random.Random(seed)  # noqa: S311 - emulated passwords, not secrets

    def create(self, spec: ServerSpec) -> CreatedServer:
        """Create a server (status `initializing`) and start its create (and start) actions."""
        project = self.project
        if spec.name in self._names:
            raise uniqueness("name", "server name is already used")
        project.limits.check_server(len(self.by_id))
        ssh_key_ids = [project.ssh_keys.referenced(ref).id for ref in spec.ssh_keys]
        for firewall_id in spec.firewall_ids:
            if firewall_id not in project.firewalls.by_id:
                raise invalid_input(f"firewall {firewall_id} not found")
        image = project.images.for_create(spec.image, spec.server_type.architecture)
        if not (spec.enable_ipv4 or spec.enable_ipv6 or spec.network_ids) and (
            spec.start_after_create
        ):
            raise invalid_input(
                "a server without public IPv4 and IPv6 needs a network "
                "(or start_after_create=false)"
            )
        if spec.placement_group_id is not None:
            project.placement_groups.check_joinable(spec.placement_group_id)
        location = self._place(spec.server_type, spec.location)
        for network_id in spec.network_ids:
            project.networks.check_attachable(network_id, location.network_zone)
        server = self._add(
            name=spec.name,
            server_type=spec.server_type,
            location=location,
            image=image,
            labels=spec.labels,
            status="initializing",
            enable_ipv4=spec.enable_ipv4,
            enable_ipv6=spec.enable_ipv6,
        )
        server.ssh_key_ids = ssh_key_ids
        server.user_data = spec.user_data
        for network_id in spec.network_ids:
            project.networks.attach(network_id, server.id, location.network_zone)
        if spec.placement_group_id is not None:
            project.placement_groups.join(spec.placement_group_id, server.id)
        for firewall_id in spec.firewall_ids:
            project.firewalls.attach(firewall_id, server.id)
        ref = [(server.id, "server")]
        boot = project.timing.boot_seconds
        after_create: ServerStatus = "initializing" if spec.start_after_create else "off"
        start = project.actions.start
        never_booted = self._status_setter(server.id, "off")
        create = start(
            "create_server",
            ref,
            boot,
            self._status_setter(server.id, after_create),
            on_error=never_booted,
        )
        next_actions = []
        if spec.start_after_create:
            next_actions.append(
                start(
                    "start_server",
                    ref,
                    boot,
                    self._status_setter(server.id, "running"),
                    on_error=never_booted,
                    after=create,
                )
            )
        next_actions.extend(
            start(
                "apply_firewall",
                [(fid, "firewall"), *ref],
                boot,
                on_error=self._firewall_remover(fid, server.id),
                after=create,
            )
            for fid in spec.firewall_ids
        )
        password = None if ssh_key_ids else self._password()
        return CreatedServer(server, create, next_actions, password)

    def add_running(
        self,
        *,
        count: int,
        name_prefix: str,
        server_type: catalogue.ServerType,
        location: catalogue.Location,
        image: AnyImage,
        labels: dict[str, str],
    ) -> list[Server]:
        """Insert `count` running servers at once, without actions (for large benchmarks)."""
        names = [f"{name_prefix}{index}" for index in range(1, count + 1)]
        taken = [name for name in names if name in self._names]
        if taken:
            raise uniqueness("name", f"server name {taken[0]} is already used")
        if location.name not in server_type.locations:
            raise invalid_input("unsupported location for server type")
        self._orderable(server_type, location.name)
        return [
            self._add(
                name=name,
                server_type=server_type,
                location=location,
                image=image,
                labels=dict(labels),
                status="running",
                enable_ipv4=True,
                enable_ipv6=True,
            )
            for name in names
        ]

    def _add(
        self,
        *,
        name: str,
        server_type: catalogue.ServerType,
        location: catalogue.Location,
        image: AnyImage,
        labels: dict[str, str],
        status: ServerStatus,
        enable_ipv4: bool,
        enable_ipv6: bool,
    ) -> Server:
        server_id = next(self._ids)
        ips = self.project.primary_ips
        server = Server(
            id=server_id,
            name=name,
            status=status,
            created=self.project.now,
            server_type=server_type,
            location=location,
            image=image,
            labels=labels,
            ipv4=ips.create("ipv4", location, server_id) if enable_ipv4 else None,
            ipv6=ips.create("ipv6", location, server_id) if enable_ipv6 else None,
            disk=server_type.disk,
        )
        self._names[name] = server_id
        return self._added(server)

    def _place(
        self, server_type: catalogue.ServerType, location: catalogue.Location | None
    ) -> catalogue.Location:
        """The location to create in, or the stock error the real API gives."""
        stock = self.project.stock
        if location is not None:
            if location.name not in server_type.locations:
                raise invalid_input("unsupported location for server type")
            self._orderable(server_type, location.name)
            shortage = stock.shortage(server_type.name, location.name)
            if shortage is not None:
                raise ApiError(shortage.code, shortage.message)
            return location
        errors: list[ApiError] = []
        for name in server_type.locations:
            try:
                self._orderable(server_type, name)
            except ApiError as exc:
                errors.append(exc)
                continue
            shortage = stock.shortage(server_type.name, name)
            if shortage is None:
                found = catalogue.location(name)
                assert found is not None
                return found
            errors.append(ApiError(shortage.code, shortage.message))
        raise errors[0]

    def _orderable(self, server_type: catalogue.ServerType, location: str) -> None:
        """Refuse a type whose deprecation in the location has passed its unavailable_after."""
        deprecation = server_type.deprecation_in(location)
        project = self.project
        if deprecation is not None and deprecation.unavailable(project.epoch, project.now):
            since = timestamp(deprecation.unavailable_after(project.epoch))
            raise ApiError(
                "invalid_server_type",
                f"server type {server_type.name} is deprecated and unavailable in {location} "
                f"since {since}",
            )

    def _status_setter(self, server_id: int, status: ServerStatus) -> Callable[[], None]:
        """Set a status when an action ends, unless the server is being deleted meanwhile."""

        def apply() -> None:
            server = self.by_id.get(server_id)
            if server is not None and server.status != "deleting":
                server.status = status

        return apply

    def _firewall_remover(self, firewall_id: int, server_id: int) -> Callable[[], None]:
        """Undo a firewall's attachment to a server whose apply action failed."""

        def apply() -> None:
            firewall = self.project.firewalls.by_id.get(firewall_id)
            if firewall is not None and server_id in firewall.server_ids:
                firewall.server_ids.remove(server_id)

        return apply

    def _password(self) -> str:
        alphabet = string.ascii_letters + string.digits
        return "".join(self._rng.choice(alphabet) for _ in range(20))

    def update(self, server_id: int, name: str | None, labels: dict[str, str] | None) -> Server:
        """Rename a server and/or replace its labels."""
        server = self.get(server_id)
        if name is not None and name != server.name:
            if name in self._names:
                raise uniqueness("name", "server name is already used")
            del self._names[server.name]
            self._names[name] = server.id
            server.name = name
        if labels is not None:
            server.labels = labels
        return server

    def delete(self, server_id: int) -> Action:
        """Delete a server: it shows `deleting`, keeping its name, until its action finishes.

        As on the real API, a server being deleted is still listed and its name still taken
        for the action's time (`--action-seconds`); a second delete meanwhile succeeds again.
        """
        server = self.get(server_id)
        if server.delete_protected:
            raise ApiError("protected", "server deletion is protected")
        server.status = "deleting"
        return self.project.actions.start(
            "delete_server",
            [(server.id, "server")],
            self.project.timing.action,
            lambda: self._remove(server.id),
        )

    def _remove(self, server_id: int) -> None:
        server = self.by_id.pop(server_id, None)
        if server is None:
            return
        del self._names[server.name]
        self.project.firewalls.detach(server.id)
        self.project.networks.detach(server.id)
        self.project.placement_groups.leave(server.id)
        self.project.images.server_gone(server.id)
        for ip in (server.ipv4, server.ipv6):
            if ip is not None:
                self.project.primary_ips.delete(ip.id)

    def power(self, server_id: int, name: str) -> Action:
        """Run a power action (poweron, poweroff, shutdown, reboot, reset)."""
        server = self.get(server_id)
        actions = self.project.actions
        if actions.running_on(server.id, "server"):
            raise ApiError("locked", "server is locked: another action is running")
        command, during, after = POWER_ACTIONS[name]
        before = server.status
        if during is not None and server.status != after:
            server.status = during
        return actions.start(
            command,
            [(server.id, "server")],
            self.project.timing.action,
            self._status_setter(server.id, after),
            on_error=self._status_setter(server.id, before),
        )

    def change_type(
        self, server_id: int, server_type: catalogue.ServerType, *, upgrade_disk: bool
    ) -> Action:
        """Change a stopped server's type, as the real API's change_type does.

        Refused (`invalid_server_type`) for another architecture or storage type, a disk
        smaller than the server's, or a type the server's location does not offer or no
        longer sells; `server_not_stopped` unless the server is off. The server is
        `migrating` meanwhile, then `running` with the new type (and the new type's disk
        with `upgrade_disk`); a failed change leaves it `off` with its old type.
        """
        server = self.get(server_id)
        actions = self.project.actions
        if actions.running_on(server.id, "server"):
            raise ApiError("locked", "server is locked: another action is running")
        if server.status != "off":
            raise ApiError("server_not_stopped", "server must be stopped before changing its type")
        current = server.server_type
        if server_type.architecture != current.architecture:
            raise ApiError("invalid_server_type", "server type has incompatible architecture")
        if server_type.storage_type != current.storage_type:
            raise ApiError("invalid_server_type", "server type has incompatible storage type")
        if server_type.disk < server.disk:
            raise ApiError(
                "invalid_server_type",
                "cannot change type because the selected server_type has not sufficient disk space",
            )
        location = server.location.name
        if location not in server_type.locations:
            raise ApiError("invalid_server_type", "server type is not available in this location")
        self._orderable(server_type, location)
        shortage = self.project.stock.shortage(server_type.name, location)
        if shortage is not None:
            raise ApiError(shortage.code, shortage.message)
        server.status = "migrating"

        def changed() -> None:
            if server.status == "deleting":
                return
            server.server_type = server_type
            if upgrade_disk:
                server.disk = server_type.disk
            server.status = "running"

        return actions.start(
            "change_server_type",
            [(server.id, "server")],
            self.project.timing.action,
            changed,
            on_error=self._status_setter(server.id, "off"),
        )

    def change_protection(
        self, server_id: int, delete: bool | None, rebuild: bool | None
    ) -> Action:
        """Turn delete/rebuild protection on or off."""
        server = self.get(server_id)
        if delete is not None:
            server.delete_protected = delete
        if rebuild is not None:
            server.rebuild_protected = rebuild
        return self.project.actions.start("change_protection", [(server.id, "server")], 0)

    def set_backup(self, server_id: int, *, enabled: bool) -> Action:
        """Enable or disable backups (only the reported backup window changes)."""
        server = self.get(server_id)
        server.backup_window = BACKUP_WINDOW if enabled else None
        command = "enable_backup" if enabled else "disable_backup"
        return self.project.actions.start(command, [(server.id, "server")], 0)

    def move_placement_group(self, server_id: int, group_id: int | None) -> Action:
        """Put a stopped server in a placement group (None: take it out), as the
        add_to_placement_group and remove_from_placement_group actions do."""
        server = self.get(server_id)
        groups = self.project.placement_groups
        current = groups.of_server(server.id)
        if group_id is None:
            if current is None:
                raise ApiError(
                    "server_not_in_placement_group", "server is not in a placement group"
                )
            command = "remove_from_placement_group"
        else:
            if current is not None:
                raise ApiError(
                    "server_already_in_placement_group", "server is already in a placement group"
                )
            if server.status != "off":
                raise ApiError("server_not_stopped", "server must be stopped")
            groups.check_joinable(group_id)
            command = "add_to_placement_group"
        groups.leave(server.id)
        if group_id is not None:
            groups.join(group_id, server.id)
        return self.project.actions.start(command, [(server.id, "server")], 0)

    def reset(self) -> None:
        """Drop every server (ids keep counting up)."""
        super().reset()
        self._names.clear()
