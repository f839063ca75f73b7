"""A pool's ``max``: counted from the shared listing, never passed by one provider's threads,
nor, through the fence (``ORCA_FENCE_URL``, in a folder or in S3), by processes creating at
once; without a fence, processes racing within a listing's window can pass it, as
docs/runtime.md says."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from machines.runtime.models import Created
from testkit import creators
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
def test_providers_of_two_processes_never_pass_max_together_through_the_fence(
    cloud: Cloud, fence_url: str
) -> None:
    first, second = cloud.provider(), cloud.provider()  # each its own listing and holder
    assert first.machines("ci") == second.machines("ci") == []

    made = [first.create(cloud.spec(f"a-{n}")) for n in range(MAX)]
    made += [second.create(cloud.spec(f"b-{n}")) for n in range(MAX)]

    assert sum(1 for m in made if m.ok) == MAX
    refused = [m.reason for m in made if m.failed]
    assert len(refused) == MAX
    assert all("counted over every process" in r for r in refused)
    assert all(f"its max is {MAX}" in r for r in refused)
    assert len(cloud.live()) == MAX


@pytest.mark.usefixtures("limited")
def test_processes_creating_at_once_never_pass_max(
    cloud: Cloud, fence_url: str, tmp_path: Path
) -> None:
    spec = cloud.spec()
    reports = creators.run(
        cloud.kind, 3, MAX, machine_type=spec.machine_type, location=spec.location,
        workdir=tmp_path,
    )  # fmt: skip

    made = [name for report in reports for name in report.made]
    said = [a for report in reports for a in report.answers]
    assert len(made) == MAX, said
    assert len(cloud.live()) == MAX
    for report in reports:
        # a create asks the fence once (a listing renewed meanwhile may refuse it before
        # that), writes once at most, and a lost race reads and writes once more
        lost = report.store["lost"]
        assert report.store["reads"] <= len(report.answers) + lost, report.store
        assert report.store["writes"] <= len(report.made) + lost, report.store


@pytest.mark.usefixtures("limited")
def test_without_a_fence_providers_of_two_processes_can_pass_max_as_documented(
    cloud: Cloud,
) -> None:
    first, second = cloud.provider(), cloud.provider()
    assert first.machines("ci") == second.machines("ci") == []

    made = [first.create(cloud.spec(f"a-{n}")) for n in range(MAX)]
    made += [second.create(cloud.spec(f"b-{n}")) for n in range(MAX)]

    assert all(m.ok for m in made), "each counts the other's creates only once it lists again"
    assert len(cloud.live()) == 2 * MAX


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
