"""A third cloud is its package and one line in the registry: ``Provider.of`` reaches it, and
``create``, ``machines``, ``delete`` and a pool's ``max`` come out right from its hooks alone
(``testkit.fake_cloud``, a cloud in memory)."""

from __future__ import annotations

import pytest

from machines import ForeignMachineError, MachineSpec, Provider, StackMachineError, Status
from machines.runtime.labels import pool_labels
from testkit import fake_cloud
from testkit.fake_cloud import Store
from testkit.specs import OWNER

KIND = fake_cloud.KIND


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.delenv("ORCA_POOL_MAX", raising=False)
    return fake_cloud.register(monkeypatch)


def spec(name: str, pool: str = "ci") -> MachineSpec:
    return MachineSpec(name=name, machine_type="f1.small", location="here", pool=pool)


def test_the_registry_line_is_all_provider_of_needs(store: Store) -> None:
    provider = Provider.of(KIND, OWNER, {})

    assert (provider.kind, provider.owner) == (KIND, OWNER)
    assert provider.arch("f1.arm") == "arm64"


def test_a_create_is_listed_at_once_and_by_another_provider_once_it_lists(store: Store) -> None:
    provider = Provider.of(KIND, OWNER, {})
    assert provider.machines("ci") == []

    made = provider.create(spec("ci-1"))

    assert made.ok
    assert made.machine is not None
    assert [m.id for m in provider.machines("ci")] == [made.machine.id]
    assert store.requests["list"] == 1
    assert [m.id for m in Provider.of(KIND, OWNER, {}).machines("ci")] == [made.machine.id]


def test_a_retried_create_returns_its_machine(store: Store) -> None:
    provider = Provider.of(KIND, OWNER, {})
    first = provider.create(spec("ci-1"))

    again = provider.create(spec("ci-1"))

    assert again.machine == first.machine
    assert len(store.live()) == 1


def test_a_delete_of_a_machine_it_made_is_one_request(store: Store) -> None:
    provider = Provider.of(KIND, OWNER, {})
    made = provider.create(spec("ci-1")).machine
    assert made is not None
    store.requests.clear()

    assert provider.delete(made.id) is True

    assert store.requests == {"delete": 1}
    assert [m for m in provider.machines("ci") if m.status != Status.DELETING] == []
    assert store.live() == []


def test_a_delete_checks_whose_machine_it_is_when_the_listing_does_not_show_it(
    store: Store,
) -> None:
    theirs = store.add("db-1", "f1.small", "here", pool_labels("ci", "staging"))
    kept = store.add(
        f"{OWNER}-ci-1.stack",
        "f1.small",
        "here",
        {
            **pool_labels("ci", OWNER),
            "orca-managed-by": "pulumi",
        },
    )
    provider = Provider.of(KIND, OWNER, {})

    with pytest.raises(ForeignMachineError, match=rf"{theirs} \(db-1\) belongs to owner 'staging'"):
        provider.delete(str(theirs))
    with pytest.raises(StackMachineError, match="size of pool ci"):
        provider.delete(str(kept))

    assert store.requests["delete"] == 0
    assert sorted(store.live()) == sorted([str(theirs), str(kept)])


def test_a_pools_max_counts_the_listing_and_the_creates(store: Store) -> None:
    store.add(f"{OWNER}-ci-1.stack", "f1.small", "here", pool_labels("ci", OWNER))
    provider = Provider.of(KIND, OWNER, {"ORCA_POOL_MAX": "ci=2"})

    made = provider.create(spec("ci-a1"))
    refused = provider.create(spec("ci-a2"))

    assert made.ok
    assert refused.failed
    assert refused.reason.startswith("pool ci has 2 machines")
    assert len(store.live()) == 2
