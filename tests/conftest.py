"""Fixtures: the Hetzner emulator as a real process, and providers and clients aimed at it."""

from collections.abc import Iterator

import pytest
from hcloud import Client

from emulator.process import Emulator, running_emulator
from machines import Provider
from machines.clouds.hetzner.provider import HetznerProvider

TOKEN = "orca-test-token-" + "0" * 48
OWNER = "prod"
BOOT_SECONDS = 0.2


@pytest.fixture(scope="session")
def emulator_process() -> Iterator[Emulator]:
    with running_emulator(TOKEN, "--boot-seconds", str(BOOT_SECONDS), "--seed", "7") as emulator:
        yield emulator


@pytest.fixture
def emulator(emulator_process: Emulator) -> Emulator:
    """The emulator, emptied of servers, keys, firewalls, faults and counts."""
    emulator_process.control.reset()
    return emulator_process


@pytest.fixture
def env(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": emulator.url}
    for name in ("ORCA_HCLOUD_IMAGE", "ORCA_HCLOUD_SSH_KEYS", "ORCA_HCLOUD_FIREWALL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def provider(env: dict[str, str]) -> HetznerProvider:
    made = Provider.of("hetzner", owner=OWNER)
    assert isinstance(made, HetznerProvider)
    return made


@pytest.fixture
def hcloud(emulator: Emulator) -> Client:
    """The official client, straight at the emulator: how tests look behind the provider."""
    return Client(token=TOKEN, api_endpoint=emulator.url, poll_interval=0.05)
