"""``status`` says when it could not read the cloud: the table, one error line, exit 1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from emulator.process import Emulator
from machines import Provider, automation
from machines.cli import main
from machines.cli.exits import ExitCode
from machines.runtime.models import Market
from testkit.moto_server import PROFILE
from testkit.specs import spec


@pytest.fixture
def project(tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project copy whose local stack points at the emulator and keeps nothing yet."""
    copy = automation.copy_project(tmp_path / "project")
    path = copy / "stacks" / "Pulumi.local.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["hcloud:endpoint"] = emulator.url
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(copy))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "state").as_uri())
    return copy


def test_status_without_a_token_fails_after_the_table(project, capsys):
    assert main(["status", "local"]) == ExitCode.ERROR
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1].split()[:2] == ["x86", "cx23"]
    assert "unknown" in captured.out
    assert captured.err == (
        "orca-machines: error: stack local: the cloud could not be read, so its pools' machines "
        "are unknown: HCLOUD_TOKEN is not set: this provider needs it\n"
    )


def test_status_json_says_what_was_not_read(project, capsys):
    assert main(["status", "local", "--json"]) == ExitCode.ERROR
    report = json.loads(capsys.readouterr().out)
    assert report["unread"] == ["HCLOUD_TOKEN is not set: this provider needs it"]


def test_status_that_read_the_cloud_exits_0(project, hetzner_env, capsys):
    assert main(["status", "local"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines()[1].split()[6:8] == ["0", "0"]


def test_status_shows_the_money_committed_to_each_pools_machines(
    project, hetzner_env, emulator: Emulator, capsys
):
    made = datetime.now(UTC) - timedelta(minutes=90)
    emulator.control.set_clock(made.timestamp())
    try:
        Provider.of("hetzner", "local").create(spec("local-x86-a1", pool="x86"))
    finally:
        emulator.control.set_clock(None)
    provider = Provider.of("hetzner", "local")
    billed = provider.prices().rates("cx23", "fsn1", Market.ON_DEMAND, provider.pool("x86"))
    assert billed is not None
    hourly = sum(r.hourly or 0 for r in billed)  # the server's and its primary IPv4's

    assert main(["status", "local", "--json"]) == ExitCode.OK
    pools = {p["pool"]: p for p in json.loads(capsys.readouterr().out)["pools"]}
    assert main(["status", "local"]) == ExitCode.OK
    header, x86, *_ = capsys.readouterr().out.splitlines()

    assert Decimal(pools["x86"]["committed"]) == 2 * hourly  # two started hours
    assert Decimal(pools["arm"]["committed"]) == 0
    committed = header.index("COMMITTED")
    assert x86[committed:].split()[:2] == [str((2 * hourly).quantize(Decimal("0.01"))), "EUR"]


@pytest.fixture
def ec2_stack(tmp_path: Path, ec2_world, fault_proxy, monkeypatch: pytest.MonkeyPatch) -> str:
    """A copy of the EC2 example stack (``ecx``) at moto's server behind the fault proxy,
    its subnets, group and profile the world's; no state yet."""
    copy = automation.copy_project(tmp_path / "project")
    example = yaml.safe_load((copy / "stacks" / "Pulumi.ec2-example.yaml").read_text())
    config = example["config"]
    config["aws:endpoints"] = [{s: fault_proxy.url for s in ("ec2", "iam", "sts")}]
    config["orca-machines:subnets"] = ec2_world.subnets
    config["orca-machines:securityGroup"] = ec2_world.security_group
    config["orca-machines:instanceProfile"] = PROFILE
    (copy / "stacks" / "Pulumi.ecx.yaml").write_text(yaml.safe_dump(example, sort_keys=False))
    monkeypatch.setenv("AWS_ENDPOINT_URL", fault_proxy.url)
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(copy))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "state").as_uri())
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "status")
    monkeypatch.setenv("ORCA_REQUEST_TIMEOUT", "5")  # time for several tries, were they made
    return "ecx"


def test_status_says_in_one_line_that_the_price_list_answered_a_page(
    ec2_stack: str, fault_proxy, capsys
):
    """moto answers the Price List with an HTML 500 page: status asks it once, says so in
    one line, and shows no part of the page."""
    assert main(["status", ec2_stack]) == ExitCode.OK
    captured = capsys.readouterr()

    said = [line for line in captured.out.splitlines() if "price list cannot be read" in line]
    assert len(said) == 1
    assert "GetProducts in us-east-1" in said[0]
    assert "<" not in captured.out + captured.err
    assert "Internal Server Error" not in captured.out + captured.err
    assert fault_proxy.requests["GetProducts"] == 1
