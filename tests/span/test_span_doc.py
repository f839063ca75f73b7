"""docs/runtime.md's "A pool that spans clouds", run as written: its ORCA_POOLS is
``testkit.span``'s pool, and its snippet gets a machine on EC2 when both Hetzner places
are out, as its comments say."""

from __future__ import annotations

import json
from typing import Any

import pytest

from machines import Created, Machine
from machines.runtime.pool import pools_of
from testkit import readme
from testkit.span import PLACES, POOL, Span

SECTION = readme.section("A pool that spans clouds", readme.doc("runtime"))
POOLS = readme.blocks(SECTION, "json")[0]
SNIPPET = readme.blocks(SECTION, "python")[0]


def test_the_sections_pools_are_the_tests_pool() -> None:
    pool = pools_of({"ORCA_POOLS": json.dumps(json.loads(POOLS))}, "hetzner")[POOL]

    assert pool.places == PLACES
    assert (pool.machine_type, pool.location, pool.max) == ("cax11", "fsn1", 20)


def test_the_sections_snippet_runs_as_written(span: Span, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCA_POOLS", json.dumps(json.loads(POOLS)))
    span.out_of_stock(*PLACES[:2])
    names: dict[str, Any] = {}

    exec(compile(SNIPPET, "docs/runtime.md", "exec"), names)  # the doc's own text

    created: Created = names["created"]
    machine: Machine = names["machine"]
    assert created.ok, created.reason
    assert (machine.cloud, machine.machine_type, machine.location) == (
        "ec2",
        "t4g.micro",
        "eu-central-1a",
    )
    assert machine.id.startswith("ec2:i-")
    assert [why.split(":")[0] for why in created.passed_over] == [str(p) for p in PLACES[:2]]
    assert span.live() == {"hetzner": [], "ec2": []}
