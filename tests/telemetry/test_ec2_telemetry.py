"""The EC2 provider's metrics and spans, read with the SDK's in-memory reader against moto's
server behind the fault proxy: throttling, 5xx and lost answers counted try by try."""

import pytest

from machines import CloudError, Provider
from machines.runtime.telemetry import (
    CALL,
    HTTP_STATUS,
    LOCATION,
    MACHINE_TYPE,
    OPERATION,
    OUTCOME,
    POOL,
    PROVIDER,
    RPC_METHOD,
    RPC_SYSTEM,
)
from testkit.fault_proxy import Fault, throttled, unavailable
from testkit.hostile_server import EC2_SETTINGS, HTML, HostileServer
from testkit.specs import OWNER, ec2_spec

USER_DATA = "#cloud-config\nruncmd: [echo s3cr3t-user-data]"


def tries(recorded, operation, outcome):
    return recorded.total(
        "orca.machines.requests", {PROVIDER: "ec2", OPERATION: operation, OUTCOME: outcome}
    )


def test_a_launch_is_counted_and_traced(recorded, ec2_cloud):
    provider = ec2_cloud.provider()

    made = provider.create(ec2_spec(user_data=USER_DATA)).machine

    where = {POOL: "ci", MACHINE_TYPE: "t3.micro", LOCATION: "eu-central-1a", OUTCOME: "ok"}
    assert recorded.total("orca.machines.creates", {PROVIDER: "ec2", **where}) == 1
    assert tries(recorded, "RunInstances", "ok") == 1
    (create,) = recorded.spans("Provider.create")
    (launch,) = [s for s in recorded.children(create) if s.name == "EC2.RunInstances"]
    assert launch.attributes[RPC_SYSTEM] == "aws-api"
    assert launch.attributes[RPC_METHOD] == "RunInstances"
    assert launch.attributes[HTTP_STATUS] == 200
    assert create.attributes["orca.machine.id"] == made.id
    assert not any("s3cr3t" in v for v in recorded.span_attribute_values())


def test_throttling_is_counted_try_by_try(recorded, ec2_cloud, fault_proxy):
    provider = ec2_cloud.provider()
    fault_proxy.set_faults(throttled("DescribeInstances", times=2))

    assert provider.machines("ci") == []

    assert tries(recorded, "DescribeInstances", "throttled") == 2
    assert tries(recorded, "DescribeInstances", "ok") == 1
    assert (
        recorded.total(
            "orca.machines.retries", {OPERATION: "DescribeInstances", OUTCOME: "throttled"}
        )
        == 2
    )
    assert fault_proxy.fired["error"] == 2


def test_5xx_is_counted_apart_from_throttling(recorded, ec2_cloud, fault_proxy):
    provider = ec2_cloud.provider()
    fault_proxy.set_faults(unavailable("DescribeInstances", times=1))

    provider.machines("ci")

    assert tries(recorded, "DescribeInstances", "5xx") == 1
    assert tries(recorded, "DescribeInstances", "throttled") == 0
    statuses = sorted(
        a[HTTP_STATUS]
        for a, p in recorded.points("http.client.request.duration")
        for _ in range(p.count)
        if a[OPERATION] == "DescribeInstances"
    )
    assert statuses == [200, 503]


def test_a_lost_launch_answer_is_counted_and_makes_one_instance(recorded, ec2_cloud, fault_proxy):
    provider = ec2_cloud.provider()
    provider.arch("t3.micro")
    fault_proxy.set_faults(Fault("drop_after", "RunInstances", times=1))

    assert provider.create(ec2_spec()).ok

    assert tries(recorded, "RunInstances", "lost_answer") == 1
    assert tries(recorded, "RunInstances", "ok") == 1
    assert len(ec2_cloud.live()) == 1


def test_no_stock_is_counted_and_remembered(recorded, ec2_cloud):
    provider = ec2_cloud.provider()
    ec2_cloud.out_of_stock(ec2_spec())

    assert provider.create(ec2_spec()).no_stock

    assert recorded.total("orca.machines.creates", {OUTCOME: "no_stock"}) == 1
    assert tries(recorded, "RunInstances", "refused") == 1
    assert recorded.total("orca.machines.retries") == 0
    (left,) = recorded.values(
        "orca.machines.stock.short", {MACHINE_TYPE: "t3.micro", LOCATION: "eu-central-1a"}
    )
    assert left > 0


def test_a_delete_is_counted(recorded, ec2_cloud):
    provider = ec2_cloud.provider()
    made = provider.create(ec2_spec()).machine

    assert provider.delete(made.id)

    assert recorded.total("orca.machines.deletes", {PROVIDER: "ec2", OUTCOME: "ok"}) == 1
    assert tries(recorded, "TerminateInstances", "ok") == 1
    assert recorded.total("orca.machines.call.duration", {CALL: "delete"}) == 1
    assert made.id not in recorded.metric_attribute_values()


def test_ec2_states_no_budget_but_its_listing_window(recorded, ec2_cloud):
    provider = ec2_cloud.provider()
    provider.machines("ci")

    assert recorded.values("orca.machines.budget.limit", {PROVIDER: "ec2"}) == []
    assert recorded.values("orca.machines.listing.window", {PROVIDER: "ec2"}) == [5.0]
    assert len(recorded.values("orca.machines.listing.age", {PROVIDER: "ec2"})) == 1


def test_an_answer_that_is_not_ec2s_is_counted(recorded):
    with HostileServer().serving() as hostile:
        hostile.answer_with(HTML)
        provider = Provider.of("ec2", OWNER, {**EC2_SETTINGS, "AWS_ENDPOINT_URL": hostile.url})
        with pytest.raises(CloudError):
            provider.machines("ci")

    assert tries(recorded, "DescribeInstances", "not_the_api") == 1
