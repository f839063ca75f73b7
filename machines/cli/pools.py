"""Pool commands, the runtime API the autoscaler uses: ``ls``, ``create``, ``rm``, ``arch``
and ``metrics``; the cloud from ``--provider`` and the environment, or a stack's outputs."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from machines.cli.common import PROG, Commands, fail
from machines.cli.exits import ExitCode
from machines.cli.table import table
from machines.runtime.clouds import kinds
from machines.runtime.errors import MachinesError
from machines.runtime.labels import check_pool
from machines.runtime.models import MachineSpec
from machines.runtime.provider import Provider
from machines.runtime.secrets import mask
from machines.runtime.settings import ORCA_PROVIDER


def add_machine_commands(commands: Commands) -> None:
    """``ls``, ``create``, ``rm`` and ``arch``."""
    ls = commands.pool_command("ls", _ls, "list a pool's machines")
    ls.add_argument("pool", metavar="POOL")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    create = commands.pool_command("create", _create, "create one machine in a pool")
    create.add_argument("pool", metavar="POOL")
    create.add_argument("name", metavar="NAME", help="the machine's host name")
    create.add_argument("--type", required=True, dest="machine_type", metavar="TYPE")
    create.add_argument("--location", required=True, metavar="LOCATION")
    create.add_argument("--user-data-file", type=Path, metavar="FILE")
    rm = commands.pool_command("rm", _rm, "delete pool machines by id")
    rm.add_argument("ids", nargs="+", metavar="ID")
    arch = commands.pool_command(
        "arch", _arch, "print a machine type's architecture (amd64, arm64)"
    )
    arch.add_argument("machine_type", metavar="TYPE")


def add_metrics(commands: Commands) -> None:
    """``metrics``: the runtime's instruments on a Prometheus endpoint, pools listed."""
    served = commands.pool_command(
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
        print(table(machines, with_time=True))
    return ExitCode.OK


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
    if created.ordered:  # a pool ranking its places by price: the ranking
        print(f"{PROG}: {args.name}: {mask(created.ordered)}", file=sys.stderr)
    if created.no_stock:  # its reason names every place tried, and why
        print(f"{PROG}: no stock: {mask(created.reason)}", file=sys.stderr)
        return ExitCode.NO_STOCK
    for passed in created.passed_over:  # a pool naming its places: those before this one
        print(f"{PROG}: {args.name}: passed over {mask(passed)}", file=sys.stderr)
    if created.machine is not None:
        print(table([created.machine]))
        return ExitCode.OK
    raise MachinesError(f"create {args.name} failed: {created.reason}")


def _rm(args: argparse.Namespace) -> int:
    provider = _provider(args)
    status: int = ExitCode.OK
    for machine_id in args.ids:
        try:
            gone = provider.delete(machine_id)
        except MachinesError as error:
            status = fail(f"{machine_id}: {error}")
            continue
        print(f"{machine_id} deleted" if gone else f"{machine_id} deleting")
    return status


def _arch(args: argparse.Namespace) -> int:
    print(_provider(args).arch(args.machine_type))
    return ExitCode.OK


def _metrics(args: argparse.Namespace) -> int:
    from machines import prometheus  # noqa: PLC0415 (the SDK loads for this command only)

    pools = [check_pool(p.strip()) for p in args.pools.split(",")]
    if args.every <= 0:
        raise MachinesError(f"--every takes a positive number of seconds, not {args.every}")
    provider = _provider(args)
    port = prometheus.serve(args.port, args.address)
    print(f"serving metrics on http://{args.address}:{port}/metrics", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(ExitCode.TERMINATED))
    prometheus.watch(provider, pools, args.every, lambda line: print(line, flush=True))
    return ExitCode.OK
