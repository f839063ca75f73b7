"""Both providers against a hostile endpoint: no answer that is not the API's is believed.

The endpoint (``hostile_server``) answers every request with a web page, an empty body, JSON
or XML of the wrong shape, a body that trickles in, or a reset half way through the body.
Whatever it does, ``machines`` and ``delete`` raise ``CloudError`` and ``create`` fails: an
autoscaler is never told a machine is gone, or that a pool is empty, when nobody said so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from machines import CloudError, MachineSpec, Provider
from machines.runtime.errors import CONNECTION, NOT_THE_API, TIMEOUT
from testkit.hetzner import TOKEN
from testkit.hostile_server import (
    EC2_SETTINGS,
    EMPTY,
    HTML,
    Answer,
    HostileServer,
    json_answer,
    xml_answer,
)

QUICK = {"ORCA_REQUEST_TIMEOUT": "1", "ORCA_CALL_TIMEOUT": "2"}

HETZNER_SERVERS = (
    '{"servers": [], "meta": {"pagination": {"page": 1, "per_page": 50, "previous_page": null,'
    ' "next_page": null, "last_page": 1, "total_entries": 0}}}'
)
EC2_NO_INSTANCES = (
    '<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
    "<requestId>r-1</requestId><reservationSet/></DescribeInstancesResponse>"
)


@pytest.fixture(scope="module")
def running_server() -> Iterator[HostileServer]:
    with HostileServer().serving() as server:
        yield server


@pytest.fixture
def hostile(running_server: HostileServer) -> HostileServer:
    running_server.answer_with(Answer())
    return running_server


def hetzner(url: str) -> Provider:
    return Provider.of("hetzner", "prod", {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": url, **QUICK})


def ec2(url: str) -> Provider:
    return Provider.of("ec2", "prod", {**EC2_SETTINGS, "AWS_ENDPOINT_URL": url, **QUICK})


CLOUDS: dict[str, tuple[Callable[[str], Provider], str, str]] = {
    "hetzner": (hetzner, "4711", "cx23"),
    "ec2": (ec2, "i-0123456789abcdef0", "t3.micro"),
}


def spec(machine_type: str, location: str) -> MachineSpec:
    return MachineSpec(name="ci-1", machine_type=machine_type, location=location, pool="ci")


def each_call(cloud: str, url: str) -> dict[str, Callable[[], Any]]:
    make, machine_id, _ = CLOUDS[cloud]
    provider = make(url)
    return {
        "machines": lambda: provider.machines("ci"),
        "delete": lambda: provider.delete(machine_id),
    }


def created(cloud: str, url: str) -> Any:
    make, _, machine_type = CLOUDS[cloud]
    location = "fsn1" if cloud == "hetzner" else "eu-central-1a"
    return make(url).create(spec(machine_type, location))


WRONG = {
    "html": HTML,
    "empty": EMPTY,
    "empty object": json_answer("{}"),
    "wrong json": json_answer('{"server": {"id": "not a number"}, "servers": 7}'),
    "wrong xml": xml_answer("<Response><Nothing/></Response>"),
}


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
@pytest.mark.parametrize("answer", sorted(WRONG))
def test_an_answer_that_is_not_the_apis_is_never_believed(hostile, cloud, answer):
    hostile.answer_with(WRONG[answer])
    for name, call in each_call(cloud, hostile.url).items():
        with pytest.raises(CloudError) as raised:
            call()
        assert raised.value.code == NOT_THE_API, (name, str(raised.value))
        assert hostile.url in str(raised.value), name


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
@pytest.mark.parametrize("answer", sorted(WRONG))
def test_a_create_answered_by_something_else_fails(hostile, cloud, answer):
    hostile.answer_with(WRONG[answer])
    result = created(cloud, hostile.url)
    assert result.failed, result
    assert hostile.url in result.reason


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_a_right_answer_that_trickles_in_is_cut_off_at_the_calls_deadline(hostile, cloud):
    """The body is a valid empty list that would take 40 s to arrive at 0.2 s a byte: only
    a deadline held on the whole body, not on each read, makes this a timeout."""
    body = HETZNER_SERVERS if cloud == "hetzner" else EC2_NO_INSTANCES
    hostile.answer_with(
        Answer(
            kind="trickle",
            body=body.encode(),
            interval=0.2,
            content_type="application/json" if cloud == "hetzner" else "text/xml",
        )
    )
    with pytest.raises(CloudError) as raised:
        each_call(cloud, hostile.url)["machines"]()
    assert raised.value.code == TIMEOUT


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_a_reset_half_way_through_the_body_is_a_lost_connection(hostile, cloud):
    body = HETZNER_SERVERS if cloud == "hetzner" else EC2_NO_INSTANCES
    hostile.answer_with(Answer(kind="reset", body=body.encode()))
    with pytest.raises(CloudError) as raised:
        each_call(cloud, hostile.url)["machines"]()
    assert raised.value.code == CONNECTION
    assert hostile.requests > 1, "a broken answer is worth another try"


PAGE = (
    b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
    b"<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was "
    b"unable to complete your request.</p>\n"
)
"""The page a stand-in without a Price List (moto's server) answers ``GetProducts`` with."""

PATIENT = {"ORCA_REQUEST_TIMEOUT": "5", "ORCA_CALL_TIMEOUT": "20"}
"""Time enough for several tries, were the answer tried again."""

PRICED = {"hetzner": ("cx23", "fsn1"), "ec2": ("t3.micro", "eu-central-1a")}


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
@pytest.mark.parametrize("status", [500, 502, 200])
def test_a_price_list_answered_by_a_web_page_is_one_request_and_one_line(
    hostile, cloud, status, caplog
):
    """The list cannot be read and says why in one line, logged once, the page described
    and never quoted (message, log); an answer that is not the list's is not asked again:
    the same page would come back on every try."""
    hostile.answer_with(Answer(status=status, body=PAGE, content_type="text/html"))
    settings = (
        {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": hostile.url}
        if cloud == "hetzner"
        else {**EC2_SETTINGS, "AWS_ENDPOINT_URL": hostile.url}
    )
    provider = Provider.of(cloud, "prod", {**settings, **PATIENT})
    caplog.set_level("INFO", logger="machines")

    prices = provider.prices()

    assert prices.monthly(*PRICED[cloud]) is None
    assert prices.hourly(*PRICED[cloud]) is None
    assert hostile.requests == 1
    why = prices.unknown
    assert "price list" in why
    assert hostile.url in why
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("machines")]
    assert logged == [why]
    for text in (why, *logged):
        assert "<" not in text
        assert "Internal Server Error</" not in text
        assert "\n" not in text


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_an_error_page_is_described_never_quoted_in_the_error_or_the_log(hostile, cloud, caplog):
    """A proxy's or a stand-in's 5xx page is retried as any 5xx, but neither the call's
    error nor the retries' log lines carry any of it."""
    hostile.answer_with(Answer(status=503, body=PAGE, content_type="text/html"))
    caplog.set_level("INFO", logger="machines")

    with pytest.raises(CloudError) as raised:
        each_call(cloud, hostile.url)["machines"]()

    assert hostile.url in str(raised.value)
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("machines")]
    for text in (str(raised.value), *logged):
        assert "<" not in text
        assert "Internal Server Error</" not in text
