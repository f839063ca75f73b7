"""``delete``: True when the machine is gone, now or before; anyone else's is left alone."""

from __future__ import annotations

import logging

import pytest

from machines.runtime.errors import ForeignMachineError, InvalidMachineIdError
from machines.runtime.models import Ending, Status
from testkit.clouds import Cloud


def made(cloud: Cloud, owner: str = "prod") -> str:
    created = cloud.provider(owner).create(cloud.spec("ci-1"))
    assert created.machine is not None, created.reason
    return created.machine.id


def test_delete_is_true_and_the_machine_goes(cloud: Cloud) -> None:
    machine_id = made(cloud)

    assert cloud.provider().delete(machine_id) is True

    assert cloud.live() == []


def test_delete_of_a_machine_already_gone_is_true(cloud: Cloud) -> None:
    provider = cloud.provider()
    machine_id = made(cloud)
    provider.delete(machine_id)

    assert provider.delete(machine_id) is True
    assert provider.delete(cloud.absent_id) is True


def test_a_machine_of_another_pool_of_the_owner_is_deleted(cloud: Cloud) -> None:
    created = cloud.provider().create(cloud.spec("gpu-1", pool="gpu"))
    assert created.machine is not None

    assert cloud.provider().delete(created.machine.id) is True

    assert cloud.live() == []


@pytest.mark.parametrize(
    ("maker", "deleter"),
    [
        pytest.param("staging", "prod", id="owned-by-another"),
        pytest.param("prod", "", id="owned-and-deleter-has-no-owner"),
        pytest.param("", "prod", id="without-an-owner"),
    ],
)
def test_a_machine_of_another_owner_is_refused_and_left_alone(
    cloud: Cloud, maker: str, deleter: str
) -> None:
    machine_id = made(cloud, owner=maker)

    with pytest.raises(ForeignMachineError, match=f"{machine_id}.*left alone"):
        cloud.provider(deleter).delete(machine_id)

    assert cloud.live() == [machine_id]


@pytest.mark.parametrize(
    "labels",
    [
        pytest.param({}, id="no-labels"),
        pytest.param({"orca-owner": "prod"}, id="owner-label-only"),
        pytest.param({"orca-pool": "ci", "orca-owner": "prod"}, id="no-orca-pool-label"),
    ],
)
def test_a_machine_that_is_not_a_pool_machine_is_refused_and_left_alone(
    cloud: Cloud, labels: dict[str, str]
) -> None:
    machine_id = cloud.foreign("db-1", labels)

    with pytest.raises(ForeignMachineError, match=f"{machine_id}.*left alone"):
        cloud.provider().delete(machine_id)

    assert cloud.live() == [machine_id]


def test_a_malformed_id_raises_naming_it_and_deletes_nothing(cloud: Cloud) -> None:
    machine_id = made(cloud)

    with pytest.raises(InvalidMachineIdError) as raised:
        cloud.provider().delete(cloud.malformed_id)

    assert repr(cloud.malformed_id) in str(raised.value)
    assert cloud.live() == [machine_id]


def test_a_deleted_machine_is_listed_as_deleted_never_as_interrupted(cloud: Cloud) -> None:
    provider = cloud.provider()
    machine_id = made(cloud)
    provider.machines("ci")
    provider.delete(machine_id)

    [machine] = provider.machines("ci")

    assert machine.status == Status.DELETING
    assert machine.ending == Ending.DELETED
    assert not machine.interrupted


def test_a_repeated_delete_of_a_machine_being_deleted_is_not_logged_as_a_new_one(
    cloud: Cloud, caplog: pytest.LogCaptureFixture
) -> None:
    provider = cloud.provider()
    machine_id = made(cloud)
    provider.delete(machine_id)

    with caplog.at_level(logging.INFO, logger="machines"):
        assert provider.delete(machine_id) is True

    assert caplog.records == []


def test_a_machine_the_fresh_listing_shows_is_deleted_in_one_request(cloud: Cloud) -> None:
    machine_id = made(cloud)
    provider = cloud.provider()
    provider.machines("ci")
    before = cloud.requests()

    assert provider.delete(machine_id) is True

    assert cloud.requests() - before == 1
    assert cloud.live() == []


def test_a_machine_no_fresh_listing_shows_is_looked_up_before_it_is_deleted(
    cloud: Cloud,
) -> None:
    machine_id = made(cloud)
    provider = cloud.provider()
    before = cloud.requests()

    assert provider.delete(machine_id) is True

    assert cloud.requests() - before == 2
    assert cloud.live() == []


def test_a_listed_machine_deleted_by_someone_else_is_still_true(cloud: Cloud) -> None:
    machine_id = made(cloud)
    provider = cloud.provider()
    provider.machines("ci")
    cloud.provider().delete(machine_id)

    assert provider.delete(machine_id) is True

    assert cloud.live() == []
