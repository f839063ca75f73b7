"""Fixtures of the reliability tests on EC2: moto's server and the fault proxy in front of
it, one of each per module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.ec2 import moto_server
from tests.reliability.ec2_fault_proxy import FaultProxy


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture
def aws(moto: moto_server.MotoServer) -> Any:
    """moto's EC2, not through any proxy: to set up and to look at what really exists."""
    return moto_server.client(moto.url)


@pytest.fixture(scope="module")
def running_proxy(moto: moto_server.MotoServer) -> Iterator[FaultProxy]:
    with FaultProxy(moto.url).serving() as proxy:
        yield proxy


@pytest.fixture
def proxy(running_proxy: FaultProxy) -> FaultProxy:
    """The fault proxy in front of ``moto``, with no rules and no counts."""
    running_proxy.reset()
    return running_proxy
