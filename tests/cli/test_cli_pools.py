"""Pool commands against the emulator: ls, create, rm and arch, in-process and as a child."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hcloud import Client

from emulator.process import Emulator
from machines import Provider
from machines.cli import main
from machines.cli.exits import ExitCode
from testkit.hetzner import TOKEN, foreign_server
from testkit.span import PLACES, Span, pools_json
from testkit.specs import OWNER, spec

HETZNER = ["--provider", "hetzner", "--owner", OWNER]


def test_create_ls_rm_in_process(hetzner_env, hcloud: Client, capsys):
    args = ["create", "ci", "prod-ci-a1", "--type", "cx23", "--location", "fsn1", *HETZNER]
    assert main(args) == ExitCode.OK
    made = capsys.readouterr().out.splitlines()
    assert made[0].split() == ["ID", "NAME", "STATUS", "TYPE", "LOCATION", "KEPT", "BY", "ADDRESS"]
    assert made[1].split()[1:6] == ["prod-ci-a1", "starting", "cx23", "fsn1", "autoscaler"]
    server = hcloud.servers.get_by_name("prod-ci-a1")
    assert server is not None
    assert server.labels == {"orca": "pool", "orca-pool": "ci", "orca-owner": OWNER}

    assert main(["ls", "ci", *HETZNER]) == ExitCode.OK
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 2
    assert rows[1].split()[:2] == [str(server.id), "prod-ci-a1"]

    assert main(["ls", "ci", "--json", *HETZNER]) == ExitCode.OK
    listed = json.loads(capsys.readouterr().out)
    assert [(m["id"], m["name"], m["pool"]) for m in listed] == [
        (str(server.id), "prod-ci-a1", "ci")
    ]

    assert main(["rm", str(server.id), *HETZNER]) == ExitCode.OK
    assert capsys.readouterr().out.strip() == f"{server.id} deleted"
    assert main(["ls", "ci", "--json", *HETZNER]) == ExitCode.OK
    assert [m["status"] for m in json.loads(capsys.readouterr().out)] in ([], ["deleting"])


def test_ls_says_who_keeps_each_machine(hetzner_env, hcloud: Client, hetzner_provider, capsys):
    hetzner_provider.create(spec(name="prod-ci-a7", pool="ci"))
    labels = {"orca": "pool", "orca-pool": "ci", "orca-owner": OWNER, "orca-managed-by": "pulumi"}
    foreign_server(hcloud, "prod-ci-1", labels)
    assert main(["ls", "ci", *HETZNER]) == ExitCode.OK
    rows = capsys.readouterr().out.splitlines()
    kept_by = rows[0].index("KEPT BY")
    assert {row.split()[1]: row[kept_by:].split()[0] for row in rows[1:]} == {
        "prod-ci-1": "stack",
        "prod-ci-a7": "autoscaler",
    }


def test_ls_sees_only_the_owner_and_pool(hetzner_env, hetzner_provider, capsys):
    hetzner_provider.create(spec(name="prod-ci-a1", pool="ci"))
    hetzner_provider.create(spec(name="prod-gpu-1", pool="gpu"))
    Provider.of("hetzner", owner="other").create(spec(name="other-ci-1", pool="ci"))
    assert main(["ls", "ci", *HETZNER]) == ExitCode.OK
    names = [row.split()[1] for row in capsys.readouterr().out.splitlines()[1:]]
    assert names == ["prod-ci-a1"]


def test_user_data_file_reaches_the_machine_and_is_never_printed(
    hetzner_env, emulator: Emulator, tmp_path, capsys
):
    user_data = tmp_path / "init.yaml"
    user_data.write_text("#cloud-config\nruncmd: [echo sesame-open]\n")
    status = main(
        [
            "create", "ci", "prod-ci-a2", "--type", "cax11", "--location", "fsn1",
            "--user-data-file", str(user_data), *HETZNER,
        ]
    )  # fmt: skip
    assert status == ExitCode.OK
    captured = capsys.readouterr()
    assert "sesame" not in captured.out + captured.err
    server_id = int(captured.out.splitlines()[1].split()[0])
    assert "sesame-open" in emulator.control.user_data(server_id)


def test_arch_of_both_architectures(hetzner_env, capsys):
    assert main(["arch", "cx23", *HETZNER]) == ExitCode.OK
    assert main(["arch", "cax11", *HETZNER]) == ExitCode.OK
    assert capsys.readouterr().out.split() == ["amd64", "arm64"]


def test_no_stock_exits_3_with_the_reason(hetzner_env, emulator: Emulator, capsys):
    emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    status = main(["create", "ci", "prod-ci-a3", "--type", "cax11", "--location", "nbg1", *HETZNER])
    assert status == ExitCode.NO_STOCK
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("orca-machines: no stock: ")
    assert len(captured.err.splitlines()) == 1


def test_provider_and_owner_from_the_environment(hetzner_env, monkeypatch, capsys):
    monkeypatch.setenv("ORCA_PROVIDER", "hetzner")
    monkeypatch.setenv("ORCA_OWNER", OWNER)
    assert (
        main(["create", "ci", "prod-ci-a4", "--type", "cx23", "--location", "fsn1"]) == ExitCode.OK
    )
    assert main(["ls", "ci", "--json", "--owner", "other"]) == ExitCode.OK
    capsys.readouterr()
    assert main(["ls", "ci", "--json"]) == ExitCode.OK
    assert [m["name"] for m in json.loads(capsys.readouterr().out)] == ["prod-ci-a4"]


def test_rm_reports_each_id_and_fails_for_a_foreign_one(
    hetzner_env, hcloud: Client, hetzner_provider, capsys
):
    created = hetzner_provider.create(spec(name="prod-ci-a5"))
    assert created.machine is not None
    foreign = foreign_server(hcloud, "someone-else", {"team": "web"})
    status = main(["rm", str(foreign), created.machine.id, "999999", *HETZNER])
    assert status == ExitCode.ERROR
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [f"{created.machine.id} deleted", "999999 deleted"]
    [line] = captured.err.splitlines()
    assert line.startswith(f"orca-machines: error: {foreign}: server {foreign} (someone-else)")
    assert hcloud.servers.get_by_id(foreign).name == "someone-else"


def test_python_dash_m_machines_as_a_child(hetzner_env, run_cli):
    made = run_cli("create", "ci", "prod-ci-a6", "--type", "cx23", "--location", "fsn1", *HETZNER)
    assert made.returncode == ExitCode.OK, made.stderr
    listed = run_cli("ls", "ci", "--json", *HETZNER)
    assert listed.returncode == ExitCode.OK, listed.stderr
    [machine] = json.loads(listed.stdout)
    assert machine["name"] == "prod-ci-a6"
    removed = run_cli("rm", machine["id"], *HETZNER)
    assert (removed.returncode, removed.stdout.strip()) == (ExitCode.OK, f"{machine['id']} deleted")


def test_console_script_runs_the_same_main(hetzner_env, run_cli, console_script):
    done = run_cli("arch", "cax11", *HETZNER, command=console_script)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (ExitCode.OK, "arm64", "")


@pytest.mark.parametrize("args", [["--help"], ["ls", "--help"], ["preview", "--help"]])
def test_help_exits_0(args, capsys):
    assert main(args) == ExitCode.OK
    assert "exit status:" in capsys.readouterr().out


def test_the_token_is_never_printed(hetzner_env, run_cli):
    done = run_cli("arch", "nope-type", *HETZNER)
    assert done.returncode == ExitCode.ERROR
    assert TOKEN not in done.stdout + done.stderr


def test_ls_shows_each_machines_age_and_paid_until(
    hetzner_env, emulator: Emulator, hetzner_provider, capsys
):
    made = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=65, seconds=10)
    emulator.control.set_clock(made.timestamp())
    try:
        hetzner_provider.create(spec(name="prod-ci-a9", pool="ci"))
    finally:
        emulator.control.set_clock(None)

    assert main(["ls", "ci", *HETZNER]) == ExitCode.OK
    header, row = capsys.readouterr().out.splitlines()
    assert main(["ls", "ci", "--json", *HETZNER]) == ExitCode.OK
    (listed,) = json.loads(capsys.readouterr().out)

    assert header.split()[-3:] == ["AGE", "PAID", "UNTIL"]
    assert row.split()[-2] in {"1h05m", "1h06m"}  # a minute may pass meanwhile
    paid_until = (made + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert row.split()[-1] == paid_until
    assert datetime.fromisoformat(listed["created"]) == made
    assert datetime.fromisoformat(listed["paid_until"]) == made + timedelta(hours=2)


def test_create_in_a_pool_naming_its_places_says_each_place_it_passed_over(span: Span, capsys):
    """Pool ``ci`` spans Hetzner's fsn1, nbg1 and EC2: fsn1 out, the machine is made in nbg1
    and ``create`` says why fsn1 was passed over (``Created.passed_over``), on stderr."""
    span.out_of_stock(PLACES[0])
    where = ["--type", "cax11", "--location", "fsn1", "--provider", "hetzner", "--owner", OWNER]

    assert main(["create", "ci", "ci-1", *where]) == ExitCode.OK

    captured = capsys.readouterr()
    assert captured.out.splitlines()[1].split()[1:5:3] == ["ci-1", "nbg1"]
    (said,) = captured.err.splitlines()
    assert said.startswith("orca-machines: ci-1: passed over hetzner cax11 in fsn1: ")
    assert "stock" in said


def test_create_in_a_pool_ranked_by_price_says_the_ranking(
    span: Span, monkeypatch: pytest.MonkeyPatch, capsys
):
    monkeypatch.setenv("ORCA_POOLS", pools_json(*PLACES[:2], place_order="price"))
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1")
    where = ["--type", "cax11", "--location", "fsn1", "--provider", "hetzner", "--owner", OWNER]

    assert main(["create", "ci", "ci-1", *where]) == ExitCode.OK

    (said,) = capsys.readouterr().err.splitlines()
    assert said.startswith("orca-machines: ci-1: places by the next hour's price ")
    assert "hetzner cax11 in fsn1 " in said
