"""A pool's ``max``: counted from the shared listing, never passed by one provider's threads;
processes racing within a listing's window can pass it, as docs/runtime.md says."""

from __future__ import annotations

import threading

import pytest

from machines.runtime.models import Created
from testkit.clouds import Cloud

MAX = 3


@pytest.fixture
def limited(cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's max, set once the cloud's fixture has isolated the environment."""
    monkeypatch.setenv("ORCA_POOL_MAX", f"ci={MAX}")


@pytest.mark.usefixtures("limited")
def test_threads_of_one_provider_never_pass_max(cloud: Cloud) -> None:
    provider = cloud.provider()
    start = threading.Barrier(2 * MAX)
    answers: list[Created] = []

    def create(n: int) -> None:
        start.wait()
        answers.append(provider.create(cloud.spec(f"ci-{n}")))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(2 * MAX)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(1 for a in answers if a.ok) == MAX
    refused = [a.reason for a in answers if a.failed]
    assert len(refused) == MAX
    assert all(r.startswith(f"pool ci has {MAX} machines") for r in refused)
    assert len(cloud.live()) == MAX


@pytest.mark.usefixtures("limited")
def test_a_create_retried_at_max_returns_its_machine(cloud: Cloud) -> None:
    provider = cloud.provider()
    made = [provider.create(cloud.spec(f"ci-{n}")) for n in range(MAX)]

    again = provider.create(cloud.spec("ci-0"))

    assert again.ok, again.reason
    assert again.machine is not None
    assert made[0].machine is not None
    assert again.machine.id == made[0].machine.id
    assert len(cloud.live()) == MAX


@pytest.mark.usefixtures("limited")
def test_processes_racing_within_a_listing_window_pass_max_by_the_others_creates(
    cloud: Cloud,
) -> None:
    first, second = cloud.provider(), cloud.provider()
    assert first.machines("ci") == second.machines("ci") == []

    made = [first.create(cloud.spec(f"a-{n}")) for n in range(MAX)]
    made += [second.create(cloud.spec(f"b-{n}")) for n in range(MAX)]

    assert all(m.ok for m in made), "each counts the other's creates only once it lists again"
    assert len(cloud.live()) == 2 * MAX
    late = cloud.provider().create(cloud.spec("c-0"))
    assert late.failed
    assert late.reason.startswith(f"pool ci has {2 * MAX} machines")


@pytest.mark.usefixtures("limited")
def test_a_max_that_cannot_be_counted_answers_failed_and_makes_nothing(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "5")  # the listing's 503s end the call
    provider = cloud.provider()
    cloud.trouble("listings", "down")
    before = cloud.creates()

    created = provider.create(cloud.spec("ci-1"))

    assert created.failed
    assert created.transient
    assert f"could not be counted against its max ({MAX})" in created.reason
    assert "nothing was made" in created.reason
    assert cloud.creates() == before
