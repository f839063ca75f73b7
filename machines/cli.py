"""The operator's command line, ``orca-machines`` (``python -m machines``).

Stack commands drive the Pulumi program through ``machines.automation``; pool commands call
the runtime API the autoscaler uses, configured by flags or by a stack's outputs. Every
failure is one line on stderr and a non-zero status, never a traceback; tokens and user
data are never printed.
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

from pydantic import ValidationError

from machines.runtime.clouds import kinds
from machines.runtime.errors import MachinesError
from machines.runtime.labels import check_pool
from machines.runtime.models import Machine, MachineSpec
from machines.runtime.provider import Provider
from machines.runtime.secrets import mask
from machines.runtime.settings import ORCA_CI_STACKS, ORCA_OWNER, ORCA_PROVIDER

if TYPE_CHECKING:
    from machines.automation import Diff

PROG = "orca-machines"

OK = 0
ERROR = 1
CHANGES = 2
NO_STOCK = 3
USAGE = 64
INTERRUPTED = 130
TERMINATED = 143


class Terminated(BaseException):
    """SIGTERM outside an engine run (the engine's own run cancels it its way)."""


def _terminated(_signum: int, _frame: FrameType | None) -> None:
    raise Terminated


EPILOG = f"""\
exit status:
  {OK}    success; for preview: no changes
  {ERROR}    an error (one line on stderr: '{PROG}: error: ...'); status: the cloud could
       not be read (the table still shows what could)
  {CHANGES}    preview: the stack has changes to apply (ci-preview: 0 even with changes,
       1 when a stack's preview failed; preview --expect-no-changes: 1 on changes)
  {NO_STOCK}    create, up, resize: the cloud has no stock of that type in that location now
  {USAGE}   the command line is wrong
  {INTERRUPTED}  interrupted (Ctrl-C); {TERMINATED}: terminated (SIGTERM); during an engine run,
       only once the engine has cancelled cleanly

stack commands run the Pulumi engine of scripts/install-pulumi on this project (stack files
in stacks/). State: $PULUMI_BACKEND_URL, else the project's .pulumi-state/. Secrets:
$PULUMI_CONFIG_PASSPHRASE, required for every stack but 'local'. Project:
$ORCA_PULUMI_PROJECT, else this checkout. The engine's progress goes to stderr.
"""


class UsageError(Exception):
    """The command line is wrong: argparse's complaint, shown as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def command() -> NoReturn:
    """The console script (``orca-machines``, ``python -m machines``): ``main``'s status,
    then the process ends without the interpreter's teardown.

    ``main`` returns once its command is done; what is left is freeing memory the process
    is about to give back and waiting out library housekeeping (the Automation API stops
    its events server with a 5 s grace, the engine long gone): on a preview, about 0.4 s,
    more than the checks before the engine take. Exit handlers still run first (logging's,
    an OpenTelemetry SDK's flush), then the output is flushed; a flush that fails (a closed
    pipe) is an error status, as the interpreter would make it."""
    code = main()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or ERROR
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (see ``EPILOG``)."""
    logging.basicConfig(level=logging.WARNING, format=f"{PROG}: %(message)s")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        return _fail(str(error), USAGE)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else ERROR
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main_thread else None
    try:
        return _run(args)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    """The command's status; every failure one line on stderr."""
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return _fail("interrupted", INTERRUPTED)
    except Terminated:
        return _fail("terminated", TERMINATED)
    except MachinesError as error:
        return _fail(str(error), getattr(error, "exit_status", ERROR))
    except Exception as error:
        return _fail(_explain(error))


def _explain(error: Exception) -> str:
    """One line for any failure: the package's own message, else what went wrong where."""
    if isinstance(error, ValidationError):
        return _validation(error)
    if isinstance(error, MachinesError):
        return str(error)
    if isinstance(error, OSError):
        return _os_error(error)
    if type(error).__module__.startswith("pulumi"):
        from machines.automation import engine_summary  # noqa: PLC0415 (loads pulumi)

        return f"the Pulumi engine failed: {engine_summary(str(error))}"
    return f"unexpected {type(error).__name__}: {error}"


def build_parser() -> argparse.ArgumentParser:
    """The command line: stack commands, then pool commands."""
    parser = _Parser(
        prog=PROG,
        description="Cloud machines for orca's autoscaler: stacks through Pulumi, pools "
        "through the runtime API.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, run: Callable[[argparse.Namespace], int], text: str) -> _Parser:
        sub: _Parser = commands.add_parser(
            name, help=text, description=text, epilog=EPILOG, formatter_class=parser.formatter_class
        )
        sub.set_defaults(run=run)
        return sub

    def stack_command(name: str, run: Callable[[argparse.Namespace], int], text: str) -> _Parser:
        sub = command(name, run, text)
        sub.add_argument("stack", metavar="STACK", help="the stack, e.g. local")
        sub.add_argument(
            "-q", "--quiet", action="store_true", help="do not show the engine's progress"
        )
        return sub

    stack_command("up", _up, "create or update the stack's resources")
    preview = stack_command(
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
    _ci_commands(command, stack_command)
    destroy = stack_command("destroy", _destroy, "delete every resource of the stack")
    destroy.add_argument("--yes", action="store_true", help="confirm (needed without a terminal)")
    stack_command("refresh", _refresh, "read the cloud back into the stack's state")
    resize = stack_command(
        "resize", _resize, "set a pool's size in the stack and apply that pool only"
    )
    resize.add_argument("pool", metavar="POOL")
    resize.add_argument("size", metavar="SIZE", type=int, help="the machines the stack keeps")
    outputs = stack_command("outputs", _outputs, "print the stack's outputs as JSON")
    outputs.add_argument("--show-secrets", action="store_true", help="print secrets in plain text")
    stack_command("env", _env, "print the runtime's settings from the stack as KEY=VALUE lines")

    def pool_command(name: str, run: Callable[[argparse.Namespace], int], text: str) -> _Parser:
        sub = command(name, run, text)
        cloud = sub.add_mutually_exclusive_group()
        cloud.add_argument(
            "--provider",
            choices=kinds(),
            default=os.environ.get(ORCA_PROVIDER) or None,
            help=f"the cloud (default: ${ORCA_PROVIDER}); settings from the environment",
        )
        cloud.add_argument(
            "--stack", metavar="STACK", help="configure from this stack's outputs instead"
        )
        sub.add_argument(
            "--owner",
            default=os.environ.get(ORCA_OWNER),
            help=f"the deployment owning the machines (default: ${ORCA_OWNER}, or the stack's)",
        )
        return sub

    ls = pool_command("ls", _ls, "list a pool's machines")
    ls.add_argument("pool", metavar="POOL")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    create = pool_command("create", _create, "create one machine in a pool")
    create.add_argument("pool", metavar="POOL")
    create.add_argument("name", metavar="NAME", help="the machine's host name")
    create.add_argument("--type", required=True, dest="machine_type", metavar="TYPE")
    create.add_argument("--location", required=True, metavar="LOCATION")
    create.add_argument("--user-data-file", type=Path, metavar="FILE")
    rm = pool_command("rm", _rm, "delete pool machines by id")
    rm.add_argument("ids", nargs="+", metavar="ID")
    arch = pool_command("arch", _arch, "print a machine type's architecture (amd64, arm64)")
    arch.add_argument("machine_type", metavar="TYPE")
    _metrics_command(pool_command)
    return parser


def _metrics_command(
    pool_command: Callable[[str, Callable[[argparse.Namespace], int], str], _Parser],
) -> None:
    """``metrics``: the runtime's instruments on a Prometheus endpoint, pools listed."""
    served = pool_command(
        "metrics",
        _metrics,
        "serve the runtime's metrics for Prometheus while listing pools (needs the "
        "'prometheus' extra)",
    )
    served.add_argument(
        "--pools", required=True, metavar="P1,P2", help="the pools to list every round"
    )
    served.add_argument("--port", type=int, default=9464, help="default 9464; 0: a free port")
    served.add_argument("--address", default="127.0.0.1", help="default 127.0.0.1")
    served.add_argument(
        "--every", type=float, default=15.0, metavar="SECONDS", help="between rounds (15)"
    )


def _ci_commands(
    command: Callable[[str, Callable[[argparse.Namespace], int], str], _Parser],
    stack_command: Callable[[str, Callable[[argparse.Namespace], int], str], _Parser],
) -> None:
    """``ci-preview`` (what CI posts on a pull request) and ``status`` (an operator's view)."""
    ci = command(
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
    ci.add_argument("-q", "--quiet", action="store_true", help="do not show the engine's progress")
    drift = command(
        "drift",
        _drift,
        "refresh and preview each deployment stack; exit 1 if one has drifted or failed",
    )
    _stacks_option(drift)
    drift.add_argument(
        "-q", "--quiet", action="store_true", help="do not show the engine's progress"
    )
    status = stack_command("status", _status, "show each pool: machines, stock and monthly cost")
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _stacks_option(sub: _Parser) -> None:
    sub.add_argument(
        "--stacks",
        default=os.environ.get(ORCA_CI_STACKS, ""),
        metavar="S1,S2",
        help=f"consider only these stacks (default: ${ORCA_CI_STACKS}, else every stack file "
        "but local and the examples, *-example)",
    )


def _progress(args: argparse.Namespace) -> Callable[[str], object]:
    if args.quiet:
        return lambda _line: None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _up(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    try:
        diff = automation.up(args.stack, on_output=_progress(args))
    except automation.NoStockError as error:
        return _fail(str(error), NO_STOCK)
    print(f"stack {args.stack}: {_done(diff)}")
    return OK


def _preview(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    diff = automation.preview(args.stack, on_output=_progress(args))
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
    return CHANGES if diff.has_changes else OK


def _ci_preview(args: argparse.Namespace) -> int:
    from machines.automation import affected, ci_preview  # noqa: PLC0415 (loads pulumi)

    affected.check_checked_out(args.head)
    stacks = affected.ci_stacks(args.stacks)
    chosen = affected.affected_stacks(affected.changed_files(args.base, args.head), stacks)
    existing = affected.stacks_at(args.base)
    results = ci_preview.run(chosen, on_output=_progress(args), existing=existing)
    body = ci_preview.render(results, summary_only=args.summary_only)
    if args.markdown is not None:
        args.markdown.write_text(body, encoding="utf-8")
    else:
        sys.stdout.write(body)
    for result in results:
        if result.failed:
            named = f"stack {result.stack}" in result.error
            _fail(result.error if named else f"stack {result.stack}: {result.error}")
    return ERROR if any(r.failed for r in results) else OK


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
        return OK
    status = OK
    with automation.scratch_copy() as copy:
        for stack in stacks:
            try:
                diff = automation.preview(stack, project=copy, on_output=_progress(args))
            except MachinesError as error:
                said = str(error)
                status = _fail(said if f"stack {stack}" in said else f"stack {stack}: {said}")
                continue
            print(diff.text())
            if diff.has_changes:
                status = _fail(
                    f"stack {stack} has drifted from its configuration: {diff.summary()} "
                    f"(apply with '{PROG} up {stack}' or fix the configuration)"
                )
    return status


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
    return OK


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
    diff = automation.destroy(args.stack, on_output=_progress(args))
    print(f"stack {args.stack}: {_done(diff)}")
    return OK


def _refresh(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    counts = automation.refresh(args.stack, on_output=_progress(args))
    shown = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()) if n) or "nothing"
    print(f"stack {args.stack}: refreshed ({shown})")
    return OK


def _resize(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    try:
        diff = automation.resize(args.stack, args.pool, args.size, on_output=_progress(args))
    except automation.NoStockError as error:
        return _fail(str(error), NO_STOCK)
    print(f"stack {args.stack}: pool {args.pool} size {args.size}: {_done(diff)}")
    if diff.pending:
        print(diff.pending_note())
    return OK


def _outputs(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    values = automation.outputs(args.stack, show_secrets=args.show_secrets)
    print(json.dumps(values, indent=2, sort_keys=True))
    return OK


def _env(args: argparse.Namespace) -> int:
    from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

    for key, value in automation.runtime_env(args.stack).items():
        print(f"{key}={shlex.quote(value)}")
    return OK


def _done(diff: Diff) -> str:
    if not diff.has_changes:
        return "no changes"
    past = {"create": "created", "update": "updated", "replace": "replaced", "delete": "deleted"}
    resources = ", ".join(f"{n} {past[op]}" for op, n in diff.counts.items())
    machines = diff.machines(past=True)
    return f"{machines}; resources in all: {resources}" if machines else resources


def _provider(args: argparse.Namespace) -> Provider:
    if args.stack:
        from machines import automation  # noqa: PLC0415 (pulumi loads for stack commands only)

        return automation.provider(args.stack, args.owner)
    if not args.provider:
        raise MachinesError(
            f"name the cloud: --provider {'|'.join(kinds())} (or ${ORCA_PROVIDER}), "
            "or --stack STACK to use a stack's outputs"
        )
    return Provider.of(args.provider, args.owner or "")


def _ls(args: argparse.Namespace) -> int:
    machines = _provider(args).machines(args.pool)
    if args.json:
        print(json.dumps([m.model_dump(mode="json") for m in machines], indent=2))
    else:
        print(_table(machines, with_time=True))
    return OK


def _create(args: argparse.Namespace) -> int:
    user_data = ""
    if args.user_data_file is not None:
        try:
            user_data = args.user_data_file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise MachinesError(
                f"{args.user_data_file}: user data is not UTF-8 text (byte {error.start}): "
                "save the file as UTF-8"
            ) from None
    spec = MachineSpec(
        name=args.name,
        machine_type=args.machine_type,
        location=args.location,
        user_data=user_data,
        pool=args.pool,
    )
    created = _provider(args).create(spec)
    if created.machine is not None:
        print(_table([created.machine]))
        return OK
    if created.no_stock:
        print(f"{PROG}: no stock: {mask(created.reason)}", file=sys.stderr)
        return NO_STOCK
    raise MachinesError(f"create {args.name} failed: {created.reason}")


def _rm(args: argparse.Namespace) -> int:
    provider = _provider(args)
    status = OK
    for machine_id in args.ids:
        try:
            gone = provider.delete(machine_id)
        except MachinesError as error:
            status = _fail(f"{machine_id}: {error}")
            continue
        print(f"{machine_id} deleted" if gone else f"{machine_id} deleting")
    return status


def _arch(args: argparse.Namespace) -> int:
    print(_provider(args).arch(args.machine_type))
    return OK


def _metrics(args: argparse.Namespace) -> int:
    from machines import prometheus  # noqa: PLC0415 (the SDK loads for this command only)

    pools = [check_pool(p.strip()) for p in args.pools.split(",")]
    if args.every <= 0:
        raise MachinesError(f"--every takes a positive number of seconds, not {args.every}")
    provider = _provider(args)
    port = prometheus.serve(args.port, args.address)
    print(f"serving metrics on http://{args.address}:{port}/metrics", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(TERMINATED))
    prometheus.watch(provider, pools, args.every, lambda line: print(line, flush=True))
    return OK


COLUMNS: tuple[tuple[str, Callable[[Machine], str]], ...] = (
    ("ID", lambda m: m.id),
    ("NAME", lambda m: m.name),
    ("STATUS", lambda m: str(m.status)),
    ("TYPE", lambda m: m.machine_type),
    ("LOCATION", lambda m: m.location),
    ("KEPT BY", lambda m: "stack" if m.managed_by else "autoscaler"),
    ("ADDRESS", lambda m: m.address),
)
"""The machine table's columns: ``KEPT BY`` is ``stack`` for a machine the Pulumi stack
keeps (``orca-managed-by=pulumi``: change its pool's size to remove it), ``autoscaler`` for
one the runtime's ``create`` made (``rm`` deletes it)."""

TIME_COLUMNS: tuple[tuple[str, Callable[[Machine], str]], ...] = (
    ("AGE", lambda m: _age(m.created)),
    ("PAID UNTIL", lambda m: _moment(m.paid_until)),
)
"""``ls`` adds how long ago the cloud made each machine and until when it is paid (UTC):
deleting it before then costs nothing more (``Machine.paid_until``)."""


def _age(created: datetime | None) -> str:
    """``2d03h``, ``1h05m``, ``4m``; ``-`` when the cloud did not say."""
    if created is None:
        return "-"
    minutes = max(0, int((datetime.now(UTC) - created).total_seconds() // 60))
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days}d{hours:02d}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def _moment(moment: datetime | None) -> str:
    """``2026-03-01T10:00:00Z``; ``-`` when unknown."""
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _table(machines: Sequence[Machine], with_time: bool = False) -> str:
    columns = COLUMNS + TIME_COLUMNS if with_time else COLUMNS
    rows = [[header for header, _ in columns]]
    rows += [[cell(m) for _, cell in columns] for m in machines]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _fail(message: str, status: int = ERROR) -> int:
    line = "; ".join(part.strip() for part in message.splitlines() if part.strip())
    print(f"{PROG}: error: {mask(line)}", file=sys.stderr, flush=True)
    return status


def _validation(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or error.title}: "
        + e["msg"].removeprefix("Value error, ")
        for e in error.errors(include_url=False, include_input=False)
    ]
    return "; ".join(problems)


def _os_error(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error) or type(error).__name__
