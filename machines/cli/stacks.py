"""Stack operations, each one engine run on one stack: ``up``, ``preview``, ``destroy``,
``refresh`` and ``resize``.

Pulumi loads for these commands only (``machines.automation``, imported when one runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from machines.cli.common import PROG, Commands, fail, progress, say
from machines.cli.exits import ExitCode
from machines.runtime.errors import MachinesError

if TYPE_CHECKING:
    from machines.automation import Diff


def add_up_and_preview(commands: Commands) -> None:
    """``up`` and ``preview`` with its ways to show the change."""
    commands.stack_command("up", _up, "create or update the stack's resources")
    preview = commands.stack_command(
        "preview", _preview, "show what up would change; exit 2 if anything, 0 if nothing"
    )
    preview.add_argument("--diff", action="store_true", help="print the change of each resource")
    preview.add_argument("--json", action="store_true", help="print the diff as JSON")
    preview.add_argument(
        "--markdown", metavar="FILE", type=Path, help="write the diff as Markdown, for a PR"
    )
    preview.add_argument(
        "--refresh",
        action="store_true",
        help="read the cloud first, so drift shows (the default; for scripts relying on it)",
    )
    preview.add_argument(
        "--expect-no-changes",
        action="store_true",
        help="fail (exit 1) if the stack would change: drift from its configuration",
    )


def add_destroy_refresh_resize(commands: Commands) -> None:
    """``destroy`` (confirmed), ``refresh`` and ``resize`` of one pool."""
    destroy = commands.stack_command("destroy", _destroy, "delete every resource of the stack")
    destroy.add_argument("--yes", action="store_true", help="confirm (needed without a terminal)")
    commands.stack_command("refresh", _refresh, "read the cloud back into the stack's state")
    resize = commands.stack_command(
        "resize", _resize, "set a pool's size in the stack and apply that pool only"
    )
    resize.add_argument("pool", metavar="POOL")
    resize.add_argument("size", metavar="SIZE", type=int, help="the machines the stack keeps")


def _up(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    try:
        diff = automation.up(args.stack, on_output=progress(args), on_message=say)
    except automation.NoStockError as error:
        return fail(str(error), ExitCode.NO_STOCK)
    print(f"stack {args.stack}: {_done(diff)}")
    return ExitCode.OK


def _preview(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    diff = automation.preview(args.stack, on_output=progress(args), on_message=say)
    if args.markdown is not None:
        args.markdown.write_text(diff.markdown(), encoding="utf-8")
    if args.json:
        print(json.dumps(diff.report(), indent=2))
    elif args.diff:
        print(diff.text())
    else:
        print(f"stack {args.stack}: {diff.summary()}")
        for note in diff.notes():
            print(f"stack {args.stack}: warning: {note}")
    if args.expect_no_changes and diff.has_changes:
        raise MachinesError(
            f"stack {args.stack} has drifted from its configuration: {diff.summary()} "
            f"(see the diff above; apply with '{PROG} up {args.stack}' or fix the configuration)"
        )
    return ExitCode.CHANGES if diff.has_changes else ExitCode.OK


def _destroy(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    if not args.yes:
        if not sys.stdin.isatty():
            raise MachinesError(
                f"destroy deletes every resource of stack {args.stack}: pass --yes to confirm"
            )
        answer = input(f"Delete every resource of stack {args.stack}? Type its name to confirm: ")
        if answer.strip() != args.stack:
            raise MachinesError(f"not confirmed: stack {args.stack} was left as it is")
    diff = automation.destroy(args.stack, on_output=progress(args), on_message=say)
    print(f"stack {args.stack}: {_done(diff)}")
    return ExitCode.OK


def _refresh(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    counts = automation.refresh(args.stack, on_output=progress(args), on_message=say)
    shown = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()) if n) or "nothing"
    print(f"stack {args.stack}: refreshed ({shown})")
    return ExitCode.OK


def _resize(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    try:
        diff = automation.resize(
            args.stack, args.pool, args.size, on_output=progress(args), on_message=say
        )
    except automation.NoStockError as error:
        return fail(str(error), ExitCode.NO_STOCK)
    print(f"stack {args.stack}: pool {args.pool} size {args.size}: {_done(diff)}")
    if diff.pending:
        print(diff.pending_note())
    return ExitCode.OK


def _done(diff: Diff) -> str:
    """What an applied change did: its machines, then its resources in all."""
    if not diff.has_changes:
        return "no changes"
    past = {"create": "created", "update": "updated", "replace": "replaced", "delete": "deleted"}
    resources = ", ".join(f"{n} {past[op]}" for op, n in diff.counts.items())
    machines = diff.machines(past=True)
    return f"{machines}; resources in all: {resources}" if machines else resources
