"""Every failure is one line on stderr (``orca-machines: error: ...``) and a documented status."""

from __future__ import annotations

import pytest
from pulumi.automation import CommandError, CommandResult

from machines import automation
from machines.cli import main
from machines.cli.exits import ExitCode
from machines.program.config.problems import StackConfigError
from testkit.hetzner import TOKEN
from testkit.specs import OWNER

HETZNER = ["--provider", "hetzner", "--owner", OWNER]


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("orca-machines: error: ")
    assert "Traceback" not in err
    return lines[0].removeprefix("orca-machines: error: ")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["ls"], "the following arguments are required: POOL"),
        (["ls", "ci", "--provider", "gce"], "invalid choice: 'gce'"),
        (["ls", "ci", "--provider", "hetzner", "--stack", "local"], "not allowed with"),
        (["create", "ci", "x-1", "--provider", "hetzner"], "--type, --location"),
        (["preview"], "required: STACK"),
    ],
)
def test_usage_errors_exit_64(args, expected, capsys):
    assert main(args) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert expected in one_error_line(captured.err)


def test_a_pool_command_needs_a_cloud(capsys):
    assert main(["ls", "ci"]) == ExitCode.ERROR
    assert "--provider hetzner|ec2" in one_error_line(capsys.readouterr().err)


def test_missing_token_names_the_variable(capsys):
    assert main(["ls", "ci", *HETZNER]) == ExitCode.ERROR
    line = one_error_line(capsys.readouterr().err)
    assert line == "HCLOUD_TOKEN is not set: this provider needs it"


def test_invalid_machine_name_is_one_line(hetzner_env, capsys):
    status = main(["create", "ci", "Bad_Name", "--type", "cx23", "--location", "fsn1", *HETZNER])
    assert status == ExitCode.ERROR
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("name: name 'Bad_Name' is not a host name")


def test_unknown_machine_type(hetzner_env, capsys):
    assert main(["arch", "cx999", *HETZNER]) == ExitCode.ERROR
    assert "cx999" in one_error_line(capsys.readouterr().err)


def test_missing_user_data_file(hetzner_env, tmp_path, capsys):
    missing = tmp_path / "nope.yaml"
    args = ["create", "ci", "prod-ci-1", "--type", "cx23", "--location", "fsn1"]
    assert main([*args, "--user-data-file", str(missing), *HETZNER]) == ExitCode.ERROR
    assert one_error_line(capsys.readouterr().err) == f"{missing}: No such file or directory"


def test_wrong_token_is_refused_without_printing_either_token(hetzner_env, monkeypatch, capsys):
    wrong = "wrong-token-" + "1" * 52
    monkeypatch.setenv("HCLOUD_TOKEN", wrong)
    assert main(["ls", "ci", *HETZNER]) == ExitCode.ERROR
    captured = capsys.readouterr()
    line = one_error_line(captured.err)
    assert "unauthorized" in line.lower() or "token" in line.lower()
    assert wrong not in captured.err + captured.out
    assert TOKEN not in captured.err + captured.out


def test_interrupt_exits_130(monkeypatch, capsys):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(automation, "up", interrupted)
    assert main(["up", "local"]) == ExitCode.INTERRUPTED
    assert one_error_line(capsys.readouterr().err) == "interrupted"


def test_an_escaped_engine_error_is_summarised(monkeypatch, capsys):
    stdout = "Previewing (local):\nDiagnostics:\n  pulumi:pulumi:Stack (x):\n    error: boom\n"

    def failing(*_args, **_kwargs):
        raise CommandError(CommandResult(stdout=stdout, stderr="", code=255))

    monkeypatch.setattr(automation, "preview", failing)
    assert main(["preview", "local"]) == ExitCode.ERROR
    assert one_error_line(capsys.readouterr().err) == "the Pulumi engine failed: boom"


def test_an_unexpected_exception_is_still_one_line(monkeypatch, capsys):
    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(automation, "outputs", broken)
    assert main(["outputs", "local"]) == ExitCode.ERROR
    line = one_error_line(capsys.readouterr().err)
    assert line == "unexpected ZeroDivisionError: division by zero"


def test_a_multi_line_error_becomes_one_line(monkeypatch, capsys):
    def invalid(*_args, **_kwargs):
        raise StackConfigError("local", [("pools[0].size", "must be >= 0"), ("owner", "bad")])

    monkeypatch.setattr(automation, "up", invalid)
    assert main(["up", "local"]) == ExitCode.ERROR
    assert one_error_line(capsys.readouterr().err) == (
        "stack local: pools[0].size: must be >= 0; stack local: owner: bad"
    )


def test_errors_as_a_child_process_too(run_cli):
    done = run_cli("ls", "ci", "--provider", "hetzner")
    assert done.returncode == ExitCode.ERROR
    assert done.stdout == ""
    assert one_error_line(done.stderr) == "HCLOUD_TOKEN is not set: this provider needs it"
    usage = run_cli("frobnicate")
    assert usage.returncode == ExitCode.USAGE
    assert "invalid choice" in one_error_line(usage.stderr)


def test_a_user_data_file_that_is_not_utf8_is_named(hetzner_env, tmp_path, capsys):
    latin1 = tmp_path / "cloud-init.yaml"
    latin1.write_bytes("#cloud-config\nhostname: café\n".encode("latin-1"))
    args = ["create", "ci", "prod-ci-1", "--type", "cx23", "--location", "fsn1"]
    assert main([*args, "--user-data-file", str(latin1), *HETZNER]) == ExitCode.ERROR
    line = one_error_line(capsys.readouterr().err)
    assert str(latin1) in line
    assert "not UTF-8" in line


def test_ci_preview_of_an_unknown_stack_names_it(run_cli):
    done = run_cli("ci-preview", "--base", "HEAD", "--stacks", "local,nope")
    assert done.returncode == ExitCode.ERROR
    assert one_error_line(done.stderr) == (
        "no stack file for stack nope in stacks/: fix --stacks (or $ORCA_CI_STACKS)"
    )


def test_ci_preview_of_an_unknown_base_says_to_fetch_it(run_cli):
    done = run_cli("ci-preview", "--base", "no-such-revision")
    assert done.returncode == ExitCode.ERROR
    assert "fetch-depth: 0" in one_error_line(done.stderr)


def test_ci_preview_without_affected_stacks_prints_nothing(run_cli):
    done = run_cli("ci-preview", "--base", "HEAD")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
