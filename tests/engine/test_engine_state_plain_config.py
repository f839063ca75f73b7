"""No configuration value set without ``--secret`` reaches the state (``pulumi stack export``)
through the pools' reapers, on either cloud: user data carrying a registration token, plain
in the stack file, is nowhere in the export, nor is any key of the project's configuration
(the engine's default provider of Python dynamic resources would have taken them all)."""

from __future__ import annotations

import pytest

from machines import automation
from machines.automation.engine import engine_command
from machines.program.config.stack_config import PROJECT
from testkit.engine_stacks import EC2_STACK

pytestmark = pytest.mark.engine

TOKEN = "orca-registration-token-3f9c2a7d41"
USER_DATA = f"#cloud-config\nruncmd: [register --token {TOKEN}]\n"


def exported(stack: str) -> str:
    """``pulumi stack export`` as an operator runs it (no ``--show-secrets``)."""
    root = automation.project_root()
    command, env = engine_command(stack, root)
    return command.run(["stack", "export", "--stack", stack], str(root), env).stdout


def with_plain_user_data(stack: str) -> None:
    automation.set_config(stack, {f"{PROJECT}:pools[0].userData": USER_DATA}, path=True)
    automation.up(stack, on_output=lambda _line: None)


def test_plain_user_data_is_not_in_a_hetzner_stacks_state(deployment):
    with_plain_user_data("local")

    state = exported("local")

    assert TOKEN not in state
    assert f'"{PROJECT}:' not in state
    assert "x86-autoscaled" in state


def test_plain_user_data_is_not_in_an_ec2_stacks_state(ec2_deployment):
    with_plain_user_data(EC2_STACK)

    state = exported(EC2_STACK)

    assert TOKEN not in state
    assert f'"{PROJECT}:' not in state
    assert "autoscaled" in state
