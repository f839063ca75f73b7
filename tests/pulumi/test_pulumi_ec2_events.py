"""The queue of EC2's notices, under mocks: a stack whose pools buy spot on EC2 (a spanning
pool's spot place too) makes an SQS queue and EventBridge rules for the spot interruption
warning, the rebalance recommendation, state changes and AWS Health's scheduled changes,
with the policy that lets EventBridge send, named by owner; its ``env`` names the queue."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from machines.program.config.loader import load
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT, StackConfig
from machines.runtime.clouds.ec2.events import RULES
from machines.runtime.clouds.ec2.settings import ORCA_EC2_EVENTS_QUEUE
from testkit.program_harness import SPANNING_STACKS, Run, ec2, run, stack_file, stack_name

POOLS = f"{PROJECT}:pools"
QUEUE = "aws:sqs/queue:Queue"
POLICY = "aws:sqs/queuePolicy:QueuePolicy"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
URL = "https://sqs.eu-central-1.amazonaws.com/123456789012/prod-machine-events"


def with_markets(config: dict[str, Any], *markets: str) -> dict[str, Any]:
    changed = copy.deepcopy(config)
    for pool, market in zip(changed[POOLS], markets, strict=False):
        pool["market"] = market
    return changed


@pytest.fixture(scope="module")
def spot() -> Run:
    return run(with_markets(ec2(), "spot", "on-demand"), stack="prod")


def test_a_spot_pool_makes_the_owners_queue_kept_five_minutes_and_encrypted(spot: Run) -> None:
    (queue,) = spot.of_type(QUEUE)
    assert queue.name == "prod-machine-events"
    assert queue.inputs["name"] == "prod-machine-events"
    assert queue.inputs["messageRetentionSeconds"] == 300
    assert queue.inputs["sqsManagedSseEnabled"] is True
    assert queue.inputs["tags"] == {"Name": "prod-machine-events", "orca-owner": "prod"}


def test_a_rule_per_kind_of_notice_with_ec2s_event_patterns_sends_to_the_queue(spot: Run) -> None:
    rules = {r.inputs["name"]: json.loads(r.inputs["eventPattern"]) for r in spot.of_type(RULE)}
    assert rules == {f"prod-{kind}": dict(pattern) for kind, pattern in RULES.items()}
    assert rules["prod-spot-interruption"] == {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Spot Instance Interruption Warning"],
    }
    assert rules["prod-scheduled-change"]["detail"] == {
        "service": ["EC2"],
        "eventTypeCategory": ["scheduledChange"],
    }
    targets = {t.inputs["rule"]: t.inputs for t in spot.of_type(TARGET)}
    assert set(targets) == set(rules)
    assert {t["arn"] for t in targets.values()} == {
        "arn:aws:sqs:eu-central-1:123456789012:prod-machine-events"
    }
    assert {t["targetId"] for t in targets.values()} == {"machine-events"}


def test_the_queue_policy_lets_eventbridge_send_for_these_rules_only(spot: Run) -> None:
    (policy,) = spot.of_type(POLICY)
    assert policy.inputs["queueUrl"] == URL
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Resource"] == "arn:aws:sqs:eu-central-1:123456789012:prod-machine-events"
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"] == sorted(
        f"arn:aws:events:eu-central-1:123456789012:rule/prod-{kind}" for kind in RULES
    )


def test_the_env_output_names_the_queue(spot: Run) -> None:
    assert spot.outputs["env"][ORCA_EC2_EVENTS_QUEUE] == URL


def test_a_stack_without_spot_pools_makes_none_of_it() -> None:
    result = run(ec2(), stack="prod")
    for kind in (QUEUE, POLICY, RULE, TARGET):
        assert result.of_type(kind) == []
    assert ORCA_EC2_EVENTS_QUEUE not in result.outputs["env"]


def test_a_spot_then_on_demand_pool_makes_it_too() -> None:
    result = run(with_markets(ec2(), "on-demand", "spot-then-on-demand"), stack="ci")
    assert [q.name for q in result.of_type(QUEUE)] == ["ci-machine-events"]
    assert len(result.of_type(RULE)) == len(RULES)


def span_example() -> dict[str, Any]:
    (path,) = [p for p in SPANNING_STACKS if stack_name(p) == "span-example"]
    return stack_file(path)


def test_a_spanning_pools_spot_place_on_ec2_makes_it_on_ec2() -> None:
    config = span_example()
    (cheap,) = [p for p in config[POOLS] if p["name"] == "cheap"]
    assert cheap["places"][-1] == {
        "cloud": "ec2",
        "machineType": "t3.small",
        "location": "eu-central-1a",
        "market": "spot",
    }
    on_demand = copy.deepcopy(config)
    for pool in on_demand[POOLS]:
        for place in pool.get("places", []):
            place.pop("market", None)
    assert run(on_demand, stack="prod").of_type(QUEUE) == []

    result = run(config, stack="prod")

    assert [q.name for q in result.of_type(QUEUE)] == ["prod-machine-events"]
    assert result.outputs["env"][ORCA_EC2_EVENTS_QUEUE] == URL
    assert result.outputs["env"]["HCLOUD_ENDPOINT"]


def test_an_owner_too_long_for_the_rules_names_is_one_line_at_the_spot_pool() -> None:
    owner = "o" * 50
    config = with_markets(ec2(owner=owner), "spot", "on-demand")
    with pytest.raises(StackConfigError) as raised:
        load(StackConfig.from_stack_file(config), "prod")
    ((key, why),) = raised.value.problems
    assert key == "pools[0].market"
    assert f"owner {owner!r} is too long to name the EventBridge rules" in why
    assert "choose an owner of at most 46 characters" in why
    load(StackConfig.from_stack_file(ec2(owner=owner)), "prod")  # no spot pool: no rules
