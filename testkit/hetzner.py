"""The Hetzner side of the tests: the emulator's token, its raw HTTP API, foreign servers.

The emulator itself is ``emulator.process.running_emulator``; ``running`` starts it with the
token and settings the tests use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests
from hcloud import Client
from hcloud.locations import Location
from hcloud.server_types import ServerType

from emulator.process import Emulator, running_emulator


def token(name: str) -> str:
    """A token of the real API's form (64 letters and digits), its own for each ``name``:
    the one place tests and benchmarks make tokens, since the emulator refuses any other."""
    return hashlib.sha256(f"orca-machines test token {name}".encode()).hexdigest()


TOKEN = token("tests")
"""The API token the tests' emulator accepts."""
BOOT_SECONDS = 0.2
"""How long the tests' emulator takes to boot a server."""


@contextmanager
def running(*args: str, token: str = TOKEN) -> Iterator[Emulator]:
    """The emulator as a process for the block, booting servers in ``BOOT_SECONDS``."""
    with running_emulator(token, "--boot-seconds", str(BOOT_SECONDS), *args) as emulator:
        yield emulator


def environment(emulator: Emulator, token: str = TOKEN) -> dict[str, str]:
    """The variables that point a Hetzner provider at ``emulator``."""
    return {"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emulator.url}


HETZNER_SETTINGS = (
    "ORCA_HCLOUD_IMAGE",
    "ORCA_HCLOUD_SSH_KEYS",
    "ORCA_HCLOUD_FIREWALL",
    "ORCA_LIST_TTL",
    "ORCA_POOLS",
    "ORCA_LIST_SHARE",
    "ORCA_LIST_MAX_AGE",
    "ORCA_BUDGET_RESERVE",
    "ORCA_OFFERS_TTL",
    "ORCA_NO_STOCK_TTL",
)
"""Variables of the developer's shell that would change what a Hetzner provider does."""


def client(emulator: Emulator, token: str = TOKEN) -> Client:
    """The official client, straight at the emulator: how tests look behind the provider."""
    return Client(token=token, api_endpoint=emulator.url, poll_interval=0.05)


def foreign_server(hcloud: Client, name: str, labels: dict[str, str]) -> int:
    """A server made behind the provider's back, as another deployment or a person would."""
    image = hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "x86")
    assert image is not None
    response = hcloud.servers.create(
        name=name,
        server_type=ServerType(name="cx23"),
        image=image,
        location=Location(name="fsn1"),
        labels=labels,
    )
    assert response.server.id is not None
    return response.server.id


class RawApi:
    """The API over plain `requests`, for what the official client hides (status, headers)."""

    def __init__(self, url: str, token: str | None = TOKEN) -> None:
        self.url = url
        self.session = requests.Session()
        if token is not None:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """Send `method` to `url + path` (path starts with /)."""
        return self.session.request(method, self.url + path, timeout=10, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)
