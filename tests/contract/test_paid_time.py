"""Paid time on both clouds: ``created`` as the cloud says it, ``paid_until`` by the cloud's
own rule, and ``keep_advice`` telling an autoscaler what to keep without knowing the cloud."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from machines.runtime.models import Machine, Status
from machines.runtime.telemetry import POOL, PROVIDER
from testkit.clouds import Cloud
from testkit.telemetry import Recorded

KEEPS_PAID_HOURS = {"hetzner": True, "ec2": False}
"""Whether the cloud bills ahead (Hetzner: the started hour) or only until now (EC2)."""


def made(cloud: Cloud, name: str = "ci-1", pool: str = "ci") -> Machine:
    created = cloud.provider().create(cloud.spec(name, pool=pool))
    assert created.machine is not None, created.reason
    return created.machine


def test_a_machine_says_when_the_cloud_made_it_in_utc(cloud: Cloud) -> None:
    before = datetime.now(UTC) - timedelta(seconds=2)
    machine = made(cloud)
    after = datetime.now(UTC) + timedelta(seconds=2)

    (listed,) = cloud.provider().machines("ci")

    assert listed.created is not None
    assert machine.created == listed.created
    assert machine.paid_until is not None  # create's machine says it too
    assert listed.created.utcoffset() == timedelta(0)
    assert before <= listed.created <= after


@pytest.fixture(params=["UTC", "UTC-3", "Asia/Tokyo", "America/New_York"])
def host_zone(request: pytest.FixtureRequest) -> Iterator[str]:
    """This process in a time zone (``TZ``): a zone named UTC is what the AWS client's own
    parser took the ``Z`` of EC2's times for (the host's zone, ``tzlocal()``), three hours
    off at ``UTC-3``, a zone named UTC three hours east of it."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    try:
        yield request.param
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_created_is_utc_whatever_the_hosts_time_zone(cloud: Cloud, host_zone: str) -> None:
    before = datetime.now(UTC) - timedelta(seconds=2)
    machine = made(cloud)
    after = datetime.now(UTC) + timedelta(seconds=2)

    (listed,) = cloud.provider().machines("ci")

    for created in (machine.created, listed.created):
        assert created is not None
        assert created.utcoffset() == timedelta(0), (host_zone, repr(created))
        assert created.tzname() == "UTC"
        assert "local" not in repr(created.tzinfo), "the host's zone, not UTC"
        assert before <= created <= after, (host_zone, created)
    assert listed.paid_until is not None
    assert listed.paid_until.utcoffset() == timedelta(0)


def test_machines_says_until_when_each_is_paid(cloud: Cloud) -> None:
    made(cloud)
    (listed,) = cloud.provider().machines("ci")
    assert listed.created is not None
    assert listed.paid_until is not None

    if KEEPS_PAID_HOURS[cloud.kind]:
        assert listed.paid_until == listed.created + timedelta(hours=1)
    else:
        assert listed.paid_until >= listed.created + timedelta(seconds=60)
        assert listed.paid_until <= datetime.now(UTC) + timedelta(seconds=60)


def test_keep_advice_keeps_what_is_paid_and_lets_go_what_would_bill(cloud: Cloud) -> None:
    machine = made(cloud)
    provider = cloud.provider()
    (idle,) = provider.machines("ci")
    assert machine.created is not None
    five_minutes_on = machine.created + timedelta(minutes=5)

    (advice,) = provider.keep_advice([idle], five_minutes_on)

    assert advice.machine.id == machine.id
    if KEEPS_PAID_HOURS[cloud.kind]:
        assert advice.paid_until == machine.created + timedelta(hours=1)
        assert advice.keep_for == 55 * 60 - 120
        assert advice.release_at == machine.created + timedelta(minutes=58)
        assert not advice.release
    else:
        assert advice.paid_until == five_minutes_on
        assert advice.keep_for == 0
        assert advice.release
        assert advice.release_at == five_minutes_on
    (late,) = provider.keep_advice([idle], machine.created + timedelta(minutes=59))
    assert late.release
    assert late.keep_for == 0


def test_an_autoscaler_that_looks_every_few_minutes_is_told_to_let_go_at_its_last_look(
    cloud: Cloud,
) -> None:
    """An autoscaler that looks every 5 minutes (more than the 2-minute margin) says so with
    ``tick``: ``release_at`` is the last of its looks before the paid time ends less the
    margin, so it lets go in time; without it the advice is for a look at any moment, and
    such an autoscaler's next look would come after the next hour had started."""
    machine = made(cloud)
    provider = cloud.provider()
    (idle,) = provider.machines("ci")
    assert machine.created is not None
    looks = [machine.created + timedelta(minutes=m) for m in (50, 55)]

    (at_50,) = provider.keep_advice([idle], looks[0], tick=300)
    (at_55,) = provider.keep_advice([idle], looks[1], tick=300)
    (unsaid,) = provider.keep_advice([idle], looks[1])

    if KEEPS_PAID_HOURS[cloud.kind]:
        assert (at_50.keep_for, at_50.release_at, at_50.release) == (300, looks[1], False)
        assert (at_55.keep_for, at_55.release_at, at_55.release) == (0, looks[1], True)
        assert (unsaid.keep_for, unsaid.release) == (180, False)  # its last look: 58 min
    else:
        assert [a.release for a in (at_50, at_55, unsaid)] == [True, True, True]
    assert at_55.paid_until == unsaid.paid_until  # the tick changes when, not until when


def test_the_advice_lets_go_first_what_its_paid_time_ends_first(cloud: Cloud) -> None:
    first, second = made(cloud, "ci-1"), made(cloud, "ci-2")
    provider = cloud.provider()
    listed = provider.machines("ci")
    assert first.created is not None
    assert second.created is not None
    now = max(first.created, second.created) + timedelta(seconds=30)

    advice = provider.keep_advice(reversed(listed), now)

    assert [a.release_at for a in advice] == sorted(a.release_at for a in advice)
    assert {a.machine.id for a in advice} == {first.id, second.id}


def test_machines_being_deleted_get_no_advice_and_delete_stays_immediate(cloud: Cloud) -> None:
    machine = made(cloud)
    provider = cloud.provider()
    (_idle,) = provider.machines("ci")

    assert provider.delete(machine.id) is True

    assert machine.id not in cloud.live()
    (going,) = provider.machines("ci")
    assert going.status == Status.DELETING
    assert provider.keep_advice([going]) == []


def test_a_delete_counts_the_paid_time_it_threw_away(cloud: Cloud, recorded: Recorded) -> None:
    machine = made(cloud)
    provider = cloud.provider()
    started = time.time()

    provider.delete(machine.id)

    ended = time.time()
    thrown = recorded.total("orca.machines.paid.unused", {PROVIDER: cloud.kind, POOL: "ci"})
    assert machine.created is not None
    if KEEPS_PAID_HOURS[cloud.kind]:
        paid_until = (machine.created + timedelta(hours=1)).timestamp()
        # thrown away is the hour's rest at the moment of the delete, somewhere in between
        assert paid_until - ended - 1 <= thrown <= paid_until - started + 1
    else:
        assert 0 <= thrown <= 60


def test_kept_idle_machines_are_reported_by_pool_without_their_ids(
    cloud: Cloud, recorded: Recorded
) -> None:
    machine = made(cloud, "kept-1", pool="kept")
    provider = cloud.provider()
    (idle,) = provider.machines("kept")

    provider.keep_advice([idle])

    kept = [(a, p) for a, p in recorded.points("orca.machines.idle.kept") if a[POOL] == "kept"]
    paid = recorded.values("orca.machines.idle.paid", {PROVIDER: cloud.kind, POOL: "kept"})
    if KEEPS_PAID_HOURS[cloud.kind]:
        assert [(a[PROVIDER], p.value) for a, p in kept] == [(cloud.kind, 1)]
        assert len(paid) == 1
        assert 0 < paid[0] <= 3600 - 120
    else:
        assert kept == []
        assert paid == []
    assert all(machine.id not in str(a) for a, _ in kept)
    provider.delete(machine.id)
    assert recorded.values("orca.machines.idle.kept", {POOL: "kept"}) == []
