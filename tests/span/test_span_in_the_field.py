"""A pool across clouds the way it fails in the field: a lost answer then a retry, an id a
second provider answers, an account at its limit, a cloud out of reach, a place the
settings cannot use. The autoscaler's code is docs/runtime.md's: no try around ``create``,
``delete`` of the id it was given."""

from __future__ import annotations

import json

import pytest

from machines import MachineSpec, Provider, SettingsError
from machines.runtime.clouds import cloud as facts_of
from machines.runtime.pool import Place
from machines.runtime.span import SpanningProvider
from testkit.fault_proxy import Fault
from testkit.span import PLACES, POOL, Span, pools_json
from testkit.specs import OWNER

FSN1, NBG1, EC2 = PLACES

LOST_ANSWER_CALL = "5"
"""``ORCA_CALL_TIMEOUT`` of the tests whose create loses its answer and then meets 503s
until the call gives up: how long that create takes, whatever the machine's load."""


def spec(name: str, place: Place = FSN1) -> MachineSpec:
    return MachineSpec(name, place.machine_type, place.location, "", POOL)


def lose_server_creates(span: Span) -> None:
    """From now on the emulator makes the next server, loses its answer, and answers every
    create after it 503 (the call gives up): Hetzner's side of a lost answer."""
    span.emulator.control.set_faults(
        [
            {"kind": "drop_after", "method": "POST", "path_regex": "/v1/servers", "times": 1},
            {"kind": "error", "method": "POST", "path_regex": "/v1/servers", "status": 503},
        ]
    )


@pytest.mark.parametrize("most", [None, 5], ids=["no max", "max"])
def test_a_retry_after_a_lost_answer_returns_that_server_not_a_second_machine_on_ec2(
    span: Span, monkeypatch: pytest.MonkeyPatch, most: int | None
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(max=most))
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", LOST_ANSWER_CALL)
    provider = span.provider()
    assert provider.create(spec("ci-0")).ok  # the catalogue, images and listing read
    before = set(span.live()["hetzner"])
    lose_server_creates(span)
    lost = provider.create(spec("ci-1"))
    assert lost.failed
    assert lost.may_exist
    [made] = set(span.live()["hetzner"]) - before
    span.emulator.control.clear_faults()
    span.out_of_stock(FSN1, NBG1)  # by the retry, Hetzner has no more stock

    retried = provider.create(spec("ci-1"))

    assert retried.ok, retried.reason
    assert retried.machine is not None
    assert (retried.machine.cloud, retried.machine.id) == ("hetzner", made)
    assert span.live()["ec2"] == []
    assert span.run_instances() == 0


def test_a_retry_after_a_lost_launch_on_ec2_makes_no_server_on_hetzner(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", LOST_ANSWER_CALL)
    monkeypatch.setenv("ORCA_OFFERS_TTL", "0")  # Hetzner's stock, read at every create
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1)
    assert provider.create(spec("ci-0")).ok  # on EC2: its catalogue and image read
    span.proxy.set_faults(  # the launch made, its answer lost, and EC2 unreadable after it
        Fault("drop_after", "RunInstances", times=1),
        Fault("error", "DescribeInstances", status=503, code="Unavailable", skip=1),
    )
    lost = provider.create(spec("ci-1"))
    assert lost.failed
    assert lost.may_exist
    span.out_of_stock()  # Hetzner has stock again; EC2 cannot be read for a while
    span.proxy.set_faults(Fault("error", "DescribeInstances", status=503, code="Unavailable"))

    while_unread = provider.create(spec("ci-1"))

    assert while_unread.failed
    assert while_unread.may_exist
    assert "cannot be asked for it now" in while_unread.reason
    assert span.live()["hetzner"] == []
    span.proxy.set_faults()

    retried = provider.create(spec("ci-1"))

    assert retried.ok, retried.reason
    assert retried.machine is not None
    assert retried.machine.cloud == "ec2"
    assert len(span.live()["ec2"]) == 2  # ci-0 and ci-1, once
    assert span.live()["hetzner"] == []


@pytest.mark.parametrize("home", ["hetzner", "ec2"])
def test_a_second_provider_answers_a_name_on_another_cloud_with_an_id_delete_takes(
    span: Span, monkeypatch: pytest.MonkeyPatch, home: str
) -> None:
    ordered = (FSN1, EC2) if home == "hetzner" else (EC2, FSN1)
    [spanning, _] = json.loads(pools_json(*ordered, max=5))  # no one-cloud pool of Hetzner's
    monkeypatch.setenv("ORCA_POOLS", json.dumps([spanning]))
    first = Provider.of(home, OWNER)
    span.out_of_stock(ordered[0])
    made = first.create(spec("ci-1", ordered[0]))
    assert made.machine is not None
    other = ordered[1].cloud
    assert made.machine.cloud == other

    second = Provider.of(home, OWNER)  # another process: its own listing
    again = second.create(spec("ci-1", ordered[0]))

    assert again.ok, again.reason
    assert again.machine is not None
    assert again.machine.id == made.machine.id
    assert again.machine.id.count(":") == 1
    assert again.machine.id.startswith(f"{other}:")
    assert [m.id for m in second.machines(POOL)] == [made.machine.id]
    assert second.delete(again.machine.id)
    assert span.live()[other] == []


def test_an_id_naming_the_home_cloud_is_taken_too(span: Span) -> None:
    provider = span.provider()
    made = provider.create(spec("ci-1")).machine
    assert made is not None

    assert provider.delete(f"hetzner:{made.id}")
    assert span.live()["hetzner"] == []


def test_an_id_naming_its_cloud_twice_is_refused_naming_the_form(span: Span) -> None:
    provider = span.provider()

    with pytest.raises(ValueError, match="ec2:ec2:i-0123456789abcdef0"):
        provider.delete("ec2:ec2:i-0123456789abcdef0")


def test_a_hetzner_project_at_its_limit_sends_the_machine_to_ec2_and_is_remembered(
    span: Span,
) -> None:
    provider = span.provider()
    kept = provider.create(spec("ci-0")).machine
    assert kept is not None
    span.emulator.control.set_limits(servers=1)
    posts = span.server_posts()

    overflow = provider.create(spec("ci-1"))

    assert overflow.ok, overflow.reason
    assert overflow.machine is not None
    assert overflow.machine.cloud == "ec2"
    assert span.server_posts() == posts + 1  # one refused create for the whole project
    hetzner = facts_of("hetzner")
    assert overflow.passed_over[0].startswith(f"{FSN1}: ")
    assert "resource_limit_exceeded" in overflow.passed_over[0]
    assert hetzner.account_limit_help in overflow.passed_over[0]
    assert "at its limit" in overflow.passed_over[1]  # nbg1, without a request
    assert "without a request" in overflow.passed_over[1]

    next_one = provider.create(spec("ci-2"))

    assert next_one.machine is not None
    assert next_one.machine.cloud == "ec2"
    assert span.server_posts() == posts + 1
    assert all("without a request" in why for why in next_one.passed_over)

    assert provider.delete(kept.id)  # room again on Hetzner (once the server is gone)
    span.emulator.control.set_limits(servers=None)
    back = provider.create(spec("ci-3"))
    assert back.machine is not None
    assert back.machine.cloud == "hetzner"


def test_an_ec2_account_at_its_quota_is_passed_over_as_no_stock_is(span: Span) -> None:
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1)
    span.proxy.set_faults(Fault("error", "RunInstances", status=400, code="VcpuLimitExceeded"))

    created = provider.create(spec("ci-1"))
    again = provider.create(spec("ci-2"))

    assert created.no_stock
    assert "VcpuLimitExceeded" in created.reason
    assert facts_of("ec2").account_limit_help in created.reason
    assert again.no_stock
    assert span.run_instances() == 1
    assert "without a request" in again.passed_over[-1]


def test_a_max_that_cannot_be_counted_makes_nothing_and_names_the_cloud(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(max=5))
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", LOST_ANSWER_CALL)
    provider = span.provider()
    span.proxy.set_faults(Fault("error", "DescribeInstances", status=503, code="Unavailable"))

    created = provider.create(spec("ci-1"))

    assert created.failed
    assert "could not be counted against its max (5)" in created.reason
    assert "EC2" in created.reason
    assert span.live() == {"hetzner": [], "ec2": []}


def test_without_a_max_an_unreachable_cloud_is_passed_over_for_a_reachable_place(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(EC2, FSN1))
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", LOST_ANSWER_CALL)
    provider = Provider.of("hetzner", OWNER)
    assert isinstance(provider, SpanningProvider)
    span.proxy.set_faults(Fault("error", None, status=503, code="Unavailable"))

    created = provider.create(spec("ci-1", EC2))

    assert created.ok, created.reason
    assert created.machine is not None
    assert created.machine.cloud == "hetzner"
    assert created.passed_over[0].startswith(f"{EC2}: ")


def test_a_place_in_a_zone_without_a_subnet_is_refused_by_provider_of(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = EC2.model_copy(update={"location": "eu-central-1c"})
    monkeypatch.setenv("ORCA_POOLS", pools_json(FSN1, elsewhere))

    with pytest.raises(SettingsError) as raised:
        Provider.of("hetzner", OWNER)

    message = str(raised.value)
    assert "\n" not in message
    assert str(elsewhere) in message
    assert "ORCA_EC2_SUBNETS" in message


def test_a_one_cloud_pool_in_a_zone_without_a_subnet_is_refused_by_provider_of(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = {"name": "lab", "machineType": "t3.micro", "location": "eu-central-1c"}
    monkeypatch.setenv("ORCA_POOLS", json.dumps([pool]))

    with pytest.raises(SettingsError) as raised:
        Provider.of("ec2", OWNER)

    message = str(raised.value)
    assert "pool lab" in message
    assert "eu-central-1c" in message
    assert "ORCA_EC2_SUBNETS" in message


def test_a_place_whose_type_its_cloud_does_not_sell_there_is_refused_at_the_first_create(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    unsold = Place(cloud="hetzner", machine_type="cax11", location="ash")
    monkeypatch.setenv("ORCA_POOLS", pools_json(FSN1, unsold, EC2))
    provider = span.provider()

    created = provider.create(spec("ci-1"))

    assert created.failed
    assert str(unsold) in created.reason
    assert span.server_posts() == 0
    assert ("places", created.reason.removeprefix("ORCA_POOLS ")) in provider.check_options(
        provider.pool(POOL)
    )
