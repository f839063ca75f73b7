"""The pull-request comment ci-preview renders, against golden files reviewed by eye."""

from __future__ import annotations

from decimal import Decimal

from machines.automation import Change, Diff
from machines.automation.ci_preview import LIMIT, MARKER, StackResult, one_line, render
from machines.automation.pool_report import PoolChange, PoolSide, StackPools, stack_changes
from machines.program.reaper import REAPER_TYPE
from testkit.golden import assert_golden

SERVER = "hcloud:index/server:Server"
POOL = "orca:machines:Pool"


def change(op: str, kind: str, name: str, keys: tuple[str, ...] = ()) -> Change:
    return Change(
        op=op,
        type=kind,
        name=name,
        urn=f"urn:pulumi:prod::orca-machines::{kind}::{name}",
        keys=keys,
    )  # type: ignore[arg-type]


PROD_DIFF = Diff(
    stack="prod",
    changes=(
        change("create", SERVER, "prod-x86-3"),
        change("delete", SERVER, "prod-ci-1"),
        change("delete", SERVER, "prod-ci-2"),
        change("delete", SERVER, "prod-ci-3"),
        change("delete", REAPER_TYPE, "ci-autoscaled"),
        change("delete", POOL, "ci"),
        change("update", "hcloud:index/firewall:Firewall", "prod-pools", ("rules",)),
    ),
)
PROD_POOLS = (
    PoolChange(
        pool="ci",
        before=PoolSide(machine_type="cax21", location="fsn1", kept=3),
        after=None,
        autoscaler=7,
        deletes_kept=3,
        deletes_autoscaler=7,
        cost_before=Decimal("109.9000"),
        cost_after=Decimal(0),
    ),
    PoolChange(
        pool="x86",
        before=PoolSide(machine_type="cx23", location="fsn1", kept=2),
        after=PoolSide(machine_type="cx23", location="fsn1", kept=3),
        autoscaler=0,
        deletes_kept=0,
        deletes_autoscaler=0,
        cost_before=Decimal("11.9800"),
        cost_after=Decimal("17.9700"),
    ),
)
PROD = StackResult(
    stack="prod",
    diff=PROD_DIFF,
    pools=StackPools(
        stack="prod",
        changes=stack_changes(PROD_DIFF, "prod", {"ci", "x86"}, PROD_POOLS),
        currency="EUR",
        cost_before=Decimal("121.8800"),
        cost_after=Decimal("17.9700"),
        pools=PROD_POOLS,
    ),
)
STAGING = StackResult(
    stack="staging",
    diff=Diff(stack="staging"),
    pools=StackPools(
        stack="staging", currency="EUR", cost_before=Decimal("6.49"), cost_after=Decimal("6.49")
    ),
)
EC2_DIFF = Diff(stack="aws", changes=(change("create", "aws:ec2/instance:Instance", "aws-gpu-1"),))
EC2_POOLS = (
    PoolChange(
        pool="gpu",
        before=None,
        after=PoolSide(machine_type="g5.xlarge", location="eu-central-1a", kept=1),
        autoscaler=0,
        deletes_kept=0,
        deletes_autoscaler=0,
        cost_before=None,
        cost_after=None,
    ),
)
EC2 = StackResult(
    stack="aws",
    diff=EC2_DIFF,
    pools=StackPools(
        stack="aws",
        changes=stack_changes(EC2_DIFF, "aws", {"gpu"}, EC2_POOLS),
        currency="USD",
        pools=EC2_POOLS,
        notes=("AWS's price list could not be reached: Could not connect to the endpoint URL",),
    ),
)
BROKEN = StackResult(
    stack="broken",
    error="preview of stack broken failed: StackConfigError: stack broken: pools[0].size: "
    "must be >= 0",
)


def test_changes_in_several_stacks_one_comment(monkeypatch):
    assert_golden("several-stacks.md", render([PROD, STAGING, EC2]))


def test_a_failed_preview_is_a_failure_block(monkeypatch):
    monkeypatch.setenv("HCLOUD_TOKEN", "hunter2-secret-token")
    said = f"{BROKEN.error}\n  hcloud: token hunter2-secret-token refused\n"
    broken = StackResult(stack="broken", error=one_line(said))
    text = render([STAGING, broken])
    assert "hunter2" not in text
    assert_golden("failed-preview.md", text)


def test_summary_only_keeps_the_summary_and_the_pool_lines():
    assert_golden("summary-only.md", render([PROD, STAGING], summary_only=True))


def test_a_body_over_the_limit_falls_back_to_the_summary():
    many = tuple(change("create", SERVER, f"prod-big-{n}") for n in range(1, 1200))
    diff = Diff(stack="prod", changes=many)
    assert PROD.pools is not None
    pools = PROD.pools.model_copy(update={"changes": stack_changes(diff, "prod", {"big"}, ())})
    big = StackResult(stack="prod", diff=diff, pools=pools)
    text = render([big])
    assert len(text) < LIMIT
    assert "<details" not in text
    assert "Details left out: they take" in text
    assert "| `prod` | 🟡 machines: 1199 to create; other resources: no changes |" in text


def test_no_stack_is_an_empty_body():
    assert render([]) == ""


def test_every_body_starts_with_the_marker():
    for body in (render([STAGING]), render([BROKEN]), render([PROD], summary_only=True)):
        assert body.startswith(MARKER + "\n")


def test_names_cannot_break_the_table_or_the_html():
    odd = StackResult(
        stack="a|b<c>", diff=Diff(stack="a|b<c>", changes=(change("create", SERVER, "x`|y"),))
    )
    text = render([odd])
    assert "| `a\\|b<c>` |" in text
    assert "<b>a|b&lt;c&gt;</b>" in text
    assert "`x'\\|y`" in text


def test_a_pool_that_buys_spot_shows_its_market_and_the_on_demand_cost_beside() -> None:
    spot = StackResult(
        stack="aws",
        diff=Diff(
            stack="aws", changes=(change("create", "aws:ec2/instance:Instance", "aws-ci-3"),)
        ),
        pools=StackPools(
            stack="aws",
            currency="USD",
            cost_before=Decimal("12.4100"),
            cost_after=Decimal("18.6150"),
            pools=(
                PoolChange(
                    pool="ci",
                    before=PoolSide(
                        machine_type="t3.small", location="eu-central-1a", kept=2, market="spot"
                    ),
                    after=PoolSide(
                        machine_type="t3.small", location="eu-central-1a", kept=3, market="spot"
                    ),
                    autoscaler=0,
                    deletes_kept=0,
                    deletes_autoscaler=0,
                    cost_before=Decimal("12.4100"),
                    cost_after=Decimal("18.6150"),
                    market="spot",
                    on_demand_after=Decimal("45.5520"),
                ),
            ),
        ),
    )

    text = render([spot])

    assert (
        "| `ci` | 2 x t3.small (spot) in eu-central-1a → 3 x t3.small (spot) in eu-central-1a "
        "| 0 | — | 12.41 USD → 18.62 USD (spot; on-demand 45.55 USD) |"
    ) in text
