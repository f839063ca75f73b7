"""Fixtures of the EC2 provider's tests: moto's server in its own process, reset per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from machines.clouds.ec2.provider import Ec2Provider
from tests.ec2 import moto_server


@pytest.fixture(scope="session")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture
def world(moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch) -> moto_server.World:
    """A fresh account with a network, and this process's environment pointing at it."""
    return moto_server.export_world(moto.new_world(), monkeypatch)


@pytest.fixture
def aws(moto: moto_server.MotoServer) -> Any:
    """An EC2 client of the emulator that is not the provider's: to set up and inspect."""
    return moto_server.client(moto.url)


@pytest.fixture
def make_provider(world: moto_server.World) -> Callable[[str], Ec2Provider]:
    """Build a provider for an owner the way the autoscaler does, ``Provider.of("ec2")``."""
    return moto_server.ec2_provider


@pytest.fixture
def provider(make_provider: Callable[[str], Ec2Provider]) -> Ec2Provider:
    """The provider of owner ``prod``."""
    return make_provider("prod")
