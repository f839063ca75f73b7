"""What the runtime refuses about the stack's machines names the stack by its name
(``ORCA_STACK``, which the stack's ``env`` output exports) and the owner as the owner: stack
``heron`` of owner ``egret``, as every copy of an example stack file (``owner: prod``) is.
Advice that named the owner as a stack sent the operator to a stack that does not exist."""

from __future__ import annotations

import pytest

from machines.cli import main
from machines.cli.exits import ExitCode
from testkit.clouds import Cloud

OWNER = "egret"
STACK = "heron"
KEPT = {"orca": "pool", "orca-pool": "ci", "orca-owner": OWNER, "orca-managed-by": "pulumi"}


def cli(cloud: Cloud, *args: str) -> list[str]:
    """``orca-machines ARGS --provider KIND --owner egret``, as the autoscaler's operator
    runs it after ``eval "$(orca-machines env heron)"``."""
    return [*args, "--provider", cloud.kind, "--owner", OWNER]


def test_rm_of_a_kept_machine_names_the_stack_and_the_resize_that_removes_it(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = cloud.foreign(f"{OWNER}-ci-1.stack", KEPT)
    monkeypatch.setenv("ORCA_STACK", STACK)

    assert main(cli(cloud, "rm", kept)) == ExitCode.ERROR

    said = capsys.readouterr().err
    assert f"is kept by stack {STACK} (orca-managed-by=pulumi " in said
    assert f"lower the size of pool ci in stack {STACK} (orca-machines resize {STACK} ci" in said
    assert f"stack {OWNER}" not in said
    assert kept in cloud.live()


def test_without_the_stack_s_name_a_refusal_names_the_owner_as_the_owner(
    cloud: Cloud, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = cloud.foreign(f"{OWNER}-ci-1.stack", KEPT)

    assert main(cli(cloud, "rm", kept)) == ExitCode.ERROR

    said = capsys.readouterr().err
    assert f"is kept by the stack of owner '{OWNER}' (" in said
    assert "lower the size of pool ci in that stack (orca-machines resize <stack> ci" in said
    assert f"stack {OWNER}" not in said


def test_a_create_at_the_pool_s_max_names_the_stack_that_sets_it(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=1")
    monkeypatch.setenv("ORCA_STACK", STACK)
    cloud.foreign(f"{OWNER}-ci-1.stack", KEPT)
    spec = cloud.spec("ci-2")

    created = cli(cloud, "create", "ci", "ci-2", "--type", spec.machine_type)
    assert main([*created, "--location", spec.location]) == ExitCode.ERROR

    said = capsys.readouterr().err
    assert f"pool ci has 1 machines, the max stack {STACK} sets for it (1, " in said
    assert f"raise the pool's max in stack {STACK}" in said
    assert f"stack {OWNER}" not in said
