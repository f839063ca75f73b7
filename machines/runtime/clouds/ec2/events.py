"""EC2's events as EventBridge delivers them: the rules a stack makes, and what each says.

EC2 says a spot machine will go before it goes, on EventBridge's default bus: an "EC2 Spot
Instance Interruption Warning" two minutes before it takes the capacity back, an "EC2
Instance Rebalance Recommendation" when the machine's risk rises (often well before, and
sometimes never followed by an interruption), an "EC2 Instance State-change Notification"
as it changes state, and AWS Health a "scheduledChange" event for a maintenance or
retirement it scheduled. A deployment with spot pools makes an SQS queue and one rule per
kind that fills it (``RULES``, named by owner: ``queue_name``, ``rule_name``), as
Karpenter's interruption queue and the AWS Node Termination Handler's queue mode do; the
runtime reads it (``clouds.ec2.notices``). The rules and the event shapes are the program's
and the runtime's both, so they are written here once; this module loads no AWS library.
"""

from __future__ import annotations

import email.utils
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from machines.runtime.models import Ending

EC2_SOURCE = "aws.ec2"
HEALTH_SOURCE = "aws.health"
INTERRUPTION_WARNING = "EC2 Spot Instance Interruption Warning"
REBALANCE_RECOMMENDATION = "EC2 Instance Rebalance Recommendation"
STATE_CHANGE = "EC2 Instance State-change Notification"
HEALTH_EVENT = "AWS Health Event"
SCHEDULED_CHANGE = "scheduledChange"

INTERRUPTION_NOTICE = timedelta(minutes=2)
"""How long before EC2 takes a spot machine's capacity back its warning comes."""

GOING_STATES = ("stopping", "stopped", "shutting-down", "terminated")
"""The states a state change says a machine is going in (the state-change rule's filter):
a listing may not show it yet (EC2's lists lag), the event does."""

RULES: Mapping[str, Mapping[str, Any]] = {
    "spot-interruption": {"source": [EC2_SOURCE], "detail-type": [INTERRUPTION_WARNING]},
    "rebalance": {"source": [EC2_SOURCE], "detail-type": [REBALANCE_RECOMMENDATION]},
    "state-change": {
        "source": [EC2_SOURCE],
        "detail-type": [STATE_CHANGE],
        "detail": {"state": list(GOING_STATES)},
    },
    "scheduled-change": {
        "source": [HEALTH_SOURCE],
        "detail-type": [HEALTH_EVENT],
        "detail": {"service": ["EC2"], "eventTypeCategory": [SCHEDULED_CHANGE]},
    },
}
"""Each EventBridge rule a deployment with spot pools makes, by the name it is known by,
and its event pattern: EC2's events, and AWS Health's scheduled changes of EC2."""

QUEUE = "machine-events"
"""The queue's name after the owner's: ``<owner>-machine-events``."""

QUEUE_RETENTION = 300
"""Seconds the queue keeps a message no reader deleted (Karpenter's queue keeps 300): a
notice is worth little after five minutes, and the queue never fills."""

_QUEUE_NAME_MAX = 80
_RULE_NAME_MAX = 64
_QUEUE_NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-_")


def queue_name(owner: str) -> str:
    """The owner's queue: two stacks of one account never read each other's."""
    return f"{owner}-{QUEUE}"


def rule_name(owner: str, rule: str) -> str:
    """The owner's rule ``rule`` (a key of ``RULES``)."""
    return f"{owner}-{rule}"


def names_problem(owner: str) -> str:
    """Why the queue and rules cannot be named after ``owner`` (SQS names take 1 to 80
    letters, digits, ``-`` and ``_``; EventBridge rule names 1 to 64 of those and ``.``);
    empty when they can."""
    longest = max((rule_name(owner, r) for r in RULES), key=len)
    if len(longest) > _RULE_NAME_MAX or len(queue_name(owner)) > _QUEUE_NAME_MAX:
        most = _RULE_NAME_MAX - (len(longest) - len(owner))
        return (
            f"owner {owner!r} is too long to name the EventBridge rules of EC2's notices a "
            f"spot pool needs ({longest!r} is over {_RULE_NAME_MAX} characters): choose an "
            f"owner of at most {most} characters"
        )
    if not set(owner) <= _QUEUE_NAME_CHARACTERS:
        return (
            f"owner {owner!r} cannot name the SQS queue of EC2's notices a spot pool needs "
            "(a queue's name takes letters, digits, '-' and '_' only): choose an owner "
            "without '.'"
        )
    return ""


@dataclass(frozen=True)
class Notice:
    """A notice that a running instance will go: its kind and, where said, when."""

    ending: Ending
    ends_at: datetime | None = None

    @property
    def rank(self) -> int:
        """Which of two notices of one instance stands: an interruption warning before a
        rebalance recommendation before a scheduled change."""
        return _RANKS[self.ending]


_RANKS = {Ending.INTERRUPTING: 3, Ending.REBALANCE: 2, Ending.SCHEDULED: 1}


@dataclass(frozen=True)
class Said:
    """What one message says, per instance id: notices, and states it went into."""

    notices: Mapping[str, Notice] = field(default_factory=dict)
    states: Mapping[str, str] = field(default_factory=dict)

    @property
    def instances(self) -> frozenset[str]:
        return frozenset(self.notices) | frozenset(self.states)


class _Event(BaseModel):
    """An EventBridge event's envelope, as an SQS target receives it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    source: str
    detail_type: str = Field(alias="detail-type")
    time: datetime
    resources: list[str] = Field(default_factory=list)
    detail: dict[str, Any] = Field(default_factory=dict)


def said(body: str) -> Said:
    """What a message's body says: an event of one of ``RULES``' kinds in EC2's (or AWS
    Health's) documented shape; nothing for any other body, which is left for the reader to
    delete."""
    try:
        event = _Event.model_validate_json(body)
    except ValidationError:
        return Said()
    detail = event.detail
    if event.source == EC2_SOURCE:
        return _ec2_said(event)
    if (
        event.source == HEALTH_SOURCE
        and detail.get("service") == "EC2"
        and detail.get("eventTypeCategory") == SCHEDULED_CHANGE
    ):
        notice = Notice(Ending.SCHEDULED, _health_time(detail.get("startTime")))
        return Said(notices={i: notice for i in _affected(detail, event.resources)})
    return Said()


def _ec2_said(event: _Event) -> Said:
    """What an event of EC2's says of the instance it names."""
    at = event.time if event.time.tzinfo else event.time.replace(tzinfo=UTC)
    instance = event.detail.get("instance-id")
    state = event.detail.get("state")
    if not isinstance(instance, str):
        return Said()
    if event.detail_type == INTERRUPTION_WARNING:
        return Said(notices={instance: Notice(Ending.INTERRUPTING, at + INTERRUPTION_NOTICE)})
    if event.detail_type == REBALANCE_RECOMMENDATION:
        return Said(notices={instance: Notice(Ending.REBALANCE)})
    if event.detail_type == STATE_CHANGE and state in GOING_STATES:
        return Said(states={instance: str(state)})
    return Said()


def _affected(detail: Mapping[str, Any], resources: list[str]) -> list[str]:
    """The instance ids an AWS Health event names: its affected entities, else its
    resources' (an instance's ARN ends in ``instance/<id>``)."""
    entities = detail.get("affectedEntities")
    named = [
        str(e.get("entityValue", ""))
        for e in entities if isinstance(e, dict)
    ] if isinstance(entities, list) else []  # fmt: skip
    named += [r.rpartition("/")[2] for r in resources if ":instance/" in r]
    return list(dict.fromkeys(i for i in named if i.startswith("i-")))


def _health_time(value: object) -> datetime | None:
    """An AWS Health event's ``startTime``: RFC 1123 as it sends it ("Sat, 05 Jun 2021
    14:00:00 GMT"), or ISO 8601; None when it is neither."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
