"""What both clouds report the same way: creates by pool, type and location, a span per call
with one per HTTP request beneath, the stock memory, and no secret or machine in a metric."""

from __future__ import annotations

from machines.runtime.telemetry import (
    LOCATION,
    MACHINE_ID,
    MACHINE_TYPE,
    OUTCOME,
    OWNER,
    POOL,
    PROVIDER,
)
from testkit.clouds import Cloud
from testkit.specs import OWNER as OWNER_NAME
from testkit.telemetry import Recorded

USER_DATA = "#cloud-config\nwrite_files: [{path: /etc/token, content: s3cr3t-t0ken}]\n"


def where(cloud: Cloud, outcome: str) -> dict[str, str]:
    asked = cloud.spec()
    return {
        PROVIDER: cloud.kind,
        POOL: asked.pool,
        MACHINE_TYPE: asked.machine_type,
        LOCATION: asked.location,
        OUTCOME: outcome,
    }


def test_a_create_is_counted_and_traced_with_its_requests(cloud: Cloud, recorded: Recorded):
    made = cloud.provider().create(cloud.spec(user_data=USER_DATA)).machine

    assert made is not None
    assert recorded.total("orca.machines.creates", where(cloud, "ok")) == 1
    (create,) = recorded.spans("Provider.create")
    assert create.attributes[MACHINE_ID] == made.id
    beneath = recorded.children(create)
    assert beneath
    assert all(span.attributes[PROVIDER] == cloud.kind for span in beneath)
    assert recorded.total("http.client.request.duration", {PROVIDER: cloud.kind}) == len(beneath)


def test_no_stock_is_counted_and_its_memory_is_a_gauge(cloud: Cloud, recorded: Recorded):
    asked = cloud.spec()
    cloud.out_of_stock(asked)

    assert cloud.provider().create(asked).no_stock

    assert recorded.total("orca.machines.creates", where(cloud, "no_stock")) == 1
    remembered = {PROVIDER: cloud.kind, OWNER: OWNER_NAME, MACHINE_TYPE: asked.machine_type}
    (left,) = recorded.values("orca.machines.stock.short", {**remembered, LOCATION: asked.location})
    assert left > 0


def test_no_secret_and_no_machine_reaches_a_metric(cloud: Cloud, recorded: Recorded):
    provider = cloud.provider()
    made = provider.create(cloud.spec(user_data=USER_DATA)).machine
    assert made is not None
    provider.machines("ci")
    provider.delete(made.id)

    metric_values = recorded.metric_attribute_values()
    span_values = recorded.span_attribute_values()
    for secret in (cloud.secret, USER_DATA, "s3cr3t-t0ken"):
        assert not any(secret in value for value in metric_values | span_values)
    assert {made.id, made.name}.isdisjoint(metric_values)
