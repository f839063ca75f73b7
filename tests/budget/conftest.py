"""Fixtures of the budget tests: providers of both clouds on a clock the test moves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from emulator.process import Emulator
from machines.clouds.ec2.provider import Ec2Provider
from machines.clouds.ec2.settings import Ec2Settings
from machines.clouds.hetzner.provider import HetznerProvider
from machines.clouds.hetzner.settings import HetznerSettings
from tests.budget.clock import ManualClock
from tests.conftest import OWNER
from tests.ec2 import moto_server
from tests.reliability.ec2_fault_proxy import FaultProxy


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def hetzner_on(env: dict[str, str], clock: ManualClock) -> Callable[..., HetznerProvider]:
    """Build a Hetzner provider at the emulator on ``clock``, with extra settings."""

    def build(owner: str = OWNER, **settings: str) -> HetznerProvider:
        return HetznerProvider(HetznerSettings.from_env({**env, **settings}), owner, clock=clock)

    return build


@pytest.fixture
def hetzner(hetzner_on: Callable[..., HetznerProvider], emulator: Emulator) -> HetznerProvider:
    """The Hetzner provider of owner ``prod`` on ``clock``, the request counts zeroed."""
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    made = hetzner_on()
    emulator.control.reset_requests()
    return made


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture
def aws(moto: moto_server.MotoServer) -> Any:
    """moto's EC2 client, not the provider's: to set up and look."""
    return moto_server.client(moto.url)


@pytest.fixture
def world(moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch) -> moto_server.World:
    return moto_server.export_world(moto.new_world(), monkeypatch)


@pytest.fixture
def ec2_on(world: moto_server.World, clock: ManualClock) -> Callable[..., Ec2Provider]:
    """Build an EC2 provider at moto on ``clock``, with extra settings."""

    def build(owner: str = OWNER, **settings: str) -> Ec2Provider:
        environ = {**world.env, **settings}
        return Ec2Provider(Ec2Settings.from_env(environ), owner, credentials=environ, clock=clock)

    return build


@pytest.fixture
def ec2(ec2_on: Callable[..., Ec2Provider]) -> Ec2Provider:
    """The EC2 provider of owner ``prod`` on ``clock``."""
    return ec2_on()


@pytest.fixture(scope="module")
def running_proxy(moto: moto_server.MotoServer) -> Iterator[FaultProxy]:
    with FaultProxy(moto.url).serving() as proxy:
        yield proxy


@pytest.fixture
def proxy(running_proxy: FaultProxy) -> FaultProxy:
    """The fault proxy in front of ``moto``, with no rules and no counts."""
    running_proxy.reset()
    return running_proxy
