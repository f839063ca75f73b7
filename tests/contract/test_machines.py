"""``machines``: every live machine of one pool and owner, and never anyone else's."""

from __future__ import annotations

import pytest

from machines.runtime.errors import InvalidNameError
from machines.runtime.models import Machine
from testkit.clouds import Cloud


def made(cloud: Cloud, name: str, owner: str = "prod", pool: str = "ci") -> Machine:
    created = cloud.provider(owner).create(cloud.spec(name, pool=pool))
    assert created.machine is not None, created.reason
    return created.machine


def names(machines: list[Machine]) -> list[str]:
    return sorted(machine.name for machine in machines)


def test_machines_lists_the_pool(cloud: Cloud) -> None:
    ids = {made(cloud, f"ci-{n}").id for n in range(3)}

    assert {m.id for m in cloud.provider().machines("ci")} == ids


def test_other_pools_owners_and_foreign_machines_are_not_listed(cloud: Cloud) -> None:
    made(cloud, "ci-1")
    made(cloud, "gpu-1", pool="gpu")
    made(cloud, "staging-ci-a1", owner="staging")
    made(cloud, "ownerless-ci-1", owner="")
    cloud.foreign("untagged-1", {})
    cloud.foreign("no-owner-1", {"orca": "pool", "orca-pool": "ci"})
    cloud.foreign("half-tagged-1", {"orca-pool": "ci", "orca-owner": "prod"})
    cloud.foreign("other-owner-1", {"orca": "pool", "orca-pool": "ci", "orca-owner": "staging"})

    prod = cloud.provider()
    assert names(prod.machines("ci")) == ["ci-1"]
    assert names(prod.machines("gpu")) == ["gpu-1"]


def test_without_an_owner_only_machines_without_an_owner_are_listed(cloud: Cloud) -> None:
    made(cloud, "prod-ci-a1")
    made(cloud, "ci-1", owner="")

    assert names(cloud.provider("").machines("ci")) == ["ci-1"]


def test_two_owners_see_only_their_own(cloud: Cloud) -> None:
    made(cloud, "a-1", owner="team-a")
    made(cloud, "b-1", owner="team-b")
    made(cloud, "b-2", owner="team-b")

    assert names(cloud.provider("team-a").machines("ci")) == ["a-1"]
    assert names(cloud.provider("team-b").machines("ci")) == ["b-1", "b-2"]


@pytest.mark.parametrize(
    ("pool", "refusal"), [("", "pool is empty"), ("ci pool", "'ci pool' is not a label value")]
)
def test_a_pool_that_is_not_a_label_value_is_refused(cloud: Cloud, pool: str, refusal: str) -> None:
    with pytest.raises(InvalidNameError, match=refusal):
        cloud.provider().machines(pool)
