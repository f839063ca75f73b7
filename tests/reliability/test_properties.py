"""Properties over generated input: selectors, names, and how errors and statuses map.

Each property compares the package with an independent judge: the emulator's own
label-selector parser, a host-name rule spelled out here, the statuses hcloud-python and
botocore's EC2 model list, the error codes the clouds document.
"""

from __future__ import annotations

import itertools
import re
import string
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

import boto3
import pytest
from hcloud.servers import Server
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from emulator.label_selector import parse
from machines.runtime import backoff, retry
from machines.runtime.clouds.ec2.answers import NO_STOCK_CODES as EC2_NO_STOCK_CODES
from machines.runtime.clouds.ec2.answers import STATUSES as EC2_STATUSES
from machines.runtime.clouds.ec2.answers import status_of as ec2_status_of
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.clouds.hetzner import answers as hetzner
from machines.runtime.clouds.hetzner.answers import NO_STOCK_CODES, RETRY_CODES
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.errors import InvalidNameError
from machines.runtime.labels import (
    HOST_NAME_RULE,
    ORCA_LABEL,
    ORCA_VALUE,
    OWNER_LABEL,
    POOL_LABEL,
    belongs_to,
    is_host_name,
    machine_host,
    machine_name,
    pool_selector,
)
from machines.runtime.models import Created, Status
from machines.runtime.settings import Freshness, Timeouts
from testkit import timeouts
from testkit.specs import spec

QUICK = settings(max_examples=60, deadline=None)
SERIAL = itertools.count()
"""Numbers for machine names: each example creates a machine of a new name."""

label_values = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,14}[A-Za-z0-9])?", fullmatch=True)
owners = st.one_of(st.just(""), label_values)


# Label selectors


@st.composite
def pool_owner_and_labels(draw: st.DrawFn) -> tuple[str, str, dict[str, str]]:
    """A pool and owner, and labels that are often theirs, nearly theirs or someone else's."""
    pool = draw(label_values)
    owner = draw(owners)
    values = {
        ORCA_LABEL: st.sampled_from([ORCA_VALUE, "pools", "Pool"]) | label_values,
        POOL_LABEL: st.just(pool) | label_values,
        OWNER_LABEL: (st.just(owner) if owner else st.nothing()) | label_values | st.just(""),
        "team": label_values | st.just(""),
    }
    keys = draw(st.sets(st.sampled_from(sorted(values))))
    labels = {key: draw(values[key]) for key in sorted(keys)}
    return pool, owner, labels


@QUICK
@given(pool_owner_and_labels())
@example(("ci", "", {ORCA_LABEL: ORCA_VALUE, POOL_LABEL: "ci"}))
@example(("ci", "prod", {ORCA_LABEL: ORCA_VALUE, POOL_LABEL: "ci", OWNER_LABEL: "prod"}))
@example(("ci", "", {ORCA_LABEL: ORCA_VALUE, POOL_LABEL: "ci", OWNER_LABEL: "prod"}))
def test_the_pool_selector_selects_exactly_what_belongs_to_accepts(
    case: tuple[str, str, dict[str, str]],
) -> None:
    pool, owner, labels = case

    selected = parse(pool_selector(pool, owner)).matches(labels)

    assert selected == belongs_to(labels, owner, pool)


def test_an_empty_owner_label_is_judged_alike_by_selector_and_belongs_to() -> None:
    labels = {ORCA_LABEL: ORCA_VALUE, POOL_LABEL: "ci", OWNER_LABEL: ""}

    assert parse(pool_selector("ci", "")).matches(labels) == belongs_to(labels, "", "ci")


# Names


def host_name_by_the_rule(name: str) -> bool:
    """RFC 1123 labels as the clouds take them, written out without a regular expression."""
    allowed = set(string.ascii_lowercase + string.digits + "-")
    fits = 1 <= len(name) <= 63 and set(name) <= allowed
    return fits and name[0] != "-" and name[-1] != "-"


names = st.text(alphabet=string.ascii_lowercase + string.digits + "-", max_size=70) | st.text(
    alphabet=string.ascii_letters + string.digits + "-_. \nü", max_size=70
)
valid_names = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True)


@QUICK
@given(names | valid_names)
@example("a" * 63)
@example("a" * 64)
@example("ci-1\n")
def test_is_host_name_agrees_with_the_rule(name: str) -> None:
    assert is_host_name(name) == host_name_by_the_rule(name)


@QUICK
@given(valid_names)
def test_every_valid_name_round_trips_through_a_spec(name: str) -> None:
    assert spec(name=name).name == name


@QUICK
@given(names)
def test_every_invalid_name_is_refused_naming_the_field_and_the_rule(name: str) -> None:
    assume(not host_name_by_the_rule(name))

    with pytest.raises(ValidationError) as refused:
        spec(name=name)

    [error] = refused.value.errors()
    assert error["loc"] == ("name",)
    assert HOST_NAME_RULE in error["msg"]


@QUICK
@given(owners, label_values, st.integers(min_value=0, max_value=10**6))
@example("prod", "ci", 1)
@example("", "gpu", 0)
@example("Prod", "ci", 1)
def test_a_stack_machines_host_is_a_host_name_exactly_when_it_passes(
    owner: str, pool: str, index: int
) -> None:
    joined = "-".join([part for part in (owner, pool) if part] + [str(index)])

    if host_name_by_the_rule(joined):
        assert machine_host(owner, pool, index) == joined
        assert machine_name(owner, pool, index) == f"{joined}.stack"
    else:
        with pytest.raises(InvalidNameError, match=f"machine name {re.escape(repr(joined))}"):
            machine_name(owner, pool, index)


host_parts = st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True)


@QUICK
@given(host_parts, host_parts, st.integers(min_value=1, max_value=10**6), valid_names)
@example("orca", "lab", 7, "orca-lab-7")
def test_no_name_the_runtime_takes_is_a_stack_machines_name(
    owner: str, pool: str, index: int, name: str
) -> None:
    assert spec(name=name).name != machine_name(owner, pool, index)
    with pytest.raises(ValidationError):
        spec(name=machine_name(owner, pool, index))


# Statuses


HETZNER_STATUSES = sorted(v for k, v in vars(Server).items() if k.startswith("STATUS_"))
EC2_STATES = sorted(
    boto3.session.Session(region_name="eu-central-1")
    .client("ec2")
    .meta.service_model.shape_for("InstanceStateName")
    .enum
)


@QUICK
@given(st.sampled_from(HETZNER_STATUSES) | st.text(max_size=20))
def test_every_hetzner_status_maps_into_the_shared_vocabulary(status: str) -> None:
    shared = hetzner.status_of(status)

    assert shared in Status
    if status in HETZNER_STATUSES and status != "unknown":
        assert shared != Status.UNKNOWN
    if status not in hetzner.STATUSES:
        assert shared == Status.UNKNOWN


@QUICK
@given(st.sampled_from(EC2_STATES) | st.text(max_size=20))
def test_every_ec2_state_maps_into_the_shared_vocabulary(state: str) -> None:
    shared = ec2_status_of(state)

    assert shared in Status
    if state in EC2_STATES:
        assert shared != Status.UNKNOWN
    if state not in EC2_STATUSES:
        assert shared == Status.UNKNOWN


# Hetzner's error codes


HETZNER_CODES = sorted(
    RETRY_CODES
    | NO_STOCK_CODES
    | {"invalid_input", "forbidden", "not_found", "unauthorized", "resource_limit_exceeded"}
    | {"server_limit_exceeded", "json_error", "protected", "unsupported_error"}
)
"""Codes of docs.hetzner.cloud's error list. uniqueness_error is left out: it makes create
look for the server of that name (tests/hetzner proves it)."""

codes = st.from_regex(r"[a-z]{3,10}(_[a-z]{3,10}){0,2}", fullmatch=True)


@pytest.fixture
def quick_hetzner(hetzner_env: dict[str, str], emulator: Any) -> Iterator[HetznerProvider]:
    """A provider whose retries wait a millisecond, against an emulator whose rate limit
    never asks it to wait."""
    emulator.control.set_rate_limit(limit=100_000, per_second=100_000)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(retry, "backoff", lambda attempt: 0.001)
        patch.setenv("ORCA_NO_STOCK_TTL", "0")  # every example meets the cloud's answer
        provider = HetznerProvider.from_env("prod")
        provider.arch("cx23")
        yield provider


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(code=st.sampled_from(HETZNER_CODES) | codes)
def test_hetzner_codes_are_retried_no_stock_or_final_as_the_constants_say(
    quick_hetzner: HetznerProvider, emulator: Any, code: str
) -> None:
    assume(code != "uniqueness_error")
    emulator.control.set_faults(
        [
            {
                "kind": "error",
                "method": "POST",
                "path": "/v1/servers",
                "status": 422,
                "code": code,
                "times": 1,
            }
        ]
    )

    created = quick_hetzner.create(spec(name=f"ci-{next(SERIAL)}"))

    if code in RETRY_CODES:
        assert created.ok, created.reason
    elif code in NO_STOCK_CODES:
        assert created.no_stock
    else:
        assert created.failed
        assert code in created.reason


# EC2's error codes


EC2_THROTTLING = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "EC2ThrottledException",
}
EC2_TRANSIENT = {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"}
"""botocore's standard retry mode, as boto3's guide to retries lists it."""

EC2_CODES = sorted(
    EC2_THROTTLING
    | EC2_TRANSIENT
    | EC2_NO_STOCK_CODES
    | {"InternalError", "Unavailable", "InvalidParameterValue", "VcpuLimitExceeded"}
    | {"InstanceLimitExceeded", "InvalidAMIID.NotFound", "UnauthorizedOperation"}
)
ec2_codes = st.from_regex(r"[A-Z][a-z]{2,8}([A-Z][a-z]{2,8}){0,2}", fullmatch=True)


LAUNCHED = (
    "<RunInstancesResponse><reservationId>r-0abc</reservationId><instancesSet><item>"
    "<instanceId>i-0123456789abcdef0</instanceId><instanceType>t3.micro</instanceType>"
    "<instanceState><code>0</code><name>pending</name></instanceState>"
    "</item></instancesSet></RunInstancesResponse>"
)


TYPES = (
    "<DescribeInstanceTypesResponse><instanceTypeSet><item><instanceType>t3.micro</instanceType>"
    "<processorInfo><supportedArchitectures><item>x86_64</item></supportedArchitectures>"
    "</processorInfo></item></instanceTypeSet></DescribeInstanceTypesResponse>"
)
IMAGES = (
    "<DescribeImagesResponse><imagesSet><item><imageId>ami-0abc</imageId>"
    "<creationDate>2026-11-01T00:00:00.000Z</creationDate><architecture>x86_64</architecture>"
    "<rootDeviceName>/dev/sda1</rootDeviceName><blockDeviceMapping><item>"
    "<deviceName>/dev/sda1</deviceName><ebs><volumeSize>8</volumeSize></ebs></item>"
    "</blockDeviceMapping></item></imagesSet></DescribeImagesResponse>"
)
"""What a create reads before it launches (the type's architecture, the AMI's root device
and size), answered as EC2 does: the faults below are RunInstances' own."""


class FakeEc2:
    """A loopback server that lists no instances, knows ``t3.micro`` and ``ami-0abc``, and
    answers RunInstances with an error ``errors`` times (None: always), then with a launched
    instance."""

    def __init__(self) -> None:
        self.code = "InternalError"
        self.status = 500
        self.errors: int | None = None
        self.requests: Counter[str] = Counter()
        fake = self

        class Answer(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                action = parse_qs(body).get("Action", [""])[0]
                fake.requests[action] += 1
                if action == "DescribeInstances":
                    self.answer(
                        200,
                        "<DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>",
                    )
                elif action == "DescribeInstanceTypes":
                    self.answer(200, TYPES)
                elif action == "DescribeImages":
                    self.answer(200, IMAGES)
                elif fake.errors == 0:
                    self.answer(200, LAUNCHED)
                else:
                    if fake.errors is not None:
                        fake.errors -= 1
                    self.answer(
                        fake.status,
                        f"<Response><Errors><Error><Code>{escape(fake.code)}"
                        f"</Code><Message>no</Message></Error></Errors></Response>",
                    )

            def answer(self, status: int, xml: str) -> None:
                body = xml.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @contextmanager
    def serving(self) -> Iterator[FakeEc2]:
        thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture(scope="module")
def fake_ec2() -> Iterator[FakeEc2]:
    with FakeEc2().serving() as fake:
        yield fake


@pytest.fixture(scope="module")
def ec2(fake_ec2: FakeEc2) -> Iterator[Ec2Provider]:
    """An EC2 provider of the fake whose backoff starts at a millisecond and doubles, so a
    persistent error spends the one-second call in about ten tries; a try the loaded machine
    answers late still ends in the fake's answer, not in the request's timeout."""
    settings = Ec2Settings(
        region="eu-central-1",
        endpoint_url=fake_ec2.url,
        subnets={"fsn1": "subnet-0abc"},
        security_group="sg-0abc",
        instance_profile="orca-workers",
        image="ami-0abc",
        timeouts=Timeouts(request=timeouts.REQUEST, call=1),
        freshness=Freshness(no_stock_ttl=0),  # every example meets the fake's answer
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backoff, "BASE_DELAY", 0.001)
        yield Ec2Provider(
            settings, "prod", credentials={"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}
        )


ec2_answers = st.tuples(st.sampled_from(EC2_CODES) | ec2_codes, st.sampled_from([400, 500, 503]))


def launch_answered(
    fake: FakeEc2, ec2: Ec2Provider, code: str, status: int, times: int | None
) -> Created:
    """``create`` (of a new name) where RunInstances is answered ``code`` and ``status``
    ``times`` times."""
    fake.code, fake.status, fake.errors = code, status, times
    fake.requests.clear()
    return ec2.create(spec(name=f"ci-{next(SERIAL)}", machine_type="t3.micro"))


@QUICK
@given(ec2_answers)
@example(("RequestLimitExceeded", 503))
@example(("InvalidParameterValue", 400))
@example(("Unavailable", 503))
def test_ec2_codes_are_retried_as_botocores_standard_mode_says_but_no_stock_never(
    fake_ec2: FakeEc2, ec2: Ec2Provider, answer: tuple[str, int]
) -> None:
    code, status = answer

    created = launch_answered(fake_ec2, ec2, code, status, times=1)

    retried = (code in EC2_THROTTLING | EC2_TRANSIENT or status >= 500) and (
        code not in EC2_NO_STOCK_CODES
    )
    assert fake_ec2.requests["RunInstances"] == (2 if retried else 1)
    assert created.ok == retried


@QUICK
@given(ec2_answers)
@example(("InsufficientInstanceCapacity", 500))
@example(("VcpuLimitExceeded", 400))
def test_ec2_codes_are_no_stock_or_failed_as_the_constants_say(
    fake_ec2: FakeEc2, ec2: Ec2Provider, answer: tuple[str, int]
) -> None:
    code, status = answer

    created = launch_answered(fake_ec2, ec2, code, status, times=None)

    assert created.no_stock == (code in EC2_NO_STOCK_CODES)
    assert created.failed == (code not in EC2_NO_STOCK_CODES)
    assert code in created.reason
