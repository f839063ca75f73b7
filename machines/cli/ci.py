"""What CI runs over many stacks: ``ci-preview`` (the stacks a change affects, previewed as
one pull-request comment) and ``drift`` (every deployment stack refreshed and previewed)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from machines.cli.common import PROG, Commands, Parser, fail, progress, quiet_option, say
from machines.cli.exits import ExitCode
from machines.runtime.errors import MachinesError
from machines.runtime.settings import ORCA_CI_STACKS


def add_ci_preview_and_drift(commands: Commands) -> None:
    """``ci-preview`` between two revisions, and ``drift``."""
    ci = commands.command(
        "ci-preview",
        _ci_preview,
        "preview every stack a change between two git revisions affects, as one PR comment",
    )
    ci.add_argument("--base", required=True, metavar="REV", help="the revision merged into")
    ci.add_argument("--head", default="HEAD", metavar="REV", help="the change (default HEAD)")
    ci.add_argument(
        "--markdown", metavar="FILE", type=Path, help="write the comment there (empty: no stack)"
    )
    ci.add_argument(
        "--summary-only", action="store_true", help="one line per stack, no per-stack details"
    )
    _stacks_option(ci)
    quiet_option(ci)
    drift = commands.command(
        "drift",
        _drift,
        "refresh and preview each deployment stack; exit 1 if one has drifted or failed",
    )
    _stacks_option(drift)
    quiet_option(drift)


def _stacks_option(sub: Parser) -> None:
    sub.add_argument(
        "--stacks",
        default=os.environ.get(ORCA_CI_STACKS, ""),
        metavar="S1,S2",
        help=f"consider only these stacks (default: ${ORCA_CI_STACKS}, else every stack file "
        "but local and the examples, *-example)",
    )


def _ci_preview(args: argparse.Namespace) -> int:
    from machines.automation import affected, ci_preview  # noqa: PLC0415 (loads pulumi)

    affected.check_checked_out(args.head)
    stacks = affected.ci_stacks(args.stacks)
    chosen = affected.affected_stacks(affected.changed_files(args.base, args.head), stacks)
    existing = affected.stacks_at(args.base)
    results = ci_preview.run(chosen, on_output=progress(args), existing=existing, on_message=say)
    body = ci_preview.render(results, summary_only=args.summary_only)
    if args.markdown is not None:
        args.markdown.write_text(body, encoding="utf-8")
    else:
        sys.stdout.write(body)
    for result in results:
        if result.failed:
            named = f"stack {result.stack}" in result.error
            fail(result.error if named else f"stack {result.stack}: {result.error}")
    return ExitCode.ERROR if any(r.failed for r in results) else ExitCode.OK


def _drift(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)
    from machines.automation import affected  # noqa: PLC0415

    stacks = affected.ci_stacks(args.stacks)
    if not stacks:
        print(
            f"{PROG}: no deployment stack to check: every stack file is local or an example "
            f"(name others with --stacks or ${ORCA_CI_STACKS})",
            file=sys.stderr,
        )
        return ExitCode.OK
    status: int = ExitCode.OK
    with automation.scratch_copy() as copy:
        for stack in stacks:
            try:
                diff = automation.preview(
                    stack, project=copy, on_output=progress(args), on_message=say
                )
            except MachinesError as error:
                said = str(error)
                status = fail(said if f"stack {stack}" in said else f"stack {stack}: {said}")
                continue
            print(diff.text())
            if diff.has_changes:
                status = fail(
                    f"stack {stack} has drifted from its configuration: {diff.summary()} "
                    f"(apply with '{PROG} up {stack}' or fix the configuration)"
                )
    return status
