"""Fixtures of the EC2 provider's tests: moto's server in its own process, reset per test."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from machines.ec2 import Ec2Provider
from machines.provider import Provider
from tests.ec2 import moto_server

ISOLATED = (
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL_EC2",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "ORCA_EC2_IMAGE",
    "ORCA_REQUEST_TIMEOUT",
    "ORCA_CALL_TIMEOUT",
)
"""Variables of the developer's shell that would change what a test sees."""


@pytest.fixture(scope="session")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture
def world(moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch) -> moto_server.World:
    """A fresh account with a network, and this process's environment pointing at it."""
    moto.reset()
    built = moto_server.build_world(moto.url)
    for name in ISOLATED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    for name, value in built.env.items():
        monkeypatch.setenv(name, value)
    return built


@pytest.fixture
def aws(moto: moto_server.MotoServer) -> Any:
    """An EC2 client of the emulator that is not the provider's: to set up and inspect."""
    return moto_server.client(moto.url)


@pytest.fixture
def make_provider(world: moto_server.World) -> Callable[[str], Ec2Provider]:
    """Build a provider for an owner the way the autoscaler does, ``Provider.of("ec2")``."""

    def make(owner: str) -> Ec2Provider:
        made = Provider.of("ec2", owner)
        assert isinstance(made, Ec2Provider)
        return made

    return make


@pytest.fixture
def provider(make_provider: Callable[[str], Ec2Provider]) -> Ec2Provider:
    """The provider of owner ``prod``."""
    return make_provider("prod")
