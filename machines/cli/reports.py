"""What a stack holds, read and printed: ``status`` (each pool's machines, stock and cost),
``outputs`` (JSON) and ``env`` (the runtime's settings as ``KEY=VALUE`` lines)."""

from __future__ import annotations

import argparse
import json
import shlex

from machines.cli.common import Commands
from machines.cli.exits import ExitCode
from machines.runtime.errors import MachinesError


def add_status(commands: Commands) -> None:
    """``status``: an operator's view of a stack's pools."""
    status = commands.stack_command(
        "status", _status, "show each pool: machines, stock and monthly cost"
    )
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_outputs_and_env(commands: Commands) -> None:
    """``outputs`` and ``env``: the stack's outputs, as JSON or as the runtime's settings."""
    outputs = commands.stack_command("outputs", _outputs, "print the stack's outputs as JSON")
    outputs.add_argument("--show-secrets", action="store_true", help="print secrets in plain text")
    commands.stack_command(
        "env", _env, "print the runtime's settings from the stack as KEY=VALUE lines"
    )


def _status(args: argparse.Namespace) -> int:
    from machines.automation import status  # noqa: PLC0415 (loads pulumi)

    found = status.status(args.stack)
    if args.json:
        print(json.dumps(found.report(), indent=2))
    else:
        print(found.table())
    if found.unread:
        raise MachinesError(
            f"stack {args.stack}: the cloud could not be read, so its pools' machines are "
            f"unknown: {found.unread[0]}"
        )
    return ExitCode.OK


def _outputs(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    values = automation.outputs(args.stack, show_secrets=args.show_secrets)
    print(json.dumps(values, indent=2, sort_keys=True))
    return ExitCode.OK


def _env(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    for key, value in automation.runtime_env(args.stack).items():
        print(f"{key}={shlex.quote(value)}")
    return ExitCode.OK
