"""Hetzner: one listing of the owner answers every pool while fresh; own writes show at once."""

from __future__ import annotations

import threading

from hcloud import Client

from machines import MachineSpec, Status
from machines.runtime.labels import pool_labels
from testkit.specs import OWNER

GET_SERVERS = "GET /v1/servers"


def spec(name: str, pool: str = "ci", location: str = "fsn1") -> MachineSpec:
    return MachineSpec(name=name, machine_type="cax11", location=location, pool=pool)


def add(emulator, count: int, pool: str, owner: str = OWNER) -> None:
    emulator.control.add_servers(
        count, name_prefix=f"{owner}-{pool}-", server_type="cax11", labels=pool_labels(pool, owner)
    )


def test_a_tick_over_many_pools_costs_one_listing_of_the_owner(clocked_hetzner, emulator):
    for pool, count in (("ci", 60), ("gpu", 40), ("build", 20)):
        add(emulator, count, pool)
    add(emulator, 30, "ci", owner="other")
    emulator.control.reset_requests()

    sizes = {
        pool: len(clocked_hetzner.machines(pool)) for pool in ("ci", "gpu", "build", "idle", "ops")
    }

    assert sizes == {"ci": 60, "gpu": 40, "build": 20, "idle": 0, "ops": 0}
    assert emulator.control.requests().get(GET_SERVERS) == 3  # 120 machines, 50 a page


def test_the_listing_is_renewed_once_its_window_has_passed(clocked_hetzner, emulator, clock):
    add(emulator, 3, "ci")
    emulator.control.reset_requests()

    clocked_hetzner.machines("ci")
    clock.advance(4.9)
    clocked_hetzner.machines("ci")
    clock.advance(0.2)
    clocked_hetzner.machines("ci")

    assert emulator.control.requests().get(GET_SERVERS) == 2


def test_a_list_ttl_of_zero_lists_the_pool_at_every_call(make_clocked_hetzner, emulator):
    provider = make_clocked_hetzner(ORCA_LIST_TTL="0")
    add(emulator, 3, "ci")
    emulator.control.reset_requests()

    provider.machines("ci")
    provider.machines("ci")

    assert emulator.control.requests().get(GET_SERVERS) == 2


def test_own_creates_and_deletes_show_at_once_without_a_new_listing(clocked_hetzner, emulator):
    add(emulator, 2, "ci")
    clocked_hetzner.machines("ci")
    emulator.control.reset_requests()

    made = clocked_hetzner.create(spec("prod-ci-new")).machine
    assert made is not None
    assert made.id in {m.id for m in clocked_hetzner.machines("ci")}
    gone = clocked_hetzner.machines("ci")[0].id
    assert clocked_hetzner.delete(gone) is True

    statuses = {m.id: m.status for m in clocked_hetzner.machines("ci")}
    assert statuses[gone] == Status.DELETING
    assert made.id in statuses
    assert emulator.control.requests().get(GET_SERVERS) == 0


def test_read_your_writes_holds_for_every_thread(clocked_hetzner, emulator):
    add(emulator, 60, "ci")
    failures: list[str] = []

    def worker(index: int) -> None:
        made = clocked_hetzner.create(spec(f"prod-ci-t{index}")).machine
        if made is None or made.id not in {m.id for m in clocked_hetzner.machines("ci")}:
            failures.append(f"thread {index} does not see its create")
            return
        clocked_hetzner.delete(made.id)
        listed = {m.id: m.status for m in clocked_hetzner.machines("ci")}
        if listed.get(made.id, Status.DELETING) != Status.DELETING:
            failures.append(f"thread {index} sees its delete as {listed[made.id]}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert emulator.control.requests().get(GET_SERVERS) == 2  # one listing of two pages


def test_threads_share_one_listing_in_flight(clocked_hetzner, emulator):
    add(emulator, 10, "ci")
    emulator.control.set_faults(
        [{"kind": "delay", "method": "GET", "path": "/v1/servers", "seconds": 0.3, "times": 1}]
    )
    emulator.control.reset_requests()
    sizes: list[int] = []

    threads = [
        threading.Thread(target=lambda: sizes.append(len(clocked_hetzner.machines("ci"))))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sizes == [10] * 6
    assert emulator.control.requests().get(GET_SERVERS) == 1


def test_a_machine_made_by_another_provider_appears_after_the_window(
    clocked_hetzner, make_clocked_hetzner, emulator, clock
):
    other = make_clocked_hetzner()
    assert clocked_hetzner.machines("ci") == []

    made = other.create(spec("prod-ci-elsewhere")).machine
    assert made is not None
    assert clocked_hetzner.machines("ci") == []
    clock.advance(5)

    assert [m.id for m in clocked_hetzner.machines("ci")] == [made.id]


def test_a_machine_deleted_by_someone_else_leaves_after_the_window(
    clocked_hetzner, emulator, clock, hcloud: Client
):
    add(emulator, 1, "ci")
    [listed] = clocked_hetzner.machines("ci")
    hcloud.servers.delete(hcloud.servers.get_by_id(int(listed.id)))

    clock.advance(5)

    assert [m.status for m in clocked_hetzner.machines("ci")] in ([], [Status.DELETING])
