"""Fixtures: one emulator subprocess per session, reset before each test, and clients for it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hcloud import Client

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the project is not installed; tests import it from the tree
    sys.path.insert(0, str(ROOT))

from emulator_helpers import BOOT_SECONDS, TOKEN, RawApi  # noqa: E402

from emulator import Emulator, running_emulator  # noqa: E402


@pytest.fixture(scope="session")
def emulator_session() -> Iterator[Emulator]:
    """The emulator subprocess shared by the whole session (boots take BOOT_SECONDS)."""
    with running_emulator(TOKEN, "--boot-seconds", str(BOOT_SECONDS), "--seed", "7") as emu:
        yield emu


@pytest.fixture
def emu(emulator_session: Emulator) -> Emulator:
    """The shared emulator, emptied and back to its start-up settings."""
    emulator_session.control.reset()
    return emulator_session


@pytest.fixture
def client(emu: Emulator) -> Client:
    """The official hcloud client pointed at the emulator, polling actions quickly."""
    return Client(token=TOKEN, api_endpoint=emu.url, poll_interval=0.05)


@pytest.fixture
def api(emu: Emulator) -> RawApi:
    """Plain HTTP access to the emulator's API with the valid token."""
    return RawApi(emu.url)
