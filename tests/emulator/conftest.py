"""Fixtures: the session's emulator (tests/conftest.py), reset before each test, and clients."""

from __future__ import annotations

import pytest
from hcloud import Client

from emulator import Emulator
from tests.conftest import TOKEN
from tests.emulator.emulator_helpers import RawApi


@pytest.fixture
def emu(emulator: Emulator) -> Emulator:
    """The shared emulator, emptied and back to its start-up settings."""
    return emulator


@pytest.fixture
def client(emu: Emulator) -> Client:
    """The official hcloud client pointed at the emulator, polling actions quickly."""
    return Client(token=TOKEN, api_endpoint=emu.url, poll_interval=0.05)


@pytest.fixture
def api(emu: Emulator) -> RawApi:
    """Plain HTTP access to the emulator's API with the valid token."""
    return RawApi(emu.url)
