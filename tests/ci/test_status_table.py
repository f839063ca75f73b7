"""``status``'s table of a stack's pools: the market column and the on-demand cost beside
a pool that buys spot."""

from __future__ import annotations

from decimal import Decimal

from machines.automation.availability import Stock
from machines.automation.status import PoolStatus, StackStatus
from machines.runtime.models import Market


def test_a_spot_pools_status_shows_its_market_and_the_on_demand_cost_beside() -> None:
    def pool(name: str, market: Market, on_demand: Decimal | None) -> PoolStatus:
        return PoolStatus(
            pool=name,
            machine_type="t3.small",
            location="eu-central-1a",
            arch="amd64",
            size=1,
            max=None,
            kept={"running": 1},
            autoscaler={},
            stock=Stock(locations=("eu-central-1a",), offered_only=True),
            monthly=Decimal("4.5"),
            market=market,
            on_demand_monthly=on_demand,
        )

    status = StackStatus(
        stack="aws",
        provider="ec2",
        owner="aws",
        currency="USD",
        pools=(pool("ci", Market.SPOT, Decimal("15.184")), pool("ops", Market.ON_DEMAND, None)),
    )

    header, ci, ops, _ = status.table().splitlines()
    assert header.split()[6] == "MARKET"
    assert ci.split()[6] == "spot"
    assert ci.endswith("4.50 USD (on-demand 15.18 USD)")
    assert ops.split()[6] == "on-demand"
    assert ops.endswith("4.50 USD")


def test_a_stack_of_on_demand_pools_shows_no_market_column() -> None:
    status = StackStatus(stack="s", provider="hetzner", owner="s", currency="EUR", pools=())
    assert "MARKET" not in status.table()


def test_machines_under_notice_show_by_kind_in_a_column_of_their_own() -> None:
    def pool(name: str, notices: dict[str, int]) -> PoolStatus:
        return PoolStatus(
            pool=name,
            machine_type="t3.small",
            location="eu-central-1a",
            arch="amd64",
            size=2,
            max=None,
            kept={"running": 2},
            autoscaler={"running": 1},
            stock=Stock(locations=("eu-central-1a",), offered_only=True),
            monthly=Decimal("4.5"),
            market=Market.SPOT,
            notices=notices,
        )

    status = StackStatus(
        stack="aws",
        provider="ec2",
        owner="aws",
        currency="USD",
        pools=(pool("ci", {"interrupting": 1, "rebalance": 2}), pool("ops", {})),
    )

    header, ci, ops, _ = status.table().splitlines()
    column = header.index("NOTICE")
    assert ci[column:].startswith("1 interrupting, 2 rebalance ")
    assert ops[column:].startswith("- ")
    assert status.report()["pools"][0]["notices"] == {"interrupting": 1, "rebalance": 2}


def test_no_notice_column_while_no_machine_is_under_notice() -> None:
    status = StackStatus(stack="s", provider="ec2", owner="s", currency="USD", pools=())
    assert "NOTICE" not in status.table()
