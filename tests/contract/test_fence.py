"""The fence (``ORCA_FENCE_URL``) on each cloud and in each store: a name another process is
making is never made twice, a create that made nothing frees its slot at once, a delete
frees its machine's slot at once, a store that ignores preconditions or a URL of another
form is refused in one line, a pool without a max asks the store nothing. (Processes at
once: test_pool_max.py; a killed process, a pool across clouds: tests/fence.)"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from machines import Created, Provider, SettingsError
from testkit import lax_s3
from testkit.clouds import Cloud
from testkit.fences import entries
from testkit.fixtures import fence_s3_url
from testkit.specs import OWNER

MAX = 2


@pytest.fixture
def limited(cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", f"ci={MAX}")


@pytest.mark.usefixtures("limited")
def test_a_name_another_process_is_making_is_returned_never_made_twice(
    cloud: Cloud, fence_url: str
) -> None:
    slow, quick = cloud.provider(), cloud.provider()  # two holders, as two processes
    cloud.late_create(3.0)  # the slow one's create answers 3 s late
    answers: dict[str, Created] = {}
    thread = threading.Thread(target=lambda: answers.update(slow=slow.create(cloud.spec("ci-1"))))
    thread.start()
    deadline = time.monotonic() + 60
    while not entries(quick.fence) and time.monotonic() < deadline:  # its entry, written
        time.sleep(0.02)

    answers["quick"] = quick.create(cloud.spec("ci-1"))  # while the slow one is making it
    thread.join()

    assert answers["slow"].ok, answers["slow"].reason
    assert answers["quick"].ok, answers["quick"].reason
    assert answers["slow"].machine is not None
    assert answers["quick"].machine is not None
    assert answers["quick"].machine.id == answers["slow"].machine.id
    assert len(cloud.live()) == 1


@pytest.mark.usefixtures("limited")
def test_a_name_whose_create_has_ended_is_free_again_though_its_entry_still_counts(
    cloud: Cloud, fence_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CALL_TIMEOUT", "5")  # its create may be making it for 5 s
    first, second = cloud.provider(), cloud.provider()
    made = first.create(cloud.spec("ci-1")).machine
    assert made is not None
    unfenced = Provider.of(cloud.kind, OWNER, {**os.environ, "ORCA_FENCE_URL": ""})
    assert unfenced.delete(made.id)  # deleted by someone the fence does not hear
    [entry] = entries(first.fence)
    time.sleep(max(0.0, float(str(entry["making"])) - time.time()))  # its create has ended

    again = second.create(cloud.spec("ci-1"))

    assert again.ok, again.reason
    assert again.machine is not None
    assert again.machine.id != made.id
    assert [e["holder"] for e in entries(second.fence)] == [second.fence.holder]  # type: ignore[union-attr]


@pytest.mark.usefixtures("limited")
def test_a_create_that_made_nothing_frees_its_slot_at_once(cloud: Cloud, fence_url: str) -> None:
    provider = cloud.provider()
    cloud.out_of_stock(cloud.spec())

    refused = provider.create(cloud.spec("ci-1"))

    assert refused.no_stock
    assert entries(provider.fence) == []


@pytest.mark.usefixtures("limited")
def test_a_delete_frees_its_machines_slot_at_once_for_every_process(
    cloud: Cloud, fence_url: str
) -> None:
    first, second = cloud.provider(), cloud.provider()
    made = [first.create(cloud.spec(f"ci-{n}")) for n in range(MAX)]
    assert all(m.ok for m in made)
    assert second.create(cloud.spec("ci-9")).failed  # at max, counted through the fence

    machine = made[0].machine
    assert machine is not None
    assert first.delete(machine.id)

    assert [e["name"] for e in entries(first.fence)] == ["ci-1"]


def test_a_store_that_ignores_preconditions_is_refused_in_one_line(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", f"ci={MAX}")
    with lax_s3.serving() as url:
        monkeypatch.setenv("ORCA_FENCE_URL", fence_s3_url(url, "lax/fence"))
        for name, value in {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}.items():
            monkeypatch.setenv(name, os.environ.get(name) or value)
        provider = cloud.provider()
        before = cloud.creates()

        created = provider.create(cloud.spec("ci-1"))
        assert provider.fence is not None
        probes = provider.fence.store.counts.probes
        again = provider.create(cloud.spec("ci-2"))

    assert created.failed
    assert "\n" not in created.reason
    assert "does not honour conditional writes" in created.reason
    assert "nothing was made" in created.reason
    assert cloud.creates() == before
    assert again.reason == created.reason.replace("ci-1", "ci-2")
    assert provider.fence.store.counts.probes == probes  # probed once: not written again


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://api.pulumi.com", "s3://bucket/prefix?region=...&endpoint=... or file:///path"),
        ("gs://bucket/fence", "s3://bucket/prefix?region=...&endpoint=... or file:///path"),
        ("s3://bucket/fence", "names no region"),
        ("s3://bucket/fence?region=eu-central-1&regoin=x", "option 'regoin'"),
    ],
)
def test_a_fence_url_of_another_form_is_refused_in_one_line_by_provider_of(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, url: str, says: str
) -> None:
    monkeypatch.setenv("ORCA_FENCE_URL", url)

    with pytest.raises(SettingsError) as raised:
        Provider.of(cloud.kind, OWNER)

    assert "\n" not in str(raised.value)
    assert says in str(raised.value)
    assert "ORCA_FENCE_URL" in str(raised.value)


def test_a_pool_without_a_max_asks_the_fence_nothing(cloud: Cloud, fence_url: str) -> None:
    provider = cloud.provider()

    assert provider.create(cloud.spec("ci-1")).ok

    assert provider.fence is not None
    assert provider.fence.store.counts.reads == 0
    assert provider.fence.store.counts.writes == 0
    assert json.dumps(entries(provider.fence)) == "[]"
