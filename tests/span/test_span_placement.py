"""Where a stack puts the machines of a pool whose places span Hetzner (the emulator) and EC2
(moto behind the fault proxy): a new machine at the first place with stock, a kept one where
it is, and no guess when the clouds cannot be read (``machines.program.placement``)."""

from __future__ import annotations

import os

import pytest

from machines.program.config.loader import load
from machines.program.config.stack_config import StackConfig
from machines.program.placement import placements, spanning_pools
from machines.program.reading import ReadError, read_pools
from machines.runtime.labels import stack_labels
from testkit import hetzner
from testkit.span import PLACES, POOL, Span
from testkit.specs import OWNER

FSN1, NBG1, EC2 = PLACES


def placed(span: Span, size: int, environ: dict[str, str] | None = None) -> list[str]:
    """Where a stack of pool ``ci`` of ``PLACES`` and ``size`` puts each machine now."""
    places = [p.model_dump(mode="json", by_alias=True, exclude_defaults=True) for p in PLACES]
    config = span.stack_config({"name": POOL, "size": size, "places": places})
    deployment = load(StackConfig.from_stack_file(config), "prod")
    env = {**os.environ, **(environ or {})}
    found = placements(deployment, read_pools(deployment, env, spanning_pools(deployment)), env)
    return [str(p) for p in found[POOL].places]


def kept_server(span: Span, index: int, location: str) -> None:
    """Machine ``index`` of the stack's pool ``ci`` on Hetzner, as an earlier ``up`` made it."""
    client = hetzner.client(span.emulator)
    image = client.images.get_by_name_and_architecture("ubuntu-24.04", "arm")
    client.servers.create(
        name=f"{OWNER}-{POOL}-{index}.stack",
        server_type=client.server_types.get_by_name("cax11"),
        image=image,
        location=client.locations.get_by_name(location),
        labels=stack_labels(POOL, OWNER),
    )


def test_new_machines_go_to_the_first_place_with_stock(span: Span) -> None:
    assert placed(span, 2) == [str(FSN1), str(FSN1)]

    span.out_of_stock(FSN1, NBG1)

    assert placed(span, 2) == [str(EC2), str(EC2)]


def test_a_kept_machine_stays_where_it_is_whatever_the_stock(span: Span) -> None:
    kept_server(span, 1, "nbg1")

    assert placed(span, 2) == [str(NBG1), str(FSN1)]
    span.out_of_stock(NBG1)
    assert placed(span, 2) == [str(NBG1), str(FSN1)]
    span.out_of_stock(FSN1, NBG1)
    assert placed(span, 3) == [str(NBG1), str(EC2), str(EC2)]


def test_no_place_is_guessed_when_the_clouds_cannot_be_read(span: Span) -> None:
    with pytest.raises(ReadError, match="pool ci names its places, and where its machines"):
        placed(span, 1, {"HCLOUD_TOKEN": "x" * 64})


def test_a_pool_that_keeps_no_machine_asks_nothing(span: Span) -> None:
    before = span.emulator.control.requests()
    assert placed(span, 0, {"HCLOUD_TOKEN": "x" * 64}) == []
    assert span.emulator.control.requests() == before
