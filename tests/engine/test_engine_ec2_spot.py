"""Spot pools of an EC2 stack through the real engine and the stand-in aws plugin, on moto.

The example stack's pools are replaced by a ``spot`` pool and a ``spot-then-on-demand`` one;
the tests run in order on one stack: up keeps one-time spot instances in the spot pool (the
other keeps its floor on-demand), the runtime gets the markets, an interrupted kept instance
(moto cannot interrupt: ``MotoServer.interrupt``) is drift the refreshing preview names and
``up`` replaces, ``status`` and the CI comment price the spot pool at the spot price beside
the on-demand one, and a market change replaces a pool's kept instances.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from machines import automation
from machines.automation import ci_preview
from machines.automation.ci_preview import StackResult, render
from machines.cli.exits import ExitCode
from machines.runtime.labels import machine_name
from machines.runtime.models import Ending, Market
from machines.runtime.pool import pools_of
from testkit import moto_server
from testkit.commands import machines_cli as cli
from testkit.engine_stacks import EC2_STACK
from testkit.specs import spec

pytestmark = pytest.mark.engine

INSTANCE = "aws:ec2/instance:Instance"
SPOT = {"name": "ci", "machineType": "t3.small", "location": "eu-central-1a", "size": 2}
MIXED = {"name": "mix", "machineType": "t3.small", "location": "eu-central-1a", "size": 1}
POOLS = [{**SPOT, "market": "spot"}, {**MIXED, "market": "spot-then-on-demand"}]


CI_1, CI_2, MIX_1 = (
    machine_name("prod", "ci", 1),
    machine_name("prod", "ci", 2),
    machine_name("prod", "mix", 1),
)
"""The instances' cloud names (``Name`` tags); the stack's changes name them without
``.stack``."""


def instances(deployment: Any) -> dict[str, dict[str, Any]]:
    return moto_server.live_instances(deployment.moto.url, "prod")


@pytest.fixture(scope="module")
def spot_stack(ec2_deployment: Any) -> Any:
    automation.set_config(EC2_STACK, {"orca-machines:pools": POOLS})
    return ec2_deployment


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


def test_destroy_leaves_nothing_behind(spot_stack: Any) -> None:
    done = cli("destroy", EC2_STACK, "--yes")
    assert done.returncode == ExitCode.OK, done.stderr
    assert instances(spot_stack) == {}
