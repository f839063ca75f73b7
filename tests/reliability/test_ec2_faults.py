"""The EC2 provider on a bad day: throttling, 5xx, timeouts and lost answers.

Faults come from a real HTTP proxy on loopback in front of moto's server
(``testkit.fault_proxy``): by the rules a test sets, it answers an error
itself, closes the connection before or after moto acted on the request, or holds moto's
answer back. The provider talks to the proxy; the tests look at moto directly.
"""

from __future__ import annotations

import base64
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from machines.runtime.clouds.ec2.client import AWS_LOGGERS
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.errors import CloudError
from machines.runtime.models import Created
from machines.runtime.provider import Provider
from machines.runtime.secrets import RedactSecrets
from testkit import moto_server, timeouts
from testkit.fault_proxy import Fault, FaultProxy, throttled
from testkit.moto_server import World
from testkit.specs import ec2_spec
from testkit.telemetry import Recorded


@pytest.fixture
def proxied_world(
    moto: moto_server.MotoServer, fault_proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> World:
    """A fresh account; this process's environment points at it through the proxy, with
    the fault tests' request and call timeouts (testkit.timeouts)."""
    built = moto_server.export_world(moto.new_world(), monkeypatch)
    monkeypatch.setenv("AWS_ENDPOINT_URL", fault_proxy.url)
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", str(timeouts.REQUEST))
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(timeouts.CALL))
    return built


@pytest.fixture
def proxied_provider(proxied_world: World) -> Ec2Provider:
    return moto_server.ec2_provider("prod")


def instances_named(aws: Any, name: str) -> list[dict[str, Any]]:
    """The instances of that Name that are not terminated."""
    reservations = aws.describe_instances(
        Filters=[
            {"Name": "tag:Name", "Values": [name]},
            {"Name": "instance-state-name", "Values": ["pending", "running"]},
        ]
    )["Reservations"]
    return [i for r in reservations for i in r["Instances"]]


def launched(provider: Ec2Provider, name: str = "ci-1", pool: str = "ci") -> str:
    created = provider.create(ec2_spec(name, pool=pool))
    assert created.machine is not None, created.reason
    return created.machine.id


def test_throttling_is_retried(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, caplog: pytest.LogCaptureFixture
) -> None:
    fault_proxy.set_faults(throttled("DescribeInstances", times=1))

    assert proxied_provider.machines("ci") == []

    assert fault_proxy.requests["DescribeInstances"] == 2
    assert "RequestLimitExceeded" in caplog.text


@pytest.mark.parametrize(
    ("fault", "requests"),
    [
        pytest.param(Fault("error", "RunInstances", status=500, times=2), 3, id="server-errors"),
        pytest.param(Fault("drop_before", "RunInstances", times=1), 2, id="dropped-before-ec2"),
    ],
)
def test_a_launch_ec2_never_acted_on_is_sent_again(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any, fault: Fault, requests: int
) -> None:
    fault_proxy.set_faults(fault)

    assert proxied_provider.create(ec2_spec("ci-1")).ok

    assert fault_proxy.requests["RunInstances"] == requests
    assert len(instances_named(aws, "ci-1")) == 1


def test_a_lost_launch_answer_makes_one_instance(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any
) -> None:
    fault_proxy.set_faults(Fault("drop_after", "RunInstances", times=1))

    created = proxied_provider.create(ec2_spec("ci-1"))

    assert created.ok, created.reason
    [instance] = instances_named(aws, "ci-1")
    assert created.machine is not None
    assert created.machine.id == instance["InstanceId"]
    assert {t["Key"]: t["Value"] for t in instance["Tags"]}["orca-owner"] == "prod"
    assert fault_proxy.requests["RunInstances"] == 1


def test_a_launch_answered_after_its_timeout_makes_one_instance(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any
) -> None:
    fault_proxy.set_faults(Fault("delay", "RunInstances", seconds=timeouts.PAST_REQUEST, times=1))

    assert proxied_provider.create(ec2_spec("ci-1")).ok

    assert len(instances_named(aws, "ci-1")) == 1


def test_a_lost_terminate_answer_is_still_true(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, aws: Any
) -> None:
    instance_id = launched(proxied_provider)
    fault_proxy.set_faults(Fault("drop_after", "TerminateInstances", times=1))

    assert proxied_provider.delete(instance_id) is True

    assert instances_named(aws, "ci-1") == []


def test_a_request_past_its_timeout_is_retried(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy
) -> None:
    launched(proxied_provider)
    fault_proxy.reset()
    fault_proxy.set_faults(
        Fault("delay", "DescribeInstances", seconds=timeouts.PAST_REQUEST, times=1)
    )

    assert [m.name for m in proxied_provider.machines("ci")] == ["ci-1"]

    assert fault_proxy.requests["DescribeInstances"] == 2


CALL = 2
"""Seconds per call in the tests of persistent faults."""
SLACK = timeouts.REQUEST + 1
"""What a call may take past its time: the try under way, and the lookups before a launch."""


def test_persistent_throttling_is_one_clear_error_within_the_call_time(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(CALL))
    quick = Provider.of("ec2", "prod")
    fault_proxy.set_faults(throttled())
    start = time.monotonic()

    with pytest.raises(CloudError, match=r"after \d+ tries\): RequestLimitExceeded") as raised:
        quick.machines("ci")

    assert time.monotonic() - start < CALL + SLACK
    assert raised.value.code == "RequestLimitExceeded"


def test_persistent_server_errors_fail_create_within_the_call_time(
    proxied_provider: Ec2Provider,
    fault_proxy: FaultProxy,
    aws: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(CALL))
    quick = Provider.of("ec2", "prod")
    quick.arch("t3.micro")
    fault_proxy.set_faults(Fault("error", "RunInstances", status=500))
    start = time.monotonic()

    created = quick.create(ec2_spec("ci-1"))

    assert time.monotonic() - start < CALL + SLACK
    assert created.failed
    assert "InternalError" in created.reason
    assert fault_proxy.requests["RunInstances"] > 1
    assert instances_named(aws, "ci-1") == []


def test_launches_that_never_answer_fail_saying_the_instance_may_exist(
    proxied_provider: Ec2Provider, fault_proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", str(CALL))
    quick = Provider.of("ec2", "prod")
    quick.arch("t3.micro")
    fault_proxy.set_faults(Fault("drop_before", "RunInstances"))
    start = time.monotonic()

    created = quick.create(ec2_spec("ci-1"))

    assert time.monotonic() - start < CALL + SLACK
    assert created.failed
    assert "may have launched" in created.reason
    assert "machines('ci') will show it" in created.reason


@pytest.mark.parametrize(
    "late",
    [None, "DescribeInstanceTypes", "DescribeImages"],
    ids=["in-time", "late-types", "late-image"],
)
def test_threads_sharing_a_provider_get_what_sequential_calls_get(
    recorded: Recorded, proxied_provider: Ec2Provider, fault_proxy: FaultProxy, late: str | None
) -> None:
    """The threads share one lookup of the type and of the image. A loaded machine may
    answer it after the request's timeout (``late``): the provider asks again, and it is
    still one lookup, which EC2 counts with its retries."""
    faults = [
        Fault("error", "RunInstances", status=503, code="Unavailable", probability=0.2),
        Fault("drop_after", "RunInstances", probability=0.1),
    ]
    if late is not None:
        faults.insert(0, Fault("delay", late, seconds=timeouts.PAST_REQUEST, times=1))
    fault_proxy.set_faults(*faults)
    pools = [f"p{i}" for i in range(8)]

    def scale(pool: str) -> list[Created]:
        names = [f"{pool}-{n}" for n in range(4)]
        return [proxied_provider.create(ec2_spec(name, pool=pool)) for name in names + names]

    with ThreadPoolExecutor(len(pools)) as threads:
        outcomes = [o for made in threads.map(scale, pools) for o in made]

    assert all(outcome.ok for outcome in outcomes), [o.reason for o in outcomes if not o.ok]
    for pool in pools:
        assert [m.name for m in proxied_provider.machines(pool)] == [
            f"{pool}-{n}" for n in range(4)
        ]
    for lookup in ("DescribeInstanceTypes", "DescribeImages"):
        assert fault_proxy.requests[lookup] == 1 + recorded.retried(lookup), lookup
    if late is not None:
        assert recorded.retried(late) == 1


SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYs3cr3tKEY"
SESSION_TOKEN = "FwoGZXIvYXdzEs3ss10nT0KEN"
USER_DATA = "#cloud-config\nwrite_files: [{path: /etc/token, content: s3cr3t-user-data}]\n"


def test_neither_user_data_nor_credentials_reach_the_logs(
    proxied_world: World,
    fault_proxy: FaultProxy,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    caplog.set_level(logging.DEBUG)
    provider = Provider.of("ec2", "prod")
    fault_proxy.set_faults(Fault("error", "RunInstances", status=500, times=1))

    created = provider.create(ec2_spec("ci-1", user_data=USER_DATA))

    assert created.ok, created.reason
    assert "Making request for OperationModel(name=RunInstances)" in caplog.text
    assert "retry" in caplog.text
    encoded = base64.b64encode(USER_DATA.encode()).decode()
    for secret in ("s3cr3t-user-data", encoded, SECRET_KEY, SESSION_TOKEN):
        assert secret not in caplog.text
        assert secret not in created.model_dump_json()


def test_each_aws_logger_gets_one_redacting_filter_however_many_providers(
    proxied_world: World,
) -> None:
    for _ in range(3):
        Provider.of("ec2", "prod")

    for name in AWS_LOGGERS:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, RedactSecrets) for f in filters) == 1, name
