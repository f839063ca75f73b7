"""ci-preview, status and drift through the real engine against the emulator.

The module's tests run in order on one ``local`` stack in a git repository made of the
project copy: up, then the autoscaler adds machines, then commits change the stack file or
the program, and ``python -m machines ci-preview`` is run as CI runs it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from machines import MachineSpec, automation
from machines.automation import ci_preview
from machines.automation.ci_preview import MARKER
from machines.cli.exits import ExitCode
from testkit.commands import commit, git
from testkit.commands import machines_cli as cli
from testkit.hetzner import TOKEN

pytestmark = pytest.mark.engine


def edit_pools(project: Path, pools: list[dict[str, object]]) -> None:
    path = project / "stacks" / "Pulumi.local.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["orca-machines:pools"] = pools
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def server_price(deployment, machine_type: str, location: str, per: str = "monthly") -> Decimal:
    """The emulator's own price of a server alone, read with the official client."""
    kind = deployment.hcloud.server_types.get_by_name(machine_type)
    [price] = [p for p in kind.prices if p["location"] == location]
    return Decimal(price[f"price_{per}"]["net"])


def net_monthly(deployment, machine_type: str, location: str, per: str = "monthly") -> Decimal:
    """The emulator's own price of a server with its public IPv4 (Hetzner bills the primary
    IPv4 apart, at its own hourly and monthly prices), read with the official client: the
    independent check."""
    pricing = deployment.hcloud.request("GET", "/pricing")["pricing"]
    [ipv4] = [p for p in pricing["primary_ips"] if p["type"] == "ipv4"]
    [ip_price] = [p for p in ipv4["prices"] if p["location"] == location]
    return server_price(deployment, machine_type, location, per) + Decimal(
        ip_price[f"price_{per}"]["net"]
    )


def one_pool_stack(deployment, pool: str, machine_type: str) -> dict[str, object]:
    """A Hetzner stack file's settings on the emulator: one pool of one machine in fsn1."""
    return {
        "config": {
            "hcloud:endpoint": deployment.emulator.url,
            "orca-machines:provider": "hetzner",
            "orca-machines:pools": [
                {"name": pool, "machineType": machine_type, "location": "fsn1", "size": 1}
            ],
        }
    }


def cents(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01")))


@pytest.fixture(scope="module")
def repo(deployment):
    """The project copy as a git repository, the stack brought up, the autoscaler at work."""
    project = deployment.project
    git(project, "init", "-q", "-b", "main")
    commit(project, message="base")
    automation.up("local", on_output=lambda _line: None)
    provider = automation.provider("local")
    for n in (1, 2):
        spec = MachineSpec(name=f"auto-arm-{n}", machine_type="cax11", location="fsn1", pool="arm")
        assert provider.create(spec).ok
    return project


def test_no_stack_affected_is_an_empty_body_and_success(repo, tmp_path):
    (repo / "NOTES.txt").write_text("not part of the program\n")
    commit(repo, message="notes")
    body = tmp_path / "comment.md"
    done = cli("ci-preview", "--stacks", "local", "--base", "HEAD~1", "--markdown", str(body), "-q")
    assert (done.returncode, done.stdout, done.stderr) == (ExitCode.OK, "", "")
    assert body.read_text() == ""


def test_a_pool_removal_names_the_autoscaler_machines_and_the_money(repo, deployment, tmp_path):
    pools = yaml.safe_load((repo / "stacks" / "Pulumi.local.yaml").read_text())["config"][
        "orca-machines:pools"
    ]
    edit_pools(repo, [{**pools[0], "size": 3}])
    commit(repo, message="drop arm, grow x86")
    body = tmp_path / "comment.md"
    done = cli("ci-preview", "--stacks", "local", "--base", "HEAD~1", "--markdown", str(body), "-q")
    assert done.returncode == ExitCode.OK, done.stderr
    text = body.read_text()
    cx23, cax11 = net_monthly(deployment, "cx23", "fsn1"), net_monthly(deployment, "cax11", "fsn1")
    before = (2 * cx23 + 3 * cax11).quantize(Decimal("0.01"))
    after = (3 * cx23).quantize(Decimal("0.01"))
    assert text.startswith(MARKER + "\n")
    [row] = [line for line in text.splitlines() if line.startswith("| `local` |")]
    assert row.startswith(
        "| `local` | 🟡 machines: 1 to create, 3 to delete (1 kept, 2 autoscaler); "
        "other resources: "
    )
    assert f"{before} EUR → {after} EUR" in text
    assert "- `local` removes pool `arm`: 1 kept machine and 2 autoscaler machines" in text
    assert "- `local` resizes pool `x86`: 2 → 3 kept machines" in text
    assert "| `arm` | 1 x cax11 in fsn1 → — | 2 | 1 kept, 2 autoscaler |" in text
    assert "<details><summary><b>local</b>" in text
    assert "`local-arm-1`" in text
    assert TOKEN not in text


def test_summary_only_leaves_the_details_out(repo, tmp_path):
    body = tmp_path / "comment.md"
    done = cli(
        "ci-preview",
        "--stacks",
        "local",
        "--base",
        "HEAD~1",
        "--markdown",
        str(body),
        "--summary-only",
        "-q",
    )
    assert done.returncode == ExitCode.OK, done.stderr
    text = body.read_text()
    assert "removes pool `arm`" in text
    assert "<details" not in text
    assert "Summary only" in text


def test_a_failed_preview_is_a_failure_block_with_the_engines_line(repo, tmp_path):
    pools = yaml.safe_load((repo / "stacks" / "Pulumi.local.yaml").read_text())["config"][
        "orca-machines:pools"
    ]
    edit_pools(repo, [{**pools[0], "size": -1}])
    commit(repo, message="a broken size")
    body = tmp_path / "comment.md"
    try:
        done = cli(
            "ci-preview", "--stacks", "local", "--base", "HEAD~1", "--markdown", str(body), "-q"
        )
    finally:
        git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert done.returncode == ExitCode.ERROR
    text = body.read_text()
    assert "| `local` | ❌ preview failed | |" in text
    assert "stack local: pools[0].size: must be >= 0" in text
    assert "Traceback" not in text
    assert TOKEN not in text
    assert done.stderr.splitlines() == [
        "orca-machines: error: stack local: pools[0].size: must be >= 0"
    ]


def test_status_shows_each_pool_with_stock_and_cost(repo, deployment):
    deployment.emulator.control.set_stock([{"server_type": "cax11", "location": "hel1"}])
    try:
        done = cli("status", "local")
    finally:
        deployment.emulator.control.set_stock([])
    assert done.returncode == ExitCode.OK, done.stderr
    header, x86, arm, total = done.stdout.splitlines()
    assert header.split() == [
        "POOL", "TYPE", "LOCATION", "ARCH", "SIZE", "MAX", "KEPT", "AUTOSCALER", "IN",
        "STOCK", "COMMITTED", "MONTHLY",
    ]  # fmt: skip
    cx23, cax11 = net_monthly(deployment, "cx23", "fsn1"), net_monthly(deployment, "cax11", "fsn1")
    hourly_cx23 = net_monthly(deployment, "cx23", "fsn1", "hourly")
    hourly_cax11 = net_monthly(deployment, "cax11", "fsn1", "hourly")
    # every machine was made minutes ago: one started hour each is committed, its IPv4's too
    assert x86.split() == [
        "x86", "cx23", "fsn1", "amd64", "3", "-", "2", "running", "0", "fsn1,hel1,nbg1",
        cents(2 * hourly_cx23), "EUR", cents(2 * cx23), "EUR",
    ]  # fmt: skip
    assert arm.split() == [
        "arm", "cax11", "fsn1", "arm64", "0", "-", "1", "running", "2", "running", "fsn1,nbg1",
        cents(3 * hourly_cax11), "EUR", cents(3 * cax11), "EUR",
    ]  # fmt: skip
    assert total == (
        f"stack local (hetzner, owner local): {(2 * cx23 + 3 * cax11).quantize(Decimal('0.01'))} "
        "EUR a month, autoscaler machines at their current number"
    )


def test_status_json_has_exact_money(repo, deployment):
    done = cli("status", "local", "--json")
    assert done.returncode == ExitCode.OK, done.stderr
    report = json.loads(done.stdout)
    assert [p["pool"] for p in report["pools"]] == ["x86", "arm"]
    assert report["pools"][1]["autoscaler"] == {"running": 2}
    assert Decimal(report["pools"][0]["monthly"]) == 2 * net_monthly(deployment, "cx23", "fsn1")


def test_drift_fails_preview_expect_no_changes(repo, deployment):
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    clean = cli("preview", "local", "--refresh", "--expect-no-changes", "-q")
    assert clean.returncode == ExitCode.OK, clean.stderr
    [server] = [s for s in deployment.hcloud.servers.get_all() if s.name == "local-x86-1.stack"]
    server.delete()
    drifted = cli("preview", "local", "--refresh", "--expect-no-changes", "-q")
    assert drifted.returncode == ExitCode.ERROR
    assert "stack local has drifted from its configuration: 1 to create" in drifted.stderr


def test_by_default_ci_previews_the_deployments_stacks_and_rewrites_no_file(
    repo, deployment, tmp_path, monkeypatch
):
    prod = one_pool_stack(deployment, "web", "cx23")
    program = repo / "machines" / "__init__.py"
    commit(
        repo,
        {
            "stacks/Pulumi.prod.yaml": "# the prod stack\n\n" + yaml.safe_dump(prod),
            "machines/__init__.py": program.read_text() + "\n# a change to the program\n",
        },
        message="a deployment stack, and a program change that affects every stack",
    )
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "the-deployments-passphrase")
    body = tmp_path / "comment.md"
    done = cli("ci-preview", "--base", "HEAD~1", "--markdown", str(body), "-q")
    assert done.returncode == ExitCode.OK, done.stderr
    text = body.read_text()
    assert text.startswith(MARKER + "\n")
    assert "1 stack previewed: 1 with changes, 0 failed." in text
    assert "| `local` |" not in text
    assert "-example` |" not in text
    assert "| `prod` (new stack) | 🟡 machines: 1 to create; other resources: " in text
    assert git(repo, "status", "--porcelain") == ""


def test_two_stacks_of_one_project_count_each_its_own_machines_from_one_listing(
    repo, deployment, monkeypatch
):
    """Two deployments in one cloud project, each with a pool ``arm`` and autoscaler
    machines in it: the comment lists both owners once, and counts and costs each stack's
    own machines only."""
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "orca-machines-local")  # local's own
    team = one_pool_stack(deployment, "arm", "cax11")
    (repo / "stacks" / "Pulumi.team.yaml").write_text(yaml.safe_dump(team))
    automation.up("team", on_output=lambda _line: None)
    spec = MachineSpec(name="auto-team-1", machine_type="cax11", location="fsn1", pool="arm")
    assert automation.provider("team").create(spec).ok
    requests = deployment.emulator.control.requests
    alone = 0  # each stack's preview on its own: the engine's reads and one listing
    for stack in ("local", "team"):
        before = requests().get("GET /v1/servers")
        automation.preview(stack, on_output=lambda _line: None)
        alone += requests().get("GET /v1/servers") - before
    listed = requests().get("GET /v1/servers")

    local, second = ci_preview.run(["local", "team"], project=repo, on_output=lambda _l: None)

    assert (local.error, second.error) == ("", "")
    cx23, cax11 = net_monthly(deployment, "cx23", "fsn1"), net_monthly(deployment, "cax11", "fsn1")
    assert local.pools is not None
    assert second.pools is not None
    assert local.pools.cost_before == 2 * cx23 + 3 * cax11  # 1 kept arm, 2 autoscaler
    assert second.pools.cost_before == 2 * cax11  # 1 kept arm, 1 autoscaler
    assert requests().get("GET /v1/servers") - listed == alone - 1  # both owners listed once
