"""The fake cloud's API: its servers in one JSON file, locked per request, so that every
process naming the file (the test, a CLI, the engine's plugins) works on one cloud.

Each request is counted as a cloud would bill it. A type and location can be sold out (a
create answers ``NO_STOCK_CODE``), and creates can be held after the server is made, as a
slow cloud holds its answer, so a test can kill an engine run with a create in flight.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TYPES = {"f1.small": "amd64", "f1.arm": "arm64"}
LOCATIONS = ("here", "there")
NO_STOCK_CODE = "sold_out"
"""What the fake cloud answers a create when it has no stock of the type in the location."""


class SoldOut(Exception):
    """The fake cloud has no stock of the type in the location now."""


class NameTaken(Exception):
    """A server of that name exists: the fake cloud's names are unique, as Hetzner's are."""


@dataclass(frozen=True)
class Server:
    id: int
    name: str
    machine_type: str
    location: str
    labels: dict[str, str]
    deleting: bool = False


def _empty() -> dict[str, Any]:
    return {"servers": {}, "next": 1, "requests": {}, "sold_out": [], "held": False}


@dataclass(frozen=True)
class Store:
    """The file ``path`` as the fake cloud's API."""

    path: Path

    @contextmanager
    def _state(self, request: str = "") -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = json.loads(self.path.read_text()) if self.path.exists() else _empty()
                if request:
                    state["requests"][request] = state["requests"].get(request, 0) + 1
                yield state
                self.path.write_text(json.dumps(state))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # What the cloud's API answers.

    def create(self, name: str, machine_type: str, location: str, labels: dict[str, str]) -> int:
        """A new server's id; ``SoldOut`` or ``NameTaken`` when the cloud refuses."""
        with self._state("create") as state:
            if [machine_type, location] in state["sold_out"]:
                raise SoldOut(
                    f"{NO_STOCK_CODE}: the fake cloud has no stock of {machine_type} in "
                    f"{location} now"
                )
            if any(s["name"] == name for s in state["servers"].values()):
                raise NameTaken(f"name_taken: a server named {name} exists")
            server_id = self._add(state, name, machine_type, location, labels)
            held = state["held"]
        while held and self._held():
            time.sleep(0.05)  # a slow cloud's answer: released by the test, or the run killed
        return server_id

    def servers_listed(self) -> list[Server]:
        with self._state("list") as state:
            return [_server(s) for s in state["servers"].values()]

    def get(self, server_id: int) -> Server | None:
        with self._state("get") as state:
            found = state["servers"].get(str(server_id))
            return None if found is None else _server(found)

    def delete(self, server_id: int) -> None:
        with self._state("delete") as state:
            state["servers"].pop(str(server_id), None)

    # What a test does behind the providers' backs.

    def add(self, name: str, machine_type: str, location: str, labels: dict[str, str]) -> int:
        """A server made by someone else (a stack, a person): its id."""
        with self._state() as state:
            return self._add(state, name, machine_type, location, labels)

    def servers(self) -> dict[int, Server]:
        with self._state() as state:
            return {int(i): _server(s) for i, s in state["servers"].items()}

    def live(self) -> list[str]:
        return [str(i) for i, s in self.servers().items() if not s.deleting]

    @property
    def requests(self) -> Counter[str]:
        with self._state() as state:
            return Counter(state["requests"])

    def clear_requests(self) -> None:
        with self._state() as state:
            state["requests"] = {}

    def sell_out(self, machine_type: str, location: str) -> None:
        with self._state() as state:
            state["sold_out"].append([machine_type, location])

    def hold(self, held: bool = True) -> None:
        """Hold every create's answer after its server is made, until ``hold(False)``."""
        with self._state() as state:
            state["held"] = held

    def _held(self) -> bool:
        with self._state() as state:
            return bool(state["held"])

    @staticmethod
    def _add(
        state: dict[str, Any], name: str, machine_type: str, location: str, labels: dict[str, str]
    ) -> int:
        server_id = int(state["next"])
        state["next"] = server_id + 1
        state["servers"][str(server_id)] = {
            "id": server_id,
            "name": name,
            "machine_type": machine_type,
            "location": location,
            "labels": dict(labels),
        }
        return server_id


def _server(raw: dict[str, Any]) -> Server:
    return Server(raw["id"], raw["name"], raw["machine_type"], raw["location"], dict(raw["labels"]))
