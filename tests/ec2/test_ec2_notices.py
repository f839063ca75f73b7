"""EC2's notices that a spot machine will go, read by the listing from the owner's queue.

moto delivers ``PutEvents`` to the queue through the rules (``spot_events`` makes them as a
stack with spot pools does) but emits no EC2 event itself: each test puts the events EC2 or
AWS Health would, in their documented shapes (``testkit.ec2_events``). Pools of
``spot_world``: ``spot`` buys spot, ``mixed`` spot then on-demand, ``ci`` on-demand; here
``mixed`` and ``spot`` have a max of 2.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from machines.runtime.clouds.ec2.answers import NOTICE_TAG
from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.fence.fence import fence_from
from machines.runtime.models import Ending, Machine, Market, Status
from machines.runtime.pool import pools_of
from testkit import ec2_events
from testkit.clock import ManualClock
from testkit.moto_server import MotoServer, count_calls, deny, ec2_provider, launch_tagged
from testkit.specs import OWNER, ec2_spec
from testkit.telemetry import Recorded

WINDOW = 5.0
"""The listing's window (``ORCA_LIST_TTL``'s default): a notice shows within it."""


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def make_provider(
    spot_events: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], Ec2Provider]:
    """Providers of ``spot_world``'s pools (``mixed`` and ``spot`` at most 2 machines) on
    ``clock``, each as a process of its own would build it."""
    monkeypatch.setenv("ORCA_POOL_MAX", "mixed=2,spot=2")

    def build() -> Ec2Provider:
        environ = dict(os.environ)
        made = Ec2Provider(Ec2Settings.from_env(environ), OWNER, credentials=environ, clock=clock)
        made.set_pools(pools_of(environ, "ec2").values())
        made.set_fence(fence_from(OWNER, environ, clock=clock))  # as Provider.of sets it
        return made

    return build


@pytest.fixture
def provider(make_provider: Callable[[], Ec2Provider]) -> Ec2Provider:
    return make_provider()


def made(provider: Ec2Provider, name: str, pool: str = "spot") -> Machine:
    created = provider.create(ec2_spec(name, pool=pool))
    assert created.machine is not None, created.reason
    return created.machine


def listed(provider: Ec2Provider, clock: ManualClock, pool: str = "spot") -> dict[str, Machine]:
    """The pool as the listing after this window answers it, by name."""
    clock.advance(WINDOW)
    return {m.name: m for m in provider.machines(pool)}


def test_an_interruption_warning_lists_the_machine_running_and_interrupting_until_its_end(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer, spot_events: str
) -> None:
    machine = made(provider, "spot-1")
    warned = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)
    ec2_events.put(moto.url, ec2_events.interruption_warning(machine.id, at=warned))

    found = listed(provider, clock)["spot-1"]

    assert (found.status, found.ending, found.ends_at) == (
        Status.RUNNING,
        Ending.INTERRUPTING,
        warned + timedelta(minutes=2),
    )
    assert found.under_notice
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)


def test_a_rebalance_recommendation_says_so_without_an_end(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer, spot_events: str
) -> None:
    machine = made(provider, "spot-1")
    ec2_events.put(moto.url, ec2_events.rebalance_recommendation(machine.id))

    found = listed(provider, clock)["spot-1"]

    assert (found.status, found.ending, found.ends_at) == (Status.RUNNING, Ending.REBALANCE, None)
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)


def test_a_scheduled_change_names_its_date(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer, spot_events: str
) -> None:
    machine = made(provider, "ci-1", pool="ci")
    start = datetime(2026, 2, 1, 14, 0, tzinfo=UTC)
    ec2_events.put(moto.url, ec2_events.scheduled_change([machine.id], start))

    found = listed(provider, clock, "ci")["ci-1"]

    assert (found.ending, found.ends_at) == (Ending.SCHEDULED, start)
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)


def test_a_state_change_shows_the_machine_going_before_ec2s_list_does(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer, aws: Any, spot_events: str
) -> None:
    machine = made(provider, "spot-1")
    ec2_events.put(moto.url, ec2_events.interruption_warning(machine.id))
    ec2_events.put(moto.url, ec2_events.state_change(machine.id, "shutting-down"))

    found = listed(provider, clock)["spot-1"]

    # moto still lists the instance running: the event is ahead of the list, as EC2's lags
    states = aws.describe_instances(InstanceIds=[machine.id])["Reservations"][0]["Instances"]
    assert states[0]["State"]["Name"] == "running"
    assert (found.status, found.ending) == (Status.DELETING, Ending.INTERRUPTED)
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)


def test_events_of_other_instances_and_other_shapes_are_deleted_unread(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer, aws: Any, spot_events: str
) -> None:
    machine = made(provider, "spot-1")
    other = launch_tagged(aws, "elsewhere", {"team": "web"})
    ec2_events.put(
        moto.url,
        ec2_events.interruption_warning(other),
        ec2_events.rebalance_recommendation("i-0123456789abcdef0"),
        ec2_events.state_change(other, "stopping"),
    )

    found = listed(provider, clock)

    assert found["spot-1"].ending == Ending.NONE
    assert found["spot-1"].id == machine.id
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)


def test_a_notice_is_read_once_a_listing_and_never_per_pool(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer
) -> None:
    machine = made(provider, "spot-1")
    made(provider, "mixed-1", pool="mixed")
    calls = count_calls(provider._queue())
    ec2_events.put(moto.url, ec2_events.rebalance_recommendation(machine.id))

    clock.advance(WINDOW)
    for _ in range(3):
        for pool in ("spot", "mixed", "ci"):
            provider.machines(pool)

    assert calls == {"ReceiveMessage": 1, "DeleteMessageBatch": 1}


def test_an_interrupting_machine_leaves_its_place_under_max_and_its_replacement_goes_on_demand(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer
) -> None:
    first, second = made(provider, "mixed-1", "mixed"), made(provider, "mixed-2", "mixed")
    assert {first.market, second.market} == {Market.SPOT}
    assert provider.create(ec2_spec("mixed-3", pool="mixed")).failed  # at its max
    ec2_events.put(moto.url, ec2_events.interruption_warning(first.id))
    assert listed(provider, clock, "mixed")["mixed-1"].ending == Ending.INTERRUPTING

    replacement = provider.create(ec2_spec("mixed-3", pool="mixed"))

    assert replacement.ok, replacement.reason
    assert replacement.machine is not None
    assert replacement.machine.market == Market.ON_DEMAND
    assert [(t, m) for t, _, m, _ in provider.out_of_stock()] == [("t3.micro", Market.SPOT)]


def test_over_every_process_an_interrupting_machine_leaves_its_place_too(
    make_provider: Callable[[], Ec2Provider],
    clock: ManualClock,
    moto: MotoServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ORCA_FENCE_URL", tmp_path.as_uri())
    provider, other = make_provider(), make_provider()  # two processes, one max
    assert provider.fence is not None
    first = made(provider, "mixed-1", "mixed")
    made(other, "mixed-2", "mixed")
    assert provider.create(ec2_spec("mixed-3", pool="mixed")).failed  # at its max
    ec2_events.put(moto.url, ec2_events.interruption_warning(first.id))
    listed(provider, clock, "mixed")

    replacement = provider.create(ec2_spec("mixed-3", pool="mixed"))

    assert replacement.ok, replacement.reason


def test_a_spot_pool_whose_market_is_out_answers_no_stock_at_once(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer
) -> None:
    first = made(provider, "spot-1")
    made(provider, "spot-2")
    ec2_events.put(moto.url, ec2_events.interruption_warning(first.id))
    listed(provider, clock)
    calls = count_calls(provider._client)

    replacement = provider.create(ec2_spec("spot-3", pool="spot"))

    assert replacement.no_stock
    assert "ORCA_NO_STOCK_TTL" in replacement.reason
    assert "RunInstances" not in calls


def test_a_rebalance_recommendation_keeps_the_machine_counted(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer
) -> None:
    first = made(provider, "mixed-1", "mixed")
    made(provider, "mixed-2", "mixed")
    ec2_events.put(moto.url, ec2_events.rebalance_recommendation(first.id))
    listed(provider, clock, "mixed")

    assert provider.create(ec2_spec("mixed-3", pool="mixed")).failed
    assert provider.out_of_stock() == []


def test_keep_advice_lets_a_machine_under_notice_go_now(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer
) -> None:
    warned, calm = made(provider, "spot-1"), made(provider, "spot-2")
    ec2_events.put(moto.url, ec2_events.rebalance_recommendation(warned.id))
    idle = list(listed(provider, clock).values())

    advice = {a.machine.name: a for a in provider.keep_advice(idle, margin=0)}

    assert advice["spot-1"].release
    assert advice["spot-1"].paid_until is not None
    assert advice["spot-2"].machine.id == calm.id


def test_another_process_sees_the_notice_on_the_machine_after_the_queue_is_empty(
    make_provider: Callable[[], Ec2Provider],
    clock: ManualClock,
    moto: MotoServer,
    aws: Any,
    spot_events: str,
) -> None:
    reader = make_provider()
    machine = made(reader, "spot-1")
    warned = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)
    ec2_events.put(moto.url, ec2_events.interruption_warning(machine.id, at=warned))
    listed(reader, clock)
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)

    found = listed(make_provider(), clock)["spot-1"]

    assert (found.ending, found.ends_at) == (Ending.INTERRUPTING, warned + timedelta(minutes=2))
    tags = aws.describe_instances(InstanceIds=[machine.id])["Reservations"][0]["Instances"][0]
    assert {t["Key"]: t["Value"] for t in tags["Tags"]}[NOTICE_TAG] == "interrupting"


def test_a_machine_gone_since_its_notice_is_listed_gone_and_its_message_deleted(
    provider: Ec2Provider, clock: ManualClock, moto: MotoServer, spot_events: str
) -> None:
    machine = made(provider, "spot-1")
    ec2_events.put(moto.url, ec2_events.interruption_warning(machine.id))
    moto.interrupt(machine.id)

    found = listed(provider, clock)["spot-1"]

    assert (found.status, found.ending) == (Status.DELETING, Ending.INTERRUPTED)
    assert ec2_events.depth(moto.url, spot_events) == (0, 0)


def test_a_listing_goes_on_without_its_queue_and_says_why_once(
    make_provider: Callable[[], Ec2Provider],
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    moto: MotoServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("ORCA_EC2_EVENTS_QUEUE", f"{moto.url}/123456789012/no-such-queue")
    provider = make_provider()
    made(provider, "spot-1")

    with caplog.at_level(logging.WARNING, "machines"):
        first = listed(provider, clock)
        listed(provider, clock)

    assert list(first) == ["spot-1"]
    said = [r.getMessage() for r in caplog.records if "notices could not be read" in r.getMessage()]
    assert len(said) == 1
    assert f"ORCA_EC2_EVENTS_QUEUE={moto.url}/123456789012/no-such-queue" in said[0]
    assert "QueueDoesNotExist" in said[0]


def test_without_a_queue_nothing_is_asked_of_sqs(
    spot_world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORCA_EC2_EVENTS_QUEUE", raising=False)
    provider = ec2_provider(OWNER)
    made(provider, "spot-1")

    assert provider.machines("spot")[0].ending == Ending.NONE
    assert provider._sqs is None


def test_notices_are_counted_once_each_by_kind(
    make_provider: Callable[[], Ec2Provider],
    clock: ManualClock,
    moto: MotoServer,
    recorded: Recorded,
) -> None:
    provider = make_provider()
    first, second = made(provider, "spot-1"), made(provider, "spot-2")
    ec2_events.put(
        moto.url,
        ec2_events.rebalance_recommendation(first.id),
        ec2_events.rebalance_recommendation(second.id),
    )
    listed(provider, clock)
    ec2_events.put(moto.url, ec2_events.interruption_warning(first.id))
    listed(provider, clock)
    listed(provider, clock)
    listed(make_provider(), clock)  # another process sees the tags: it read no notice

    counted = {
        kind: recorded.total("orca.machines.notices", {"orca.pool": "spot", "orca.notice": kind})
        for kind in ("rebalance", "interrupting", "scheduled")
    }
    assert counted == {"rebalance": 2, "interrupting": 1, "scheduled": 0}


def test_a_notice_that_cannot_be_written_on_the_machine_is_kept_and_its_message_too(
    provider: Ec2Provider,
    clock: ManualClock,
    moto: MotoServer,
    spot_events: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    machine = made(provider, "spot-1")
    deny(provider._client, "CreateTags", "UnauthorizedOperation")
    ec2_events.put(moto.url, ec2_events.rebalance_recommendation(machine.id))

    with caplog.at_level(logging.WARNING, "machines"):
        first = listed(provider, clock)["spot-1"]
        again = listed(provider, clock)["spot-1"]

    assert first.ending == again.ending == Ending.REBALANCE
    said = [r.getMessage() for r in caplog.records if "could not be written" in r.getMessage()]
    assert len(said) == 1
    assert "UnauthorizedOperation" in said[0]
    # not deleted: read again until a tag holds it for every reader (or the queue drops it)
    assert sum(ec2_events.depth(moto.url, spot_events)) == 1
