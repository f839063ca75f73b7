"""A spanning pool's creates in telemetry: each create at a place is its cloud's provider's
span and count, and a create the spanning provider answers without asking any cloud to
make it (refused first, at the pool's max, every place passed over) is traced and counted
all the same, under the home cloud's kind, as a one-cloud provider's create is."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from machines import MachineSpec
from machines.runtime.pool import Place
from machines.runtime.telemetry import (
    CALL,
    LOCATION,
    MACHINE_NAME,
    MACHINE_TYPE,
    OUTCOME,
    OWNER,
    POOL,
    PROVIDER,
    REASON,
)
from testkit.span import PLACES, Span, pools_json
from testkit.specs import OWNER as OWNER_NAME
from testkit.telemetry import Recorded

FSN1, NBG1, EC2 = PLACES


def counted(recorded: Recorded, spec: MachineSpec, outcome: str) -> float:
    """``orca.machines.creates`` of ``spec``'s pool, type and location with ``outcome``."""
    where = {
        PROVIDER: "hetzner",
        POOL: spec.pool,
        MACHINE_TYPE: spec.machine_type,
        LOCATION: spec.location,
        OUTCOME: outcome,
    }
    return recorded.total("orca.machines.creates", where)


def assert_refused_span(span: ReadableSpan, spec: MachineSpec, says: str) -> None:
    """The span of a refused create of ``spec``, as a one-cloud provider's refusal has it."""
    attributes = dict(span.attributes or {})
    assert attributes[PROVIDER] == "hetzner"
    assert attributes[OWNER] == OWNER_NAME
    assert (attributes[POOL], attributes[MACHINE_NAME]) == (spec.pool, spec.name)
    assert (attributes[MACHINE_TYPE], attributes[LOCATION]) == (spec.machine_type, spec.location)
    assert attributes[OUTCOME] == "failed"
    assert says in str(attributes[REASON])
    assert span.status.status_code == StatusCode.ERROR


def test_a_spec_at_no_place_of_its_pool_is_traced_and_counted_as_refused(
    span: Span, recorded: Recorded
) -> None:
    asked = span.spec("ci-1", Place(cloud="hetzner", machine_type="cax11", location="hel1"))

    created = span.provider().create(asked)

    assert created.failed
    (traced,) = recorded.spans("Provider.create")
    assert_refused_span(traced, asked, "is none of them")
    assert counted(recorded, asked, "failed") == 1
    where = {PROVIDER: "hetzner", CALL: "create", OUTCOME: "failed"}
    assert recorded.total("orca.machines.call.duration", where) == 1


def test_places_of_two_architectures_are_traced_and_counted_as_refused(
    span: Span, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    amd64 = Place(cloud="ec2", machine_type="t3.micro", location="eu-central-1a")
    monkeypatch.setenv("ORCA_POOLS", pools_json(FSN1, amd64))
    asked = span.spec("ci-1")

    created = span.provider().create(asked)

    assert created.failed
    (traced,) = recorded.spans("Provider.create")
    assert_refused_span(traced, asked, f"place {amd64} is amd64")
    assert counted(recorded, asked, "failed") == 1


def test_a_create_at_the_pools_max_is_traced_and_one_made_is_traced_once(
    span: Span, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(max=1))
    provider = span.provider()
    first, second = span.spec("ci-1"), span.spec("ci-2")

    assert provider.create(first).ok
    assert provider.create(second).failed

    made, full = recorded.spans("Provider.create")
    assert dict(made.attributes or {})[MACHINE_NAME] == "ci-1"  # its cloud's own span only
    assert_refused_span(full, second, "the max the stack of owner")
    assert counted(recorded, first, "ok") == 1
    assert counted(recorded, second, "failed") == 1


def test_a_create_whose_places_are_all_passed_over_is_traced_as_no_stock(
    span: Span, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(FSN1, NBG1))
    span.out_of_stock(FSN1, NBG1)  # the catalogue says so: no create request is sent
    asked = span.spec("ci-1")

    created = span.provider().create(asked)

    assert created.no_stock
    assert span.server_posts() == 0
    (traced,) = recorded.spans("Provider.create")
    assert dict(traced.attributes or {})[OUTCOME] == "no_stock"
    assert counted(recorded, asked, "no_stock") == 1
