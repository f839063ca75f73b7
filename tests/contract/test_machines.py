"""``machines``: every live machine of one pool and owner, and never anyone else's."""

from __future__ import annotations

import os

import pytest

from machines.automation.snapshot import SharedListing
from machines.runtime.errors import InvalidNameError, MachinesError
from machines.runtime.models import Machine
from machines.runtime.provider import Provider
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


def test_owners_of_one_account_are_listed_in_one_request_each_apart(cloud: Cloud) -> None:
    """A report over several stacks (CI's comment) lists their owners together; each owner
    gets what its own listing finds, and no machine of an owner not asked."""
    made(cloud, "a-1", owner="team-a")
    made(cloud, "a-2", owner="team-a", pool="gpu")
    made(cloud, "b-1", owner="team-b")
    made(cloud, "c-1", owner="team-c")
    made(cloud, "ci-1", owner="")
    cloud.foreign("half-tagged-1", {"orca-pool": "ci", "orca-owner": "team-a"})
    a, b = cloud.provider("team-a"), cloud.provider("team-b")
    before = cloud.reads("listings")

    listed = a.listed_with([b, cloud.provider("team-b")])

    assert cloud.reads("listings") == before + 1
    assert {owner: names(found) for owner, found in listed.items()} == {
        "team-a": ["a-1", "a-2"],
        "team-b": ["b-1"],
    }
    own = a.machines("ci") + a.machines("gpu")
    # Not the status: the machines boot between the two listings (starting, then running).
    fields = ("id", "name", "pool", "machine_type", "location", "managed_by")
    assert [m.model_dump(include=set(fields)) for m in listed["team-a"]] == [
        m.model_dump(include=set(fields)) for m in sorted(own, key=lambda m: m.name)
    ]


def test_owners_of_another_account_or_none_are_not_listed_together(cloud: Cloud) -> None:
    other = {k: "y" * len(v) if v == cloud.secret else v for k, v in os.environ.items()}
    a = cloud.provider("team-a")

    with pytest.raises(ValueError, match="another account"):
        a.listed_with([Provider.of(cloud.kind, "team-b", other)])
    with pytest.raises(ValueError, match="without an owner"):
        a.listed_with([cloud.provider("")])
    assert cloud.reads("listings") == 0


@pytest.mark.parametrize(
    ("pool", "refusal"), [("", "pool is empty"), ("ci pool", "'ci pool' is not a label value")]
)
def test_a_pool_that_is_not_a_label_value_is_refused(cloud: Cloud, pool: str, refusal: str) -> None:
    with pytest.raises(InvalidNameError, match=refusal):
        cloud.provider().machines(pool)


def test_a_report_over_stacks_lists_each_account_once(cloud: Cloud) -> None:
    """CI's comment counts every stack's pools: the stacks of one account from one
    listing, made when the first is counted; an owner-less stack lists on its own."""
    made(cloud, "a-1", owner="team-a")
    made(cloud, "b-1", owner="team-b", pool="gpu")
    a, b, none = cloud.provider("team-a"), cloud.provider("team-b"), cloud.provider("")
    shared = SharedListing(lambda: [a, b, none])
    before = cloud.reads("listings")  # a create asks too (EC2: is the name taken?)

    assert names(shared.machines(a) or []) == ["a-1"]
    assert names(shared.machines(b) or []) == ["b-1"]
    assert shared.machines(none) is None
    assert cloud.reads("listings") == before + 1


def test_a_failed_shared_listing_is_asked_again_by_the_next_stack(cloud: Cloud) -> None:
    made(cloud, "b-1", owner="team-b")
    a, b = cloud.provider("team-a"), cloud.provider("team-b")
    shared = SharedListing(lambda: [a, b])
    cloud.trouble("listings", "garbled")
    with pytest.raises(MachinesError):
        shared.machines(a)
    failed = cloud.reads("listings")

    cloud.trouble("listings", "busy")  # twice, then as usual
    assert names(shared.machines(b) or []) == ["b-1"]
    assert cloud.reads("listings") > failed
