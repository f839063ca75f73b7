"""The shared listing on its own (``machines/runtime/listing.py``), as the cluster-autoscaler tests
its caches: a listing function of the test's, a clock the test moves."""

from __future__ import annotations

import threading

import pytest

from machines.runtime.errors import CloudError
from machines.runtime.listing import Listing
from machines.runtime.models import Machine, Status
from testkit.clock import ManualClock


def machine(machine_id: str, pool: str = "ci", status: Status = Status.RUNNING) -> Machine:
    return Machine(
        id=machine_id,
        name=f"m-{machine_id}",
        status=status,
        machine_type="cax11",
        location="fsn1",
        address="",
        pool=pool,
    )


class Cloud:
    """What the listing function returns, and how often it was called."""

    def __init__(self, *machines: Machine) -> None:
        self.machines = list(machines)
        self.calls = 0
        self.gate: threading.Event | None = None
        self.error: Exception | None = None

    def list(self) -> list[Machine]:
        self.calls += 1
        if self.gate is not None:
            self.gate.wait(10)
        if self.error is not None:
            raise self.error
        return list(self.machines)


def test_a_write_made_while_a_listing_is_in_flight_is_in_its_answer():
    cloud = Cloud(machine("1"))
    cloud.gate = threading.Event()
    listing = Listing(cloud.list, lambda: 5.0, ManualClock())
    answers: list[list[Machine]] = []
    reader = threading.Thread(target=lambda: answers.append(listing.machines("ci")))
    reader.start()
    while cloud.calls == 0:
        threading.Event().wait(0.001)

    listing.created(machine("2"))
    listing.deleted("1")
    cloud.gate.set()
    reader.join()

    assert [(m.id, m.status) for m in answers[0]] == [
        ("1", Status.DELETING),
        ("2", Status.RUNNING),
    ]


def test_the_threads_waiting_for_a_failed_listing_get_its_error():
    cloud = Cloud()
    cloud.gate = threading.Event()
    cloud.error = CloudError("Hetzner did not answer in time", "timeout")
    listing = Listing(cloud.list, lambda: 5.0, ManualClock())
    errors: list[BaseException] = []

    def read() -> None:
        try:
            listing.machines("ci")
        except CloudError as error:
            errors.append(error)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    while cloud.calls == 0:
        threading.Event().wait(0.001)
    threading.Event().wait(0.05)
    cloud.gate.set()
    for reader in readers:
        reader.join()

    assert len(errors) == 4
    assert cloud.calls == 1


def test_a_write_is_dropped_once_a_later_listing_agrees():
    clock = ManualClock()
    cloud = Cloud()
    listing = Listing(cloud.list, lambda: 5.0, clock)
    listing.machines("ci")
    listing.created(machine("2"))
    cloud.machines = [machine("2", status=Status.STARTING)]
    clock.advance(5)

    assert [m.status for m in listing.machines("ci")] == [Status.STARTING]
    cloud.machines = []
    clock.advance(5)
    assert listing.machines("ci") == []


def test_a_create_the_cloud_does_not_list_yet_is_kept_until_it_settles():
    clock = ManualClock()
    cloud = Cloud()
    listing = Listing(cloud.list, lambda: 5.0, clock, settle=60)
    listing.created(machine("2"))
    clock.advance(5)

    assert [m.id for m in listing.machines("ci")] == ["2"]
    clock.advance(60)
    listing.machines("ci")
    clock.advance(5)
    assert listing.machines("ci") == []


@pytest.mark.parametrize("window", [0.0, -1.0])
def test_a_window_of_zero_lists_every_time(window):
    cloud = Cloud(machine("1"))
    listing = Listing(cloud.list, lambda: window, ManualClock())

    listing.machines("ci")
    listing.machines("ci")

    assert cloud.calls == 2


def test_a_held_place_counts_until_it_is_released():
    cloud = Cloud(machine("1"))
    listing = Listing(cloud.list, lambda: 5.0, ManualClock())

    def listed() -> list[Machine]:
        return listing.machines("ci")

    assert listing.reserve("ci", "m-2", 2, listed) is None
    assert listing.reserve("ci", "m-3", 2, listed) == 2
    listing.release("ci", "m-2")
    assert listing.reserve("ci", "m-3", 2, listed) is None


def test_a_name_listed_or_in_flight_is_let_through_at_the_limit():
    cloud = Cloud(machine("1"))
    listing = Listing(cloud.list, lambda: 5.0, ManualClock())

    def listed() -> list[Machine]:
        return listing.machines("ci")

    assert listing.reserve("ci", "m-2", 2, listed) is None
    assert listing.reserve("ci", "m-1", 2, listed) is None
    assert listing.reserve("ci", "m-2", 2, listed) is None


def test_the_deleting_do_not_count_towards_the_limit():
    cloud = Cloud(machine("1"))
    listing = Listing(cloud.list, lambda: 5.0, ManualClock())
    listing.deleted("1")

    assert listing.reserve("ci", "m-2", 1, lambda: listing.machines("ci")) is None


def test_launched_is_the_newest_machine_made_under_that_name_and_not_deleted():
    listing = Listing(Cloud().list, lambda: 5.0, ManualClock())
    listing.created(machine("1"))
    listing.created(machine("2").model_copy(update={"name": "m-1"}))

    launched = listing.launched("m-1", "ci")
    assert launched is not None
    assert launched.id == "2"
    listing.deleted("2")
    launched = listing.launched("m-1", "ci")
    assert launched is not None
    assert launched.id == "1"
    assert listing.launched("m-1", "gpu") is None


def test_known_answers_from_a_fresh_listing_and_own_creates_only():
    clock = ManualClock()
    listing = Listing(Cloud(machine("1")).list, lambda: 5.0, clock)
    listing.machines("ci")
    listing.created(machine("2"))

    assert listing.known("1") == machine("1")
    clock.advance(5)
    assert listing.known("1") is None
    assert listing.known("2") == machine("2")
    listing.deleted("2")
    known = listing.known("2")
    assert known is not None
    assert known.status == Status.DELETING
