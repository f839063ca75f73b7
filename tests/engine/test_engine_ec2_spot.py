"""Spot pools of an EC2 stack through the real engine and the stand-in aws plugin, on moto.

The example stack's pools are replaced by a ``spot`` pool and a ``spot-then-on-demand`` one
(at most 2 machines); the tests run in order on one stack: a plain preview shows the queue
of EC2's notices and its rules, up keeps one-time spot instances in the spot pool (the other
keeps its floor on-demand) and makes the queue and rules with EC2's event patterns, the
runtime gets the markets and the queue, an interrupted kept instance (moto cannot
interrupt: ``MotoServer.interrupt``) is drift the refreshing preview names and ``up``
replaces, ``status`` and the CI comment price the spot pool at the spot price beside the
on-demand one, and a market change replaces a pool's kept instances. Then EC2's notices
(moto emits none: the tests put them on the bus in EC2's shapes, ``testkit.ec2_events``)
reach the autoscaler's listing, the replacement of a pool at its max is made at once at its
next place, ``status`` and the preview show the machines under notice, and the queue is
left empty; destroy, the CLI's and plain pulumi's, removes the queue and the rules.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from machines import automation
from machines.automation import ci_preview
from machines.automation.ci_preview import StackResult, render
from machines.cli.exits import ExitCode
from machines.runtime.clouds.ec2.events import RULES
from machines.runtime.clouds.ec2.settings import ORCA_EC2_EVENTS_QUEUE
from machines.runtime.labels import machine_name
from machines.runtime.models import Ending, Market, Status
from machines.runtime.pool import pools_of
from testkit import ec2_events, moto_server
from testkit.commands import machines_cli as cli
from testkit.commands import operator_pulumi
from testkit.engine_stacks import EC2_PASSPHRASE, EC2_STACK
from testkit.specs import spec

pytestmark = pytest.mark.engine

INSTANCE = "aws:ec2/instance:Instance"
SPOT = {"name": "ci", "machineType": "t3.small", "location": "eu-central-1a", "size": 2}
MIXED = {"name": "mix", "machineType": "t3.small", "location": "eu-central-1a", "size": 1, "max": 2}
POOLS = [{**SPOT, "market": "spot"}, {**MIXED, "market": "spot-then-on-demand"}]


CI_1, CI_2, MIX_1 = (
    machine_name("prod", "ci", 1),
    machine_name("prod", "ci", 2),
    machine_name("prod", "mix", 1),
)
"""The instances' cloud names (``Name`` tags); the stack's changes name them without
``.stack``."""


QUEUE = "prod-machine-events"
RULE_NAMES = sorted(f"prod-{kind}" for kind in RULES)


def instances(deployment: Any) -> dict[str, dict[str, Any]]:
    return moto_server.live_instances(deployment.moto.url, "prod")


def plain(deployment: Any, *args: str) -> str:
    """Plain ``pulumi ARGS`` on the stack, as an operator runs it; its output."""
    done = operator_pulumi(
        deployment.project, deployment.state, EC2_STACK, *args, passphrase=EC2_PASSPHRASE
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def queues(deployment: Any) -> list[str]:
    return moto_server.client(deployment.moto.url, "sqs").list_queues().get("QueueUrls", [])


def rules(deployment: Any) -> dict[str, dict[str, Any]]:
    """The account's EventBridge rules by name, with their targets."""
    events = moto_server.client(deployment.moto.url, "events")
    return {
        r["Name"]: {**r, "Targets": events.list_targets_by_rule(Rule=r["Name"])["Targets"]}
        for r in events.list_rules()["Rules"]
    }


@pytest.fixture(scope="module")
def spot_stack(ec2_deployment: Any) -> Any:
    automation.set_config(EC2_STACK, {"orca-machines:pools": POOLS})
    return ec2_deployment


def test_a_plain_preview_shows_the_queue_of_ec2s_notices_its_policy_and_rules(
    spot_stack: Any,
) -> None:
    shown = plain(spot_stack, "preview")

    for token, name in [
        ("aws:sqs:Queue", QUEUE),
        ("aws:sqs:QueuePolicy", QUEUE),
        *(("aws:cloudwatch:EventRule", r) for r in RULE_NAMES),
        *(("aws:cloudwatch:EventTarget", r) for r in RULE_NAMES),
    ]:
        assert any(token in line and name in line for line in shown.splitlines()), (token, name)
    assert queues(spot_stack) == []


def test_up_keeps_spot_instances_in_the_spot_pool_and_an_on_demand_floor_in_the_other(
    spot_stack: Any,
) -> None:
    diff = automation.up(EC2_STACK)

    assert {c.name for c in diff.changes if c.type == INSTANCE} == {
        "prod-ci-1",
        "prod-ci-2",
        "prod-mix-1",
    }
    lifecycle = {name: i.get("InstanceLifecycle", "") for name, i in instances(spot_stack).items()}
    assert lifecycle == {CI_1: "spot", CI_2: "spot", MIX_1: ""}


def test_up_makes_the_owners_queue_and_a_rule_per_notice_with_ec2s_event_patterns(
    spot_stack: Any,
) -> None:
    (queue,) = queues(spot_stack)
    assert queue.endswith(f"/{QUEUE}")
    assert automation.runtime_env(EC2_STACK)[ORCA_EC2_EVENTS_QUEUE] == queue
    sqs = moto_server.client(spot_stack.moto.url, "sqs")
    attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
    assert attributes["MessageRetentionPeriod"] == "300"
    (statement,) = json.loads(attributes["Policy"])["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}

    found = rules(spot_stack)
    assert sorted(found) == RULE_NAMES
    for kind, pattern in RULES.items():
        rule = found[f"prod-{kind}"]
        assert json.loads(rule["EventPattern"]) == pattern
        assert [t["Arn"] for t in rule["Targets"]] == [attributes["QueueArn"]]
    assert (
        found["prod-spot-interruption"]["Arn"]
        in statement["Condition"]["ArnEquals"]["aws:SourceArn"]
    )


def test_the_runtime_gets_each_pools_market_from_the_stack(spot_stack: Any) -> None:
    pools = pools_of(automation.runtime_env(EC2_STACK))
    markets = {name: p.market.value for name, p in pools.items() if p.market != Market.ON_DEMAND}
    assert markets == {"ci": "spot", "mix": "spot-then-on-demand"}
    provider = automation.provider(EC2_STACK)
    assert [m.market for m in provider.machines("ci")] == [Market.SPOT, Market.SPOT]
    made = provider.create(spec("mix-a1", cloud="ec2", machine_type="t3.small", pool="mix"))
    assert made.machine is not None, made.reason
    assert made.machine.market == Market.SPOT


def test_preview_after_up_has_no_changes(spot_stack: Any) -> None:
    assert not automation.preview(EC2_STACK).has_changes


def test_an_interrupted_kept_instance_is_drift_the_refreshing_preview_names(
    spot_stack: Any,
) -> None:
    interrupted = instances(spot_stack)[CI_1]["InstanceId"]
    spot_stack.moto.interrupt(interrupted)

    drifted = cli("preview", EC2_STACK, "--refresh", "--expect-no-changes")

    assert drifted.returncode == ExitCode.ERROR
    assert "has drifted from its configuration: 1 to create" in drifted.stderr
    assert f"EC2 Instance ({interrupted}) was interrupted" in drifted.stdout + drifted.stderr
    [gone] = [m for m in automation.provider(EC2_STACK).machines("ci") if m.id == interrupted]
    assert gone.ending == Ending.INTERRUPTED


def test_up_launches_the_interrupted_instance_again_on_the_spot_market(spot_stack: Any) -> None:
    before = instances(spot_stack)
    diff = automation.up(EC2_STACK)

    assert [(c.op, c.name) for c in diff.changes if c.type == INSTANCE] == [("create", "prod-ci-1")]
    after = instances(spot_stack)
    assert after[CI_1]["InstanceLifecycle"] == "spot"
    assert after[CI_2]["InstanceId"] == before[CI_2]["InstanceId"]


def test_status_prices_the_spot_pool_at_the_spot_price_beside_the_on_demand_one(
    spot_stack: Any,
) -> None:
    done = cli("status", EC2_STACK)

    assert done.returncode == ExitCode.OK, done.stderr
    header, ci, mix, *rest = done.stdout.splitlines()
    assert header.split()[6] == "MARKET"
    assert ci.split()[6] == "spot"
    # moto's spot price is 0.00001 USD an hour everywhere; it has no Price List (its page).
    assert ci.endswith("0.01 USD (on-demand price unknown)")
    assert mix.split()[6] == "spot-then-on-demand"
    assert mix.endswith("price unknown (on-demand price unknown)")
    assert [line for line in rest if line.startswith("AWS's price list cannot be read")]
    assert "<" not in done.stdout + done.stderr


def test_a_market_change_replaces_the_pools_kept_instances(spot_stack: Any) -> None:
    automation.set_config(EC2_STACK, {"orca-machines:pools[1].market": "spot"}, path=True)
    diff = automation.preview(EC2_STACK)
    assert [(c.op, c.name, c.keys) for c in diff.changes if c.type == INSTANCE] == [
        ("replace", "prod-mix-1", ("instanceMarketOptions",))
    ]


def test_the_ci_comment_prices_the_spot_pool_beside_on_demand(spot_stack: Any) -> None:
    [result] = ci_preview.run([EC2_STACK])
    diff, changes = result.diff, result.pools
    assert diff is not None, result.error
    assert changes is not None

    [mix] = [p for p in changes.pools if p.pool == "mix"]
    assert mix.after is not None
    assert (mix.market, mix.after.market) == (Market.SPOT, Market.SPOT)
    # one kept and one autoscaler machine at moto's spot price; on-demand is unreachable here
    assert mix.cost_after == 2 * Decimal("0.00001") * 730
    assert mix.on_demand_after is None
    assert (
        "| `mix` | 1 x t3.small in eu-central-1a → 1 x t3.small (spot) in eu-central-1a | 1 | — "
        "| price unknown → 0.01 USD (spot; on-demand price unknown) |"
    ) in render([StackResult(stack=EC2_STACK, diff=diff, pools=changes)])


def test_events_of_each_kind_reach_the_autoscalers_listing_within_its_window(
    spot_stack: Any,
) -> None:
    provider = automation.provider(EC2_STACK)
    (theirs,) = [m for m in provider.machines("mix") if not m.managed_by]
    going = provider.create(spec("ci-a1", cloud="ec2", machine_type="t3.small", pool="ci"))
    assert going.machine is not None, going.reason
    kept = instances(spot_stack)
    start = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    warned = datetime.now(UTC).replace(microsecond=0)
    ec2_events.put(
        spot_stack.moto.url,
        ec2_events.interruption_warning(theirs.id, at=warned),
        ec2_events.rebalance_recommendation(kept[CI_2]["InstanceId"]),
        ec2_events.scheduled_change([kept[CI_1]["InstanceId"]], start),
        ec2_events.state_change(going.machine.id, "shutting-down"),
    )

    listed = automation.provider(EC2_STACK)  # a listing after the events: within its window
    mix = {m.id: m for m in listed.machines("mix")}
    # By id: the instance of CI_1 interrupted earlier is still listed, gone, under its name.
    ci = {m.id: m for m in listed.machines("ci")}
    ci_1, ci_2 = (kept[name]["InstanceId"] for name in (CI_1, CI_2))

    assert (mix[theirs.id].status, mix[theirs.id].ending, mix[theirs.id].ends_at) == (
        Status.RUNNING,
        Ending.INTERRUPTING,
        warned + timedelta(minutes=2),
    )
    assert (ci[ci_2].ending, ci[ci_2].ends_at) == (Ending.REBALANCE, None)
    assert (ci[ci_1].ending, ci[ci_1].ends_at) == (Ending.SCHEDULED, start)
    going_now = ci[going.machine.id]
    assert (going_now.status, going_now.ending) == (Status.DELETING, Ending.DELETED)
    assert ec2_events.depth(spot_stack.moto.url, queues(spot_stack)[0]) == (0, 0)
    provider.delete(going.machine.id)


def test_a_pool_at_its_max_makes_the_replacement_at_once_at_its_next_place(
    spot_stack: Any,
) -> None:
    provider = automation.provider(EC2_STACK)
    machines = provider.machines("mix")
    assert len(machines) == 2  # its max: the kept one and the autoscaler's under notice
    assert [m.ending for m in machines if not m.managed_by] == [Ending.INTERRUPTING]

    made = provider.create(spec("mix-a2", cloud="ec2", machine_type="t3.small", pool="mix"))

    assert made.ok, made.reason
    assert made.machine is not None
    assert made.machine.market == Market.ON_DEMAND  # the spot market there is out
    assert ("t3.small", "eu-central-1a", Market.SPOT) in {
        (t, loc, m) for t, loc, m, _ in provider.out_of_stock()
    }


def test_status_shows_the_machines_under_notice_per_pool(spot_stack: Any) -> None:
    ec2_events.put(
        spot_stack.moto.url,
        ec2_events.rebalance_recommendation(instances(spot_stack)[CI_2]["InstanceId"]),
    )

    done = cli("status", EC2_STACK)

    assert done.returncode == ExitCode.OK, done.stderr
    header, ci, mix, *_ = done.stdout.splitlines()
    column = header.index("NOTICE")
    assert ci[column:].startswith("1 rebalance ")  # read from the queue by status itself
    assert mix[column:].startswith("1 interrupting ")  # written on the autoscaler's machine
    assert ec2_events.depth(spot_stack.moto.url, queues(spot_stack)[0]) == (0, 0)


def test_the_preview_shows_the_machines_under_notice_per_pool(spot_stack: Any) -> None:
    ec2_events.put(
        spot_stack.moto.url,
        ec2_events.rebalance_recommendation(instances(spot_stack)[CI_2]["InstanceId"]),
    )

    done = cli("preview", EC2_STACK, "--diff")

    assert done.returncode in (ExitCode.OK, ExitCode.CHANGES), done.stderr
    lines = done.stdout.splitlines()
    (ci,) = [line for line in lines if line.startswith("pool ci:")]
    (mix,) = [line for line in lines if line.startswith("pool mix:")]
    assert ci.endswith("under the cloud's notice: 1 rebalance")
    assert mix.endswith("under the cloud's notice: 1 interrupting")


def test_keep_advice_lets_the_machine_under_notice_go_and_the_queue_stays_empty(
    spot_stack: Any,
) -> None:
    provider = automation.provider(EC2_STACK)
    idle = [m for m in provider.machines("mix") if not m.managed_by]

    advice = provider.keep_advice(idle)

    assert advice[0].machine.name == "mix-a1"  # under notice: let go first, now
    assert advice[0].release
    for said in advice:
        if said.release:
            provider.delete(said.machine.id)
    assert ec2_events.depth(spot_stack.moto.url, queues(spot_stack)[0]) == (0, 0)


def test_destroy_leaves_nothing_behind(spot_stack: Any) -> None:
    done = cli("destroy", EC2_STACK, "--yes")
    assert done.returncode == ExitCode.OK, done.stderr
    assert instances(spot_stack) == {}
    assert queues(spot_stack) == []
    assert rules(spot_stack) == {}


def test_a_plain_up_makes_the_queue_and_a_plain_destroy_removes_it(spot_stack: Any) -> None:
    automation.set_config(
        EC2_STACK, {"orca-machines:pools": [{**SPOT, "size": 0, "market": "spot"}]}
    )
    plain(spot_stack, "up", "--yes")
    assert [q.rpartition("/")[2] for q in queues(spot_stack)] == [QUEUE]
    assert sorted(rules(spot_stack)) == RULE_NAMES

    plain(spot_stack, "destroy", "--yes")

    assert queues(spot_stack) == []
    assert rules(spot_stack) == {}
