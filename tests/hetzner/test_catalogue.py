"""Hetzner's catalogue is one object: one request answers arch, sells, offers and a
create's checks; stock is read again after ORCA_OFFERS_TTL, architectures are not."""

from __future__ import annotations

import threading

from machines import MachineSpec

SERVER_TYPES = "GET /v1/server_types"


def test_arch_sells_offers_and_a_create_cost_one_request(clocked_hetzner, emulator):
    clocked_hetzner.arch("cax11")
    clocked_hetzner.sells("cx23", "fsn1")
    clocked_hetzner.offers("ccx13")
    clocked_hetzner.create(
        MachineSpec(name="prod-ci-1", machine_type="cax11", location="nbg1", pool="ci")
    )

    assert emulator.control.requests().get(SERVER_TYPES) == 1


def test_stock_is_read_again_after_the_ttl_and_architectures_are_not(
    clocked_hetzner, emulator, clock
):
    clocked_hetzner.offers("cax11")
    clock.advance(60)
    clocked_hetzner.arch("cax11")
    clocked_hetzner.sells("cax11", "nbg1")
    assert emulator.control.requests().get(SERVER_TYPES) == 1

    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    assert "nbg1" not in clocked_hetzner.offers("cax11")
    assert emulator.control.requests().get(SERVER_TYPES) == 2


def test_threads_asking_at_once_share_one_read(clocked_hetzner, emulator):
    start = threading.Barrier(8)
    found: list[str] = []

    def ask() -> None:
        start.wait()
        found.append(clocked_hetzner.arch("cax11"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert found == ["arm64"] * 8
    assert emulator.control.requests().get(SERVER_TYPES) == 1


def test_an_unknown_type_is_one_message_wherever_it_is_asked(clocked_hetzner):
    said = clocked_hetzner.sells("cx999", "fsn1")
    created = clocked_hetzner.create(
        MachineSpec(name="prod-ci-1", machine_type="cx999", location="fsn1", pool="ci")
    )

    assert said is not None
    assert said.startswith("Hetzner has no server type 'cx999': use one of ")
    assert created.reason == said


def test_an_unknown_type_is_looked_for_again_once_the_read_is_older_than_the_ttl(
    clocked_hetzner, emulator, clock
):
    clocked_hetzner.arch("cax11")
    clocked_hetzner.sells("cx999", "fsn1")
    assert emulator.control.requests().get(SERVER_TYPES) == 1

    clock.advance(60)
    clocked_hetzner.sells("cx999", "fsn1")

    assert emulator.control.requests().get(SERVER_TYPES) == 2
