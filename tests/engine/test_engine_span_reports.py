"""What an operator reads of a stack whose pools span Hetzner (the emulator) and EC2 (moto's
server): ``status``, the preview and the CI comment, place by place, each place's money in
its cloud's currency and each pool's in the stack's (EUR, through its exchangeRates).

The module's tests run in order on one ``span`` stack in a git repository made of the
project copy: up with Hetzner's cax11 out of stock in fsn1 and nbg1, the autoscaler at work on
both clouds (its cheap machine on EC2's spot market while cx23 is out in fsn1), then commits
that change the stack file."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from machines import MachineSpec, automation
from machines.cli.exits import ExitCode
from testkit import moto_server, readme
from testkit.commands import commit, git
from testkit.commands import machines_cli as cli
from testkit.engine_stacks import SPAN_STACK

pytestmark = pytest.mark.engine

ARM_OUT = [
    {"server_type": "cax11", "location": "fsn1"},
    {"server_type": "cax11", "location": "nbg1"},
]
X86_OUT = [{"server_type": "cx23", "location": "fsn1"}]
STACK_FILE = Path("stacks") / f"Pulumi.{SPAN_STACK}.yaml"
SECTION = readme.section("A pool that spans clouds", readme.doc("operating"))
PREVIEW = readme.blocks(SECTION, "")[0]
"""docs/operating.md's preview of pool arm grown to 2: this module's stack at that change."""


def autoscale(name: str, pool: str) -> None:
    provider = automation.provider(SPAN_STACK)
    settings = provider.pool(pool)
    spec = MachineSpec(
        name=name, machine_type=settings.machine_type, location=settings.location, pool=pool
    )
    made = provider.create(spec)
    assert made.ok, made.reason


def pools_of(project: Path) -> list[dict[str, object]]:
    config = yaml.safe_load((project / STACK_FILE).read_text())["config"]
    pools: list[dict[str, object]] = config["orca-machines:pools"]
    return pools


def edit_pools(project: Path, pools: list[dict[str, object]]) -> None:
    path = project / STACK_FILE
    data = yaml.safe_load(path.read_text())
    data["config"]["orca-machines:pools"] = pools
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def repo(span_deployment):
    """The stack up on EC2 for want of Hetzner stock, the autoscaler's machines on both."""
    project = span_deployment.project
    git(project, "init", "-q", "-b", "main")
    commit(project, message="base")
    span_deployment.emulator.control.set_stock(ARM_OUT)
    automation.up(SPAN_STACK, on_output=lambda _line: None)
    autoscale("arm-a1", "arm")
    span_deployment.emulator.control.set_stock(X86_OUT)
    autoscale("cheap-a1", "cheap")
    span_deployment.emulator.control.set_stock([])
    autoscale("arm-a2", "arm")
    return project


def test_status_shows_each_place_and_totals_each_pool_in_the_stack_s_currency(repo):
    done = cli("status", SPAN_STACK, "--json")

    assert done.returncode == ExitCode.OK, done.stderr
    report = json.loads(done.stdout)
    pools = {p["pool"]: p for p in report["pools"]}
    arm = {(p["place"]["cloud"], p["place"]["location"]): p for p in pools["arm"]["places"]}
    assert {k: (p["kept"], p["autoscaler"]) for k, p in arm.items()} == {
        ("hetzner", "fsn1"): (0, 1),
        ("hetzner", "nbg1"): (0, 0),
        ("ec2", "eu-central-1a"): (1, 1),
    }
    assert arm["hetzner", "fsn1"]["currency"] == "EUR"
    assert arm["ec2", "eu-central-1a"]["currency"] == "USD"
    assert Decimal(arm["hetzner", "fsn1"]["monthly"]) > 0
    cheap = pools["cheap"]["places"]
    assert [(p["place"]["cloud"], p["autoscaler"]) for p in cheap] == [("hetzner", 0), ("ec2", 1)]
    spot = Decimal(cheap[1]["monthly"])  # moto answers the spot price; USD
    assert Decimal(pools["cheap"]["monthly"]) == spot * Decimal("0.86")
    assert report["currency"] == "EUR"

    table = cli("status", SPAN_STACK)
    assert table.returncode == ExitCode.OK, table.stderr
    lines = table.stdout.splitlines()
    assert any(line.startswith("arm ") and "3 places" in line for line in lines)
    assert any(line.startswith("  ec2") and "t4g.small" in line for line in lines)


def test_a_preview_says_per_place_where_new_machines_go_and_what_it_deletes(repo):
    pools = pools_of(repo)
    edit_pools(repo, [{**pools[0], "size": 2}, pools[2]])

    done = cli("preview", SPAN_STACK, "--diff")

    assert done.returncode == ExitCode.CHANGES, done.stderr
    text = done.stdout
    assert "pool arm: 1 → 2 kept by the stack, 2 made by the autoscaler, 0 to delete" in text
    assert (
        "  at hetzner cax11 in fsn1: 0 → 1 kept by the stack, 1 made by the autoscaler, "
        "0 to delete" in text
    )
    assert (
        "  at ec2 t4g.small in eu-central-1a: 1 kept by the stack, 1 made by the autoscaler, "
        "0 to delete" in text
    )
    assert (
        "  at ec2 t3.small in eu-central-1a (spot): 0 kept by the stack, 1 made by the "
        "autoscaler, 1 to delete" in text
    )
    assert "+  create  hcloud:index/server:Server  prod-arm-2" in text
    assert all(line in text.splitlines() for line in PREVIEW.splitlines())  # the doc's, as written


def test_the_ci_comment_shows_each_place_with_its_money(repo, tmp_path):
    commit(repo, message="grow arm, drop cheap")
    body = tmp_path / "comment.md"

    done = cli(
        "ci-preview", "--stacks", SPAN_STACK, "--base", "HEAD~1", "--markdown", str(body), "-q"
    )

    assert done.returncode == ExitCode.OK, done.stderr
    text = body.read_text()
    assert "| `arm` | 1 at its places → 2 at its places | 2 |" in text
    assert "| ↳ hetzner cax11 in fsn1 | 0 → 1 | 1 | — | " in text
    assert "| ↳ ec2 t4g.small in eu-central-1a | 1 → 1 | 1 | — | price unknown |" in text
    [cheap] = [line for line in text.splitlines() if "↳ ec2 t3.small" in line]
    assert cheap.endswith(" USD |")
    assert "- `span` removes pool `cheap`: 0 kept machines and 1 autoscaler machine" in text


def test_destroy_leaves_no_machine_on_either_cloud(repo, span_deployment):
    done = cli("destroy", SPAN_STACK, "--yes")

    assert done.returncode == ExitCode.OK, done.stderr
    assert "5 deleted (2 kept by the stack, 3 made by the autoscaler)" in done.stdout
    assert span_deployment.hcloud.servers.get_all() == []
    assert moto_server.live_instances(span_deployment.moto.url, "prod") == {}
