"""EC2's notices on moto's server: the queue and rules a stack with spot pools makes, and
the events EC2 and AWS Health would put on the bus, in their documented shapes.

moto delivers ``PutEvents`` to an SQS target through a rule's event pattern, but emits no
EC2 event by itself (it never warns of an interruption, recommends a rebalance or schedules
a change; a terminate sends no state change): the tests put each event as EC2 documents it
(the EC2 User Guide's "Spot Instance interruption notices", "EC2 instance rebalance
recommendations" and "Amazon EC2 state change events", AWS Health's "scheduledChange"),
with ``put``. ``make_queue`` builds what the stack's program builds (``clouds.ec2.events``:
its queue and rules), for tests of the runtime without the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from machines.runtime.clouds.ec2.events import (
    EC2_SOURCE,
    HEALTH_EVENT,
    HEALTH_SOURCE,
    INTERRUPTION_WARNING,
    QUEUE_RETENTION,
    REBALANCE_RECOMMENDATION,
    RULES,
    SCHEDULED_CHANGE,
    STATE_CHANGE,
    queue_name,
    rule_name,
)
from testkit.moto_server import REGION, client

ACCOUNT = "123456789012"
"""moto's default account: the events' ``account`` and the instances' ARNs."""


def make_queue(url: str, owner: str) -> str:
    """The owner's queue and rules, as a stack with spot pools makes them; the queue's URL."""
    sqs, events = client(url, "sqs"), client(url, "events")
    queue = sqs.create_queue(
        QueueName=queue_name(owner),
        Attributes={"MessageRetentionPeriod": str(QUEUE_RETENTION)},
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    for rule, pattern in RULES.items():
        name = rule_name(owner, rule)
        events.put_rule(Name=name, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=name, Targets=[{"Id": "queue", "Arn": arn}])
    queue_url: str = queue
    return queue_url


def _instance_arn(instance_id: str) -> str:
    return f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance_id}"


def _entry(
    source: str, detail_type: str, detail: Mapping[str, Any], resources: list[str], at: datetime
) -> dict[str, Any]:
    return {
        "Source": source,
        "DetailType": detail_type,
        "Detail": json.dumps(detail),
        "Resources": resources,
        "Time": at,
    }


def interruption_warning(
    instance_id: str, at: datetime | None = None, action: str = "terminate"
) -> dict[str, Any]:
    """EC2's "EC2 Spot Instance Interruption Warning": the capacity goes two minutes after
    ``at`` (now)."""
    return _entry(
        EC2_SOURCE,
        INTERRUPTION_WARNING,
        {"instance-id": instance_id, "instance-action": action},
        [_instance_arn(instance_id)],
        at or datetime.now(UTC),
    )


def rebalance_recommendation(instance_id: str, at: datetime | None = None) -> dict[str, Any]:
    """EC2's "EC2 Instance Rebalance Recommendation"."""
    return _entry(
        EC2_SOURCE,
        REBALANCE_RECOMMENDATION,
        {"instance-id": instance_id},
        [_instance_arn(instance_id)],
        at or datetime.now(UTC),
    )


def state_change(instance_id: str, state: str, at: datetime | None = None) -> dict[str, Any]:
    """EC2's "EC2 Instance State-change Notification" of ``state``."""
    return _entry(
        EC2_SOURCE,
        STATE_CHANGE,
        {"instance-id": instance_id, "state": state},
        [_instance_arn(instance_id)],
        at or datetime.now(UTC),
    )


def scheduled_change(
    instance_ids: Iterable[str], start: datetime, at: datetime | None = None
) -> dict[str, Any]:
    """AWS Health's "AWS Health Event" of an EC2 scheduled change (an instance retirement)
    that starts at ``start``, as AWS Health writes its times (RFC 1123, GMT)."""
    ids = list(instance_ids)
    detail = {
        "eventArn": f"arn:aws:health:{REGION}::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/1",
        "service": "EC2",
        "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
        "eventTypeCategory": SCHEDULED_CHANGE,
        "startTime": start.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT"),
        "eventDescription": [{"language": "en_US", "latestDescription": "retirement"}],
        "affectedEntities": [{"entityValue": i} for i in ids],
    }
    return _entry(
        HEALTH_SOURCE,
        HEALTH_EVENT,
        detail,
        [_instance_arn(i) for i in ids],
        at or datetime.now(UTC),
    )


def put(url: str, *entries: Mapping[str, Any]) -> None:
    """Put the events on the default bus, as EC2 and AWS Health do; each is accepted."""
    answer = client(url, "events").put_events(Entries=list(entries))
    assert answer["FailedEntryCount"] == 0, answer


def depth(url: str, queue: str) -> tuple[int, int]:
    """The queue's messages now: (visible, received and not yet deleted)."""
    attributes = client(url, "sqs").get_queue_attributes(
        QueueUrl=queue,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )
