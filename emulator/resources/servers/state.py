"""The project's resources and how they change: one shared project behind one lock.

Time moves lazily: every transaction first finishes the actions whose time has come (and
applies their effects, e.g. a booted server becomes `running`), so no background thread is
needed and a status read is always consistent with the actions read next to it.
"""

from __future__ import annotations

import heapq
import random
import string
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from emulator import catalogue, label_selector
from emulator.errors import ApiError, invalid_field, invalid_input, not_found, uniqueness
from emulator.models import (
    Action,
    AppliedSelector,
    Firewall,
    FirewallRule,
    PrimaryIP,
    Server,
    ServerSpec,
    ServerStatus,
    SSHKey,
    ssh_fingerprint,
)
from emulator.stock import Stock

_ID_START = {
    "server": 10_000_001,
    "action": 30_000_001,
    "ssh_key": 20_001,
    "firewall": 40_001,
    "primary_ip": 50_000_001,
}
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
class Timing:
    """How long emulated work takes; `action_seconds` None means the same as booting."""

    boot_seconds: float = 1.0
    action_seconds: float | None = None

    @property
    def action(self) -> float:
        """Seconds a server action (power, delete) runs."""
        return self.boot_seconds if self.action_seconds is None else self.action_seconds


@dataclass(frozen=True)
class CreatedServer:
    """What `POST /servers` returns besides the server itself."""

    server: Server
    action: Action
    next_actions: list[Action]
    root_password: str | None


class Project:
    """All resources of the one project; not thread-safe (use `State.transaction`)."""

    def __init__(self, stock: Stock, timing: Timing, seed: int = 0) -> None:
        self.stock = stock
        self.timing = timing
        self.now = time.time()
        self._rng = random.Random(seed)  # noqa: S311 - emulated passwords, not secrets
        self._ids = dict(_ID_START)
        self._ip_counter = 0
        self.servers: dict[int, Server] = {}
        self._server_names: dict[str, int] = {}
        self.ssh_keys: dict[int, SSHKey] = {}
        self.firewalls: dict[int, Firewall] = {}
        self.actions: dict[int, Action] = {}
        self.primary_ips: dict[int, PrimaryIP] = {}
        self._pending: list[tuple[float, int]] = []

    # -- time and actions ---------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Finish every action whose time has come, in order, applying its effects."""
        self.now = now
        while self._pending and self._pending[0][0] <= now:
            _, action_id = heapq.heappop(self._pending)
            action = self.actions.get(action_id)
            if action is not None and action.status == "running":
                self._finish(action)

    def _finish(self, action: Action) -> None:
        action.status = "success"
        action.finished = max(action.finishes, action.started)
        callback, action.on_finish = action.on_finish, None
        if callback is not None:
            callback()

    def start_action(
        self,
        command: str,
        resources: list[tuple[int, str]],
        seconds: float,
        on_finish: Callable[[], None] | None = None,
    ) -> Action:
        """Start an action that succeeds after `seconds` (at once when 0)."""
        action = Action(
            self._next("action"),
            command,
            resources,
            self.now,
            self.now + max(0.0, seconds),
            on_finish=on_finish,
        )
        self.actions[action.id] = action
        if seconds <= 0:
            self._finish(action)
        else:
            heapq.heappush(self._pending, (action.finishes, action.id))
        return action

    def action(self, action_id: int) -> Action:
        """An action by id."""
        if action_id not in self.actions:
            raise not_found("action", action_id)
        return self.actions[action_id]

    def actions_of(self, resource_id: int, resource_type: str) -> list[Action]:
        """The actions that concern one resource, oldest first."""
        return [a for a in self.actions.values() if a.touches(resource_id, resource_type)]

    def _running_on(self, resource_id: int, resource_type: str) -> bool:
        return any(
            self.actions[action_id].touches(resource_id, resource_type)
            for _, action_id in self._pending
            if self.actions[action_id].status == "running"
        )

    def _next(self, kind: str) -> int:
        value = self._ids[kind]
        self._ids[kind] = value + 1
        return value

    # -- servers ------------------------------------------------------------------------

    def server(self, server_id: int) -> Server:
        """A server by id."""
        if server_id not in self.servers:
            raise not_found("server", server_id)
        return self.servers[server_id]

    def create_server(self, spec: ServerSpec) -> CreatedServer:
        """Create a server (status `initializing`) and start its create (and start) actions."""
        if spec.name in self._server_names:
            raise uniqueness("name", "server name is already used")
        ssh_key_ids = [self._ssh_key_ref(ref).id for ref in spec.ssh_keys]
        for firewall_id in spec.firewall_ids:
            if firewall_id not in self.firewalls:
                raise invalid_input(f"firewall {firewall_id} not found")
        location = self._place(spec.server_type, spec.location)
        server = self._add_server(
            name=spec.name,
            server_type=spec.server_type,
            location=location,
            image=spec.image,
            labels=spec.labels,
            status="initializing",
            enable_ipv4=spec.enable_ipv4,
            enable_ipv6=spec.enable_ipv6,
        )
        server.ssh_key_ids = ssh_key_ids
        server.user_data = spec.user_data
        for firewall_id in spec.firewall_ids:
            self.firewalls[firewall_id].server_ids.append(server.id)
        ref = [(server.id, "server")]
        boot = self.timing.boot_seconds
        after_create: ServerStatus = "initializing" if spec.start_after_create else "off"
        create = self.start_action(
            "create_server", ref, boot, self._status_setter(server.id, after_create)
        )
        next_actions = []
        if spec.start_after_create:
            next_actions.append(
                self.start_action(
                    "start_server", ref, boot, self._status_setter(server.id, "running")
                )
            )
        next_actions.extend(
            self.start_action("apply_firewall", [(fid, "firewall"), *ref], boot)
            for fid in spec.firewall_ids
        )
        password = None if ssh_key_ids else self._password()
        return CreatedServer(server, create, next_actions, password)

    def add_servers(
        self,
        *,
        count: int,
        name_prefix: str,
        server_type: catalogue.ServerType,
        location: catalogue.Location,
        image: catalogue.Image,
        labels: dict[str, str],
    ) -> list[Server]:
        """Insert `count` running servers at once, without actions (for large benchmarks)."""
        names = [f"{name_prefix}{index}" for index in range(1, count + 1)]
        taken = [name for name in names if name in self._server_names]
        if taken:
            raise uniqueness("name", f"server name {taken[0]} is already used")
        if location.name not in server_type.locations:
            raise invalid_input("unsupported location for server type")
        return [
            self._add_server(
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

    def _add_server(
        self,
        *,
        name: str,
        server_type: catalogue.ServerType,
        location: catalogue.Location,
        image: catalogue.Image,
        labels: dict[str, str],
        status: ServerStatus,
        enable_ipv4: bool,
        enable_ipv6: bool,
    ) -> Server:
        server_id = self._next("server")
        server = Server(
            id=server_id,
            name=name,
            status=status,
            created=self.now,
            server_type=server_type,
            location=location,
            image=image,
            labels=labels,
            ipv4=self._new_ip("ipv4", location, server_id) if enable_ipv4 else None,
            ipv6=self._new_ip("ipv6", location, server_id) if enable_ipv6 else None,
        )
        self.servers[server_id] = server
        self._server_names[name] = server_id
        return server

    def _place(
        self, server_type: catalogue.ServerType, location: catalogue.Location | None
    ) -> catalogue.Location:
        """The location to create in, or the stock error the real API gives."""
        if location is not None:
            if location.name not in server_type.locations:
                raise invalid_input("unsupported location for server type")
            shortage = self.stock.shortage(server_type.name, location.name)
            if shortage is not None:
                raise ApiError(shortage.code, shortage.message)
            return location
        shortages = []
        for name in server_type.locations:
            shortage = self.stock.shortage(server_type.name, name)
            if shortage is None:
                found = catalogue.location(name)
                assert found is not None
                return found
            shortages.append(shortage)
        raise ApiError(shortages[0].code, shortages[0].message)

    def _new_ip(self, kind: str, location: catalogue.Location, server_id: int) -> PrimaryIP:
        self._ip_counter += 1
        n = self._ip_counter
        if kind == "ipv4":
            address = f"{location.ipv4_prefix}.{n // 250 % 256}.{n % 250 + 2}"
            ip = PrimaryIP(self._next("primary_ip"), "ipv4", address, location, self.now, server_id)
        else:
            network = f"{location.ipv6_prefix}:{n:x}::/64"
            ip = PrimaryIP(self._next("primary_ip"), "ipv6", network, location, self.now, server_id)
        self.primary_ips[ip.id] = ip
        return ip

    def _status_setter(self, server_id: int, status: ServerStatus) -> Callable[[], None]:
        """Set a status when an action ends, unless the server is being deleted meanwhile."""

        def apply() -> None:
            server = self.servers.get(server_id)
            if server is not None and server.status != "deleting":
                server.status = status

        return apply

    def _password(self) -> str:
        alphabet = string.ascii_letters + string.digits
        return "".join(self._rng.choice(alphabet) for _ in range(20))

    def update_server(
        self, server_id: int, name: str | None, labels: dict[str, str] | None
    ) -> Server:
        """Rename a server and/or replace its labels."""
        server = self.server(server_id)
        if name is not None and name != server.name:
            if name in self._server_names:
                raise uniqueness("name", "server name is already used")
            del self._server_names[server.name]
            self._server_names[name] = server.id
            server.name = name
        if labels is not None:
            server.labels = labels
        return server

    def delete_server(self, server_id: int) -> Action:
        """Delete a server: it shows `deleting`, keeping its name, until its action finishes.

        As on the real API, a server being deleted is still listed and its name still taken
        for the action's time (`--action-seconds`); a second delete meanwhile succeeds again.
        """
        server = self.server(server_id)
        if server.delete_protected:
            raise ApiError("protected", "server deletion is protected")
        server.status = "deleting"
        return self.start_action(
            "delete_server",
            [(server.id, "server")],
            self.timing.action,
            lambda: self._remove_server(server.id),
        )

    def _remove_server(self, server_id: int) -> None:
        server = self.servers.pop(server_id, None)
        if server is None:
            return
        del self._server_names[server.name]
        for firewall in self.firewalls.values():
            if server.id in firewall.server_ids:
                firewall.server_ids.remove(server.id)
        for ip in (server.ipv4, server.ipv6):
            if ip is not None:
                self.primary_ips.pop(ip.id, None)

    def power(self, server_id: int, name: str) -> Action:
        """Run a power action (poweron, poweroff, shutdown, reboot, reset)."""
        server = self.server(server_id)
        if self._running_on(server.id, "server"):
            raise ApiError("locked", "server is locked: another action is running")
        command, during, after = POWER_ACTIONS[name]
        if during is not None and server.status != after:
            server.status = during
        return self.start_action(
            command,
            [(server.id, "server")],
            self.timing.action,
            self._status_setter(server.id, after),
        )

    def change_protection(
        self, server_id: int, delete: bool | None, rebuild: bool | None
    ) -> Action:
        """Turn delete/rebuild protection on or off."""
        server = self.server(server_id)
        if delete is not None:
            server.delete_protected = delete
        if rebuild is not None:
            server.rebuild_protected = rebuild
        return self.start_action("change_protection", [(server.id, "server")], 0)

    def set_backup(self, server_id: int, *, enabled: bool) -> Action:
        """Enable or disable backups (only the reported backup window changes)."""
        server = self.server(server_id)
        server.backup_window = BACKUP_WINDOW if enabled else None
        command = "enable_backup" if enabled else "disable_backup"
        return self.start_action(command, [(server.id, "server")], 0)

    # -- ssh keys -----------------------------------------------------------------------

    def ssh_key(self, key_id: int) -> SSHKey:
        """An SSH key by id."""
        if key_id not in self.ssh_keys:
            raise not_found("ssh_key", key_id)
        return self.ssh_keys[key_id]

    def _ssh_key_ref(self, ref: int | str) -> SSHKey:
        for key in self.ssh_keys.values():
            if ref in (key.id, key.name):
                return key
        raise invalid_input(f"ssh key {ref} not found")

    def create_ssh_key(self, name: str, public_key: str, labels: dict[str, str]) -> SSHKey:
        """Store a public key; names and fingerprints are unique."""
        fingerprint = ssh_fingerprint(public_key)
        if any(key.name == name for key in self.ssh_keys.values()):
            raise uniqueness("name", "SSH key with the same name already exists")
        if any(key.fingerprint == fingerprint for key in self.ssh_keys.values()):
            raise uniqueness("public_key", "SSH key with the same fingerprint already exists")
        key = SSHKey(self._next("ssh_key"), name, fingerprint, public_key.strip(), labels, self.now)
        self.ssh_keys[key.id] = key
        return key

    def update_ssh_key(
        self, key_id: int, name: str | None, labels: dict[str, str] | None
    ) -> SSHKey:
        """Rename an SSH key and/or replace its labels."""
        key = self.ssh_key(key_id)
        if name is not None and name != key.name:
            if any(other.name == name for other in self.ssh_keys.values()):
                raise uniqueness("name", "SSH key with the same name already exists")
            key.name = name
        if labels is not None:
            key.labels = labels
        return key

    def delete_ssh_key(self, key_id: int) -> None:
        """Delete an SSH key (servers keep running)."""
        del self.ssh_keys[self.ssh_key(key_id).id]

    # -- firewalls ----------------------------------------------------------------------

    def firewall(self, firewall_id: int) -> Firewall:
        """A firewall by id."""
        if firewall_id not in self.firewalls:
            raise not_found("firewall", firewall_id)
        return self.firewalls[firewall_id]

    def create_firewall(
        self,
        name: str,
        labels: dict[str, str],
        rules: list[FirewallRule],
        apply_to: list[dict[str, Any]],
    ) -> tuple[Firewall, list[Action]]:
        """Create a firewall, optionally applied to servers or label selectors at once."""
        if any(fw.name == name for fw in self.firewalls.values()):
            raise uniqueness("name", "firewall name is already used")
        targets = [self._firewall_target(raw, "apply_to") for raw in apply_to]
        firewall = Firewall(self._next("firewall"), name, labels, self.now, list(rules))
        self.firewalls[firewall.id] = firewall
        actions = [self.start_action("set_firewall_rules", [(firewall.id, "firewall")], 0)]
        actions.extend(self._apply(firewall, target) for target in targets)
        return firewall, actions

    def update_firewall(
        self, firewall_id: int, name: str | None, labels: dict[str, str] | None
    ) -> Firewall:
        """Rename a firewall and/or replace its labels."""
        firewall = self.firewall(firewall_id)
        if name is not None and name != firewall.name:
            if any(fw.name == name for fw in self.firewalls.values()):
                raise uniqueness("name", "firewall name is already used")
            firewall.name = name
        if labels is not None:
            firewall.labels = labels
        return firewall

    def delete_firewall(self, firewall_id: int) -> None:
        """Delete a firewall that is no longer applied to anything."""
        firewall = self.firewall(firewall_id)
        if firewall.server_ids or firewall.selectors:
            raise ApiError("resource_in_use", "firewall is still applied to resources")
        del self.firewalls[firewall.id]

    def set_firewall_rules(self, firewall_id: int, rules: list[FirewallRule]) -> list[Action]:
        """Replace a firewall's rules."""
        firewall = self.firewall(firewall_id)
        firewall.rules = list(rules)
        return [self.start_action("set_firewall_rules", [(firewall.id, "firewall")], 0)]

    def apply_firewall(self, firewall_id: int, resources: list[dict[str, Any]]) -> list[Action]:
        """Apply a firewall to servers and/or label selectors."""
        firewall = self.firewall(firewall_id)
        targets = [self._firewall_target(raw, "apply_to") for raw in resources]
        return [self._apply(firewall, target) for target in targets]

    def remove_firewall(self, firewall_id: int, resources: list[dict[str, Any]]) -> list[Action]:
        """Remove a firewall from servers and/or label selectors."""
        firewall = self.firewall(firewall_id)
        actions = []
        for raw in resources:
            target = self._firewall_target(raw, "remove_from")
            ref = [(firewall.id, "firewall")]
            if isinstance(target, int):
                if target not in firewall.server_ids:
                    raise ApiError("firewall_already_removed", "firewall already removed")
                firewall.server_ids.remove(target)
                ref.append((target, "server"))
            else:
                texts = [applied.text for applied in firewall.selectors]
                if target.text not in texts:
                    raise ApiError("firewall_already_removed", "firewall already removed")
                del firewall.selectors[texts.index(target.text)]
            actions.append(self.start_action("remove_firewall", ref, 0))
        return actions

    def _apply(self, firewall: Firewall, target: int | AppliedSelector) -> Action:
        ref = [(firewall.id, "firewall")]
        if isinstance(target, int):
            if target in firewall.server_ids:
                raise ApiError("firewall_already_applied", "firewall already applied")
            firewall.server_ids.append(target)
            ref.append((target, "server"))
        else:
            if any(applied.text == target.text for applied in firewall.selectors):
                raise ApiError("firewall_already_applied", "firewall already applied")
            firewall.selectors.append(target)
        return self.start_action("apply_firewall", ref, 0)

    def _firewall_target(self, raw: dict[str, Any], field: str) -> int | AppliedSelector:
        """A server id or a label selector from an `apply_to`/`remove_from` entry."""
        kind = raw.get("type")
        if kind == "server":
            server_id = (raw.get("server") or {}).get("id")
            if not isinstance(server_id, int) or server_id not in self.servers:
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

    def firewalls_of(self, server: Server) -> list[Firewall]:
        """The firewalls applied to a server, directly or through a label selector."""
        return [
            fw
            for fw in self.firewalls.values()
            if server.id in fw.server_ids
            or any(applied.selector.matches(server.labels) for applied in fw.selectors)
        ]

    def selected_servers(self, applied: AppliedSelector) -> list[Server]:
        """The servers a label selector currently selects."""
        return [s for s in self.servers.values() if applied.selector.matches(s.labels)]

    def reset(self) -> None:
        """Drop every resource and action (ids keep counting up)."""
        self.servers.clear()
        self._server_names.clear()
        self.ssh_keys.clear()
        self.firewalls.clear()
        self.actions.clear()
        self.primary_ips.clear()
        self._pending.clear()


class State:
    """The one project behind a lock; every request runs inside `transaction()`."""

    def __init__(
        self,
        stock: Stock,
        timing: Timing,
        seed: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._lock = threading.RLock()
        self._clock = clock
        self.project = Project(stock, timing, seed)

    @contextmanager
    def transaction(self) -> Iterator[Project]:
        """Hold the lock, bring time up to now, and hand out the project."""
        with self._lock:
            self.project.advance(self._clock())
            yield self.project
