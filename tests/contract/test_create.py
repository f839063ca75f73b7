"""``create``: one machine per name, the answers ok / no stock / failed, idempotent retries."""

from __future__ import annotations

import logging

import pytest

from machines.runtime.models import Status
from testkit.clouds import Cloud

SECRET = "#cloud-config\nwrite_files: [{path: /etc/token, content: s3cr3t-t0ken}]\n"


def test_create_makes_one_machine_and_returns_it(cloud: Cloud) -> None:
    asked = cloud.spec("ci-1")

    created = cloud.provider().create(asked)

    assert created.ok, created.reason
    machine = created.machine
    assert machine is not None
    assert (machine.name, machine.machine_type, machine.location, machine.pool) == (
        "ci-1",
        asked.machine_type,
        asked.location,
        "ci",
    )
    assert machine.status == Status.STARTING
    assert machine.address
    assert cloud.live() == [machine.id]


def test_no_stock_is_its_own_answer_and_makes_nothing(cloud: Cloud) -> None:
    asked = cloud.spec("ci-1")
    cloud.out_of_stock(asked)

    created = cloud.provider().create(asked)

    assert created.no_stock, created.reason
    assert created.machine is None
    assert asked.machine_type in created.reason
    assert asked.location in created.reason
    assert cloud.live() == []


def test_no_stock_is_answered_at_once_not_retried(cloud: Cloud) -> None:
    asked = cloud.spec("ci-1")
    cloud.out_of_stock(asked)
    before = cloud.creates()

    assert cloud.provider().create(asked).no_stock

    assert cloud.creates() - before == 1


def test_an_unknown_type_fails_naming_the_types_there_are(cloud: Cloud) -> None:
    created = cloud.provider().create(cloud.spec(machine_type="x9.huge"))

    assert created.failed
    assert "'x9.huge'" in created.reason
    assert "use" in created.reason
    assert cloud.live() == []


def test_an_unknown_location_fails_naming_it(cloud: Cloud) -> None:
    created = cloud.provider().create(cloud.spec(location="mars1"))

    assert created.failed
    assert "'mars1'" in created.reason
    assert cloud.live() == []


def test_a_retried_create_returns_the_machine_made_before(cloud: Cloud) -> None:
    provider = cloud.provider()

    first = provider.create(cloud.spec("ci-1"))
    again = provider.create(cloud.spec("ci-1"))

    assert again.ok, again.reason
    assert first.machine is not None
    assert again.machine is not None
    assert again.machine.id == first.machine.id
    assert cloud.live() == [first.machine.id]


def test_another_provider_of_the_same_owner_finds_the_machine_too(cloud: Cloud) -> None:
    first = cloud.provider().create(cloud.spec("ci-1"))
    second = cloud.provider().create(cloud.spec("ci-1"))

    assert first.machine is not None
    assert second.machine is not None
    assert second.machine.id == first.machine.id
    assert cloud.live() == [first.machine.id]


def test_a_name_taken_by_another_owner_fails_and_makes_nothing(cloud: Cloud) -> None:
    theirs = cloud.provider("staging").create(cloud.spec("ci-1"))

    created = cloud.provider().create(cloud.spec("ci-1"))

    assert created.failed
    assert theirs.machine is not None
    assert cloud.live() == [theirs.machine.id]


def test_a_name_taken_in_another_pool_fails(cloud: Cloud) -> None:
    provider = cloud.provider()
    provider.create(cloud.spec("ci-1", pool="gpu"))

    created = provider.create(cloud.spec("ci-1", pool="ci"))

    assert created.failed
    assert len(cloud.live()) == 1


def test_user_data_is_in_no_repr_reason_or_log(
    cloud: Cloud, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="machines")
    provider = cloud.provider()
    asked = cloud.spec("ci-1", user_data=SECRET)

    outcomes = [
        provider.create(asked),
        provider.create(asked),
        provider.create(cloud.spec("ci-2", location="mars1", user_data=SECRET)),
        provider.create(cloud.spec("ci-3", machine_type="x9.huge", user_data=SECRET)),
    ]

    shown = [repr(asked), str(asked), repr(provider), caplog.text]
    shown += [repr(outcome) + outcome.reason for outcome in outcomes]
    assert not [text for text in shown if "s3cr3t" in text]
