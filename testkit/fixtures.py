"""The tests' fixtures, registered once by ``tests/conftest.py`` (``pytest_plugins``).

Each name says which cloud it serves: ``emulator``, ``hetzner_env``, ``hetzner_provider``,
``hcloud`` and ``emulator_api`` are Hetzner's; ``moto``, ``aws``, ``ec2_world``,
``make_ec2_provider``, ``ec2_provider`` and ``fault_proxy`` are EC2's; ``hetzner_cloud`` and
``ec2_cloud`` are each a ``testkit.clouds.Cloud``, and ``cloud`` is each of them in turn;
``span`` is both at once, with a pool that spans them (``testkit.span``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from hcloud import Client

from emulator.process import Emulator
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.clouds.hetzner.settings import HetznerSettings
from machines.runtime.provider import Provider
from testkit import (
    clouds,
    ec2_events,
    fake_cloud,
    hetzner,
    metrics_endpoint,
    moto_server,
    telemetry,
    timeouts,
)
from testkit import span as spanning
from testkit.clock import ManualClock
from testkit.clouds import Cloud
from testkit.fault_proxy import FaultProxy
from testkit.specs import OWNER
from testkit.telemetry import Recorded

# Hetzner: the emulator


@pytest.fixture(scope="session")
def emulator_process() -> Iterator[Emulator]:
    """The Hetzner emulator, one process for the whole session."""
    with hetzner.running("--seed", "7") as emulator:
        yield emulator


@pytest.fixture
def emulator(emulator_process: Emulator) -> Emulator:
    """The Hetzner emulator, emptied of servers, keys, firewalls, faults and counts."""
    emulator_process.control.reset()
    return emulator_process


@pytest.fixture
def hetzner_env(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process's environment pointing at the emulator, and only at it."""
    values = hetzner.environment(emulator)
    for name in hetzner.HETZNER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def hetzner_provider(hetzner_env: dict[str, str]) -> HetznerProvider:
    """The Hetzner provider of owner ``prod``, at the emulator."""
    made = Provider.of("hetzner", owner=OWNER)
    assert isinstance(made, HetznerProvider)
    return made


@pytest.fixture
def hcloud(emulator: Emulator) -> Client:
    """The official client, straight at the emulator: how tests look behind the provider."""
    return hetzner.client(emulator)


@pytest.fixture
def emulator_api(emulator: Emulator) -> hetzner.RawApi:
    """Plain HTTP access to the emulator's API with the valid token."""
    return hetzner.RawApi(emulator.url)


# EC2: moto's server and the fault proxy


@pytest.fixture(scope="session")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[moto_server.MotoServer]:
    """moto's server, one process for the whole session (``ec2_world`` empties it)."""
    with moto_server.running(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture
def aws(moto: moto_server.MotoServer) -> Any:
    """An EC2 client of moto that is not the provider's, past any proxy: to set up and look."""
    return moto_server.client(moto.url)


@pytest.fixture
def ec2_world(moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch) -> moto_server.World:
    """A fresh account with a network, and this process's environment pointing at it."""
    return moto_server.export_world(moto.new_world(), monkeypatch)


@pytest.fixture
def make_ec2_provider(ec2_world: moto_server.World) -> Callable[[str], Ec2Provider]:
    """Build an EC2 provider for an owner the way the autoscaler does, ``Provider.of``."""
    return moto_server.ec2_provider


@pytest.fixture
def ec2_provider(make_ec2_provider: Callable[[str], Ec2Provider]) -> Ec2Provider:
    """The EC2 provider of owner ``prod``, at moto."""
    return make_ec2_provider(OWNER)


@pytest.fixture(scope="session")
def fault_proxy_process(moto: moto_server.MotoServer) -> Iterator[FaultProxy]:
    with FaultProxy(moto.url).serving() as proxy:
        yield proxy


@pytest.fixture
def fault_proxy(fault_proxy_process: FaultProxy) -> FaultProxy:
    """The EC2 fault proxy in front of ``moto``, with no rules and no counts."""
    fault_proxy_process.reset()
    return fault_proxy_process


SPOT_MARKETS = "spot=spot,mixed=spot-then-on-demand"
"""``ORCA_POOL_MARKET`` of ``spot_world``: pool ``spot`` buys spot, ``mixed`` spot then
on-demand, every other pool (``ci``) on-demand."""


@pytest.fixture
def spot_world(
    moto: moto_server.MotoServer, fault_proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> moto_server.World:
    """A fresh account with pools of every market (``SPOT_MARKETS``); this process's
    environment points at it through the fault proxy, which can refuse spot launches
    (``fault_proxy.no_spot_capacity``) as moto never does."""
    built = moto_server.export_world(moto.new_world(), monkeypatch)
    monkeypatch.setenv("AWS_ENDPOINT_URL", fault_proxy.url)
    monkeypatch.setenv("ORCA_POOL_MARKET", SPOT_MARKETS)
    return built


@pytest.fixture
def spot_events(
    spot_world: moto_server.World, moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch
) -> str:
    """``spot_world`` with the owner's queue of EC2's notices and its rules, as a stack with
    spot pools makes them (``ec2_events.make_queue``), named by ``ORCA_EC2_EVENTS_QUEUE``; the
    queue's URL. Events are put with ``ec2_events.put``: moto emits none itself."""
    queue = ec2_events.make_queue(moto.url, OWNER)
    monkeypatch.setenv("ORCA_EC2_EVENTS_QUEUE", queue)
    return queue


# Both clouds, for the contract tests

CALL_TIMEOUT = str(timeouts.CALL)
"""Seconds a call of a ``Cloud``'s provider may take: long enough that retries on a loaded
machine (a busy answer twice, then backoff) end within it; a test of the call's own deadline
sets a short one itself."""

SECRET_ACCESS_KEY = "orcaS3cr3tAccessKey0000000000000000000000"
"""The AWS secret key of an ``ec2_cloud`` (moto takes any): nothing may show it."""


@pytest.fixture
def hetzner_cloud(
    hetzner_env: dict[str, str], emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> Cloud:
    """The emulator as a ``Cloud``, emptied, this process's environment pointing at it."""
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", CALL_TIMEOUT)
    return clouds.of_emulator(emulator)


@pytest.fixture
def ec2_cloud(
    ec2_world: moto_server.World,
    moto: moto_server.MotoServer,
    fault_proxy: FaultProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> Cloud:
    """moto behind the fault proxy as a ``Cloud``, emptied, the environment pointing at it."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", fault_proxy.url)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", CALL_TIMEOUT)
    return clouds.of_moto(moto, fault_proxy, SECRET_ACCESS_KEY)


@pytest.fixture(params=["hetzner", "ec2"])
def cloud(request: pytest.FixtureRequest) -> Cloud:
    """Each cloud in turn: ``hetzner_cloud``, then ``ec2_cloud``."""
    made: Cloud = request.getfixturevalue(f"{request.param}_cloud")
    return made


@pytest.fixture
def span(
    hetzner_cloud: Cloud,
    ec2_cloud: Cloud,
    emulator: Emulator,
    moto: moto_server.MotoServer,
    fault_proxy: FaultProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> spanning.Span:
    """Both clouds at once, emptied, the environment pointing at both, and ``ORCA_POOLS``
    with pool ``ci`` of ``testkit.span.PLACES`` (Hetzner's cax11 in fsn1 and nbg1, then
    EC2's t4g.micro) and the one-cloud pool ``lab``: ``Provider.of("hetzner")`` spans."""
    monkeypatch.setenv("ORCA_POOLS", spanning.pools_json())
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    return spanning.Span(hetzner_cloud, ec2_cloud, emulator, fault_proxy, moto.url)


@pytest.fixture
def fake_span(
    hetzner_cloud: Cloud, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> fake_cloud.Store:
    """The emulator and the third cloud (``testkit.fake_cloud``, whose ids are numbers as
    Hetzner's are) at once, and pool ``ci`` of ``testkit.span.FAKE_PLACES``: the fake
    cloud's f1.arm first, then Hetzner's cax11 in fsn1. Its store."""
    store = fake_cloud.register(monkeypatch, tmp_path / "cloud.json")
    monkeypatch.setenv("ORCA_POOLS", spanning.pools_json(*spanning.FAKE_PLACES))
    return store


# Providers on a clock the test moves: the listing's window, the stock memory, the budget


@pytest.fixture
def clock() -> ManualClock:
    """A clock that moves only when the test says ``clock.advance(seconds)``."""
    return ManualClock()


@pytest.fixture
def make_clocked_hetzner(
    hetzner_env: dict[str, str], clock: ManualClock
) -> Callable[..., HetznerProvider]:
    """Build a Hetzner provider at the emulator on ``clock``: ``(owner, **variables)``."""

    def build(owner: str = OWNER, **variables: str) -> HetznerProvider:
        settings = HetznerSettings.from_env({**hetzner_env, **variables})
        return HetznerProvider(settings, owner, clock=clock)

    return build


@pytest.fixture
def clocked_hetzner(
    make_clocked_hetzner: Callable[..., HetznerProvider], emulator: Emulator
) -> HetznerProvider:
    """The Hetzner provider of owner ``prod`` on ``clock``; instant boots, counts zeroed."""
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    made = make_clocked_hetzner()
    emulator.control.reset_requests()
    return made


@pytest.fixture
def make_clocked_ec2(
    ec2_world: moto_server.World, clock: ManualClock
) -> Callable[..., Ec2Provider]:
    """Build an EC2 provider at moto on ``clock``: ``(owner, **variables)``."""

    def build(owner: str = OWNER, **variables: str) -> Ec2Provider:
        environ = {**ec2_world.env, **variables}
        settings = Ec2Settings.from_env(environ)
        return Ec2Provider(settings, owner, credentials=environ, clock=clock)

    return build


@pytest.fixture
def clocked_ec2(make_clocked_ec2: Callable[..., Ec2Provider]) -> Ec2Provider:
    """The EC2 provider of owner ``prod`` on ``clock``."""
    return make_clocked_ec2()


# What the runtime reports


@pytest.fixture
def make_clocked(cloud: Cloud, clock: ManualClock) -> Callable[..., Provider]:
    """Build ``cloud``'s provider on ``clock``, the environment's settings (``cloud``'s: on
    EC2, the fault proxy) with ``variables`` over them: ``(owner, **variables)``."""

    def build(owner: str = OWNER, **variables: str) -> Provider:
        environ = {**os.environ, **variables}
        if cloud.kind == "hetzner":
            return HetznerProvider(HetznerSettings.from_env(environ), owner, clock=clock)
        return Ec2Provider(Ec2Settings.from_env(environ), owner, credentials=environ, clock=clock)

    return build


FENCE_BUCKET = "orca-fence"
"""The bucket of moto's server an ``s3://`` fence lives in (``fence_url``)."""


@pytest.fixture(params=["file", "s3"])
def fence_url(
    request: pytest.FixtureRequest,
    moto: moto_server.MotoServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Each store a fence lives in, in turn, set as ``ORCA_FENCE_URL`` in this process's
    environment (so providers and their child processes share it): a folder of this test's
    (``file://``), then a bucket of moto's server (``s3://``, path-style, with moto's
    credentials where the environment has none)."""
    if "ec2_world" in request.fixturenames:
        request.getfixturevalue("ec2_world")  # it empties moto's server: the bucket comes after
    if request.param == "file":
        url = (tmp_path / "fence").as_uri()
    else:
        s3 = moto_server.client(moto.url, "s3")
        with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou):
            s3.create_bucket(
                Bucket=FENCE_BUCKET,
                CreateBucketConfiguration={"LocationConstraint": moto_server.REGION},
            )
        url = fence_s3_url(moto.url, f"{FENCE_BUCKET}/{tmp_path.name}")
        for name, value in moto_server.CREDENTIALS.items():
            if not os.environ.get(name):
                monkeypatch.setenv(name, value)
    monkeypatch.setenv("ORCA_FENCE_URL", url)
    return url


def fence_s3_url(endpoint: str, where: str) -> str:
    """An ``s3://`` fence URL at ``where`` (``bucket/prefix``) on an S3-compatible server,
    as a Pulumi S3 backend URL is written (path-style, its region)."""
    query = urlencode(
        {"region": moto_server.REGION, "endpoint": endpoint, "s3ForcePathStyle": "true"}
    )
    return f"s3://{where}?{query}"


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    """The runtime's metrics and spans of this test, read with the SDK's in-memory reader."""
    with telemetry.recording() as found:
        yield found


@pytest.fixture
def workload_scrape(
    emulator: Emulator,
    hetzner_env: dict[str, str],
    spot_events: str,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """What Prometheus scrapes of ``testkit.workload`` once it is done: the emulator states a
    budget of 3,600 an hour, fails the first create with a 503 and has no cx23 in nbg1; EC2
    is moto's ``spot_events`` world, whose notices the workload reads (the pools' markets
    are the workload's to give its EC2 provider: Hetzner sells no spot)."""
    monkeypatch.delenv("ORCA_POOL_MARKET")
    emulator.control.set_rate_limit(limit=3600)
    server_error = {"kind": "error", "method": "POST", "path": "/v1/servers", "status": 503}
    emulator.control.set_faults([{**server_error, "code": "service_error", "times": 1}])
    emulator.control.set_stock(
        [{"server_type": "cx23", "location": "nbg1", "code": "resource_unavailable"}]
    )
    with metrics_endpoint.serving(["-m", "testkit.workload"]) as endpoint:
        assert endpoint.line() == "done"
        return endpoint.scrape()
